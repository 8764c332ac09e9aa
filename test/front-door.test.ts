import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { PassThrough, Writable } from 'node:stream';
import { createServer } from '../src/mcp/server.js';
import { RateBucket } from '../src/transport/key-scope.js';
import { LineStdioTransport } from '../src/transport/stdio.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';
import { signInService } from './support/sign-in.js';

/**
 * Team mode's front door (src/transport/http.ts) with real HTTP on 127.0.0.1 in front of the sandbox:
 * the rate limit without a shared store, and bodies built to overflow a recursive reader.
 */

const sb = await sandbox();
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const memory = () => loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' });

function post(url: string, body: string, key = sb.keys.demo) {
  return fetch(`${url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${key}` }, body }).then(async (res) => {
    const text = await res.text();
    captured.push(text.slice(0, 2_000));
    return { status: res.status, headers: res.headers, text };
  });
}

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_clients', arguments: { limit: 1 } } });
const batch = (n: number, from = 0) => JSON.stringify(Array.from({ length: n }, (_, i) => call(from + i)));
const listCalls = () => sb.callsTo('GET', '/api/v1/clients').length;

describe('the per-process rate limit (no shared store) counts every call of a JSON-RPC batch', () => {
  it('refuses a batch with more calls than DOCREQ_RATE_LIMIT (429, no Retry-After) and calls nothing', async () => {
    const svc = await teamService(sb, { config: memory(), rateLimit: 10 });
    expect(svc.sendStore.store.scope).not.toBe('replicas');
    const before = listCalls();
    const refused = await post(svc.url, batch(20));
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('this batch holds 20 tool calls, more than the 10 a minute allowed per key');
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(listCalls()).toBe(before);
    // The bucket was not spent by the refusal: a call still goes through.
    expect((await post(svc.url, JSON.stringify(call(99)))).status).toBe(200);
  });

  it('counts each call of a batch: two batches of 6 against a limit of 10, the second gets 429 with Retry-After', async () => {
    const svc = await teamService(sb, { config: memory(), rateLimit: 10 });
    const first = await post(svc.url, batch(6));
    expect(first.status).toBe(200);
    const second = await post(svc.url, batch(6, 10));
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Four calls are left in this minute: one at a time, the fifth is refused.
    for (let i = 0; i < 4; i++) expect((await post(svc.url, JSON.stringify(call(20 + i)))).status).toBe(200);
    expect((await post(svc.url, JSON.stringify(call(30)))).status).toBe(429);
  });

  it('never allows more at once than the bucket holds, however long it has filled', () => {
    const bucket = new RateBucket(10, 0);
    expect(bucket.take(11, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(bucket.take(11, 3_600_000)).toBe(Number.POSITIVE_INFINITY);
    expect(bucket.take(10, 3_600_000)).toBe(0);
    expect(bucket.take(1, 3_600_000)).toBe(6_000);
  });
});

describe('bodies nested deep enough to overflow a recursive reader: 400 with a JSON-RPC error, nothing called', () => {
  const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const mixed = (n: number) => `${'{"a":['.repeat(n)}${']}'.repeat(n)}`;
  const toolCall = (args: string, id = 1) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"list_clients","arguments":${args}}}`;
  // 1 MiB of nested arrays fits under the body cap (1 MiB) only just: 512 KiB of each bracket, less the envelope.
  const mib = (1024 * 1024 - 200) / 2;
  const cases: [string, string, number | null][] = [
    ['a 150,000-deep object as the arguments', toolCall(deepObject(150_000)), 1],
    ['1 MiB of nested arrays inside the arguments', toolCall(`{"names":${deepArray(mib - 20)}}`), 1],
    ['objects and arrays mixed, 100,000 deep', toolCall(`{"x":${mixed(100_000)}}`), 1],
    [
      'deep in params._meta of tools/list',
      `{"jsonrpc":"2.0","id":"m","method":"tools/list","params":{"_meta":${deepObject(150_000)}}}`,
      'm' as unknown as number,
    ],
    ['deep in a field of the message itself', `{"jsonrpc":"2.0","id":3,"method":"tools/list","extra":${deepArray(150_000)}}`, 3],
    ['a body that is nothing but nested arrays', deepArray(mib - 10), null],
    ['one deep call inside a JSON-RPC batch', `[${toolCall('{"limit":1}', 1)},${toolCall(deepObject(150_000), 2)}]`, null],
  ];
  it.each(cases)('%s', async (_name, body, id) => {
    const svc = await teamService(sb, { config: memory() });
    const before = listCalls();
    const r = await post(svc.url, body);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toEqual({ jsonrpc: '2.0', id, error: { code: -32600, message: expect.stringContaining('more than 64 deep') as string } });
    expect(listCalls()).toBe(before);
    // The process is unharmed: the next call is served.
    expect((await post(svc.url, JSON.stringify(call(5)))).status).toBe(200);
  });

  it('takes nesting up to the limit, brackets inside strings not counted; argument checks answer what is wrong', async () => {
    const svc = await teamService(sb, { config: memory() });
    // The message, params and arguments are 3 levels: 61 arrays more is 64 in all, one more is refused.
    const atLimit = await post(svc.url, toolCall(`{"status":${deepArray(61)}}`));
    expect(atLimit.status).toBe(200);
    expect(atLimit.text).toContain('Invalid arguments for list_clients');
    expect((await post(svc.url, toolCall(`{"status":${deepArray(62)}}`))).status).toBe(400);
    // Brackets in strings, after an escaped quote too, are text.
    const inString = await post(svc.url, toolCall(JSON.stringify({ search: `say "${'['.repeat(100_000)}` })));
    expect(inString.status).toBe(200);
  });

  it('deep JSON text inside a string argument (decoded as hosts send it) is refused as a tool result, not a crash', async () => {
    const svc = await teamService(sb, { config: memory() });
    const before = sb.calls.length;
    const args = { client: sb.demoFirm.clients[0]!.id, title: 'Deep', items: deepArray(200_000) };
    const r = await post(svc.url, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'create_request', arguments: args } }));
    expect(r.status).toBe(200);
    expect(r.text).toContain('Invalid arguments for create_request');
    const batchArgs = { recipients: `[${'{"client":'.repeat(60_000)}1${'}'.repeat(60_000)}]`, title: 'Deep', items: [{ name: 'A' }] };
    const r2 = await post(
      svc.url,
      JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'create_request_batch', arguments: batchArgs } }),
    );
    expect(r2.status).toBe(200);
    expect(r2.text).toContain('Invalid arguments for create_request_batch');
    expect(sb.calls.slice(before).filter((c) => c.method === 'POST')).toEqual([]);
  });
});

