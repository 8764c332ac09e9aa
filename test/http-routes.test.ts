// Team mode's routes (src/transport/routes.ts) as a client and an operator meet them, over real HTTP in front of the sandbox.
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuth, MemoryAuthStore } from '../src/auth/index.js';
import { signAccessToken } from '../src/auth/access-token.js';
import { loadConfig } from '../src/config.js';
import { DEMO_POLICY, startDemoIdp } from '../src/sandbox/idp.js';
import { MemoryStore } from '../src/store/index.js';
import { startHttpService, type HttpService } from '../src/transport/http.js';
import { VERSION } from '../src/version.js';
import { captured } from './support/key-scan.js';
import { FAST_API, sandbox } from './support/sandbox.js';
import { APPS_HOST, pageTokenOf } from './support/connect.js';
import { teamService } from './support/team-service.js';

const sb = await sandbox();
const TOKEN_SECRET = 'routes-test-token-secret-0123456789abcdef';
const ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/** A memory store that cannot be reached for sessions (`mcp-session:…`) while `down`. */
class SessionsDown extends MemoryStore {
  down = false;
  private check(key: string) {
    if (this.down && key.startsWith('mcp-session:')) throw new Error('Nothing was sent: the shared store cannot be reached (test outage)');
  }
  override get(key: string) {
    this.check(key);
    return super.get(key);
  }
  override set(key: string, value: string, ttlMs: number) {
    this.check(key);
    return super.set(key, value, ttlMs);
  }
  override delete(key: string) {
    this.check(key);
    return super.delete(key);
  }
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: () => Record<string, unknown>;
}

/** One request; the answer read whole (an SSE answer's one message as its JSON). */
async function ask(base: string, path: string, init: RequestInit & { key?: string | undefined } = {}): Promise<Answer> {
  const { key, ...rest } = init;
  const headers = { ...ACCEPT, ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(rest.headers as Record<string, string>) };
  const res = await fetch(`${base}${path}`, { ...rest, headers });
  const text = await res.text();
  captured.push(text.slice(0, 2_000));
  const data =
    text.startsWith('event:') || text.startsWith('data:')
      ? text
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6)
      : text;
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(data) as Record<string, unknown> };
}

const rpc = (method: string, params?: unknown, id: number | string = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const listClients = (id: number | string = 1) => rpc('tools/call', { name: 'list_clients', arguments: { limit: 1 } }, id);

const lines: string[] = [];
const store = new SessionsDown();
let svc: HttpService;
const post = (body: string, init: RequestInit & { key?: string } = {}) => ask(svc.url, '/mcp', { method: 'POST', key: sb.keys.demo, body, ...init });
/** Access-log lines (JSON) written so far. */
const log = () => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
/** The access-log line of the request whose path is `path` (the last one), once written. */
async function entryFor(path: string): Promise<Record<string, unknown>> {
  await expect.poll(() => log().some((e) => e.path === path)).toBe(true);
  return log().findLast((e) => e.path === path)!;
}

beforeAll(async () => {
  svc = await teamService(sb, {
    config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory', DOCREQ_TOKEN_SECRET: TOKEN_SECRET }),
    sendStore: store,
    allowedOrigins: ['https://app.example'],
    maxBodyBytes: 4_096,
    write: (line) => {
      lines.push(line);
      captured.push(line);
    },
  });
});

describe('health', () => {
  it('GET /healthz: 200, JSON never cached, with the status, version and what the store holds', async () => {
    const r = await ask(svc.url, '/healthz');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json()).toEqual({ status: 'ok', version: VERSION, store: { backend: 'memory', shared: false, onceOnly: svc.sendStore.reach.note } });
  });

  it('HEAD /healthz: the same status and headers, no body', async () => {
    const r = await ask(svc.url, '/healthz', { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.text).toBe('');
  });

  it('another method is not health: POST /healthz is not found', async () => {
    const r = await ask(svc.url, '/healthz', { method: 'POST', body: '{}' });
    expect(r.status).toBe(404);
  });
});

/** A request over a keep-alive connection with raw header pairs (repeatable); the answer's status, headers and body. */
function raw(
  port: number,
  method: string,
  path: string,
  headers: string[],
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const agent = new Agent({ keepAlive: true });
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        agent.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('refusals before any route', () => {
  it('a request with two Host headers: 400, and the connection is closed', async () => {
    const r = await raw(svc.port, 'GET', '/healthz', ['Host', '127.0.0.1', 'Host', 'other.example']);
    expect(r.status).toBe(400);
    expect(r.headers.connection).toBe('close');
  });

  it('a body over the cap: 413 naming the cap, and the connection is closed', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(5_000) } });
    const r = await raw(
      svc.port,
      'POST',
      '/mcp',
      ['Host', '127.0.0.1', 'Authorization', `Bearer ${sb.keys.demo}`, 'Content-Type', 'application/json', 'Accept', ACCEPT.Accept],
      big,
    );
    expect(r.status).toBe(413);
    expect(r.headers.connection).toBe('close');
    expect(JSON.parse(r.body)).toMatchObject({ error: { message: 'Request body larger than 4096 bytes.' } });
  });
});

