import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';

export const CAPTURE_DIR = join(tmpdir(), 'docreq-mcp-capture');

export function setup(): () => void {
  rmSync(CAPTURE_DIR, { recursive: true, force: true });
  mkdirSync(CAPTURE_DIR, { recursive: true });
  return () => {
    const files = readdirSync(CAPTURE_DIR);
    let bytes = 0;
    const leaks: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(CAPTURE_DIR, file), 'utf8');
      bytes += text.length;
      for (const [name, key] of Object.entries(SANDBOX_KEYS) as [string, string][]) if (text.includes(key)) leaks.push(`${name} key in ${file}`);
    }
    // A throw here is only printed by vitest; the exit code is what fails the run.
    const fail = (message: string) => {
      process.stderr.write(`\n${message}\n`);
      process.exitCode = 1;
    };
    if (leaks.length) return fail(`key scan FAILED: a key appears in captured output:\n${leaks.join('\n')}`);
    process.stdout.write(`\nkey scan: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB of results, errors, logs and stdio scanned; no key found\n`);
  };
}
