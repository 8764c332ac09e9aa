import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretKeys } from '../src/auth/crypto.js';
import { MemoryAuthStore, type AuthStore } from '../src/auth/index.js';
import type { DemoIdp, DemoUser } from '../src/sandbox/idp.js';
import type { HttpService } from '../src/transport/http.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, cookieFetch, form, REDIRECT, register, s256, signInService, toolNames } from './support/sign-in.js';
import { freePort } from './support/ports.js';

/**
 * The sign-in federated to the firm's OpenID Connect provider (src/auth/federation.ts), as a person, an
 * app and an operator see it: the way to the provider (what is asked of it; the provider unreachable), its
 * answer at /login/callback (used once, its errors, an answer the library cannot accept, the policy's
 * verdict and the audit lines naming the person), and the provider asked again at each refresh (a refusal
 * ends the session; unreachable, the same refresh token may be tried again; another person; a sealed
 * token that cannot be opened). Against the real service on loopback and the real demo identity provider
 * (oidc-provider); where a provider must say less than oidc-provider ever does (no scopes_supported, no
 * offline_access, no ID token or refresh token at a refresh), a plain provider in this file, over HTTP.
 */

const sb = await sandbox();
const APP_STATE = 'app-state-1';

type Page = { status: number; location?: URL; body: string };
type TokenBody = { error?: string; error_description?: string; access_token?: string; refresh_token?: string };

/** A page's words as a person reads them: its <main>, tags dropped, entities decoded. */
function words(html: string): string {
  const main = /<main>([\s\S]*)<\/main>/.exec(html)?.[1] ?? html;
  return main
    .replace(/<\/(p|h1|div)>/g, ' ')
    .replace(/<[^>]+>/g, '')
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/\s+/g, ' ')
    .trim();
}

/** One browser (cookieFetch), each answer read as a page. */
function browser() {
  const get = cookieFetch();
  return async (url: string | URL, init: RequestInit = {}): Promise<Page> => {
    const res = await get(url, init);
    const location = res.headers.get('location');
    const body = await res.text();
    captured.push(body);
    return { status: res.status, body, ...(location ? { location: new URL(location, url) } : {}) };
  };
}
type Browser = ReturnType<typeof browser>;

/** An app registers and sends the person to /authorize; the person chooses Continue. What the browser gets, and the app's PKCE verifier. */
async function continueToIdp(svc: HttpService, b: Browser) {
  const reg = await register(svc, [REDIRECT]);
  const verifier = randomBytes(32).toString('base64url');
  const consent = await b(authorizeUrl(svc, reg.body.client_id, { code_challenge: s256(verifier), state: APP_STATE, resource: `${svc.url}/mcp` }));
  expect(consent.status).toBe(200);
  const transaction = /name="transaction" value="([^"]+)"/.exec(consent.body)![1]!;
  const decision = await b(`${svc.url}/authorize/decision`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: svc.url },
    body: new URLSearchParams({ transaction, decision: 'continue' }).toString(),
  });
  return { clientId: reg.body.client_id, verifier, decision };
}

/** The person signs in at the demo identity provider; the address it sends the browser back to (our /login/callback), not yet opened. */
async function atDemoIdp(svc: HttpService, b: Browser, to: URL, email: string, password: string): Promise<URL> {
  let url = to;
  for (let hops = 0; hops < 20; hops++) {
    if (url.origin === svc.url && url.pathname === '/login/callback') return url;
    const page = await b(url);
    if (page.location) {
      url = page.location;
      continue;
    }
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1];
    if (!action) throw new Error(`the identity provider answered ${page.status}: ${words(page.body).slice(0, 200)}`);
    const sent = await b(new URL(action.replace(/&#47;/g, '/'), url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, password }).toString(),
    });
    url = sent.location!;
  }
  throw new Error('too many redirects');
}

/** Up to the identity provider's answer: the callback URL it sends this browser to, and the app's side. */
async function toCallback(svc: HttpService, email: string, password: string) {
  const b = browser();
  const started = await continueToIdp(svc, b);
  expect(started.decision.status).toBe(302);
  const callback = await atDemoIdp(svc, b, started.decision.location!, email, password);
  return { b, callback, clientId: started.clientId, verifier: started.verifier };
}

async function token(svc: HttpService, fields: Record<string, string>) {
  const res = await fetch(`${svc.url}/token`, form(fields));
  const body = (await res.json()) as TokenBody;
  captured.push(JSON.stringify(body));
  return { status: res.status, body };
}

