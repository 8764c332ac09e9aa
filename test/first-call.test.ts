import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { rehearseFirstCall } from '../src/mcp/rehearsal.js';
import { LineStdioTransport } from '../src/transport/stdio.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { AROUND_TODAY, sandbox, TODAY } from './support/sandbox.js';
import { connect } from './support/connect.js';

/**
 * The first list_requests after initialize answers exactly what a later one does for the same question on the same
 * list, with the rehearsal that warms the process after initialize (src/mcp/rehearsal.ts) and without it; the
 * rehearsal never reaches the service.
 */

const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
const sb = await sandbox({ ...AROUND_TODAY, clients: 120, requests: 1_200 });
const env = { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url };

/** Changes one request's title (so the next answer is a full one, with a new ETag), and gives back a way to put it back. */
function changeList(): () => void {
  const r = sb.demoFirm.requests[1]!;
  const title = r.title;
  r.title = `${title} (changed)`;
  sb.invalidateLists();
  return () => {
    r.title = title;
    sb.invalidateLists();
  };
}

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/cli.js is missing: run npm run build (npm test does)');
});

describe('the first call, in process', () => {
  /** The first answer to list_requests {}, and the answer after the list changed and was put back (a full answer again). */
  async function firstAndLater(rehearse: boolean): Promise<{ first: string; later: string; upstream: number }> {
    if (rehearse) {
      const before = sb.calls.length;
      expect(await rehearseFirstCall(loadConfig({}, env), { busy: () => false })).toEqual({ answered: 2, paused: 0, stopped: false });
      expect(sb.calls.length).toBe(before);
    }
    const mcp = await connect(sb, { today: TODAY });
    try {
      const before = sb.calls.length;
      const first = JSON.stringify(await mcp.call('list_requests', {}));
      const upstream = sb.calls.length - before;
      const restore = changeList();
      await mcp.call('list_requests', {});
      restore();
      const later = JSON.stringify(await mcp.call('list_requests', {}));
      return { first, later, upstream };
    } finally {
      await mcp.close();
    }
  }

  it('answers the first call byte for byte as a later one, without the rehearsal and after it', async () => {
    const without = await firstAndLater(false);
    const rehearsed = await firstAndLater(true);
    expect(without.first).toBe(without.later);
    expect(rehearsed.first).toBe(rehearsed.later);
    expect(rehearsed.first).toBe(without.first);
    expect(rehearsed.first).not.toContain('Revalidated');
    // The first call reads both lists, as before: the rehearsal kept nothing for the real server.
    expect(rehearsed.upstream).toBe(without.upstream);
  });

  it('with nothing to wait on, stops at its first step while real work waits, and at the next step once it comes', async () => {
    const config = loadConfig({}, env);
    const before = sb.calls.length;
    expect(await rehearseFirstCall(config, { busy: () => true })).toEqual({ answered: 0, paused: 0, stopped: true });
    let steps = 0;
    const rehearsed = await rehearseFirstCall(config, { busy: () => ++steps > 4 });
    expect(rehearsed.stopped).toBe(true);
    expect(rehearsed.answered).toBeLessThan(2);
    expect(sb.calls.length).toBe(before);
  });

  it('pauses while real work waits or runs, and goes on once idle', async () => {
    const config = loadConfig({}, env);
    const before = sb.calls.length;
    // Real work comes three times (as a host's listings do), and is done a timer after idle() is asked.
    let steps = 0;
    let working = false;
    const busy = () => {
      if ([2, 6, 12].includes(++steps)) working = true;
      return working;
    };
    const idle = () =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          working = false;
          resolve();
        }, 5),
      );
    const rehearsed = await rehearseFirstCall(config, { busy, idle });
    expect(rehearsed).toMatchObject({ answered: 2, stopped: false });
    // The two lists' bodies are read side by side: a step of each may find the same work and pause for it.
    expect(rehearsed.paused).toBeGreaterThanOrEqual(3);
    expect(sb.calls.length).toBe(before);
  });

  it('gives up once its pauses add up to the bound, under real work that never ends', async () => {
    const config = loadConfig({}, env);
    const before = sb.calls.length;
    let steps = 0;
    // Idle for a moment now and then, busy again at once: the rehearsal may never finish its work.
    const busy = () => ++steps > 3;
    const idle = () => new Promise<void>((resolve) => setTimeout(resolve, 2));
    const rehearsed = await rehearseFirstCall(config, { busy, idle, maxPausedMs: 50 });
    expect(rehearsed.stopped).toBe(true);
    expect(rehearsed.answered).toBe(0);
    expect(rehearsed.paused).toBeGreaterThan(1);
    // An idle() that never resolves ends too, when the bound is reached.
    const never = await rehearseFirstCall(config, { busy: () => ++steps > 3, idle: () => new Promise(() => undefined), maxPausedMs: 20 });
    expect(never).toMatchObject({ answered: 0, paused: 1, stopped: true });
    expect(sb.calls.length).toBe(before);
  });

  it('stops for good once a real tool call has been answered, whether paused or not', async () => {
    const config = loadConfig({}, env);
    const before = sb.calls.length;
    // The call comes at the third step and is answered while the rehearsal waits for idle().
    let steps = 0;
    let answeredCall = false;
    const busy = () => ++steps >= 3 && !answeredCall;
    const idle = () => new Promise<void>((resolve) => setTimeout(() => resolve(void (answeredCall = true)), 5));
    expect(await rehearseFirstCall(config, { busy, idle, moot: () => answeredCall })).toEqual({ answered: 0, paused: 1, stopped: true });
    expect(await rehearseFirstCall(config, { busy: () => false, moot: () => true })).toEqual({ answered: 0, paused: 0, stopped: true });
    expect(sb.calls.length).toBe(before);
  });

  it('does nothing without a configured service', async () => {
    expect(await rehearseFirstCall(loadConfig({}, {}), { busy: () => false })).toEqual({ answered: 0, paused: 0, stopped: false });
  });
});

