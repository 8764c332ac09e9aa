import { Agent, request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { HttpService, HttpServiceOptions } from '../src/transport/http.js';
import { PLAIN_CALL_MAX_MS } from '../src/transport/plain-call.js';
import { captured, sandbox, teamService } from './helpers.js';

/**
 * Team mode's plain tool call (src/transport/plain-call.ts), over real HTTP on 127.0.0.1 in front of
 * the sandbox: a 2025 stateless tools/call that can receive nothing before its answer is answered as
 * one JSON body, the same answer the SDK's stream carries; everything else keeps the SDK's own
 * answer: the stream (with progress), and every refusal.
 */

const sb = await sandbox();
const ACCEPT_BOTH = 'application/json, text/event-stream';
const V2025 = '2025-11-25';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function service(overrides: Partial<HttpServiceOptions> = {}): Promise<{ svc: HttpService; log: () => Record<string, unknown>[]; lines: string[] }> {
  const lines: string[] = [];
  const svc = await teamService(sb, {
    config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' }),
    write: (line) => {
      lines.push(line);
      captured.push(line);
    },
    ...overrides,
  });
  const log = () => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { svc, log, lines };
}

function post(url: string, body: unknown, headers: Record<string, string | undefined> = {}, agent: Agent | false = false): Promise<Answer> {
  const all: Record<string, string> = { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH, 'MCP-Protocol-Version': V2025, Authorization: `Bearer ${sb.keys.demo}` };
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) delete all[name];
    else all[name] = value;
  }
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, method: 'POST', path: '/mcp', headers: all, agent }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        captured.push(text);
        resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body: text });
      });
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

/** The JSON-RPC messages of an SSE answer, in order. */
function events(answer: Answer): Record<string, unknown>[] {
  return answer.body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

const call = (args: Record<string, unknown> = { limit: 2 }, meta?: Record<string, unknown>, name = 'list_clients') => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) },
});

