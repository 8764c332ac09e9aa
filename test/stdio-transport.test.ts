import { PassThrough, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { LineStdioTransport } from '../src/transport/stdio.js';

/** A real SDK server on our transport, fed through in-memory streams. */
async function serve(options: { maxLineBytes?: number; stdout?: Writable; maxPendingOutput?: number } = {}) {
  const stdin = new PassThrough();
  const out: string[] = [];
  const stdout =
    options.stdout ??
    new Writable({
      write(chunk: Buffer, _enc, done) {
        out.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
  const server = new Server({ name: 't', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  const transport = new LineStdioTransport({ stdin, stdout, maxLineBytes: options.maxLineBytes, maxPendingOutput: options.maxPendingOutput });
  await server.connect(transport);
  const send = (line: string) => stdin.write(`${line}\n`);
  const answers = async (n: number) => {
    for (let i = 0; i < 200 && out.length < n; i++) await new Promise((r) => setTimeout(r, 5));
    return out.map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
  };
  return { stdin, send, answers, server, transport };
}

const init = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
});
const list = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });

describe('the stdio transport', () => {
  it('answers an over-long line with an error and keeps serving', async () => {
    const s = await serve({ maxLineBytes: 4096 });
    s.send(init);
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { pad: 'x'.repeat(10_000) } }));
    s.send(list(3));
    const got = await s.answers(3);
    const skipped = got.find((g) => g.id === null);
    expect(skipped).toMatchObject({ error: { code: -32700 } });
    expect(skipped!.error!.message).toMatch(/too long/);
    expect(got.find((g) => g.id === 3)).toMatchObject({ result: { tools: [] } });
  });

  it('keeps serving after an over-long line that arrives in many chunks', async () => {
    const s = await serve({ maxLineBytes: 4096 });
    s.send(init);
    for (let i = 0; i < 20; i++) s.stdin.write('y'.repeat(1000));
    s.stdin.write(`\n${list(5)}\n`);
    const got = await s.answers(3);
    expect(got.map((g) => g.id).sort()).toEqual([1, 5, null]);
  });

  it('answers an invalid request that carries an id with a JSON-RPC error', async () => {
    const s = await serve();
    s.send(init);
    s.send(JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'tools/list' }));
    s.send(JSON.stringify({ id: 'abc', method: 42 }));
    s.send('{not json');
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 42 })); // no id: a broken notification gets no answer
    s.send(list(8));
    const got = await s.answers(5);
    const byId = (id: unknown) => got.find((g) => g.id === id);
    expect([byId(7), byId('abc'), byId(null), byId(8)]).toEqual([
      { jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringMatching(/Invalid Request/) as unknown } },
      { jsonrpc: '2.0', id: 'abc', error: { code: -32600, message: expect.stringMatching(/Invalid Request/) as unknown } },
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/not JSON/) as unknown } },
      expect.objectContaining({ id: 8 }),
    ]);
  });

  it('stops reading stdin while stdout is not drained, and resumes when it is', async () => {
    // A stdout that never finishes a write until released: the host is not reading.
    const held: (() => void)[] = [];
    const stdout = new Writable({ highWaterMark: 1024, write: (_c, _e, done) => void held.push(() => done()) });
    // Pending output is bounded at 1 MB by default; a small bound shows the same mechanism with small answers.
    const s = await serve({ stdout, maxPendingOutput: 1024 });
    s.send(init);
    for (let batch = 0; batch < 20; batch++) {
      for (let i = 0; i < 20; i++) s.send(list(100 + batch * 20 + i));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(s.stdin.isPaused()).toBe(true);
    // Answers written so far are bounded: the rest wait in stdin, unread.
    expect(stdout.writableLength).toBeLessThan(1024 * 1024);
    expect(s.stdin.readableLength).toBeGreaterThan(0);
    while (held.length) held.shift()!();
    for (let i = 0; i < 50 && s.stdin.isPaused(); i++) {
      while (held.length) held.shift()!();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(s.stdin.isPaused()).toBe(false);
  });
});
