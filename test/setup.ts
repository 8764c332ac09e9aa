import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { readyTemplates } from '../src/templates/load.js';
import { captured } from './support/key-scan.js';

// Each test file's process gets a state folder of its own inside the run's folder (test/global-setup.ts);
// the servers it spawns (test/support/folders.ts childEnv) share it, as a restart needs.
const suite = process.env.DOCREQ_TEST_SUITE_DIR;
if (!suite) throw new Error('DOCREQ_TEST_SUITE_DIR is not set: the suite runs with test/global-setup.ts (vitest.config.ts)');
process.env.DOCREQ_STATE_DIR = mkdtempSync(join(suite, 'state-'));

// As main.ts does before it starts a server with a templates file (the YAML reader is loaded on demand).
await readyTemplates('templates.yaml');

// Everything this test file captured (results, errors, logs, MCP log messages, child output) is
// written out; the global teardown scans all of it for any key.
afterAll(() => {
  const dir = process.env.DOCREQ_TEST_CAPTURE_DIR!;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`), captured.join('\n'));
});