/** A whole sign-in: the app's tokens, and its refresh. */
async function signedIn(svc: HttpService, email: string, password: string) {
  const { b, callback, clientId, verifier } = await toCallback(svc, email, password);
  const back = await b(callback);
  expect(back.status, words(back.body)).toBe(302);
  const code = back.location!.searchParams.get('code')!;
  const tokens = await token(svc, { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
  expect(tokens.status).toBe(200);
  const refresh = (refreshToken: string) => token(svc, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
  return { tokens: tokens.body, refresh };
}

const audits = (lines: string[], kind: string) =>
  lines
    .filter((l) => l.startsWith('{') && l.includes('"audit"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((a) => a.audit === kind);
const warns = (lines: string[]) => lines.filter((l) => l.startsWith('docreq-mcp warn:'));

/**
 * A provider that says only what OpenID Connect requires, where oidc-provider always says more: its
 * discovery lists scopes only when given (`scopes`), and at a refresh it answers with an ID token and a
 * new refresh token only when told to (`atRefresh`). It signs ID tokens (RS256) for one person; it can be
 * taken down and brought back on the same address.
 */
async function plainIdp(options: { scopes?: string[] } = {}) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'plain-1', alg: 'RS256', use: 'sig' };
  const clientId = 'docreq-mcp';
  const nonces = new Map<string, string>();
  const asked: URLSearchParams[] = [];
  const refreshed: string[] = [];
  const atRefresh: { idTokenSub?: string; refreshToken?: string } = {};
  let issuer = '';
  const idToken = (sub: string, nonce?: string) =>
    new SignJWT({ email: 'pat@plain.example', email_verified: true, ...(nonce ? { nonce } : {}) })
      .setProtectedHeader({ alg: 'RS256', kid: 'plain-1' })
      .setIssuer(issuer)
      .setAudience(clientId)
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const bodyOf = (req: IncomingMessage) =>
    new Promise<URLSearchParams>((resolve) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => resolve(new URLSearchParams(text)));
    });
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/.well-known/openid-configuration')
      return send(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        ...(options.scopes ? { scopes_supported: options.scopes } : {}),
      });
    if (url.pathname === '/jwks') return send(res, 200, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      // The person is signed in here already: straight back to the service with a code.
      asked.push(url.searchParams);
      const code = randomBytes(16).toString('base64url');
      nonces.set(code, url.searchParams.get('nonce') ?? '');
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { Location: back.href });
      return void res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const params = await bodyOf(req);
      const base = { access_token: randomBytes(16).toString('base64url'), token_type: 'Bearer', expires_in: 600 };
      if (params.get('grant_type') === 'authorization_code') {
        const nonce = nonces.get(params.get('code') ?? '');
        nonces.delete(params.get('code') ?? '');
        if (nonce === undefined) return send(res, 400, { error: 'invalid_grant' });
        return send(res, 200, { ...base, id_token: await idToken('plain-1', nonce), refresh_token: 'plain-refresh-1' });
      }
      if (params.get('grant_type') === 'refresh_token') {
        refreshed.push(params.get('refresh_token') ?? '');
        return send(res, 200, {
          ...base,
          ...(atRefresh.idTokenSub ? { id_token: await idToken(atRefresh.idTokenSub) } : {}),
          ...(atRefresh.refreshToken ? { refresh_token: atRefresh.refreshToken } : {}),
        });
      }
    }
    send(res, 404, { error: 'not_found' });
  }
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  issuer = `http://127.0.0.1:${port}`;
  const down = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  afterAll(down);
  return {
    idp: { issuer, clientId, clientSecret: 'plain-secret' },
    asked,
    refreshed,
    atRefresh,
    down,
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
  };
}

/** A sign-in through the plain provider (no form there): the app's tokens and its refresh. */
async function signedInAtPlain(svc: HttpService) {
  const b = browser();
  const started = await continueToIdp(svc, b);
  const atIdp = await b(started.decision.location!);
  const back = await b(atIdp.location!);
  expect(back.status, words(back.body)).toBe(302);
  const tokens = await token(svc, {
    grant_type: 'authorization_code',
    code: back.location!.searchParams.get('code')!,
    code_verifier: started.verifier,
    client_id: started.clientId,
    redirect_uri: REDIRECT,
  });
  expect(tokens.status).toBe(200);
  return {
    tokens: tokens.body,
    refresh: (refreshToken: string) => token(svc, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: started.clientId }),
  };
}