describe('discovery, Origin, and what is not a route', () => {
  it('the Server Card is served at /mcp/server-card and names this address and the bearer key', async () => {
    const r = await ask(svc.url, '/mcp/server-card');
    expect(r.status).toBe(200);
    const card = r.json() as { remotes: { url: string }[]; _meta: Record<string, { type: string }> };
    expect(card.remotes[0]!.url).toBe(`${svc.url}/mcp`);
    expect(card._meta['io.github.docreq-mcp/auth']!.type).toBe('bearer');
  });

  it('an allowed Origin gets the CORS headers, Vary: Origin among them; a foreign one 403', async () => {
    const ok = await post(rpc('tools/list'), { headers: { Origin: 'https://app.example' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(ok.headers.get('vary')).toBe('Origin');
    expect(ok.headers.get('access-control-expose-headers')).toBe('Mcp-Session-Id, WWW-Authenticate, Retry-After');
    const foreign = await post(rpc('tools/list'), { headers: { Origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.json()).toMatchObject({ error: { message: 'Forbidden: this Origin is not allowed (DOCREQ_ALLOWED_ORIGINS).' } });
  });

  it('any other path: 404 JSON saying where MCP is served', async () => {
    const r = await ask(svc.url, '/nowhere', { key: sb.keys.demo });
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Not found: MCP is served at /mcp.' }, id: null });
  });
});

describe('/mcp: methods', () => {
  it('a CORS preflight (no key) is answered 204 with the methods, headers and how long to keep them', async () => {
    const r = await ask(svc.url, '/mcp', { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' } });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-methods')).toBe('POST, GET, DELETE');
    // Named here, not read from the module: a browser client sends each of these, and one left out fails its preflight.
    expect(r.headers.get('access-control-allow-headers')).toBe(
      'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID',
    );
    expect(r.headers.get('access-control-max-age')).toBe('600');
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('GET, and DELETE without a session: 405 with Allow: POST, DELETE', async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const r = await ask(svc.url, '/mcp', { method, key: sb.keys.demo });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow'), method).toBe('POST, DELETE');
      expect(r.json(), method).toMatchObject({ error: { message: 'Method not allowed: this server takes POST (and DELETE to end a session).' } });
    }
  });
});

describe('/mcp: the caller and the message', () => {
  it('refused callers and bodies end there: 401, 400 for bad JSON (-32700), and no error in the access log', async () => {
    const none = await ask(svc.url, '/mcp?who=none', { method: 'POST', body: rpc('tools/list') });
    expect(none.status).toBe(401);
    const bad = await ask(svc.url, '/mcp?who=bad-json', { method: 'POST', key: sb.keys.demo, body: '{"jsonrpc":' });
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: invalid JSON.' }, id: null });
    const answer = await ask(svc.url, '/mcp?who=answer', { method: 'POST', key: sb.keys.demo, body: '{"jsonrpc":"2.0","id":1,"result":{}}' });
    expect(answer.status).toBe(202);
    await expect.poll(() => log().length).toBeGreaterThanOrEqual(3);
    const entries = log().slice(-3);
    for (const e of entries) expect(e).not.toHaveProperty('error');
    // An answer (no method in it) gives the access log no rpc field.
    expect(entries.at(-1)).not.toHaveProperty('rpc');
  });
});

describe("/mcp: a 2025 connection's session", () => {
  const client = () => sb.demoFirm.clients.find((c) => c.status === 'active' && c.email)!;
  const draft = () =>
    rpc('tools/call', { name: 'create_request', arguments: { client: client().id, title: 'Routes check', items: [{ name: 'Bank statements' }] } }, 7);
  const open = async (key = sb.keys.demo, capabilities: unknown = APPS_HOST) => {
    const r = await post(rpc('initialize', { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'routes', version: '1' } }), { key });
    expect(r.status).toBe(200);
    return r.headers.get('mcp-session-id')!;
  };
  const inSession = (id: string, body: string, key = sb.keys.demo) =>
    post(body, { key, headers: { 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-11-25' } });

  it('initialize opens one; its requests get the capabilities it declared (the page gets the token)', async () => {
    const id = await open();
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const r = await inSession(id, draft());
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBe(id);
    const result = (r.json() as { result: { _meta?: Record<string, unknown> } }).result;
    expect(pageTokenOf(result)).toEqual(expect.any(String));
  });

  it('an initialize that declares no capability opens none: nothing kept, nothing read after (not a store outage)', async () => {
    for (const capabilities of [undefined, {}, null, [], 'x']) {
      const r = await post(
        rpc('initialize', capabilities === undefined ? undefined : { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'r', version: '1' } }),
      );
      expect(r.status).toBe(200);
      expect(r.headers.get('mcp-session-id')).toBeNull();
    }
    // Any capability declared is kept: a host that asks in forms, or samples, has a session too.
    for (const capabilities of [{ elicitation: {} }, { sampling: {}, roots: {} }]) {
      const r = await post(rpc('initialize', { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'r', version: '1' } }));
      expect(r.headers.get('mcp-session-id')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    }
    // Even with the store down: an initialize with nothing to keep never reaches it.
    store.down = true;
    try {
      const r = await post(rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'r', version: '1' } }, 'n'));
      expect(r.status).toBe(200);
      expect(r.headers.get('mcp-session-id')).toBeNull();
      // Its calls are answered as a host without pages: a draft gets no page token.
      const d = await post(draft(), { headers: { 'Mcp-Protocol-Version': '2025-11-25' } });
      expect(pageTokenOf((d.json() as { result: { _meta?: Record<string, unknown> } }).result)).toBeUndefined();
    } finally {
      store.down = false;
    }
  });

  it("another key's session, or one ended by DELETE: 404 telling to reconnect (-32001), nothing called", async () => {
    const id = await open();
    const foreign = await inSession(id, rpc('tools/list', undefined, 'x'), sb.keys.harbor);
    expect(foreign.status).toBe(404);
    expect(foreign.json()).toMatchObject({ error: { code: -32001 }, id: 'x' });
    expect(foreign.text).toContain('Session not found');
    const ended = await ask(svc.url, '/mcp', { method: 'DELETE', key: sb.keys.demo, headers: { 'Mcp-Session-Id': id } });
    expect(ended.status).toBe(204);
    const after = await inSession(id, rpc('tools/list', undefined, 'y'));
    expect(after.status).toBe(404);
    expect(after.json()).toMatchObject({ error: { code: -32001 }, id: 'y' });
    const again = await ask(svc.url, '/mcp', { method: 'DELETE', key: sb.keys.demo, headers: { 'Mcp-Session-Id': id } });
    expect(again.status).toBe(404);
    expect(again.json()).toMatchObject({ error: { code: -32001 } });
    expect(again.text).toContain('Reconnect (initialize again)');
  });

  it('while the store is down: DELETE and initialize get 503 with Retry-After; a session sends nothing but reads', async () => {
    const id = await open();
    const errors = () => lines.filter((l) => l.startsWith('docreq-mcp error: sessions:'));
    const before = errors().length;
    store.down = true;
    try {
      const del = await ask(svc.url, '/mcp', { method: 'DELETE', key: sb.keys.demo, headers: { 'Mcp-Session-Id': id } });
      expect(del.status).toBe(503);
      expect(del.headers.get('retry-after')).toBe('5');
      expect(del.json()).toMatchObject({ error: { message: 'The shared store that keeps sessions cannot be reached; try again.' } });
      const init = await post(rpc('initialize', { protocolVersion: '2025-11-25', capabilities: APPS_HOST, clientInfo: { name: 'routes', version: '1' } }, 'i'));
      expect(init.status).toBe(503);
      expect(init.headers.get('retry-after')).toBe('5');
      expect(init.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'The shared store that keeps sessions cannot be reached; try again.' },
        id: 'i',
      });
      const send = await inSession(id, draft());
      expect(send.status).toBe(200);
      const text = JSON.stringify(send.json());
      expect(text).toContain(
        "Nothing was sent: sending is disabled until this is fixed: the send store, which keeps what this connection's host can show, cannot be reached; try again shortly: the shared store cannot be reached (test outage)",
      );
      expect(errors().length).toBeGreaterThan(before);
      expect(errors().at(-1)).toBe('docreq-mcp error: sessions: Nothing was sent: the shared store cannot be reached (test outage)\n');
    } finally {
      store.down = false;
    }
  });
});

describe('with sign-in', () => {
  const SECRET = new Uint8Array(randomBytes(32));
  const signedLines: string[] = [];
  const early: Record<string, Answer> = {};
  let signed: HttpService;
  let closeIdp = () => Promise.resolve();
  /** An access token for a person, as sign-in issues it. */
  const tokenFor = (sub: string, email = 'sender@demo.example') =>
    signAccessToken(
      { secret: SECRET, issuer: signed.url },
      {
        identity: { email, sub, role: 'sender' },
        family: `fam-${sub.slice(0, 8)}`,
        started: Date.now(),
        clientId: 'routes-test',
        scope: 'docreq',
        resource: `${signed.url}/mcp`,
      } as unknown as Parameters<typeof signAccessToken>[1],
      300,
    );

  beforeAll(async () => {
    signed = await startHttpService({
      host: '127.0.0.1',
      port: 0,
      allowedHosts: ['127.0.0.1'],
      allowedOrigins: [],
      rateLimit: 1_000,
      config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' }),
      baseUrl: sb.url,
      api: FAST_API,
      write: (line) => {
        signedLines.push(line);
        captured.push(line);
      },
      // What a client meets while sign-in is being set up, asked before it is ready.
      auth: async (url) => {
        early.mcp = await ask(url, '/mcp', { method: 'POST', key: sb.keys.demo, body: rpc('tools/list') });
        early.card = await ask(url, '/mcp/server-card');
        early.health = await ask(url, '/healthz');
        early.home = await ask(url, '/', { headers: { Accept: 'text/html' } });
        const idp = await startDemoIdp([`${url}/login/callback`]);
        closeIdp = () => idp.close();
        return createAuth({
          publicUrl: url,
          secret: SECRET,
          idp,
          policy: DEMO_POLICY,
          apiKey: sb.keys.demo,
          store: new MemoryAuthStore(),
          allowLoopbackHttp: true,
          log: (l) => signedLines.push(l),
        });
      },
    });
  });
  afterAll(async () => {
    await signed.close(1_000);
    await closeIdp();
  });

  it('before sign-in is ready: 503 with Retry-After: 1, except health and the home page', () => {
    expect(early.mcp!.status).toBe(503);
    expect(early.mcp!.headers.get('retry-after')).toBe('1');
    expect(early.mcp!.json()).toMatchObject({ error: { message: 'Starting: sign-in is not ready yet.' } });
    expect(early.card!.status).toBe(503);
    expect(early.health!.status).toBe(200);
    expect(early.home!.status).toBe(200);
  });

  it('the Server Card names sign-in (OAuth) as the way in', async () => {
    const r = await ask(signed.url, '/mcp/server-card');
    expect((r.json() as { _meta: Record<string, { type: string }> })._meta['io.github.docreq-mcp/auth']!.type).toBe('oauth');
  });

  it("a session is its person's: another person with the same key is told it ended; the access log names the person", async () => {
    const sub = `person-${'a'.repeat(150)}`;
    const mine = await tokenFor(sub);
    const init = await ask(signed.url, '/mcp', {
      method: 'POST',
      key: mine,
      body: rpc('initialize', { protocolVersion: '2025-11-25', capabilities: APPS_HOST, clientInfo: { name: 'r', version: '1' } }),
    });
    expect(init.status).toBe(200);
    const id = init.headers.get('mcp-session-id')!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const as = async (token: string) =>
      (
        await ask(signed.url, '/mcp', {
          method: 'POST',
          key: token,
          body: rpc('tools/list'),
          headers: { 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-11-25' },
        })
      ).status;
    expect(await as(mine)).toBe(200);
    expect(await as(await tokenFor('someone-else'))).toBe(404);
    const entries = signedLines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.some((e) => e.user === sub.slice(0, 100))).toBe(true);
  });
});

describe('the access log', () => {
  /** The access-log line of the one request made with `key` (fingerprinted), once written. */
  const entryOf = async (key: string) => {
    const fp = svc.fingerprint(key);
    await expect.poll(() => log().some((e) => e.key === fp)).toBe(true);
    return log().find((e) => e.key === fp)!;
  };

  it('keeps the token secret and whatever the Authorization header holds (8+ characters) out of a logged path', async () => {
    await ask(svc.url, `/x/${TOKEN_SECRET}`);
    expect(await entryFor('/x/[redacted]')).toMatchObject({ status: 404 });
    await ask(svc.url, '/Bearer/abcdefgh/y', { headers: { Authorization: 'Bearer abcdefgh' } });
    expect(await entryFor('/Bearer/[redacted]/y')).toMatchObject({ status: 404 });
  });

  it("a request's ms is the time it took, within what the client saw", async () => {
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 200 }, { times: 1 });
    const started = performance.now();
    expect((await post(listClients(), { key: sb.keys.northwind })).status).toBe(200);
    const seen = performance.now() - started;
    const { ms } = (await entryOf(sb.keys.northwind)) as { ms: number };
    expect(ms).toBeGreaterThanOrEqual(150);
    expect(ms).toBeLessThanOrEqual(seen + 0.1);
  });
});