describe('the same over stdio (our line transport and the real server)', () => {
  it('answers a deep line with the JSON-RPC error for its id, then keeps serving', async () => {
    const stdin = new PassThrough();
    const out: string[] = [];
    const stdout = new Writable({
      write(chunk: Buffer, _enc, done) {
        out.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const server = createServer(loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_STORE: 'memory' }));
    await server.connect(new LineStdioTransport({ stdin, stdout }));
    const send = (message: string) => stdin.write(`${message}\n`);
    send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      }),
    );
    send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_clients","arguments":${'{"a":['.repeat(100_000)}${']}'.repeat(100_000)}}}`);
    send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }));
    await expect.poll(() => out.length, { timeout: 5_000 }).toBe(3);
    const answers = out.map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } });
    expect(answers.find((a) => a.id === 4)).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32600, message: expect.stringContaining('more than 64 deep') as string },
    });
    expect(answers.find((a) => a.id === 5)).toHaveProperty('result.tools');
    await server.close();
  });
});

describe('Origin: loopback origins by default when bound to loopback, others only when listed', () => {
  const withOrigin = (url: string, origin: string) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${sb.keys.demo}`, Origin: origin },
      body: JSON.stringify(call(1)),
    }).then(async (r) => ({ status: r.status, allow: r.headers.get('access-control-allow-origin'), text: await r.text() }));

  it('bound to 127.0.0.1 with no origin listed: a page on any loopback origin is served, a foreign one refused', async () => {
    const svc = await teamService(sb, { config: memory(), allowedOrigins: [] });
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:9', 'http://[::1]:3000', 'https://app.localhost']) {
      const r = await withOrigin(svc.url, origin);
      expect(r.status, origin).toBe(200);
      expect(r.allow, origin).toBe(origin);
    }
    for (const origin of ['https://attacker.example', 'http://localhost.attacker.example', 'null', 'file://', 'http://127.0.0.1.nip.io:80']) {
      const r = await withOrigin(svc.url, origin);
      expect(r.status, origin).toBe(403);
      expect(r.text).toContain('DOCREQ_ALLOWED_ORIGINS');
    }
    const listed = await teamService(sb, { config: memory(), allowedOrigins: ['https://app.example.com'] });
    expect((await withOrigin(listed.url, 'https://app.example.com')).status).toBe(200);
  });

  it('bound to every interface: a loopback origin is refused unless listed', async () => {
    const open = await teamService(sb, { config: memory(), host: '0.0.0.0', allowedHosts: ['127.0.0.1'] });
    const url = open.url.replace('0.0.0.0', '127.0.0.1');
    expect((await withOrigin(url, 'http://localhost:5173')).status).toBe(403);
    const listed = await teamService(sb, { config: memory(), host: '0.0.0.0', allowedHosts: ['127.0.0.1'], allowedOrigins: ['http://localhost:5173'] });
    expect((await withOrigin(listed.url.replace('0.0.0.0', '127.0.0.1'), 'http://localhost:5173')).status).toBe(200);
  });
});

describe('GET / : a plain page saying what this is and how to connect', () => {
  const page = async (url: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`${url}/`, { headers });
    const text = await r.text();
    captured.push(text);
    return { status: r.status, type: r.headers.get('content-type'), csp: r.headers.get('content-security-policy'), text };
  };

  it('with the key per request: the address, a Claude Code line with the header, a VS Code mcp.json that asks for the key; escaped, nothing secret, no setting names', async () => {
    const svc = await teamService(sb, { config: memory() });
    const r = await page(svc.url);
    expect(r.status).toBe(200);
    expect(r.type).toBe('text/html; charset=utf-8');
    expect(r.csp).toContain("default-src 'none'");
    expect(r.text).toContain(`<pre><code>${svc.url}/mcp</code></pre>`);
    expect(r.text).toContain(`claude mcp add --transport http document-requests ${svc.url}/mcp --header &#34;Authorization: Bearer &#60;your key&#62;&#34;`);
    const json = /<h2>VS Code<\/h2>.*?<pre><code>(.*?)<\/code><\/pre>/s
      .exec(r.text)![1]!
      .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
    expect(JSON.parse(json)).toEqual({
      servers: { 'document-requests': { type: 'http', url: `${svc.url}/mcp`, headers: { Authorization: 'Bearer ${input:document-requests-key}' } } },
      inputs: [{ type: 'promptString', id: 'document-requests-key', description: "Your firm's Document Requests API key", password: true }],
    });
    expect(r.text).not.toMatch(/DOCREQ_|<script/);
    for (const key of Object.values(sb.keys as unknown as Record<string, string>)) expect(r.text).not.toContain(key);
    // Behind a proxy that terminated TLS, the address says https.
    expect((await page(svc.url, { 'X-Forwarded-Proto': 'https' })).text).toContain(`<pre><code>https://${new URL(svc.url).host}/mcp</code></pre>`);
    // Still JSON-RPC everywhere else.
    expect((await fetch(`${svc.url}/other`)).status).toBe(404);
  });

  it('with sign-in: the public address, the connector step, and no key anywhere', async () => {
    const svc = await signInService(sb, { publicUrl: 'https://mcp.example.com' });
    const r = await page(svc.url);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<pre><code>https://mcp.example.com/mcp</code></pre>');
    expect(r.text).toContain('Add custom connector');
    expect(r.text).toContain('claude mcp add --transport http document-requests https://mcp.example.com/mcp</code>');
    expect(r.text).not.toMatch(/Bearer|DOCREQ_/);
  });
});