describe('the way to the identity provider', () => {
  it('asks for openid email profile, and offline_access as this provider offers it, to come back to our /login/callback', async () => {
    let idp: DemoIdp | undefined;
    const svc = await signInService(sb, { onIdp: (i) => (idp = i) });
    const { decision } = await continueToIdp(svc, browser());
    expect(decision.status).toBe(302);
    const to = decision.location!;
    expect(to.origin).toBe(idp!.issuer);
    expect(to.searchParams.get('scope')).toBe('openid email profile offline_access');
    expect(to.searchParams.get('redirect_uri')).toBe(`${svc.url}/login/callback`);
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
  });

  it('a provider that offers no offline_access, or lists no scopes at all: asked for openid email profile only', async () => {
    for (const scopes of [['openid', 'email', 'profile'], undefined]) {
      const plain = await plainIdp(scopes ? { scopes } : {});
      const svc = await signInService(sb, { auth: { idp: plain.idp }, policy: { readers: ['@plain.example'], senders: [] } });
      const { decision } = await continueToIdp(svc, browser());
      expect(decision.status, words(decision.body)).toBe(302);
      expect(decision.location!.origin).toBe(plain.idp.issuer);
      expect(decision.location!.searchParams.get('scope'), String(scopes)).toBe('openid email profile');
    }
  });

  it('a provider nobody answers at: the person reads that it cannot be reached (502), the operator a warn line naming DOCREQ_OIDC_ISSUER, each time', async () => {
    const lines: string[] = [];
    const issuer = `http://127.0.0.1:${await freePort()}`;
    const svc = await signInService(sb, { lines, auth: { idp: { issuer, clientId: 'docreq-mcp', clientSecret: 'x' } } });
    for (let attempt = 0; attempt < 2; attempt++) {
      const { decision } = await continueToIdp(svc, browser());
      expect(decision.status).toBe(502);
      expect(words(decision.body)).toContain("The firm's identity provider cannot be reached right now. Try again in a moment.");
    }
    expect(warns(lines)).toEqual([
      `docreq-mcp warn: the identity provider at ${issuer} cannot be reached (DOCREQ_OIDC_ISSUER)`,
      `docreq-mcp warn: the identity provider at ${issuer} cannot be reached (DOCREQ_OIDC_ISSUER)`,
    ]);
  });
});

/**
 * A store shared by replicas, where two callbacks can both read a sign-in before either claims it: the
 * memory store, except that a sign-in's read waits until a second read of it arrives (when `race` is set).
 */
class SharedStore implements AuthStore {
  readonly inner = new MemoryAuthStore();
  race = false;
  private waiting: (() => void)[] = [];
  claim(key: string, value: string, ttlMs: number) {
    return this.inner.claim(key, value, ttlMs);
  }
  async get(key: string) {
    const value = await this.inner.get(key);
    if (this.race && /^login:[^:]+$/.test(key))
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        if (this.waiting.length === 2) for (const go of this.waiting.splice(0)) go();
      });
    return value;
  }
  set(key: string, value: string, ttlMs: number) {
    return this.inner.set(key, value, ttlMs);
  }
  delete(key: string) {
    return this.inner.delete(key);
  }
  incr(key: string, ttlMs: number) {
    return this.inner.incr(key, ttlMs);
  }
}

describe("the identity provider's answer at /login/callback is used once", () => {
  const store = new SharedStore();
  let svc: HttpService;
  beforeAll(async () => {
    svc = await signInService(sb, { store });
  });
  const EXPIRED = 'This sign-in has expired or was already used.';

  it('opened again after it was used: refused with its words, and no second code for the app', async () => {
    const { b, callback } = await toCallback(svc, 'reader@demo.example', 'reader-demo');
    const first = await b(callback);
    expect(first.status).toBe(302);
    expect(first.location!.searchParams.get('code')).toBeTruthy();
    const again = await b(callback);
    expect(again.status).toBe(400);
    expect(again.location).toBeUndefined();
    expect(words(again.body)).toContain(EXPIRED);
  });

  it('opened twice at once, both reading the sign-in before either took it: one code for the app, the other refused with its words', async () => {
    const { b, callback } = await toCallback(svc, 'reader@demo.example', 'reader-demo');
    store.race = true;
    const both = await Promise.all([b(callback), b(callback)]).finally(() => (store.race = false));
    expect(both.map((p) => p.status).sort()).toEqual([302, 400]);
    const won = both.find((p) => p.status === 302);
    const lost = both.find((p) => p.status === 400);
    expect(won?.location?.searchParams.get('code')).toBeTruthy();
    expect(words(lost?.body ?? '')).toContain(EXPIRED);
  });

  it('a state this service never gave, or none: refused with the same words', async () => {
    const b = browser();
    for (const query of ['?code=c&state=never-issued', '?code=c', '']) {
      const page = await b(`${svc.url}/login/callback${query}`);
      expect(page.status, query).toBe(400);
      expect(words(page.body), query).toContain(EXPIRED);
    }
  });
});

