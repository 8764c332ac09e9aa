import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { captured } from './helpers.js';
import { CAPTURE_DIR } from './global-setup.js';

// Everything this test file captured (results, errors, logs, MCP log messages, child output) is
// written out; the global teardown scans all of it for any key.
afterAll(() => {
  mkdirSync(CAPTURE_DIR, { recursive: true });
  writeFileSync(join(CAPTURE_DIR, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`), captured.join('\n'));
});
