import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryAuthStore } from '../src/auth/index.js';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, REDIRECT, register, signInService } from './support/sign-in.js';

/**
 * The apps that may ask for sign-in (src/auth/clients.ts), shown by what they get over real HTTP from
 * the real service: dynamic registration (POST /register, RFC 7591: the body it reads, the answer's
 * fields, the registrations a minute, the redirect hosts dropped and logged), and Client ID Metadata
 * Documents (a client_id that is a URL: which URLs are fetched at all, what a document must say, its
 * name, and the 5 minutes it is kept), served here by a document server on loopback that counts the
 * requests it gets (the test-only switch `unsafeAllowLoopbackClientDocuments`).
 */

const MINUTE = 60_000;
const NOT_KNOWN = 'The app asking to sign you in is not known here';
const sb = await sandbox();

/** POST /register with this body and Content-Type; the status, body and Retry-After. */
async function registerRaw(svc: HttpService, body: string, contentType?: string) {
  const res = await fetch(`${svc.url}/register`, { method: 'POST', headers: contentType ? { 'Content-Type': contentType } : {}, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, retryAfter: res.headers.get('retry-after') };
}

describe('POST /register reads the client metadata as a JSON object, and says what is wrong with anything else', () => {
  let svc: HttpService;
  beforeAll(async () => {
    svc = await signInService(sb);
  });

  it('a body that is not JSON, not an object, or too big: the reason that applies, with its status', async () => {
    expect(await registerRaw(svc, '{"redirect_uris": [', 'application/json')).toEqual({
      status: 400,
      body: { error: 'invalid_client_metadata', error_description: 'The body is not valid JSON.' },
      retryAfter: null,
    });
    expect(await registerRaw(svc, JSON.stringify([REDIRECT]), 'application/json')).toEqual({
      status: 400,
      body: { error: 'invalid_client_metadata', error_description: 'The body must be a JSON object.' },
      retryAfter: null,
    });
    expect(await registerRaw(svc, JSON.stringify({ redirect_uris: [REDIRECT] }), 'text/plain')).toEqual({
      status: 415,
      body: { error: 'invalid_client_metadata', error_description: 'Send application/x-www-form-urlencoded or application/json.' },
      retryAfter: null,
    });
    const big = await registerRaw(svc, JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(20_000) }), 'application/json');
    expect(big).toEqual({
      status: 413,
      body: { error: 'invalid_client_metadata', error_description: 'The request body is larger than 16 KiB.' },
      retryAfter: null,
    });
  });

  it('a form instead of JSON: asked for JSON', async () => {
    const form = await registerRaw(svc, new URLSearchParams({ redirect_uris: REDIRECT }).toString(), 'application/x-www-form-urlencoded');
    expect(form).toEqual({
      status: 400,
      body: { error: 'invalid_client_metadata', error_description: 'Send the client metadata as a JSON object (Content-Type: application/json).' },
      retryAfter: null,
    });
  });
});