describe('connection bounds hold with the listener apart from the HTTP server', () => {
  it('answers 408 to a request whose body never completes', async () => {
    const { connect } = await import('node:net');
    const svc = await teamService(sb, { config: memory(), timeouts: { firstByteMs: 5_000, headersMs: 300, requestMs: 400, keepAliveMs: 300, checkMs: 50 } });
    const first = await new Promise<string>((resolve) => {
      const c = connect(svc.port, '127.0.0.1', () =>
        c.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${sb.keys.demo}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
        ),
      );
      let data = '';
      c.on('data', (d: Buffer) => (data += d.toString()));
      c.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
    });
    expect(first).toBe('HTTP/1.1 408 Request Timeout');
  });
});

describe('draining: every answer says Connection: close', () => {
  it("the service's own answers too (here /healthz, 503), over a connection kept alive", async () => {
    const { Agent, request } = await import('node:http');
    const svc = await teamService(sb, { config: memory() });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: svc.port, path, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get('/healthz')).toEqual({ status: 200, connection: 'keep-alive' });
    // A slow call in flight keeps the service draining while the kept-alive connection is used again.
    sb.clearFaults();
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 800 }, { times: 1 });
    const slow = post(svc.url, JSON.stringify(call(1)));
    while (svc.inflight === 0) await new Promise((r) => setTimeout(r, 5));
    const closing = svc.close(5_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(await get('/healthz')).toEqual({ status: 503, connection: 'close' });
    expect((await slow).status).toBe(200);
    expect(await closing).toBe(true);
    agent.destroy();
  });

  it('an answer begun after draining started, for a request already in flight (its body still arriving)', async () => {
    const { connect } = await import('node:net');
    const svc = await teamService(sb, { config: memory() });
    const socket = connect(svc.port, '127.0.0.1');
    let head = '';
    const answered = new Promise<void>((resolve) => socket.on('data', (d: Buffer) => ((head += d.toString()), head.includes('\r\n\r\n') && resolve())));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${sb.keys.demo}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{`,
    );
    while (svc.inflight === 0) await new Promise((r) => setTimeout(r, 5));
    const closing = svc.close(5_000);
    await new Promise((r) => setTimeout(r, 50));
    socket.write('xxxx'); // the rest of the body: not JSON, answered 400 by the front door
    await answered;
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\nConnection: close\r\n/i);
    socket.destroy();
    await closing;
  });
});
