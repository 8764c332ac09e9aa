// Team mode as an operator starts it (serveHttp in process): its refusals, start-up lines and stop, and its rate limit across replicas.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAuth, MemoryAuthStore } from '../src/auth/index.js';
import { loadConfig, readSettings } from '../src/config.js';
import { DEMO_POLICY, DEMO_USERS, startDemoIdp } from '../src/sandbox/idp.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { serveHttp, type HttpService } from '../src/transport/http.js';
import { VERSION } from '../src/version.js';
import { suiteFolder } from './support/folders.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';
import { connectAs } from './support/sign-in.js';
import { freePort } from './support/ports.js';
import { startRedis } from './support/redis.js';

const sb = await sandbox();
const folder = mkdtempSync(join(suiteFolder(), 'http-service-'));

/** Everything written to stderr while this file runs (the sandbox's keys among it: never kept for the key scan), and every exit asked for. */
const stderr: string[] = [];
const exits: (number | string | null | undefined)[] = [];
class Exit extends Error {}
let exitThrows = true;
beforeAll(() => {
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
  vi.spyOn(process, 'exit').mockImplementation((code) => {
    exits.push(code);
    if (exitThrows) throw new Exit(`exit ${code}`);
    return undefined as never;
  });
});
afterAll(() => vi.restoreAllMocks());

type Signal = 'SIGTERM' | 'SIGINT';
interface Started {
  svc?: HttpService;
  error?: unknown;
  lines: () => string[];
  on: Record<Signal, (() => void)[]>;
}
/** Started services: closed (and their signal listeners removed) after the file. */
const started: Started[] = [];
afterAll(async () => {
  exitThrows = false;
  for (const s of started) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) for (const l of s.on[signal]) process.off(signal, l);
    await s.svc?.close(100);
  }
});

/** Made on first use, by whichever test runs first (a mutation run may run any one test alone). */
function lazily<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** Starts team mode as `docreq-mcp --transport http` does: the stderr lines since, and the signal listeners it added. */
async function start(env: Record<string, string>, sandboxed = false): Promise<Started> {
  const mark = stderr.length;
  const before = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };
  const added = (s: Signal) => process.listeners(s).filter((l) => !before[s].includes(l)) as (() => void)[];
  let end: number | undefined;
  const lines = () => stderr.slice(mark, end).join('').split('\n').filter(Boolean);
  let result: Started;
  try {
    const svc = await serveHttp(readSettings({}, { DOCREQ_HTTP_PORT: '0', ...env }), sandboxed ? { sandbox: {} } : {});
    end = stderr.length;
    result = { svc, lines, on: { SIGTERM: added('SIGTERM'), SIGINT: added('SIGINT') } };
  } catch (error) {
    result = { error, lines, on: { SIGTERM: added('SIGTERM'), SIGINT: added('SIGINT') } };
  }
  started.push(result);
  return result;
}

/** A refusal: exit 2 with this line on stderr, nothing started. */
async function refused(env: Record<string, string>): Promise<string> {
  const before = exits.length;
  const { error, svc, lines } = await start(env);
  expect(svc).toBeUndefined();
  expect(error).toBeInstanceOf(Exit);
  expect(exits.slice(before)).toEqual([2]);
  return lines().join('\n');
}

/** Stops a service as SIGTERM / SIGINT does (its listener called); resolves with the exit code asked for. */
async function stopWith(s: Started, signal: Signal): Promise<number | string | null | undefined> {
  const before = exits.length;
  exitThrows = false;
  try {
    s.on[signal][0]!();
    await vi.waitFor(() => expect(exits.length).toBeGreaterThan(before), { timeout: 5_000, interval: 20 });
    return exits[before];
  } finally {
    exitThrows = true;
  }
}

/** What a start says of a file store at `dir`, and of what it serves. */
const fileStore = (dir: string) =>
  `docreq-mcp warn: send store: no shared store: once-only holds across the processes of this machine only (the file store at ${dir}), and the rate limit holds per process only; replicas need DOCREQ_STORE_URL=redis://… to share them`;
const serving = (s: Started, base: string, how = 'the key comes with each request') =>
  `docreq-mcp info: docreq-mcp ${VERSION} serving MCP over HTTP at ${s.svc!.url}/mcp for ${base} (stateless; ${how})`;

const MCP = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
/** One tools/call (of a tool that does not exist, so nothing reaches the service): its status, Retry-After and body. */
async function call(url: string, key: string, name = 'no_such_tool') {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...MCP, Authorization: `Bearer ${key}` }, body });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
}
const statuses = async (url: string, key: string, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(url, key)).status);
  return out;
};