describe('a registration is answered with the client it made', () => {
  let svc: HttpService;
  const lines: string[] = [];
  beforeAll(async () => {
    svc = await signInService(sb, { lines });
  });

  it('a public client: its id, when it was issued (seconds), its redirect URIs and name, no secret, the code flow', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await register(svc, [REDIRECT, 'cursor://anysphere.cursor-retrieval/oauth/callback'], { client_name: 'Desk app' });
    const after = Math.floor(Date.now() / 1000);
    expect(res.status).toBe(201);
    const { client_id: clientId, client_id_issued_at: issuedAt, ...rest } = res.body as typeof res.body & { client_id_issued_at: number };
    expect(clientId).toMatch(/^dcr_[A-Za-z0-9_-]{16,}$/);
    expect(issuedAt).toBeGreaterThanOrEqual(before);
    expect(issuedAt).toBeLessThanOrEqual(after);
    expect(rest).toEqual({
      redirect_uris: [REDIRECT, 'cursor://anysphere.cursor-retrieval/oauth/callback'],
      client_name: 'Desk app',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    // The client is known at /authorize, by the name it gave.
    const page = await fetch(authorizeUrl(svc, clientId));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<strong>Desk app</strong>');
  });

  it('nothing dropped: nothing logged about dropped redirect URIs', async () => {
    const from = lines.length;
    expect((await register(svc, [REDIRECT, 'https://claude.ai/api/mcp/auth_callback'])).status).toBe(201);
    expect(lines.slice(from).filter((l) => l.includes('dropped'))).toEqual([]);
  });

  it('https redirect URIs to hosts the firm does not list are dropped and logged: each host once, at most five', async () => {
    const from = lines.length;
    const unlisted = ['one', 'two', 'two', 'three', 'four', 'five', 'six', 'seven'].map((h) => `https://${h}.attacker.example/cb`);
    const res = await register(svc, [...unlisted, REDIRECT]);
    expect(res.status).toBe(201);
    expect(res.body.redirect_uris).toEqual([REDIRECT]);
    expect(lines.slice(from).filter((l) => l.includes('dropped'))).toEqual([
      "docreq-mcp info: a registration's redirect URIs to one.attacker.example, two.attacker.example, three.attacker.example, four.attacker.example, five.attacker.example were dropped: not in DOCREQ_AUTH_REDIRECT_HOSTS",
    ]);
  });
});

describe('registrations are limited to 600 a minute for the whole service', () => {
  let svc: HttpService;
  beforeAll(async () => {
    // The real store, reading the clock at each call, so that the minutes below are the test's.
    svc = await signInService(sb, { store: new MemoryAuthStore(undefined, () => Date.now()) });
  });

  it('the 601st in a minute is refused (429, Retry-After: 60) until the next minute; the clients are issued at that time', async () => {
    const start = (Math.floor(Date.now() / MINUTE) + 2) * MINUTE + 10_000;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(start);
      const statuses: number[] = [];
      const issued = new Set<unknown>();
      for (let batch = 0; batch < 30; batch++) {
        const answers = await Promise.all(Array.from({ length: 20 }, () => register(svc, [REDIRECT])));
        for (const a of answers) {
          statuses.push(a.status);
          issued.add((a.body as { client_id_issued_at?: unknown }).client_id_issued_at);
        }
      }
      expect(statuses.filter((s) => s !== 201)).toEqual([]);
      expect(statuses).toHaveLength(600);
      expect([...issued]).toEqual([start / 1000]);
      const limited = {
        status: 429,
        body: { error: 'temporarily_unavailable', error_description: 'Too many registrations; try again in a minute.' },
        retryAfter: '60',
      };
      const again = () => registerRaw(svc, JSON.stringify({ redirect_uris: [REDIRECT] }), 'application/json');
      expect(await again()).toEqual(limited);
      // Later in the same minute: still refused.
      vi.setSystemTime(start + 1);
      expect(await again()).toEqual(limited);
      vi.setSystemTime(start + 40_000);
      expect(await again()).toEqual(limited);
      // The next minute: registrations again.
      vi.setSystemTime(start + MINUTE);
      const next = await again();
      expect(next.status).toBe(201);
      expect(next.body.client_id_issued_at).toBe((start + MINUTE) / 1000);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a registered app is known for 180 days', () => {
  let svc: HttpService;
  beforeAll(async () => {
    svc = await signInService(sb, { store: new MemoryAuthStore(undefined, () => Date.now()) });
  });

  it('its client_id opens the sign-in page until 180 days after it registered, and not after', async () => {
    const DAY = 24 * 60 * MINUTE;
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(start);
      const clientId = (await register(svc, [REDIRECT])).body.client_id;
      vi.setSystemTime(start + 180 * DAY - MINUTE);
      const known = await fetch(authorizeUrl(svc, clientId));
      expect(known.status).toBe(200);
      expect(await known.text()).not.toContain(NOT_KNOWN);
      vi.setSystemTime(start + 180 * DAY + MINUTE);
      expect(await (await fetch(authorizeUrl(svc, clientId))).text()).toContain(NOT_KNOWN);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('Client ID Metadata Documents: a client_id that is an https URL names its own document', () => {
  const lines: string[] = [];
  const docs = new Map<string, unknown>();
  const hits: string[] = [];
  let server: Server;
  let origin = '';
  let svc: HttpService;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const doc = docs.get(req.url ?? '');
      if (doc === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(doc));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    svc = await signInService(sb, { lines, store: new MemoryAuthStore(undefined, () => Date.now()), auth: { unsafeAllowLoopbackClientDocuments: true } });
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const hitsOf = (path: string) => hits.filter((h) => h === path).length;
  const about = (from: number) => lines.slice(from).filter((l) => l.includes('client metadata document'));
  /** GET /authorize for this client_id: the status and the page. */
  const authorize = async (clientId: string) => {
    const res = await fetch(authorizeUrl(svc, clientId));
    return { status: res.status, page: await res.text() };
  };
  /** Until the clock has moved on (a record kept for less than a millisecond is gone by then). */
  const clockMoves = async () => {
    const now = Date.now();
    while (Date.now() <= now + 1) await new Promise((r) => setTimeout(r, 2));
  };

  it('a valid document: its client is known, by the name it gives', async () => {
    const clientId = `${origin}/named.json`;
    docs.set('/named.json', { client_id: clientId, client_name: 'Metadata host', redirect_uris: [REDIRECT] });
    const from = lines.length;
    const { status, page } = await authorize(clientId);
    expect(status).toBe(200);
    expect(page).toContain('An app that calls itself <strong>Metadata host</strong>');
    expect(about(from)).toEqual([]);
  });

  it('fetched once, then kept: within its 5 minutes a change to the document is not seen and it is not fetched again', async () => {
    const clientId = `${origin}/kept.json`;
    docs.set('/kept.json', { client_id: clientId, client_name: 'First name', redirect_uris: [REDIRECT] });
    expect((await authorize(clientId)).page).toContain('<strong>First name</strong>');
    expect(hitsOf('/kept.json')).toBe(1);
    docs.set('/kept.json', { client_id: clientId, client_name: 'Second name', redirect_uris: [REDIRECT] });
    await clockMoves();
    const again = await authorize(clientId);
    expect(again.status).toBe(200);
    expect(again.page).toContain('<strong>First name</strong>');
    expect(hitsOf('/kept.json')).toBe(1);
  });

  it('after its 5 minutes the document is fetched again, and what it says now is used', async () => {
    const clientId = `${origin}/expires.json`;
    docs.set('/expires.json', { client_id: clientId, client_name: 'Old name', redirect_uris: [REDIRECT] });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const start = Date.now();
      vi.setSystemTime(start);
      expect((await authorize(clientId)).page).toContain('<strong>Old name</strong>');
      docs.set('/expires.json', { client_id: clientId, client_name: 'New name', redirect_uris: [REDIRECT] });
      vi.setSystemTime(start + 5 * MINUTE - 1);
      expect((await authorize(clientId)).page).toContain('<strong>Old name</strong>');
      expect(hitsOf('/expires.json')).toBe(1);
      vi.setSystemTime(start + 5 * MINUTE);
      expect((await authorize(clientId)).page).toContain('<strong>New name</strong>');
      expect(hitsOf('/expires.json')).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a document whose client_id is another URL: not known, logged, and not kept (fetched again next time)', async () => {
    const clientId = `${origin}/impostor.json`;
    docs.set('/impostor.json', { client_id: `${origin}/someone-else.json`, client_name: 'Impostor', redirect_uris: [REDIRECT] });
    const from = lines.length;
    const first = await authorize(clientId);
    expect(first.status).toBe(400);
    expect(first.page).toContain(NOT_KNOWN);
    expect(first.page).not.toContain('Impostor');
    expect(about(from)).toEqual([`docreq-mcp info: client metadata document ${clientId} not used: its client_id is not its own URL`]);
    expect((await authorize(clientId)).status).toBe(400);
    expect(hitsOf('/impostor.json')).toBe(2);
  });

  it('a document with no redirect URIs, or none allowed here: not known, and the log says why', async () => {
    const none = `${origin}/no-redirects.json`;
    docs.set('/no-redirects.json', { client_id: none, client_name: 'No redirects' });
    const unlisted = `${origin}/unlisted-redirects.json`;
    docs.set('/unlisted-redirects.json', { client_id: unlisted, client_name: 'Unlisted', redirect_uris: ['https://attacker.example/cb'] });
    const fragment = `${origin}/fragment-redirect.json`;
    docs.set('/fragment-redirect.json', { client_id: fragment, redirect_uris: [`${REDIRECT}#x`] });
    const from = lines.length;
    for (const clientId of [none, unlisted, fragment]) {
      const { status, page } = await authorize(clientId);
      expect(status, clientId).toBe(400);
      expect(page).toContain(NOT_KNOWN);
    }
    const logged = about(from);
    expect(logged).toHaveLength(3);
    expect(logged[0]).toMatch(
      new RegExp(`^docreq-mcp info: client metadata document ${none} not used: redirect_uris: 1 to 10 addresses, each https to a host`),
    );
    expect(logged[1]).toMatch(new RegExp(`^docreq-mcp info: client metadata document ${unlisted} not used: none of redirect_uris is allowed here: `));
    expect(logged[2]).toMatch(new RegExp(`^docreq-mcp info: client metadata document ${fragment} not used: redirect_uris\\[0\\] is not allowed: `));
  });

  it('its name: only a string, at most 100 characters; a document with another kind of name is an app that gives none', async () => {
    const long = `${origin}/long-name.json`;
    docs.set('/long-name.json', { client_id: long, client_name: `${'N'.repeat(100)}${'TAIL'.repeat(20)}`, redirect_uris: [REDIRECT] });
    const longPage = await authorize(long);
    expect(longPage.status).toBe(200);
    expect(longPage.page).toContain(`An app that calls itself <strong>${'N'.repeat(100)}</strong>`);
    const numbered = `${origin}/number-name.json`;
    docs.set('/number-name.json', { client_id: numbered, client_name: 42, redirect_uris: [REDIRECT] });
    const numberPage = await authorize(numbered);
    expect(numberPage.status).toBe(200);
    expect(numberPage.page).toContain('An app that gives no name');
    const nameless = `${origin}/no-name.json`;
    docs.set('/no-name.json', { client_id: nameless, redirect_uris: [REDIRECT] });
    expect((await authorize(nameless)).page).toContain('An app that gives no name');
  });

  it('a document that cannot be fetched is logged by its origin and at most 100 characters of its path', async () => {
    const path = `/${'p'.repeat(150)}.json`;
    const from = lines.length;
    const { status, page } = await authorize(`${origin}${path}`);
    expect(status).toBe(400);
    expect(page).toContain(NOT_KNOWN);
    expect(hitsOf(path)).toBe(1);
    expect(about(from)).toEqual([`docreq-mcp info: client metadata document ${origin}${path.slice(0, 100)} not used: answered 404`]);
  });

  it('a URL with a fragment, a user name or password, or no path is never fetched (nor logged): not known', async () => {
    const ids = {
      '/fragment.json': `${origin}/fragment.json#app`,
      '/user.json': `http://someone@127.0.0.1:${new URL(origin).port}/user.json`,
      '/password.json': `http://:hunter2@127.0.0.1:${new URL(origin).port}/password.json`,
      '/both.json': `http://someone:hunter2@127.0.0.1:${new URL(origin).port}/both.json`,
      '/': `${origin}/`,
    };
    // Each would be a valid document, were it fetched.
    for (const [path, clientId] of Object.entries(ids))
      docs.set(path, { client_id: clientId, client_name: 'Should not be fetched', redirect_uris: [REDIRECT] });
    const from = lines.length;
    const before = hits.length;
    for (const clientId of Object.values(ids)) {
      const { status, page } = await authorize(clientId);
      expect(status, clientId).toBe(400);
      expect(page).toContain(NOT_KNOWN);
    }
    expect(hits.slice(before)).toEqual([]);
    expect(about(from)).toEqual([]);
  });

  it('a client_id that only contains a URL (here after a space) is not a document: never fetched, not known', async () => {
    const clientId = ` ${origin}/spaced.json`;
    docs.set('/spaced.json', { client_id: clientId, client_name: 'Spaced', redirect_uris: [REDIRECT] });
    const from = lines.length;
    const { status, page } = await authorize(clientId);
    expect(status).toBe(400);
    expect(page).toContain(NOT_KNOWN);
    expect(hitsOf('/spaced.json')).toBe(0);
    expect(about(from)).toEqual([]);
  });

  it('a client_id that starts like an http URL but is not one: not known, nothing fetched or logged', async () => {
    const from = lines.length;
    const before = hits.length;
    for (const clientId of ['http://[::1', 'https://', `http://127.0.0.1:${new URL(origin).port}:1/x.json`]) {
      const { status, page } = await authorize(clientId);
      expect(status, clientId).toBe(400);
      expect(page).toContain(NOT_KNOWN);
    }
    expect(hits.slice(before)).toEqual([]);
    expect(about(from)).toEqual([]);
  });
});