describe('the first call of the built binary over stdio', () => {
  /**
   * The wire lines (ids put aside) of a first list_requests {} and of one after the list changed and was put back,
   * sent `waitMs` after initialized (0: at once, as a script does, so the rehearsal is paused at once; otherwise it has
   * had time to run), after the listings a host sends (`listings`: tools/list, resources/list, prompts/list and
   * resources/templates/list, each awaited, as the rehearsal runs); and the service's calls between initialize and
   * the first call.
   */
  async function overStdio(waitMs: number, listings = false): Promise<{ first: string; later: string; early: number; stderr: string; listed: string[] }> {
    const child = spawn(process.execPath, [BIN, '--log-level', 'debug'], { env: { ...childEnv(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const line = async (id: number) => {
      const found = () => stdout.split('\n').find((l) => l.startsWith('{') && (JSON.parse(l) as { id?: unknown }).id === id);
      while (!found()) await new Promise((r) => setTimeout(r, 10));
      return found()!.replace(`"id":${id}`, '"id":0');
    };
    const send = (msg: object) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    const call = (id: number) => send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_requests', arguments: {} } });
    try {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      await line(1);
      const atInitialize = sb.calls.length;
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const listed: string[] = [];
      if (listings) {
        const methods = ['tools/list', 'resources/list', 'prompts/list', 'resources/templates/list'];
        for (const [i, method] of methods.entries()) {
          send({ jsonrpc: '2.0', id: 100 + i, method });
          listed.push(await line(100 + i));
        }
      }
      if (waitMs) await new Promise((r) => setTimeout(r, waitMs));
      const early = sb.calls.length - atInitialize;
      call(2);
      const first = await line(2);
      const restore = changeList();
      call(3);
      await line(3);
      restore();
      call(4);
      const later = await line(4);
      return { first, later, early, stderr, listed };
    } finally {
      child.stdin.end();
      await once(child, 'exit');
      captured.push(stdout, stderr);
    }
  }

  it('answers the first call byte for byte as a later one, whether or not the rehearsal had time to run, and the rehearsal calls no service', async () => {
    const atOnce = await overStdio(0);
    const afterIdle = await overStdio(1_500);
    expect(atOnce.first).toBe(atOnce.later);
    expect(afterIdle.first).toBe(afterIdle.later);
    expect(afterIdle.first).toBe(atOnce.first);
    expect(JSON.parse(afterIdle.first)).toMatchObject({ result: { structuredContent: { total: 1_200 } } });
    expect(afterIdle.early).toBe(0);
    // A rehearsal that failed says so at debug level; one stopped by the call is not a failure.
    expect(afterIdle.stderr).not.toContain('rehearsal:');
  });

  it("answers a host's sequence (listings, then the first call) as without the rehearsal, which pauses for the listings and calls no service", async () => {
    // The listings arrive one by one while the rehearsal runs: each pauses it, and it goes on once answered.
    const host = await overStdio(1_500, true);
    const atOnce = await overStdio(0, true);
    expect(host.first).toBe(host.later);
    expect(host.first).toBe(atOnce.first);
    expect(host.listed).toEqual(atOnce.listed);
    expect(host.listed.map((l) => Object.keys(JSON.parse(l) as object))).toEqual(Array(4).fill(['result', 'jsonrpc', 'id']));
    expect(JSON.parse(host.first)).toMatchObject({ result: { structuredContent: { total: 1_200 } } });
    expect(host.early).toBe(0);
    expect(atOnce.early).toBe(0);
    expect(host.stderr).not.toContain('rehearsal:');
  });
});

describe('the first call of the built binary in team mode', () => {
  it('answers the first call byte for byte as a later one after the rehearsal had time to run, which called no service', async () => {
    const child = spawn(process.execPath, [BIN, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], {
      env: { ...childEnv(), DOCREQ_BASE_URL: sb.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      while (!/serving MCP over HTTP at (\S+)/.test(stderr)) await new Promise((r) => setTimeout(r, 10));
      const url = /serving MCP over HTTP at (\S+)/.exec(stderr)![1]!;
      const before = sb.calls.length;
      await new Promise((r) => setTimeout(r, 1_500));
      expect(sb.calls.length).toBe(before);
      const call = async () => {
        const res = await request(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
            authorization: `Bearer ${sb.keys.demo}`,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_requests', arguments: {} } }),
        });
        return res.body.text();
      };
      const first = await call();
      const restore = changeList();
      await call();
      restore();
      const later = await call();
      captured.push(first);
      expect(first).toBe(later);
      expect(JSON.parse(first)).toMatchObject({ result: { structuredContent: { total: 1_200 } } });
    } finally {
      child.kill();
      await once(child, 'exit');
      captured.push(stderr);
    }
  });
});

describe('the stdio transport tells when it is idle', () => {
  it('is busy from the first byte of a request until its answer, and whenIdle resolves then', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    stdout.resume();
    const transport = new LineStdioTransport({ stdin, stdout });
    const requests: { id: number }[] = [];
    transport.onmessage = (m) => void requests.push(m as { id: number });
    await transport.start();
    expect(transport.busy).toBe(false);
    await transport.whenIdle();
    stdin.write('{"jsonrpc":"2.0","id":7,"method":"tools/list"');
    await new Promise((r) => setImmediate(r));
    expect(transport.busy).toBe(true);
    stdin.write('}\n');
    await new Promise((r) => setImmediate(r));
    expect(requests.map((m) => m.id)).toEqual([7]);
    expect(transport.busy).toBe(true);
    let idle = false;
    void transport.whenIdle().then(() => (idle = true));
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(false);
    await transport.send({ jsonrpc: '2.0', id: 7, result: {} });
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(true);
    expect(transport.busy).toBe(false);
    await transport.close();
  });

  it('is idle again once a notification read in pieces has come whole, though nothing is answered', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    stdout.resume();
    const transport = new LineStdioTransport({ stdin, stdout });
    const methods: string[] = [];
    transport.onmessage = (m) => void methods.push((m as { method: string }).method);
    await transport.start();
    stdin.write('{"jsonrpc":"2.0","method":"notifications/');
    await new Promise((r) => setImmediate(r));
    expect(transport.busy).toBe(true);
    let idle = false;
    void transport.whenIdle().then(() => (idle = true));
    stdin.write('initialized"}\n');
    await new Promise((r) => setImmediate(r));
    expect(methods).toEqual(['notifications/initialized']);
    expect(transport.busy).toBe(false);
    expect(idle).toBe(true);
    await transport.close();
  });
});
