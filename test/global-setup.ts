import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { defaultStateDir } from '../src/store/index.js';

export const CAPTURE_DIR = join(tmpdir(), 'docreq-mcp-capture');

/** Every file and folder under `dir` with its size and mtime (a folder's changes when an entry is added or removed): what "left untouched" is checked against. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(d, name);
      try {
        const info = statSync(path);
        out.set(path, `${info.size}:${info.mtimeMs}`);
        if (info.isDirectory()) walk(path);
      } catch {
        // gone meanwhile
      }
    }
  };
  walk(dir);
  return out;
}

export function setup(): () => void {
  rmSync(CAPTURE_DIR, { recursive: true, force: true });
  mkdirSync(CAPTURE_DIR, { recursive: true });
  // The send store's file backend defaults to the user's state folder. The suite never writes there:
  // the test processes and every child they spawn (test/helpers.ts childEnv) get a folder of the
  // suite's own, and the real one is compared before and after.
  const realState = defaultStateDir();
  const before = snapshot(realState);
  const suiteState = mkdtempSync(join(tmpdir(), 'docreq-suite-state-'));
  process.env.DOCREQ_STATE_DIR = join(suiteState, 'state');
  process.env.XDG_STATE_HOME = join(suiteState, 'xdg');
  return () => {
    // A throw here is only printed by vitest; the exit code is what fails the run.
    const fail = (message: string) => {
      process.stderr.write(`\n${message}\n`);
      process.exitCode = 1;
    };
    const after = snapshot(realState);
    rmSync(suiteState, { recursive: true, force: true });
    const touched = [...new Set([...before.keys(), ...after.keys()])].filter((path) => before.get(path) !== after.get(path));
    if (touched.length) {
      fail(
        `state folder check FAILED: ${touched.length} entries of the user's state folder ${realState} changed during the run ` +
          `(a spawned server without the suite's DOCREQ_STATE_DIR: start children from childEnv() in test/helpers.ts; or another docreq-mcp of this user ran meanwhile):\n` +
          touched.slice(0, 5).join('\n'),
      );
    } else process.stdout.write(`\nstate folder: ${realState} untouched (${after.size} entries before and after)\n`);

    const files = readdirSync(CAPTURE_DIR);
    let bytes = 0;
    const leaks: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(CAPTURE_DIR, file), 'utf8');
      bytes += text.length;
      for (const [name, key] of Object.entries(SANDBOX_KEYS) as [string, string][]) if (text.includes(key)) leaks.push(`${name} key in ${file}`);
    }
    if (leaks.length) return fail(`key scan FAILED: a key appears in captured output:\n${leaks.join('\n')}`);
    process.stdout.write(`\nkey scan: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB of results, errors, logs and stdio scanned; no key found\n`);
  };
}