describe('the identity provider says the sign-in did not finish (error=access_denied)', () => {
  it('the app is told access_denied with its state and our issuer; the answer is used up', async () => {
    let idp: DemoIdp | undefined;
    const lines: string[] = [];
    const svc = await signInService(sb, { lines, onIdp: (i) => (idp = i) });
    const b = browser();
    const { decision } = await continueToIdp(svc, b);
    const state = decision.location!.searchParams.get('state')!;
    // Where the provider sends the browser when the person cancels there.
    const callback = `${svc.url}/login/callback?${new URLSearchParams({ error: 'access_denied', error_description: 'The user cancelled.', state, iss: idp!.issuer }).toString()}`;
    const back = await b(callback);
    expect(back.status).toBe(302);
    expect(back.location!.origin + back.location!.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(back.location!.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The sign-in at the identity provider did not finish.',
      state: APP_STATE,
      iss: svc.url,
    });
    expect(warns(lines)).toEqual([]);
    const again = await b(callback);
    expect(again.status).toBe(400);
    expect(words(again.body)).toContain('This sign-in has expired or was already used.');
  });
});

describe('an answer from the identity provider that cannot be accepted', () => {
  it('a code the provider never issued: the person reads that it could not be accepted (502), the operator the reason in a warn line', async () => {
    let idp: DemoIdp | undefined;
    const lines: string[] = [];
    const svc = await signInService(sb, { lines, onIdp: (i) => (idp = i) });
    const b = browser();
    const { decision } = await continueToIdp(svc, b);
    const state = decision.location!.searchParams.get('state')!;
    const page = await b(`${svc.url}/login/callback?${new URLSearchParams({ code: 'forged-code', state, iss: idp!.issuer }).toString()}`);
    expect(page.status).toBe(502);
    expect(page.location).toBeUndefined();
    expect(words(page.body)).toContain('The answer from the identity provider could not be accepted. Try signing in again.');
    expect(warns(lines)).toEqual(['docreq-mcp warn: sign-in at the identity provider failed: server responded with an error in the response body']);
    expect(audits(lines, 'sign-in')).toEqual([]);
  });
});

