import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryAuthStore, type Policy } from '../src/auth/index.js';
import { sessionsCli } from '../src/auth/sessions.js';
import { authStoreOf } from '../src/auth/store.js';
import type { DemoIdp } from '../src/sandbox/idp.js';
import { RedisStore } from '../src/store/redis.js';
import type { HttpService } from '../src/transport/http.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, codeFor, form, mcpList, toolNames, REDIRECT, register, s256, signInService } from './support/sign-in.js';
import { startRedis } from './support/redis.js';

/**
 * Sessions a firm can end (docs/sign-in.md), against the real service and a real OpenID Connect
 * provider (oidc-provider, the sandbox's demo IdP): roles decided again at each refresh, people
 * disabled at the IdP, the session's time limit, `docreq-mcp sessions end` across two replicas on one
 * Redis, the auth secret's rotation, and consent bound to the browser that gave it.
 */

const sb = await sandbox();

async function tokensFor(svc: HttpService, email: string, password: string): Promise<OAuthTokens & { clientId: string }> {
  const { clientId, verifier, code } = await codeFor(svc, email, password);
  const res = await fetch(
    `${svc.url}/token`,
    form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT }),
  );
  expect(res.status).toBe(200);
  return { ...((await res.json()) as OAuthTokens), clientId };
}

async function refresh(svc: HttpService, tokens: { refresh_token?: string; clientId: string }) {
  const res = await fetch(`${svc.url}/token`, form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: tokens.clientId }));
  const body = (await res.json()) as OAuthTokens & { error?: string; error_description?: string };
  captured.push(JSON.stringify(body));
  return { status: res.status, body };
}