describe('refusals before anything starts (exit 2, one line saying why)', () => {
  const OWN_KEY =
    "docreq-mcp: DOCREQ_API_KEY (or DOCREQ_API_KEY_FILE) is set, but team mode (--transport http) takes the key from each request's Authorization header: a key of the service's own would let anyone who reaches the port act as the firm. Unset it and start again.";

  it('refuses a key of its own, in DOCREQ_API_KEY or (without sign-in) DOCREQ_API_KEY_FILE', async () => {
    expect(await refused({ DOCREQ_API_KEY: SANDBOX_KEYS.demo, DOCREQ_BASE_URL: sb.url })).toBe(OWN_KEY);
    expect(await refused({ DOCREQ_API_KEY_FILE: join(folder, 'key'), DOCREQ_BASE_URL: sb.url })).toBe(OWN_KEY);
  });

  it('refuses team-mode settings it cannot read, each on its own line', async () => {
    expect(await refused({ DOCREQ_HTTP_PORT: 'x', DOCREQ_RATE_LIMIT: '0', DOCREQ_BASE_URL: sb.url })).toBe(
      [
        'docreq-mcp: team mode cannot start:',
        '- DOCREQ_HTTP_PORT (or --port) must be a number from 0 to 65535: got a 1-character value of letters (not shown).',
        '- DOCREQ_RATE_LIMIT (or --rate-limit) must be a whole number from 1 to 1000000000: got a 1-character value of digits (not shown).',
      ].join('\n'),
    );
  });

  it('refuses without a service to send to (unset or blank), or with one it must not use', async () => {
    const needed = 'docreq-mcp: team mode needs DOCREQ_BASE_URL (or --base-url): the service every request is sent to. To try it, add --sandbox.';
    expect(await refused({})).toBe(needed);
    expect(await refused({ DOCREQ_BASE_URL: '  ' })).toBe(needed);
    expect(await refused({ DOCREQ_BASE_URL: 'http://docs.example.com' })).toBe(
      'docreq-mcp: DOCREQ_BASE_URL (or --base-url) must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1).',
    );
  });

  it('refuses sign-in (--auth oauth) without its settings, each missing one on its own line', async () => {
    const text = await refused({ DOCREQ_AUTH: 'oauth', DOCREQ_BASE_URL: sb.url });
    expect(text.split('\n')).toEqual([
      'docreq-mcp: sign-in (--auth oauth) cannot start:',
      "- --auth oauth needs DOCREQ_API_KEY_FILE: a file holding the firm's key, which the service uses for signed-in staff.",
      "- --auth oauth needs DOCREQ_OIDC_ISSUER: the firm's OpenID Connect issuer URL.",
      "- --auth oauth needs DOCREQ_OIDC_CLIENT_ID: this service's client id at the identity provider.",
      "- --auth oauth needs DOCREQ_OIDC_CLIENT_SECRET_FILE: a file holding this service's client secret at the identity provider.",
      '- --auth oauth needs DOCREQ_AUTH_READERS and/or DOCREQ_AUTH_SENDERS: nobody would be let in.',
    ]);
  });

  it('warns, listening beyond loopback, when DOCREQ_ALLOWED_HOSTS names loopback only (however written)', async () => {
    // 192.0.2.1 (TEST-NET) is on no interface here: the warning comes first, then the listen fails.
    const warning =
      'docreq-mcp warn: listening on 192.0.2.1, but DOCREQ_ALLOWED_HOSTS accepts only loopback names: set it to the host names clients use, or every request gets 403.';
    const env = { DOCREQ_HTTP_HOST: '192.0.2.1', DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' };
    const loopbackOnly = await start({ ...env, DOCREQ_ALLOWED_HOSTS: 'localhost,127.0.0.1:8787,[::1],[::1]:8787' });
    expect((loopbackOnly.error as NodeJS.ErrnoException).code).toBe('EADDRNOTAVAIL');
    expect(loopbackOnly.lines().filter((l) => l.includes('DOCREQ_ALLOWED_HOSTS'))).toEqual([warning]);
    const named = await start({ ...env, DOCREQ_ALLOWED_HOSTS: 'localhost,mcp.example.com' });
    expect((named.error as NodeJS.ErrnoException).code).toBe('EADDRNOTAVAIL');
    expect(named.lines().filter((l) => l.includes('DOCREQ_ALLOWED_HOSTS'))).toEqual([]);
  });
});

describe('a start on the service DOCREQ_BASE_URL names', () => {
  const state = join(folder, 'state');
  let metricsPort: number;
  const started = lazily(async () => {
    metricsPort = await freePort();
    return start({
      DOCREQ_BASE_URL: sb.url,
      DOCREQ_STATE_DIR: state,
      // An IPv6 address written as in a URL.
      DOCREQ_HTTP_HOST: '[::1]',
      DOCREQ_TIMEOUT_MS: '1000',
      DOCREQ_READ_ONLY: 'true',
      DOCREQ_METRICS_PORT: String(metricsPort),
      // White space alone is no key.
      DOCREQ_API_KEY: '  ',
      DOCREQ_API_KEY_FILE: '  ',
    });
  });

  it('says where sends are kept, where the metrics are and what it serves, and nothing else', async () => {
    const s = await started();
    expect(s.svc!.url).toBe(`http://[::1]:${s.svc!.port}`);
    expect(s.lines()).toEqual([
      `docreq-mcp info: metrics (Prometheus text format) at http://127.0.0.1:${metricsPort}/metrics`,
      fileStore(state),
      `${serving(s, sb.url)}, read-only`,
    ]);
  });

  it('answers a tool call within its bound (the tool timeout + 5 s) and logs it on stderr', async () => {
    const s = await started();
    const mark = stderr.length;
    const answer = await call(s.svc!.url, SANDBOX_KEYS.demo, 'list_clients');
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('structuredContent');
    const logged = stderr
      .slice(mark)
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toMatchObject([{ method: 'POST', path: '/mcp', status: 200, tool: 'list_clients', key: s.svc!.fingerprint(SANDBOX_KEYS.demo) }]);
  });

  it('on SIGTERM stops once (a SIGINT after it changes nothing), says what was still in flight, and exits 1', async () => {
    const s = await started();
    // A request whose body never ends is in flight until the drain's 10 s are over (the clock moved past them).
    const hanging = httpRequest({
      host: '::1',
      port: s.svc!.port,
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP, 'Content-Length': '100', Authorization: 'Bearer k' },
    });
    hanging.on('error', () => undefined);
    hanging.write('{');
    await vi.waitFor(() => expect(s.svc!.inflight).toBe(1));
    const mark = stderr.length;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const before = exits.length;
      exitThrows = false;
      s.on.SIGTERM[0]!();
      s.on.SIGINT[0]!();
      vi.advanceTimersByTime(11_000);
      await vi.waitFor(() => expect(exits.length).toBeGreaterThan(before), { timeout: 5_000, interval: 20 });
      expect(exits.slice(before)).toEqual([1]);
    } finally {
      exitThrows = true;
      vi.useRealTimers();
    }
    // The hanging request's access-log line (its connection closed) comes with them.
    expect(
      stderr
        .slice(mark)
        .join('')
        .split('\n')
        .filter((l) => l && !l.startsWith('{')),
    ).toEqual([
      'docreq-mcp info: SIGTERM: no new connections; letting 1 request(s) in flight finish (at most 10 s)',
      'docreq-mcp warn: stopped with 1 request(s) still in flight',
    ]);
  });
});