describe('a client that leaves in the middle of its body', () => {
  /** Sends the head of a POST declaring 1,000 bytes, 20 of them, and closes the connection. */
  const leaveMidBody = async (port: number, headers: string) => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n${headers}\r\n{"jsonrpc":"2.0","id"`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
  };

  it('the access log says 499 (closed by the client), not the status it never got', async () => {
    const key = 'a-key-used-once-by-a-client-that-leaves';
    await leaveMidBody(Number(new URL(svc.url).port), `Authorization: Bearer ${key}\r\nAccept: application/json, text/event-stream\r\n`);
    const fp = svc.fingerprint(key);
    await expect.poll(() => log().some((e) => e.key === fp && e.status === 499)).toBe(true);
    expect(log().filter((e) => e.key === fp)).toEqual([expect.objectContaining({ status: 499, path: '/mcp' })]);
  });
});

describe('/mcp: the rate limit and the answer', () => {
  it('a batch of exactly the limit passes; the next call is refused with a Retry-After the message repeats', async () => {
    const limited = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' }), rateLimit: 3 });
    const batch = `[${listClients(1)},${listClients(2)},${listClients(3)}]`;
    expect((await ask(limited.url, '/mcp', { method: 'POST', key: sb.keys.demo, body: batch })).status).toBe(200);
    const r = await ask(limited.url, '/mcp', { method: 'POST', key: sb.keys.demo, body: listClients(4) });
    expect(r.status).toBe(429);
    const wait = Number(r.headers.get('retry-after'));
    // One call of 3 a minute comes back within 20 s.
    expect(wait).toBeGreaterThan(1);
    expect(wait).toBeLessThanOrEqual(20);
    expect(r.json()).toMatchObject({ error: { message: `Rate limited: at most 3 tool calls a minute per key (DOCREQ_RATE_LIMIT); retry after ${wait} s.` } });
  });

  it('while draining, the health check says so (503, "draining") to a client on a connection still open', async () => {
    const own = await teamService(sb);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const health = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${own.url}/healthz`, { agent }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    expect((await health()).status).toBe(200);
    // A call in flight holds the drain open while the kept-alive connection asks again.
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 1_000 }, { times: 1 });
    const before = sb.callsTo('GET', '/api/v1/clients').length;
    const body = listClients();
    const answer = fetch(`${own.url}/mcp`, { method: 'POST', headers: { ...ACCEPT, Authorization: `Bearer ${sb.keys.demo}` }, body });
    await expect.poll(() => sb.callsTo('GET', '/api/v1/clients').length).toBeGreaterThan(before);
    const closed = own.close(5_000);
    const draining = await health();
    expect([draining.status, JSON.parse(draining.body)]).toEqual([503, expect.objectContaining({ status: 'draining' })]);
    expect((await answer).status).toBe(200);
    expect(await closed).toBe(true);
    agent.destroy();
  });

  it('a call in flight holds a drain up (it counts as in flight)', async () => {
    await expect.poll(() => svc.inflight).toBe(0);
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 300 }, { times: 1 });
    const before = sb.callsTo('GET', '/api/v1/clients').length;
    const answer = post(listClients());
    await expect.poll(() => sb.callsTo('GET', '/api/v1/clients').length).toBeGreaterThan(before);
    expect(svc.inflight).toBe(1);
    expect((await answer).status).toBe(200);
  });

  it("a key's list answers are kept between its requests: the second asks the service only if changed", async () => {
    const body = rpc('tools/call', { name: 'list_requests', arguments: { limit: 2 } });
    const calls = () => sb.callsTo('GET', '/api/v1/requests');
    expect((await post(body)).status).toBe(200);
    const first = calls().length;
    expect((await post(body)).status).toBe(200);
    expect(calls().length).toBe(first + 1);
    expect(calls().at(-1)!.ifNoneMatch).toEqual(expect.any(String));
  });

  it('past the deadline: 504 saying how long, and to check list_requests if it was a send', async () => {
    const slow = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' }), deadlineMs: 400 });
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 1_500 }, { times: 1 });
    const r = await ask(slow.url, '/mcp', { method: 'POST', key: sb.keys.demo, body: listClients(), headers: { 'Mcp-Protocol-Version': '2025-11-25' } });
    expect(r.status).toBe(504);
    expect(r.json()).toMatchObject({
      error: { message: 'The request took longer than 400 ms and was stopped; if it was a send, check list_requests before trying again.' },
    });
  });
});
