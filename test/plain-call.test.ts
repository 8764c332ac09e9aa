import { Agent, request as httpRequest } from 'node:http';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { HttpService, HttpServiceOptions } from '../src/transport/http.js';
import { PLAIN_CALL_MAX_MS } from '../src/transport/plain-call.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

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
  const all: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: ACCEPT_BOTH,
    'MCP-Protocol-Version': V2025,
    Authorization: `Bearer ${sb.keys.demo}`,
  };
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
    const ids = sb.demoFirm.clients
      .filter((c) => c.status === 'active')
      .slice(0, 10)
      .map((c) => c.id);
    const args = { clients: ids, title: `Plain batch ${Date.now()}`, items: [{ name: 'Bank statements' }] };
    const preview = JSON.parse((await post(svc.url, call(args, undefined, 'create_request_batch'))).body) as {
      result: { structuredContent: { confirmation: { token: string } } };
    };
    const token = preview.result.structuredContent.confirmation.token;
    const posts = () => sb.callsTo('POST', '/api/v1/requests').length;
    const before = posts();
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 250 });
    try {
      const u = new URL(svc.url);
      const req = httpRequest({
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH, 'MCP-Protocol-Version': V2025, Authorization: `Bearer ${sb.keys.demo}` },
      });
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

/**
 * A 2026-07-28 tools/call as the SDK v2 client sends it (its three headers, its envelope in `_meta`): the
 * plain way answers it with the bytes the SDK's entry writes for the same request. A service whose
 * requests may run longer than PLAIN_CALL_MAX_MS answers every request through the entry, so the same
 * request is asked of both. Which way answered shows in the framing: a plain answer is written at once
 * (Content-Length), the entry's through its stream (chunked).
 */
