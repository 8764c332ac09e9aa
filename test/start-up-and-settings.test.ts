import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstSentence } from '../src/api/client.js';
import { loadTemplates } from '../src/templates/load.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { connect } from './support/connect.js';
import { builtCli, INITIALIZE, INITIALIZED, messages } from './support/raw-stdio.js';

/**
 * Start-up and settings in plain words: start-up never blocks on a templates file nobody writes,
 * every setting that cannot be read is named by every tool call and by check, a send the host
 * cancelled after the POST is logged, and a bad proxy, a refused connection, a port in use, a retry
 * and an invalid argument are each said plainly, without a stack trace. Each test drives the real
 * server (the built binary, or the server in this process) against the sandbox.
 */

const BIN = builtCli();
const sb = await sandbox();
const dir = mkdtempSync(join(tmpdir(), 'docreq-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the binary to its end; stdout and stderr together. */
function run(args: string[], env: Record<string, string | undefined>, timeoutMs = 20_000): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...childEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return once(child, 'exit').then(([code]) => {
    clearTimeout(killer);
    captured.push(out);
    return { code: code as number | null, out };
  });
}

const STACK = /\n\s+at .+:\d+:\d+/;

describe('start-up never blocks on the templates file', () => {
  const fifo = join(dir, 'templates.fifo');
  beforeAll(() => execFileSync('mkfifo', [fifo]));

  it('refuses a FIFO nobody writes, saying what it is', () => {
    const catalog = loadTemplates(fifo);
    expect(catalog.problems.join(' ')).toContain('named pipe (FIFO)');
    expect(catalog.templates.length).toBe(catalog.builtIn);
  });

  it('check ends and says what is wrong; the server initialises and reads and sends without templates', async () => {
    const checked = await run(['check'], { DOCREQ_TEMPLATES_FILE: fifo, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url });
    expect(checked.code).toBe(1);
    expect(checked.out).toContain('named pipe (FIFO)');
    expect(checked.out).toContain('the service answered');

    const child = spawn(process.execPath, [BIN, '--confirm-send', 'never'], {
      env: { ...childEnv(), DOCREQ_TEMPLATES_FILE: fifo, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    const answer = async (id: number) => {
      while (!messages(out).some((m) => m.id === id)) await sleep(20);
      return JSON.stringify(messages(out).find((m) => m.id === id));
    };
    send(INITIALIZE);
    expect(await answer(1)).toContain('"serverInfo"');
    send(INITIALIZED);
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_clients', arguments: {} } });
    expect(await answer(2)).not.toContain('"isError":true');
    const client = sb.demoFirm.clients[0]!;
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'create_request', arguments: { client: client.id, title: 'Edges: no templates needed', items: [{ name: 'Bank statement' }] } },
    });
    expect(await answer(3)).not.toContain('"isError":true');
    child.stdin.end();
    await once(child, 'exit');
    captured.push(out);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
  }, 30_000);
});

describe('every setting speaks', () => {
  for (const [name, value] of [
    ['DOCREQ_TIMEOUT_MS', 'soon'],
    ['DOCREQ_MAX_RESPONSE_MB', '0'],
    ['DOCREQ_LOG_LEVEL', 'loud'],
  ] as const) {
    it(`an unreadable ${name} makes every tool call answer an error naming it, and check exit 1`, async () => {
      const mcp = await connect(sb, { env: { [name]: value } });
      const result = await mcp.call('list_clients');
      await mcp.close();
      expect(result.isError).toBe(true);
      expect(result.text).toContain(name);
      expect(result.text).toMatch(/must be/);
      expect(sb.calls).toHaveLength(0);
      const checked = await run(['check'], { [name]: value, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url });
      expect(checked.code).toBe(1);
      expect(checked.out).toContain(name);
    });
  }

  it('an unreadable safety setting still lets reads run (only sending stops)', async () => {
    const mcp = await connect(sb, { env: { DOCREQ_CONFIRM_SEND: 'sometimes' } });
    const result = await mcp.call('list_clients');
    await mcp.close();
    expect(result.isError).toBeFalsy();
  });

  it('logs at warning level what became of a send the host cancelled after the POST was written', async () => {
    const mcp = await connect(sb, { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 600 }, { after: true, times: 1 });
    const controller = new AbortController();
    const client = sb.demoFirm.clients[1]!;
    const call = mcp.client.callTool(
      { name: 'create_request', arguments: { client: client.id, title: 'Edges: cancelled after writing', items: [{ name: 'Payslip' }] } },
      undefined,
      { signal: controller.signal },
    );
    call.catch(() => undefined);
    while (sb.callsTo('POST', '/api/v1/requests').length === 0) await sleep(10);
    controller.abort();
    await expect(call).rejects.toThrow();
    while (!mcp.logs.some((l) => l.includes('cancelled after it was written'))) await sleep(20);
    await mcp.close();
    const line = mcp.logs.find((l) => l.includes('cancelled after it was written'))!;
    expect(line).toMatch(/^docreq-mcp warn: /);
    expect(line).toMatch(/was sent \(request id [^)]+\)/);
    expect(line).toContain('Edges: cancelled after writing');
  });
});