describe('the policy decides who may sign in; audit lines name the person', () => {
  it('let in: one sign-in audit line with the e-mail address, subject and role; refused: the page names them, its way back tells the app access_denied', async () => {
    const lines: string[] = [];
    const svc = await signInService(sb, { lines });
    await signedIn(svc, 'sender@demo.example', 'sender-demo');
    expect(audits(lines, 'sign-in')).toEqual([{ audit: 'sign-in', email: 'sender@demo.example', sub: 'sender@demo.example', role: 'sender' }]);

    const { b, callback } = await toCallback(svc, 'outsider@elsewhere.example', 'outsider-demo');
    const refused = await b(callback);
    expect(refused.status).toBe(403);
    expect(words(refused.body)).toContain('You are signed in as outsider@elsewhere.example, but this firm has not allowed your account');
    const href = /<a class="button" href="([^"]+)"/.exec(refused.body)![1]!.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
    const back = new URL(href);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'This account is not allowed to use this service.',
      state: APP_STATE,
      iss: svc.url,
    });
    expect(audits(lines, 'sign-in refused')).toEqual([{ audit: 'sign-in refused', email: 'outsider@elsewhere.example', sub: 'outsider@elsewhere.example' }]);
    expect(audits(lines, 'sign-in')).toHaveLength(1);
  });

  it('named by a verified e-mail; else by the user name, in lower case and at most 200 characters; else by the subject', async () => {
    const longName = `Pat.${'Q'.repeat(250)}`;
    const claims: Record<string, Record<string, unknown>> = {
      'ann@firm.example': { sub: 'sub-ann', email: 'Ann@Firm.Example', email_verified: true, preferred_username: 'ANN.K' },
      'pat@firm.example': { sub: 'sub-pat', preferred_username: longName },
      'una@firm.example': { sub: 'sub-una', email: 'una@firm.example', preferred_username: 'Una.Verified.Not' },
      'ned@firm.example': { sub: 'sub-ned' },
      'eve@firm.example': { sub: 'sub-eve', preferred_username: '' },
      'num@firm.example': { sub: 'sub-num', preferred_username: 12345 },
    };
    const users: DemoUser[] = Object.keys(claims).map((email) => ({ email, password: 'pw-demo', name: email, groups: [] }));
    const lines: string[] = [];
    const svc = await signInService(sb, {
      lines,
      idp: { users, claims: (u) => claims[u.email]! },
      policy: { readers: Object.values(claims).map((c) => `user:${String(c.sub)}`), senders: [] },
    });
    for (const u of users) await signedIn(svc, u.email, u.password);
    expect(audits(lines, 'sign-in').map((a) => [a.sub, a.email])).toEqual([
      ['sub-ann', 'ann@firm.example'],
      ['sub-pat', longName.toLowerCase().slice(0, 200)],
      ['sub-una', 'una.verified.not'],
      ['sub-ned', 'sub-ned'],
      ['sub-eve', 'sub-eve'],
      ['sub-num', 'sub-num'],
    ]);
  });
});