describe('a 2026-07-28 tools/call', () => {
  const V2026 = '2026-07-28';
  const envelope = (capabilities: Record<string, unknown> = {}) => ({
    'io.modelcontextprotocol/protocolVersion': V2026,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'plain-call-test', version: '1' },
  });
  const headers2026 = (name: string) => ({ 'MCP-Protocol-Version': V2026, 'Mcp-Method': 'tools/call', 'Mcp-Name': name });

  /** The same request asked of the plain way and of the SDK's entry: each answer, and which way gave it. */
  async function both(body: unknown, headers: Record<string, string | undefined>) {
    const [plain, sdk] = [await service(), await service({ deadlineMs: PLAIN_CALL_MAX_MS + 1 })];
    const viaPlain = await post(plain.svc.url, body, headers);
    const viaSdk = await post(sdk.svc.url, body, headers);
    const framing = (a: Answer) => (a.headers['content-length'] !== undefined ? 'plain' : a.headers['transfer-encoding'] === 'chunked' ? 'sdk' : 'unknown');
    // Everything but the date and the framing.
    const kept = (a: Answer) => ({
      status: a.status,
      headers: Object.fromEntries(Object.entries(a.headers).filter(([n]) => !['date', 'content-length', 'transfer-encoding'].includes(n))),
      body: a.body,
    });
    return { viaPlain, viaSdk, paths: [framing(viaPlain), framing(viaSdk)], same: () => expect(kept(viaPlain)).toEqual(kept(viaSdk)) };
  }

  it('a plain answer is the very bytes the SDK’s entry writes', async () => {
    const r = await both(call({}, envelope(), 'list_templates'), headers2026('list_templates'));
    expect(r.paths).toEqual(['plain', 'sdk']);
    r.same();
    expect(r.viaPlain.status).toBe(200);
    expect(r.viaPlain.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.viaPlain.body)).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: {} } });
  });

  it('a tool error and an unknown tool: the same answer either way, nothing called', async () => {
    const before = sb.calls.length;
    const toolError = await both(call({ limit: 'many' }, envelope()), headers2026('list_clients'));
    expect(toolError.paths).toEqual(['plain', 'sdk']);
    toolError.same();
    expect(JSON.parse(toolError.viaPlain.body)).toMatchObject({ result: { isError: true } });
    const unknown = await both(call({}, envelope(), 'no_such_tool'), headers2026('no_such_tool'));
    expect(unknown.paths).toEqual(['plain', 'sdk']);
    unknown.same();
    expect(JSON.parse(unknown.viaPlain.body)).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(sb.calls.length).toBe(before);
  });

  it('an input_required round (which Sam Taylor?) is the same but for its request state, which is sealed afresh each time', async () => {
    const args = { client: 'Sam Taylor', title: 'Plain: which Sam', items: [{ name: 'Photo ID' }] };
    const r = await both(call(args, envelope({ elicitation: {} }), 'create_request'), headers2026('create_request'));
    expect(r.paths).toEqual(['plain', 'sdk']);
    const unsealed = (a: Answer) => ({ ...a, body: a.body.replace(/"requestState":"[^"]*"/, '"requestState":"…"') });
    expect(r.viaPlain.body).toMatch(/"requestState":"[^"]+"/);
    expect(JSON.parse(r.viaPlain.body)).toMatchObject({ result: { resultType: 'input_required' } });
    expect(unsealed(r.viaPlain).body).toBe(unsealed(r.viaSdk).body);
    expect([r.viaPlain.status, r.viaPlain.headers['content-type']]).toEqual([r.viaSdk.status, r.viaSdk.headers['content-type']]);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('the SDK v2 client’s whole round (which Sam Taylor? then confirm, then the send) is answered the plain way, and sends once', async () => {
    const { svc } = await service();
    const framings: string[] = [];
    const recording: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      if (typeof init?.body === 'string' && init.body.includes('"tools/call"'))
        framings.push(response.headers.get('content-length') === null ? 'sdk' : 'plain');
      return response;
    };
    const client = new ModernClient({ name: 'plain', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: V2026 } } });
    // The person picks the first client offered and confirms.
    client.setRequestHandler('elicitation/create', (request) => {
      const fields =
        (request.params as { requestedSchema?: { properties?: Record<string, { oneOf?: { const: string }[] }> } }).requestedSchema?.properties ?? {};
      return { action: 'accept', content: Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, k === 'confirm' ? true : f.oneOf![0]!.const])) };
    });
    await client.connect(
      new ModernTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${sb.keys.demo}` } }, fetch: recording }),
    );
    const result = await client.callTool({
      name: 'create_request',
      arguments: { client: 'Sam Taylor', title: 'Plain: the whole round', items: [{ name: 'Photo ID' }] },
    });
    await client.close();
    expect(result.structuredContent).toMatchObject({ sent: true });
    expect(framings.length).toBeGreaterThan(1);
    expect(framings.every((f) => f === 'plain')).toBe(true);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
  });

  it.each([
    ['an Mcp-Name header naming another tool', call({}, envelope(), 'list_templates'), headers2026('list_clients'), 400],
    ['no Mcp-Name header', call({}, envelope(), 'list_templates'), { ...headers2026('list_templates'), 'Mcp-Name': undefined }, 400],
    ['no Mcp-Method header', call({}, envelope(), 'list_templates'), { ...headers2026('list_templates'), 'Mcp-Method': undefined }, 400],
    [
      'an envelope without client capabilities',
      call({}, { 'io.modelcontextprotocol/protocolVersion': V2026 }, 'list_templates'),
      headers2026('list_templates'),
      400,
    ],
    [
      'an envelope naming a revision no one speaks',
      call({}, { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }, 'list_templates'),
      { ...headers2026('list_templates'), 'MCP-Protocol-Version': '2099-01-01' },
      400,
    ],
    ['a progress token (its answer may stream)', call({}, { ...envelope(), progressToken: 'p1' }, 'list_templates'), headers2026('list_templates'), 200],
    [
      'a log level (its answer may stream)',
      call({}, { ...envelope(), 'io.modelcontextprotocol/logLevel': 'debug' }, 'list_templates'),
      headers2026('list_templates'),
      200,
    ],
    [
      'an Mcp-Name header in Base64',
      call({}, envelope(), 'list_templates'),
      { ...headers2026('list_templates'), 'Mcp-Name': `=?base64?${Buffer.from('list_templates').toString('base64')}?=` },
      200,
    ],
    // Each of these passes every check of the plain way but one: that one must send it to the entry.
    [
      'a call without a tool name, and no Mcp-Name header',
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {}, _meta: envelope() } },
      { ...headers2026('x'), 'Mcp-Name': undefined },
      200,
    ],
    [
      'a 2026 envelope under a 2025 MCP-Protocol-Version header',
      call({}, envelope(), 'list_templates'),
      { ...headers2026('list_templates'), 'MCP-Protocol-Version': '2025-11-25' },
      400,
    ],
    ['2026 headers and no _meta at all', call({}, undefined, 'list_templates'), headers2026('list_templates'), 400],
    ['2026 headers and a _meta of null', call({}, null as unknown as Record<string, unknown>, 'list_templates'), headers2026('list_templates'), 400],
    ['2026 headers and an empty _meta', call({}, {}, 'list_templates'), headers2026('list_templates'), 400],
    [
      'a tools/call sent as a notification (no id): nothing to answer',
      (({ id: _, ...note }) => note)(call({}, envelope(), 'list_templates')),
      headers2026('list_templates'),
      202,
    ],
  ])('%s is the SDK’s to answer, with the same bytes', async (_, body, headers, status) => {
    const r = await both(body, headers);
    expect(r.paths).toEqual(['sdk', 'sdk']);
    r.same();
    expect(r.viaPlain.status).toBe(status);
  });

  it('past the deadline: the 504 is the answer, and the call its server was closed under writes nothing more, nor fails', async () => {
    const { svc, log, lines } = await service({ deadlineMs: 500 });
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 1_200 }, { times: 1 });
    const before = log().length;
    const written = lines.length;
    const answer = await post(svc.url, call({ limit: 1, search: 'deadline 2026' }, envelope()), headers2026('list_clients'));
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32000 } });
    await expect.poll(() => log().length).toBeGreaterThan(before);
    expect(log().at(-1)).toMatchObject({ status: 504, deadline: true, tool: 'list_clients' });
    // The service's slow answer comes after the deadline: the SDK's transport, closed with the call's server, ends the call quietly.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(lines.slice(written).join('\n')).not.toMatch(/ERR_|error|failed unexpectedly/i);
    expect(log().length).toBe(before + 1);
    const next = await post(svc.url, call({ limit: 1 }, envelope()), headers2026('list_clients'));
    expect([next.status, next.headers['content-length'] !== undefined]).toEqual([200, true]);
  });
});