describe('a 2025 tools/call that can receive nothing before its answer', () => {
  it('is answered as one JSON body: the very message the SDK streams for the same call', async () => {
    const { svc } = await service();
    await post(svc.url, call()); // the list is then revalidated by both calls below, so their answers match
    const plain = await post(svc.url, call());
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/json');
    const message = JSON.parse(plain.body) as { jsonrpc: string; id: number; result: { structuredContent: { total: number } } };
    expect(message).toMatchObject({ jsonrpc: '2.0', id: 7 });
    expect(message.result.structuredContent.total).toBe(sb.demoFirm.clients.length);

    // An empty _meta asks for nothing, but takes the SDK's way: its stream holds the same answer.
    const streamed = await post(svc.url, call(undefined, {}));
    expect(streamed.headers['content-type']).toBe('text/event-stream');
    expect(events(streamed)).toEqual([message]);

    // A page's call from an allowed (here loopback) origin: the same CORS headers as the stream's.
    const fromPage = await post(svc.url, call(), { Origin: 'http://localhost:5173' });
    expect(fromPage.headers['content-type']).toBe('application/json');
    expect(fromPage.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(fromPage.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
  });

  it('a call that asks only for progress takes the plain way too: with no progress to give, one JSON body; with progress, the events the SDK writes', async () => {
    const { svc } = await service();
    const templates = (meta: Record<string, unknown>) => call({}, meta, 'list_templates');
    // list_templates reports no progress: its answer alone, as one body, the same message the SDK's stream carries.
    const plain = await post(svc.url, templates({ progressToken: 'p1' }));
    expect(plain.headers['content-type']).toBe('application/json');
    const viaSdk = await post(svc.url, templates({ progressToken: 'p1', 'io.example/other': 1 }));
    expect(viaSdk.headers['content-type']).toBe('text/event-stream');
    expect(events(viaSdk)).toEqual([JSON.parse(plain.body)]);
    // list_clients reports progress: every event alike, progress first, the answer last.
    await post(svc.url, call()); // warms the list, so both calls below revalidate it alike
    const streamed = await post(svc.url, call(undefined, { progressToken: 7 }));
    const sdkStreamed = await post(svc.url, call(undefined, { progressToken: 7, 'io.example/other': 1 }));
    expect(streamed.headers['content-type']).toBe('text/event-stream');
    expect(streamed.headers['cache-control']).toBe(sdkStreamed.headers['cache-control']);
    expect(events(streamed)).toEqual(events(sdkStreamed));
    expect(events(streamed).length).toBeGreaterThan(1);
    expect(streamed.body).toBe(sdkStreamed.body);
    // A numeric token is a token too.
    expect((await post(svc.url, templates({ progressToken: 3 }))).headers['content-type']).toBe('application/json');
    // A token of no type the protocol has is the SDK's to refuse; _meta beside the token, the SDK's to stream.
    for (const meta of [{ progressToken: { a: 1 } }, { progressToken: true }]) expect((await post(svc.url, templates(meta))).body).toMatch(/"error"/);
    for (const meta of [{ progressToken: 'p', other: 1 }, { other: 1 }, {}])
      expect((await post(svc.url, templates(meta))).headers['content-type']).toBe('text/event-stream');
    // _meta that is not an object: the SDK's entry refuses the message (400, -32600), as it did before there was a plain way.
    for (const meta of [null, 'progressToken', ['progressToken'], 7]) {
      const raw = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_templates', arguments: {}, _meta: meta } };
      const answer = await post(svc.url, raw);
      expect([meta, answer.status, (JSON.parse(answer.body) as { error?: { code: number } }).error?.code]).toEqual([meta, 400, -32600]);
    }
  });

  it('a call the server refuses is the same JSON-RPC error either way', async () => {
    const { svc } = await service();
    const before = sb.calls.length;
    const plain = await post(svc.url, call({}, undefined, 'no_such_tool'));
    expect(plain.headers['content-type']).toBe('application/json');
    const error = JSON.parse(plain.body) as { error: { code: number; message: string } };
    expect(error.error.code).toBe(-32602);
    expect(error.error.message).toContain('no_such_tool');
    expect(events(await post(svc.url, call({}, {}, 'no_such_tool')))).toEqual([error]);
    const invalid = JSON.parse((await post(svc.url, call({ limit: 'many' }))).body) as { result: { isError: boolean } };
    expect(invalid.result.isError).toBe(true);
    expect(sb.calls.length).toBe(before);
  });
});

describe('everything else keeps the SDK’s answer', () => {
  it('a call with a progress token gets its progress on the stream, before the answer', async () => {
    const { svc } = await service();
    const answer = await post(svc.url, call(undefined, { progressToken: 'p1' }));
    expect(answer.headers['content-type']).toBe('text/event-stream');
    const messages = events(answer);
    expect(messages.length).toBeGreaterThan(1);
    expect(messages.slice(0, -1).every((m) => m.method === 'notifications/progress')).toBe(true);
    expect(messages.at(-1)).toMatchObject({ id: 7, result: { structuredContent: { total: sb.demoFirm.clients.length } } });
  });

  it.each([
    ['an Accept header without text/event-stream', { Accept: 'application/json' }, 406],
    ['an Accept header without application/json', { Accept: 'text/event-stream' }, 406],
    ['a body not sent as JSON', { 'Content-Type': 'text/plain' }, 415],
    ['a protocol version no one speaks', { 'MCP-Protocol-Version': '2024-01-01' }, 400],
    ['the 2026 version without its envelope', { 'MCP-Protocol-Version': '2026-07-28' }, 400],
  ] as const)('%s is refused as the SDK refuses it, nothing called', async (_, headers, status) => {
    const { svc } = await service();
    const before = sb.calls.length;
    const answer = await post(svc.url, call(), headers);
    expect(answer.status).toBe(status);
    expect(answer.body).not.toContain('"result"');
    expect(sb.calls.length).toBe(before);
  });

  it('a call without a protocol version header is the SDK’s (its stream)', async () => {
    const { svc } = await service();
    const answer = await post(svc.url, call(), { 'MCP-Protocol-Version': undefined });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream');
    expect(events(answer)).toHaveLength(1);
  });

  it('a tools/call without params, or sent as a notification, is the SDK’s (an error; 202)', async () => {
    const { svc } = await service();
    const before = sb.calls.length;
    const bare = await post(svc.url, { jsonrpc: '2.0', id: 3, method: 'tools/call' });
    expect(bare.status).toBe(200);
    expect(bare.headers['content-type']).toBe('text/event-stream');
    const [refusal] = events(bare) as { id: number; error: { code: number } }[];
    expect(events(bare)).toHaveLength(1);
    expect(refusal).toMatchObject({ id: 3, error: { code: -32602 } });
    const { id: _, ...notification } = call();
    const told = await post(svc.url, notification);
    expect(told.status).toBe(202);
    expect(told.body).toBe('');
    expect(sb.calls.length).toBe(before);
  });

  it.each([
    ['an id that is null', { id: null }],
    ['no jsonrpc version', { jsonrpc: undefined }],
    ['an id that is not an integer', { id: 1.5 }],
    ['a member JSON-RPC does not have', { extra: true }],
    ['params that are null', { params: null }],
  ])('a tools/call with %s is the SDK’s refusal (400), not left unanswered', async (_, change) => {
    // A short deadline: a message the SDK's server never answers would come back 504 within it.
    const { svc } = await service({ deadlineMs: 3_000 });
    const before = sb.calls.length;
    const answer = await post(svc.url, JSON.stringify({ ...call(), ...change }));
    expect(answer.status).toBe(400);
    expect(sb.calls.length).toBe(before);
  });

  it('a body of null is the SDK’s refusal too', async () => {
    const { svc } = await service();
    const answer = await post(svc.url, 'null');
    expect(answer.status).toBe(400);
    expect(answer.body).not.toContain('Internal error');
  });

  it(`a service whose requests may run longer than ${PLAIN_CALL_MAX_MS / 1000} s keeps the stream (its keep-alive holds proxies off)`, async () => {
    const atBound = await service({ deadlineMs: PLAIN_CALL_MAX_MS });
    expect((await post(atBound.svc.url, call())).headers['content-type']).toBe('application/json');
    const longer = await service({ deadlineMs: PLAIN_CALL_MAX_MS + 1 });
    const answer = await post(longer.svc.url, call());
    expect(answer.headers['content-type']).toBe('text/event-stream');
    expect(events(answer)).toEqual([expect.objectContaining({ id: 7 })]);
  });

  it('other requests (tools/list, a batch) are the SDK’s', async () => {
    const { svc } = await service();
    const list = await post(svc.url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(list.headers['content-type']).toBe('text/event-stream');
    const batch = await post(svc.url, [call(), { ...call(), id: 8 }]);
    expect(batch.headers['content-type']).toBe('text/event-stream');
    expect(events(batch).map((m) => m.id)).toEqual([7, 8]);
  });
});

describe('a plain call cut short', () => {
  it('a confirmed batch whose client goes away: no POST after it left (its server is closed, the batch stopped)', async () => {
    const { svc } = await service();
    const ids = sb.demoFirm.clients.filter((c) => c.status === 'active').slice(0, 10).map((c) => c.id);
    const args = { clients: ids, title: `Plain batch ${Date.now()}`, items: [{ name: 'Bank statements' }] };
    const preview = JSON.parse((await post(svc.url, call(args, undefined, 'create_request_batch'))).body) as { result: { structuredContent: { confirmation: { token: string } } } };
    const token = preview.result.structuredContent.confirmation.token;
    const posts = () => sb.callsTo('POST', '/api/v1/requests').length;
    const before = posts();
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 250 });
    try {
      const u = new URL(svc.url);
      const req = httpRequest({ host: u.hostname, port: u.port, method: 'POST', path: '/mcp', agent: false, headers: { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH, 'MCP-Protocol-Version': V2025, Authorization: `Bearer ${sb.keys.demo}` } });
      req.on('error', () => undefined);
      req.end(JSON.stringify(call({ ...args, confirmationToken: token }, undefined, 'create_request_batch')));
      while (posts() - before < 3) await new Promise((r) => setTimeout(r, 10));
      req.destroy();
      const atLeaving = posts();
      await new Promise((r) => setTimeout(r, 1_000));
      expect(posts()).toBe(atLeaving);
      expect(atLeaving - before).toBeLessThan(ids.length);
    } finally {
      sb.clearFaults();
    }
  });

  it('in flight when the service starts draining: its answer says Connection: close', async () => {
    const { svc } = await service();
    const agent = new Agent({ keepAlive: true });
    expect((await post(svc.url, call(), {}, agent)).headers.connection).toBe('keep-alive');
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 800 }, { times: 1 });
    const slow = post(svc.url, call({ limit: 1, search: 'draining' }), {}, agent);
    await expect.poll(() => svc.inflight).toBe(1);
    const stopped = svc.close(5_000);
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers.connection).toBe('close');
    await stopped;
    agent.destroy();
  });

  it('past the deadline: the 504 is the answer, and the call finishing later writes nothing more', async () => {
    const { svc, log, lines } = await service({ deadlineMs: 500 });
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 1_200 }, { times: 1 });
    const before = log().length;
    const answer = await post(svc.url, call({ limit: 1, search: 'deadline' }));
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32000 } });
    await expect.poll(() => log().length).toBeGreaterThan(before);
    expect(log().at(-1)).toMatchObject({ status: 504, deadline: true, tool: 'list_clients' });
    // The service's slow answer arrives after the deadline; the call's server was closed, so nothing is written.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(lines.join('\n')).not.toMatch(/ERR_HTTP_HEADERS_SENT|Internal error/);
    expect((await post(svc.url, call())).status).toBe(200);
  });
});
