import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv, suiteFolder } from './support/folders.js';

// What a stdio start loads before it answers `initialize` (docs/performance.md, "Cold start"): the
// service's client (undici, and Node's tls and zlib with it) comes after, with warm(), or with the
// first call. The built CLI runs with a preload that notes Node's loaded built-ins when the first
// line goes out on stdout (the answer to initialize) and again at exit.
const CLI = new URL('../dist/cli.js', import.meta.url).pathname;
const dir = mkdtempSync(join(suiteFolder(), 'start-load-'));

describe('what a stdio start loads', () => {
  it("answers initialize before it loads Node's tls and zlib, and loads them after (the client warming up)", async () => {
    const preload = join(dir, 'preload.mjs');
    const notes = join(dir, 'notes.json');
    writeFileSync(
      preload,
      `import { writeFileSync } from 'node:fs';
const seen = {};
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => { seen.answered ??= [...process.moduleLoadList]; return write(chunk, ...rest); };
process.on('exit', () => writeFileSync(${JSON.stringify(notes)}, JSON.stringify({ ...seen, exit: process.moduleLoadList })));
`,
    );
    // Configured (a key and an address nothing answers on), so the client warms up after initialize.
    const env = { ...childEnv(), DOCREQ_API_KEY: 'drk_start_load_test_key', DOCREQ_BASE_URL: 'http://127.0.0.1:9', DOCREQ_LOG_LEVEL: 'error' };
    const child = spawn(process.execPath, ['--import', preload, CLI], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const answered = async (id: number) => {
      while (!out.includes(`"id":${id}`)) await once(child.stdout, 'data');
    };
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'start-load', version: '1' } } })}\n`,
    );
    await answered(1);
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`,
    );
    await answered(2);
    // The warm-up loads the client in the moments after initialize.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    child.stdin.end();
    await once(child, 'exit');
    const { answered: atAnswer, exit } = JSON.parse(readFileSync(notes, 'utf8')) as { answered: string[]; exit: string[] };
    expect(atAnswer.length).toBeGreaterThan(20);
    expect(atAnswer).not.toContain('NativeModule tls');
    expect(atAnswer).not.toContain('NativeModule zlib');
    expect(exit).toContain('NativeModule tls');
    expect(exit).toContain('NativeModule zlib');
  });
});
