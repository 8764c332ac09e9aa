import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { suiteFolder } from './support/folders.js';

/**
 * npm test's first step (scripts/test-needs.mjs): the engines the suite starts on loopback are found, installed where
 * the machine allows it, or named with how to install them before anything runs.
 */
const script = new URL('../scripts/test-needs.mjs', import.meta.url).pathname;
const run = (env: Record<string, string>) => spawnSync(process.execPath, [script], { env, encoding: 'utf8', timeout: 60_000 });

describe('npm test names what it needs before anything runs', () => {
  it('on a machine without them (no apt-get to install with): each named with what it is for, how to install it; exit 1', () => {
    // An empty PATH (node is run by its full path): no redis-server, no shell, no apt-get; Chromium where there is none.
    const r = run({ PATH: mkdtempSync(join(suiteFolder(), 'empty-path-')), CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('npm test needs these on this machine, and did not find them:\n');
    expect(r.stderr).toContain('  - redis-server: the shared send store and sign-in on a real Redis\n');
    expect(r.stderr).toContain('  - Chromium at /usr/bin/chromium (or CHROMIUM_PATH): the pages and the sign-in in a real browser\n');
    expect(r.stderr).toMatch(/On Debian or Ubuntu: sudo apt-get install redis-server .*chromium/);
    expect(r.stderr).toContain('Nothing was run.');
  });

  it('on this machine (where the suite runs): everything found, nothing said', () => {
    const r = run({ PATH: process.env.PATH ?? '', ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}) });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
});