describe('a start on the embedded sandbox (--sandbox)', () => {
  const sandboxLine = (url: string) => `docreq-mcp info: sandbox API on ${url} (${sb.demoFirm.name}); nothing reaches a real service`;
  const sandboxUrl = (s: Started) => /sandbox API on (\S+) /.exec(s.lines()[0] ?? '')?.[1] ?? 'not started';

  it('names its keys and the state folder asked for, serves them, and on SIGINT closes the sandbox and exits 0', async () => {
    const state = join(folder, 'sandbox-state');
    const s = await start({ DOCREQ_STATE_DIR: state }, true);
    const url = sandboxUrl(s);
    const k = SANDBOX_KEYS;
    expect(s.lines()).toEqual([
      sandboxLine(url),
      `docreq-mcp info: sandbox keys (send one as Authorization: Bearer <key>): demo ${k.demo}; harbor ${k.harbor}; northwind ${k.northwind}; revoked ${k.revoked}`,
      fileStore(state),
      serving(s, url),
    ]);
    expect((await call(s.svc!.url, k.demo, 'list_clients')).body).toContain('structuredContent');
    const mark = stderr.length;
    expect(await stopWith(s, 'SIGINT')).toBe(0);
    expect(stderr.slice(mark).join('')).toBe('docreq-mcp info: SIGINT: no new connections; letting 0 request(s) in flight finish (at most 10 s)\n');
    await expect(fetch(`${url}/api/v1/clients`)).rejects.toThrow();
  });

  it('with sign-in, keeps the sandbox sends apart, names the demo people, and on SIGTERM exits 0', async () => {
    const xdg = join(folder, 'xdg');
    const s = await start({ DOCREQ_AUTH: 'oauth', XDG_STATE_HOME: xdg }, true);
    const url = sandboxUrl(s);
    const people = DEMO_USERS.map((u) => `${u.email} (password ${u.password})`).join('; ');
    expect(s.lines()).toEqual([
      sandboxLine(url),
      "docreq-mcp info: sign-in (--auth oauth): the service holds the demo firm's key; staff sign in at the demo identity provider below",
      'docreq-mcp info: access tokens are signed with a random per-process secret: set DOCREQ_AUTH_SECRET_FILE (or DOCREQ_TOKEN_SECRET) so that every replica, and a restarted one, accepts them.',
      `docreq-mcp info: sandbox demo identity provider: ${people}; readers ${DEMO_POLICY.readers.join(', ')}; senders ${DEMO_POLICY.senders.join(', ')}`,
      fileStore(join(xdg, 'docreq-mcp', 'sandbox')),
      serving(s, url, 'staff sign in with OAuth; the key stays in the service'),
    ]);
    // Staff sign in: the firm's key is no access token.
    const bare = await call(s.svc!.url, SANDBOX_KEYS.demo);
    expect([bare.status, bare.body]).toEqual([401, expect.stringContaining('Unauthorized: the access token is not valid here.') as string]);
    const mark = stderr.length;
    expect(await stopWith(s, 'SIGTERM')).toBe(0);
    expect(stderr.slice(mark).join('')).toBe('docreq-mcp info: SIGTERM: no new connections; letting 0 request(s) in flight finish (at most 10 s)\n');
  });

  it("with the firm's identity provider, tells the metrics whether it answers", async () => {
    const idp = await startDemoIdp(['http://127.0.0.1:9/login/callback']);
    const file = (name: string, text: string) => (writeFileSync(join(folder, name), text, { mode: 0o600 }), join(folder, name));
    try {
      const s = await start({
        DOCREQ_BASE_URL: sb.url,
        DOCREQ_STORE: 'memory',
        DOCREQ_AUTH: 'oauth',
        DOCREQ_API_KEY_FILE: file('firm-key', SANDBOX_KEYS.demo),
        DOCREQ_OIDC_ISSUER: idp.issuer,
        DOCREQ_OIDC_CLIENT_ID: idp.clientId,
        DOCREQ_OIDC_CLIENT_SECRET_FILE: file('client-secret', idp.clientSecret),
        DOCREQ_AUTH_READERS: '@demo.example',
        DOCREQ_METRICS_PORT: String(await freePort()),
      });
      expect(await (await fetch(s.svc!.metricsUrl!)).text()).toMatch(/^docreq_idp_up 1$/m);
      expect(await stopWith(s, 'SIGTERM')).toBe(0);
    } finally {
      await idp.close();
    }
  });
});