const audits = (lines: string[], kind: string) => lines.filter((l) => l.includes(`"audit":"${kind}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);

/** A browser for the sign-in steps: its own cookies (per host), redirects followed by hand. */
class Browser {
  private cookies = new Map<string, Map<string, string>>();
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const host = new URL(url).hostname;
    const jar = this.cookies.get(host) ?? new Map<string, string>();
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { Cookie: cookie } : {}) },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    this.cookies.set(host, jar);
    return res;
  }
  cookie(host: string, name: string) {
    return this.cookies.get(host)?.get(name);
  }
  drop(host: string, name: string) {
    this.cookies.get(host)?.delete(name);
  }
}

/** Consent page and Continue in `browser`; returns the identity provider's address the person is sent to. */
async function consentAndContinue(svc: HttpService, browser: Browser): Promise<string> {
  const reg = await register(svc, [REDIRECT], { client_name: 'Cookie host' });
  const page = await browser.go(authorizeUrl(svc, reg.body.client_id, { code_challenge: s256(randomBytes(32).toString('base64url')) }).href);
  const transaction = /name="transaction" value="([^"]+)"/.exec(await page.text())![1]!;
  const res = await browser.go(`${svc.url}/authorize/decision`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: svc.url },
    body: new URLSearchParams({ transaction, decision: 'continue' }).toString(),
  });
  expect(res.status).toBe(302);
  return res.headers.get('location')!;
}

/** At the identity provider in `browser` as this person: our callback address it sends them to (not yet opened), or its own page when it refuses. */
async function atIdp(browser: Browser, start: string, email: string, password: string): Promise<string | { status: number; body: string }> {
  let url = new URL(start);
  for (let hops = 0; hops < 20; hops++) {
    if (url.pathname === '/login/callback') return url.href;
    const res = await browser.go(url.href);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url);
      continue;
    }
    const action = /<form method="post" action="([^"]+)"/.exec(await res.text())![1]!.replace(/&#47;/g, '/');
    const posted = await browser.go(new URL(action, url).href, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, password }).toString(),
    });
    if (!posted.headers.get('location')) return { status: posted.status, body: await posted.text() };
    url = new URL(posted.headers.get('location')!, url);
  }
  throw new Error('too many redirects');
}

async function callbackAt(browser: Browser, start: string, email: string, password: string): Promise<string> {
  const outcome = await atIdp(browser, start, email, password);
  if (typeof outcome !== 'string') throw new Error(`the identity provider answered ${outcome.status}`);
  return outcome;
}

describe('who may read or send is decided again at every refresh', () => {
  it('a sender removed from the settings gets the reader role at refresh, then a refusal when removed altogether', async () => {
    const lines: string[] = [];
    // The settings as read at start; changed below as a restart with new DOCREQ_AUTH_SENDERS / _READERS would.
    const policy: Policy = { readers: ['@demo.example'], senders: ['sender@demo.example'] };
    const svc = await signInService(sb, { policy, lines });
    const first = await tokensFor(svc, 'sender@demo.example', 'sender-demo');
    expect(await toolNames(svc, first.access_token)).toContain('create_request');

    policy.senders = [];
    const second = await refresh(svc, first);
    expect(second.status).toBe(200);
    const names = await toolNames(svc, second.body.access_token);
    expect(names).toContain('list_clients');
    expect(names).not.toContain('create_request');
    expect(audits(lines, 'role changed')).toEqual([expect.objectContaining({ email: 'sender@demo.example', from: 'sender', to: 'reader' })]);

    policy.readers = [];
    const third = await refresh(svc, { ...first, refresh_token: second.body.refresh_token });
    expect(third.status).toBe(400);
    expect([third.body.error, third.body.error_description]).toEqual([
      'invalid_grant',
      'This account is no longer allowed to use this service: ask your IT team.',
    ]);
    // The session is over on the spot: its last access token too.
    expect(await toolNames(svc, second.body.access_token)).toBe(401);
  });

  it('a person disabled at the identity provider is refused at the next refresh (the IdP gives refresh tokens)', async () => {
    const lines: string[] = [];
    let idp: DemoIdp | undefined;
    const svc = await signInService(sb, { lines, onIdp: (i) => (idp = i) });
    const tokens = await tokensFor(svc, 'reader@demo.example', 'reader-demo');
    const ok = await refresh(svc, tokens);
    expect(ok.status).toBe(200); // the IdP was asked, and still knows them
    idp!.disable('reader@demo.example');
    const refused = await refresh(svc, { ...tokens, refresh_token: ok.body.refresh_token });
    expect(refused.status).toBe(400);
    expect([refused.body.error, refused.body.error_description]).toEqual([
      'invalid_grant',
      "The firm's identity provider no longer accepts this sign-in: sign in again.",
    ]);
    expect(await toolNames(svc, ok.body.access_token)).toBe(401);
    expect(audits(lines, 'session ended').map((a) => [a.email, a.why])).toEqual([
      ['reader@demo.example', 'identity provider refused the refresh (invalid_grant)'],
    ]);
  });

  it('without IdP refresh tokens, a disabled person is refused at the session boundary: the session ends and signing in again fails', async () => {
    let idp: DemoIdp | undefined;
    const svc = await signInService(sb, { idp: { refreshTokens: false }, auth: { sessionSeconds: 1 }, onIdp: (i) => (idp = i) });
    const tokens = await tokensFor(svc, 'reader@demo.example', 'reader-demo');
    expect(tokens.expires_in).toBeLessThanOrEqual(1); // no access token outlives its session
    idp!.disable('reader@demo.example');
    await new Promise((r) => setTimeout(r, 1_100));
    const refused = await refresh(svc, tokens);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    expect(refused.body.error_description).toContain('sign in again');
    const browser = new Browser();
    const outcome = await atIdp(browser, await consentAndContinue(svc, browser), 'reader@demo.example', 'reader-demo');
    expect(typeof outcome !== 'string' && outcome.status).toBe(401);
    expect(typeof outcome !== 'string' && outcome.body).toContain('do not match a demo user');
  });

  it("rotating the auth secret ends refresh tokens (and the identity provider's, kept sealed under it)", async () => {
    const store = new MemoryAuthStore();
    let idp: DemoIdp | undefined;
    const before = await signInService(sb, { store, secret: new Uint8Array(randomBytes(32)), onIdp: (i) => (idp = i) });
    const tokens = await tokensFor(before, 'reader@demo.example', 'reader-demo');
    const after = await signInService(sb, { store, secret: new Uint8Array(randomBytes(32)), publicUrl: before.url, auth: { idp: idp! } });
    const refused = await refresh(after, tokens);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    expect(await toolNames(after, tokens.access_token)).toBe(401);
    // The same store with the old secret still knows it: the secret, not the store, ended it.
    expect((await refresh(before, tokens)).status).toBe(200);
  });
});

describe.skipIf(!existsSync('/usr/bin/redis-server'))('docreq-mcp sessions, on two replicas sharing one Redis', () => {
  let redis: { child: ChildProcess; url: string } | undefined;
  const stores: RedisStore[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    redis?.child.kill();
  });

  it('sessions end --email on one replica refuses that person on the other at once; list shows who is left; end --all ends everyone', async () => {
    redis = await startRedis();
    const shared = () => {
      const s = new RedisStore(redis!.url);
      stores.push(s);
      return authStoreOf(s);
    };
    const secret = new Uint8Array(randomBytes(32));
    const policy: Policy = { readers: ['@demo.example'], senders: ['group:senders'] };
    let idp: DemoIdp | undefined;
    const one = await signInService(sb, { store: shared(), secret, policy, onIdp: (i) => (idp = i) });
    const two = await signInService(sb, { store: shared(), secret, policy, publicUrl: one.url, auth: { idp: idp! } });
    const reader = await tokensFor(one, 'reader@demo.example', 'reader-demo');
    const sender = await tokensFor(one, 'sender@demo.example', 'sender-demo');
    expect(await toolNames(two, reader.access_token)).toContain('list_clients');

    const env = { DOCREQ_STORE: 'redis', DOCREQ_STORE_URL: redis.url };
    const run = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await sessionsCli(
        argv,
        env,
        (l) => out.push(l),
        (l) => err.push(l),
      );
      captured.push(...out, ...err);
      return { code, out, err };
    };
    const listed = await run('list');
    expect(listed.code).toBe(0);
    expect(listed.out[0]).toMatch(/^2 sign-in sessions on redis at 127\.0\.0\.1:\d+\/3$/);
    // An app that gave no name is listed by where it returns.
    expect(listed.out.slice(1).map((l) => l.split('  ').slice(0, 3))).toEqual([
      ['reader@demo.example', 'reader', '127.0.0.1:9'],
      ['sender@demo.example', 'sender', '127.0.0.1:9'],
    ]);

    const ended = await run('end', '--email', 'Reader@demo.example');
    expect(ended.code).toBe(0);
    expect(ended.out.join('\n')).toContain('Ended 1 live session of reader@demo.example');
    const audit = JSON.parse(ended.err.find((l) => l.includes('"audit"'))!) as Record<string, unknown>;
    expect(audit).toMatchObject({ audit: 'sessions end', who: 'reader@demo.example', ended: 1 });
    expect(JSON.stringify(ended)).not.toContain(reader.refresh_token!);

    // Replica two refuses the reader's access token and refresh token; the sender goes on.
    const refused = await mcpList(reader.access_token, two);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('ended by an administrator');
    expect((await refresh(two, reader)).body.error).toBe('invalid_grant');
    expect(await toolNames(two, sender.access_token)).toContain('create_request');
    expect((await run('list')).out.slice(1).map((l) => l.split('  ')[0])).toEqual(['sender@demo.example']);

    // Signing in again works: only what began before the end is refused.
    const again = await tokensFor(one, 'reader@demo.example', 'reader-demo');
    expect(await toolNames(two, again.access_token)).toContain('list_clients');

    const all = await run('end', '--all');
    expect(all.out.join('\n')).toContain('Ended 2 live sessions of everyone');
    for (const t of [sender, again]) {
      expect((await mcpList(t.access_token, one)).status).toBe(401);
      expect((await refresh(one, t)).status).toBe(400);
    }
    expect((await run('list')).out[0]).toMatch(/^0 sign-in sessions/);
    expect((await run('end')).code).toBe(2);
    expect((await run('end', '--email', 'not-an-address')).code).toBe(2);
  });
});

describe('consent is bound to the browser that gave it', () => {
  it('the cookie: HttpOnly, SameSite=Lax, this host only; on plain-http loopback without the __Host- prefix (it requires Secure)', async () => {
    const svc = await signInService(sb);
    const reg = await register(svc, [REDIRECT]);
    const res = await fetch(authorizeUrl(svc, reg.body.client_id));
    const set = res.headers.getSetCookie();
    expect(set).toHaveLength(1);
    expect(set[0]).toMatch(/^docreq-consent=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
    // Behind https (DOCREQ_PUBLIC_URL): the __Host- prefix, and Secure.
    const behindHttps = await signInService(sb, { publicUrl: 'https://mcp.example.com' });
    const reg2 = await register(behindHttps, [REDIRECT]);
    const page = await fetch(authorizeUrl(behindHttps, reg2.body.client_id));
    expect(page.status).toBe(200);
    expect(page.headers.getSetCookie()[0]).toMatch(/^__Host-docreq-consent=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
  });

  it("a colleague who opens the identity provider link from another's Continue gets no code: refused at the callback", async () => {
    const svc = await signInService(sb);
    const first = new Browser();
    const idpLink = await consentAndContinue(svc, first);
    // The colleague's browser has its own consent cookie (from a sign-in of its own), or none.
    const colleague = new Browser();
    await consentAndContinue(svc, colleague);
    const callback = await callbackAt(colleague, idpLink, 'reader@demo.example', 'reader-demo');
    const res = await colleague.go(callback);
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('started in another browser');

    const bare = new Browser();
    const link2 = await consentAndContinue(svc, first);
    const callback2 = await callbackAt(bare, link2, 'reader@demo.example', 'reader-demo');
    const none = await bare.go(callback2);
    expect(none.status).toBe(403);
    expect(none.headers.get('location')).toBeNull();

    // The browser that said Continue gets its code.
    const link3 = await consentAndContinue(svc, first);
    const own = await first.go(await callbackAt(first, link3, 'reader@demo.example', 'reader-demo'));
    expect(own.status).toBe(302);
    expect(new URL(own.headers.get('location')!).searchParams.get('code')).toBeTruthy();
  });

  it('the Continue itself is refused without the cookie the consent page set', async () => {
    const svc = await signInService(sb);
    const browser = new Browser();
    const reg = await register(svc, [REDIRECT]);
    const page = await browser.go(authorizeUrl(svc, reg.body.client_id).href);
    const transaction = /name="transaction" value="([^"]+)"/.exec(await page.text())![1]!;
    const host = new URL(svc.url).hostname;
    const value = browser.cookie(host, 'docreq-consent');
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    browser.drop(host, 'docreq-consent');
    const post = () =>
      browser.go(`${svc.url}/authorize/decision`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: svc.url },
        body: new URLSearchParams({ transaction, decision: 'continue' }).toString(),
      });
    const refused = await post();
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('started in another browser');
    // Still usable by the browser that has it.
    const res = await fetch(`${svc.url}/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: svc.url, Cookie: `docreq-consent=${value}` },
      body: new URLSearchParams({ transaction, decision: 'continue' }).toString(),
    });
    expect(res.status).toBe(302);
  });
});