describe('plain words', () => {
  it('check with a proxy setting that is not a URL names it, without a stack trace', async () => {
    const checked = await run(['check'], { HTTPS_PROXY: 'not-a-url', HTTP_PROXY: 'not-a-url', DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url });
    expect(checked.code).toBe(1);
    expect(checked.out).toContain('✗ HTTP_PROXY is not a URL');
    expect(checked.out).not.toContain('could not start');
    expect(checked.out).not.toMatch(STACK);
  });

  it('a dead proxy is named as the proxy; a refused direct connection names DOCREQ_BASE_URL', async () => {
    const dead = createNetServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((r) => dead.close(r));
    const viaProxy = await run(['check'], { HTTP_PROXY: `http://127.0.0.1:${port}`, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url });
    expect(viaProxy.out).toContain(`Could not reach the proxy http://127.0.0.1:${port} (ECONNREFUSED; from HTTP_PROXY)`);
    const direct = await run(['check'], { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: `http://127.0.0.1:${port}` });
    expect(direct.out).toMatch(/\(ECONNREFUSED\): check DOCREQ_BASE_URL/);
  });

  it('a port in use is said plainly, for sandbox and team mode alike', async () => {
    const busy = createNetServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = String((busy.address() as AddressInfo).port);
    try {
      const sandboxRun = await run(['sandbox', '--port', port], {});
      expect(sandboxRun.code).toBe(1);
      expect(sandboxRun.out).toContain(`127.0.0.1:${port} is already in use`);
      // Run from a clone (dist/cli.js itself), the hint names the command as the person typed it.
      expect(sandboxRun.out).toContain('node dist/cli.js sandbox --port N');
      expect(sandboxRun.out).not.toMatch(STACK);
      const team = await run(['--transport', 'http', '--port', port], { DOCREQ_BASE_URL: sb.url });
      expect(team.code).toBe(1);
      expect(team.out).toContain('DOCREQ_HTTP_PORT');
      expect(team.out).not.toMatch(STACK);
    } finally {
      busy.close();
    }
  });

  it('retry log lines keep the whole address (not cut at its first dot)', async () => {
    expect(firstSentence('Could not reach the service at http://127.0.0.1:9 (ECONNRESET). More.')).toBe(
      'Could not reach the service at http://127.0.0.1:9 (ECONNRESET)',
    );
    const mcp = await connect(sb);
    sb.inject('GET /api/v1/clients', { kind: 'reset' }, { times: 1 });
    const result = await mcp.call('list_clients');
    await mcp.close();
    expect(result.isError).toBeFalsy();
    const retry = mcp.logs.find((l) => l.includes('retry 1 of'))!;
    expect(retry).toContain(new URL(sb.url).host);
  });

  it('validation gives the valid range, not the library’s wording', async () => {
    const mcp = await connect(sb);
    const result = await mcp.call('list_clients', { limit: 0, requests: 'some' });
    await mcp.close();
    expect(result.text).toContain('limit: must be a whole number from 1 to 500');
    expect(result.text).toMatch(/requests: must be one of "open", "none_open", "overdue"/);
    expect(result.text).not.toMatch(/Too small|Invalid option|expected number/);
    expect(sb.calls).toHaveLength(0);
  });
});