/** Fake clock (Date only) for the rate windows: `at(m, s)` is second s of minute m of a day far from now. */
const MINUTE = Math.floor(Date.UTC(2031, 0, 1) / 60_000);
const at = (m: number, s: number) => vi.setSystemTime((MINUTE + m) * 60_000 + s * 1_000);
async function onFakeClock(work: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    await work();
  } finally {
    vi.useRealTimers();
  }
}
const NO_TOKEN_SECRET =
  'docreq-mcp warn: DOCREQ_STORE_URL is set (a store replicas share) but DOCREQ_TOKEN_SECRET is not: a confirmation token issued by another replica will be refused: set DOCREQ_TOKEN_SECRET, the same on every replica (openssl rand -hex 32).';
const limited = (limit: number, seconds: number) => ({
  status: 429,
  retryAfter: String(seconds),
  body: JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32000, message: `Rate limited: at most ${limit} tool calls a minute per key (DOCREQ_RATE_LIMIT); retry after ${seconds} s.` },
    id: null,
  }),
});

describe('the rate limit on a shared store (redis), held across replicas', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => void (redis = await startRedis()));
  const replicas = lazily(async () => {
    const env = { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE_URL: redis.url, DOCREQ_RATE_LIMIT: '4' };
    return { a: await start(env), b: await start({ ...env, DOCREQ_TOKEN_SECRET: 'r'.repeat(64) }) };
  });
  afterAll(async () => {
    const { a, b } = await replicas();
    for (const s of [a, b]) await s.svc?.close(100);
    redis.child.kill('SIGKILL');
  });

  it('each replica says the store is shared; one without DOCREQ_TOKEN_SECRET warns that tokens will not cross', async () => {
    const { a, b } = await replicas();
    const shared = `docreq-mcp info: send store: once-only and the rate limit hold across every replica (redis at 127.0.0.1:${redis.port}/3)`;
    expect(a.lines()).toEqual([NO_TOKEN_SECRET, shared, serving(a, sb.url)]);
    expect(b.lines()).toEqual([shared, serving(b, sb.url)]);
  });

  it("counts a key's calls on every replica: the 5th of 4 a minute is refused on both until the minute ends; another key is not", async () => {
    const { a, b } = await replicas();
    await onFakeClock(async () => {
      at(0, 30);
      expect([...(await statuses(a.svc!.url, 'drk_one', 2)), ...(await statuses(b.svc!.url, 'drk_one', 2))]).toEqual([200, 200, 200, 200]);
      expect(await call(b.svc!.url, 'drk_one')).toEqual(limited(4, 30));
      expect(await call(a.svc!.url, 'drk_one')).toEqual(limited(4, 30));
      expect(await statuses(a.svc!.url, 'drk_two', 1)).toEqual([200]);
    });
  });

  it('does not count a refused batch: the call that still fits is served', async () => {
    const { a, b } = await replicas();
    await onFakeClock(async () => {
      at(2, 10);
      expect(await statuses(a.svc!.url, 'drk_batch', 3)).toEqual([200, 200, 200]);
      const one = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } });
      const batch = await fetch(`${b.svc!.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP, Authorization: 'Bearer drk_batch' },
        body: JSON.stringify([one(1), one(2)]),
      });
      expect(batch.status).toBe(429);
      expect(await statuses(b.svc!.url, 'drk_batch', 2)).toEqual([200, 429]);
    });
  });

  it("counts the last minute's calls (refused ones not) as much as that minute is still in the sliding window", async () => {
    const { a, b } = await replicas();
    await onFakeClock(async () => {
      at(4, 50);
      expect(await statuses(a.svc!.url, 'drk_slide', 4)).toEqual([200, 200, 200, 200]);
      expect(await call(b.svc!.url, 'drk_slide')).toEqual(limited(4, 10));
      // 15 s into the next minute, 3/4 of the last one is still in the window: 4 × 0.75 = 3 calls, so one more fits.
      at(5, 15);
      expect(await statuses(b.svc!.url, 'drk_slide', 1)).toEqual([200]);
      expect(await call(a.svc!.url, 'drk_slide')).toEqual(limited(4, 45));
    });
  });
});

describe('a shared store that cannot be reached', () => {
  it('counts per process instead, saying so once; the store says it is down', async () => {
    const port = await freePort();
    const mark = stderr.length;
    const s = await start({ DOCREQ_BASE_URL: sb.url, DOCREQ_STORE_URL: `redis://127.0.0.1:${port}/3`, DOCREQ_RATE_LIMIT: '2', DOCREQ_TOKEN_SECRET: '   ' });
    await onFakeClock(async () => {
      at(10, 30);
      expect(await statuses(s.svc!.url, 'drk_down', 2)).toEqual([200, 200]);
      expect(await call(s.svc!.url, 'drk_down')).toEqual(limited(2, 30));
    });
    const store = `redis at 127.0.0.1:${port}/3`;
    const lines = stderr.slice(mark).join('').split('\n');
    expect(lines.filter((l) => l.startsWith('docreq-mcp error'))).toEqual([
      `docreq-mcp error: send store ${store}: ECONNREFUSED; sending is refused until it is back`,
    ]);
    expect(lines.filter((l) => l.startsWith('docreq-mcp warn'))).toEqual([
      'docreq-mcp warn: configuration: DOCREQ_TOKEN_SECRET must be at least 32 characters (e.g. openssl rand -hex 32): got a 3-character value of other characters (not shown).',
      NO_TOKEN_SECRET,
      `docreq-mcp warn: rate limit: the send store (${store}) cannot be used (not connected: ECONNREFUSED), so this server cannot guarantee the request is sent only once. Sending works again once it is back; reading is not affected.; counting per process until it is back`,
    ]);
  });
});

