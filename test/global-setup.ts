import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { defaultStateDir } from '../src/store/index.js';

/**
 * The folders of one run, all inside one fresh folder of its own (`docreq-suite-…` in the system's temp
 * folder), set in the environment the test processes inherit and pass on to every server they spawn
 * (test/support/folders.ts childEnv): a home of its own (HOME and the XDG folders: what the file store defaults
 * to when DOCREQ_STATE_DIR is not given), a state folder, and the folder of captured output the key scan reads.
 * The suite never reads the real user's folders, so another docreq-mcp of the same user may run beside it.
 */
export function suiteEnvironment(suite: string): Record<string, string> {
  const home = join(suite, 'home');
  return {
    DOCREQ_TEST_SUITE_DIR: suite,
    DOCREQ_TEST_CAPTURE_DIR: join(suite, 'capture'),
    DOCREQ_STATE_DIR: join(suite, 'state'),
    HOME: home,
    USERPROFILE: home,
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    LOCALAPPDATA: join(home, 'AppData', 'Local'),
    APPDATA: join(home, 'AppData', 'Roaming'),
  };
}

/** Every file under `dir` (relative paths). */
function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out;
}

export function setup(): () => void {
  const suite = mkdtempSync(join(tmpdir(), 'docreq-suite-'));
  const env = suiteEnvironment(suite);
  Object.assign(process.env, env);
  for (const dir of [env.DOCREQ_TEST_CAPTURE_DIR, env.DOCREQ_STATE_DIR, env.HOME]) mkdirSync(dir!, { recursive: true });
  return () => {
    // A throw here is only printed by vitest; the exit code is what fails the run.
    const fail = (message: string) => {
      process.stderr.write(`\n${message}\n`);
      process.exitCode = 1;
    };
    try {
      // Where the file store writes when nothing says otherwise is inside this run's folder.
      const fallback = defaultStateDir();
      if (relative(suite, fallback).startsWith('..'))
        return fail(`state folder check FAILED: the default state folder ${fallback} is outside the suite's folder ${suite}`);
      const written = files(suite).filter((f) => !f.startsWith('capture'));
      process.stdout.write(`\nstate folders: the suite's own (${suite}), ${written.length} files written there; the user's folders were not read\n`);

      const captures = readdirSync(env.DOCREQ_TEST_CAPTURE_DIR!);
      let bytes = 0;
      const leaks: string[] = [];
      for (const file of captures) {
        const text = readFileSync(join(env.DOCREQ_TEST_CAPTURE_DIR!, file), 'utf8');
        bytes += text.length;
        for (const [name, key] of Object.entries(SANDBOX_KEYS) as [string, string][]) if (text.includes(key)) leaks.push(`${name} key in ${file}`);
      }
      if (leaks.length) return fail(`key scan FAILED: a key appears in captured output:\n${leaks.join('\n')}`);
      process.stdout.write(`key scan: ${captures.length} files, ${(bytes / 1024).toFixed(0)} KiB of results, errors, logs and stdio scanned; no key found\n`);
    } finally {
      rmSync(suite, { recursive: true, force: true });
    }
  };
}