describe('a refresh asks the identity provider again', () => {
  it('the provider refuses it (the person disabled there): the session ends, invalid_grant with its words', async () => {
    let idp: DemoIdp | undefined;
    const lines: string[] = [];
    const svc = await signInService(sb, { lines, onIdp: (i) => (idp = i) });
    const { tokens, refresh } = await signedIn(svc, 'reader@demo.example', 'reader-demo');
    idp!.disable('reader@demo.example');
    expect(await refresh(tokens.refresh_token!)).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: "The firm's identity provider no longer accepts this sign-in: sign in again." },
    });
    expect(audits(lines, 'session ended').map((a) => a.why)).toEqual(['identity provider refused the refresh (invalid_grant)']);
    expect(await toolNames(svc, tokens.access_token!)).toBe(401);
  });

  it('the provider cannot be reached: 503 temporarily_unavailable, a warn line, the session kept and the same refresh token tried again', async () => {
    let idp: DemoIdp | undefined;
    const lines: string[] = [];
    const svc = await signInService(sb, { lines, onIdp: (i) => (idp = i) });
    const { tokens, refresh } = await signedIn(svc, 'reader@demo.example', 'reader-demo');
    await idp!.close();
    const unreachable = {
      status: 503,
      body: { error: 'temporarily_unavailable', error_description: "The firm's identity provider cannot be reached right now; try again in a moment." },
    };
    expect(await refresh(tokens.refresh_token!)).toEqual(unreachable);
    // The same refresh token again: not taken for a copy (which would end the session).
    expect(await refresh(tokens.refresh_token!)).toEqual(unreachable);
    const prefix = 'docreq-mcp warn: the identity provider could not be asked at a refresh: ';
    expect(warns(lines)).toHaveLength(2);
    for (const line of warns(lines)) expect(line.startsWith(prefix) && line.length > prefix.length, line).toBe(true);
    expect(audits(lines, 'session ended')).toEqual([]);
    expect(await toolNames(svc, tokens.access_token!)).toContain('list_clients');
  });

  it('the provider answers for another person: the session ends, the audit line says why', async () => {
    const answering = new Map<string, string>();
    const lines: string[] = [];
    const svc = await signInService(sb, { lines, idp: { answerAs: (email) => answering.get(email) } });
    const { tokens, refresh } = await signedIn(svc, 'reader@demo.example', 'reader-demo');
    answering.set('reader@demo.example', 'sender@demo.example');
    expect(await refresh(tokens.refresh_token!)).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The identity provider answered for another person: sign in again.' },
    });
    expect(audits(lines, 'session ended')).toEqual([
      { audit: 'session ended', why: 'identity provider answered for another person', email: 'reader@demo.example', sub: 'reader@demo.example' },
    ]);
    expect(await toolNames(svc, tokens.access_token!)).toBe(401);
  });

  it('a provider that gives no refresh tokens: refreshes renew the session without asking it', async () => {
    const lines: string[] = [];
    const svc = await signInService(sb, { lines, idp: { refreshTokens: false } });
    const { tokens, refresh } = await signedIn(svc, 'reader@demo.example', 'reader-demo');
    const once = await refresh(tokens.refresh_token!);
    expect(once.status, JSON.stringify(once.body)).toBe(200);
    const twice = await refresh(once.body.refresh_token!);
    expect(twice.status, JSON.stringify(twice.body)).toBe(200);
    expect(audits(lines, 'session ended')).toEqual([]);
  });

  it("the provider's token kept for the session cannot be opened with this secret: the session ends, invalid_grant with its words", async () => {
    const lines: string[] = [];
    const store = new MemoryAuthStore();
    const secret = new Uint8Array(randomBytes(32));
    const svc = await signInService(sb, { lines, store, secret });
    const { tokens, refresh } = await signedIn(svc, 'reader@demo.example', 'reader-demo');
    // The session as the shared store holds it, its provider token sealed under another secret (another deployment's).
    const key = secretKeys(secret).refreshKey(tokens.refresh_token!);
    const session = JSON.parse((await store.get(key))!) as { idpRefresh?: string };
    expect(session.idpRefresh).toBeTruthy();
    session.idpRefresh = secretKeys(new Uint8Array(randomBytes(32))).seal('a provider refresh token');
    await store.set(key, JSON.stringify(session), 60_000);
    expect(await refresh(tokens.refresh_token!)).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'This session can no longer be renewed: sign in again.' },
    });
    expect(audits(lines, 'session ended').map((a) => a.why)).toEqual([
      'identity provider token unreadable (damaged in the store, or sealed by another deployment)',
    ]);
    expect(await toolNames(svc, tokens.access_token!)).toBe(401);
  });

  it('a provider that renews without a new ID token or refresh token: the session renews, and its refresh token is kept for the next time', async () => {
    const plain = await plainIdp({ scopes: ['openid', 'email', 'profile', 'offline_access'] });
    const lines: string[] = [];
    const svc = await signInService(sb, { lines, auth: { idp: plain.idp }, policy: { readers: ['@plain.example'], senders: [] } });
    const { tokens, refresh } = await signedInAtPlain(svc);
    expect(plain.asked[0]!.get('scope')).toBe('openid email profile offline_access');
    expect(audits(lines, 'sign-in')).toEqual([{ audit: 'sign-in', email: 'pat@plain.example', sub: 'plain-1', role: 'reader' }]);

    const once = await refresh(tokens.refresh_token!);
    expect(once.status, JSON.stringify(once.body)).toBe(200);
    const twice = await refresh(once.body.refresh_token!);
    expect(twice.status, JSON.stringify(twice.body)).toBe(200);
    expect(plain.refreshed).toEqual(['plain-refresh-1', 'plain-refresh-1']);

    // Now with an ID token for the same person and a new refresh token: the new one is asked with next.
    Object.assign(plain.atRefresh, { idTokenSub: 'plain-1', refreshToken: 'plain-refresh-2' });
    const thrice = await refresh(twice.body.refresh_token!);
    expect(thrice.status, JSON.stringify(thrice.body)).toBe(200);
    const fourth = await refresh(thrice.body.refresh_token!);
    expect(fourth.status, JSON.stringify(fourth.body)).toBe(200);
    expect(plain.refreshed.slice(2)).toEqual(['plain-refresh-1', 'plain-refresh-2']);
    expect(audits(lines, 'session ended')).toEqual([]);
  });

  it('the provider down at a refresh and back: 503 meanwhile, then the same refresh token renews the session', async () => {
    const plain = await plainIdp({ scopes: ['openid', 'email', 'profile', 'offline_access'] });
    const svc = await signInService(sb, { auth: { idp: plain.idp }, policy: { readers: ['@plain.example'], senders: [] } });
    const { tokens, refresh } = await signedInAtPlain(svc);
    await plain.down();
    expect((await refresh(tokens.refresh_token!)).body.error).toBe('temporarily_unavailable');
    await plain.up();
    const renewed = await refresh(tokens.refresh_token!);
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    expect(await toolNames(svc, renewed.body.access_token!)).toContain('list_clients');
  });
});