describe('startHttpService', () => {
  it("keeps a firm's fingerprint as every release derives it from DOCREQ_TOKEN_SECRET", async () => {
    const svc = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_TOKEN_SECRET: 'f'.repeat(32) }) });
    expect(svc.fingerprint('drk_pinned')).toBe('58e15bbb0140');
  });

  it('keeps per-key state for at most maxKeyScopes firms: a firm dropped starts its minute afresh', async () => {
    const svc = await teamService(sb, { rateLimit: 1, maxKeyScopes: 1 });
    expect(await statuses(svc.url, 'drk_first', 2)).toEqual([200, 429]);
    expect(await statuses(svc.url, 'drk_second', 1)).toEqual([200]);
    expect(await statuses(svc.url, 'drk_first', 1)).toEqual([200]);
  });

  it('answers 503 "Starting" while sign-in is still being set up', async () => {
    let probe: Awaited<ReturnType<typeof call>> | undefined;
    await teamService(sb, {
      auth: async (url) => {
        probe = await call(url, 'drk_early');
        return undefined as never; // sign-in never becomes ready here
      },
    });
    expect(probe).toEqual({
      status: 503,
      retryAfter: '1',
      body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Starting: sign-in is not ready yet.' }, id: null }),
    });
  });

  it('sends API calls through HTTPS_PROXY when only it is set', async () => {
    const seen: string[] = [];
    const proxy = createNetServer((socket) =>
      socket.once('data', (d: Buffer) => {
        seen.push(d.toString().split('\r\n')[0]!);
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      }),
    );
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const service = `https://127.0.0.1:${await freePort()}`;
    for (const n of ['https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy']) vi.stubEnv(n, undefined);
    vi.stubEnv('HTTPS_PROXY', `http://127.0.0.1:${(proxy.address() as { port: number }).port}`);
    const svc = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: service }), baseUrl: service }).finally(() => vi.unstubAllEnvs());
    try {
      expect((await call(svc.url, 'drk_proxied', 'list_clients')).status).toBe(200);
      expect(new Set(seen)).toEqual(new Set([`CONNECT ${service.slice('https://'.length)} HTTP/1.1`]));
    } finally {
      proxy.close();
    }
  });

  it('closes, once stopped, every connection still open (an idle keep-alive one too)', async () => {
    const svc = await teamService(sb);
    const agent = new Agent({ keepAlive: true });
    const sockets: Socket[] = [];
    await new Promise((resolve, reject) => {
      const req = httpRequest(`${svc.url}/healthz`, { agent }, (res) => res.resume().on('end', resolve));
      req
        .on('socket', (s) => sockets.push(s))
        .on('error', reject)
        .end();
    });
    expect(await svc.close(100)).toBe(true);
    await vi.waitFor(() => expect(sockets[0]!.destroyed).toBe(true), { timeout: 2_000 });
    agent.destroy();
  });
});

describe('with sign-in (--auth oauth) and metrics', () => {
  it("counts each person's calls apart, and each sign-in in the metrics", async () => {
    let closeIdp = () => Promise.resolve();
    const svc = await teamService(sb, {
      rateLimit: 1,
      metricsPort: await freePort(),
      config: loadConfig({ confirmSend: 'never' }, { DOCREQ_BASE_URL: sb.url }),
      auth: async (url) => {
        const idp = await startDemoIdp([`${url}/login/callback`]);
        closeIdp = () => idp.close();
        const secret = new Uint8Array(randomBytes(32));
        return createAuth({
          publicUrl: url,
          secret,
          idp,
          policy: DEMO_POLICY,
          apiKey: sb.keys.demo,
          store: new MemoryAuthStore(),
          allowLoopbackHttp: true,
          log: () => undefined,
        });
      },
    });
    try {
      const signedIn = async () => Number(/^docreq_sign_ins_total\{outcome="signed_in"\} (\d+)/m.exec(await (await fetch(svc.metricsUrl!)).text())?.[1] ?? 0);
      const before = await signedIn();
      const reader = await connectAs(svc, 'reader@demo.example', 'reader-demo');
      const sender = await connectAs(svc, 'sender@demo.example', 'sender-demo');
      expect(await signedIn()).toBe(before + 2);
      expect((await reader.call('list_clients')).isError).toBeFalsy();
      await expect(reader.call('list_clients')).rejects.toThrow(/Rate limited: at most 1 tool calls a minute per key/);
      expect((await sender.call('list_clients')).isError).toBeFalsy();
      await reader.client.close();
      await sender.client.close();
    } finally {
      await closeIdp();
    }
  });
});
