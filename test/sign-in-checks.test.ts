import { beforeAll, describe, expect, it, vi } from 'vitest';
import { checkSessionTime } from '../src/auth/grant-checks.js';
import { redirectMatches } from '../src/auth/redirect-uris.js';
import type { Session } from '../src/auth/types.js';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, codeFor, form, REDIRECT, register, s256, signInService } from './support/sign-in.js';

/**
 * The checks sign-in makes of what an app sends (src/auth/grant-checks.ts, pkce.ts, redirect-uris.ts),
 * each shown by what the app gets: a code redeemed by another client, with another redirect URI or an
 * ill-formed verifier; a refresh token used by another client; an unknown scope or another resource;
 * redirect URIs an app may register and how one asked for must match. The real service and the demo
 * identity provider on loopback.
 */

const sb = await sandbox();
const lines: string[] = [];
let svc: HttpService;
beforeAll(async () => {
  svc = await signInService(sb, { lines });
});

const token = async (fields: Record<string, string>) => {
  const res = await fetch(`${svc.url}/token`, form(fields));
  return { status: res.status, body: (await res.json()) as { error?: string; error_description?: string; access_token?: string; refresh_token?: string } };
};
const redeem = (c: { clientId: string; verifier: string; code: string }, overrides: Record<string, string | undefined> = {}) => {
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    grant_type: 'authorization_code',
    code: c.code,
    code_verifier: c.verifier,
    client_id: c.clientId,
    redirect_uri: REDIRECT,
    ...overrides,
  }))
    if (v !== undefined) fields[k] = v;
  return token(fields);
};
const PKCE_REFUSED = { error: 'invalid_grant', error_description: 'The PKCE code_verifier does not match the code_challenge.' };

describe('a code is redeemed only by the client it was issued to, at its redirect URI, with a well-formed verifier', () => {
  it('another client, another or no redirect_uri: refused with what was wrong', async () => {
    const other = await register(svc, [REDIRECT]);
    const a = await codeFor(svc, 'sender@demo.example', 'sender-demo');
    expect(await redeem(a, { client_id: other.body.client_id })).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The code was issued to another client.' },
    });
    const b = await codeFor(svc, 'sender@demo.example', 'sender-demo');
    const mismatch = { status: 400, body: { error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request.' } };
    expect(await redeem(b, { redirect_uri: 'http://127.0.0.1:9/other' })).toEqual(mismatch);
    const c = await codeFor(svc, 'sender@demo.example', 'sender-demo');
    expect(await redeem(c, { redirect_uri: undefined })).toEqual(mismatch);
  });

  it('a verifier missing, or ill-formed (too short, too long, a character outside RFC 7636) even when it hashes to the challenge: refused', async () => {
    const missing = await codeFor(svc, 'sender@demo.example', 'sender-demo');
    expect(await redeem(missing, { code_verifier: undefined })).toEqual({ status: 400, body: PKCE_REFUSED });
    for (const verifier of ['v'.repeat(42), 'v'.repeat(129), `${'v'.repeat(42)}!`, `${'v'.repeat(42)} `]) {
      const c = await codeFor(svc, 'sender@demo.example', 'sender-demo', { code_challenge: s256(verifier) });
      expect(c.code, verifier).toBeTruthy();
      expect(await redeem({ ...c, verifier }), JSON.stringify(verifier)).toEqual({ status: 400, body: PKCE_REFUSED });
    }
    // The bounds themselves are allowed: 43 and 128 characters of the unreserved set.
    for (const verifier of [`${'a'.repeat(39)}-._~`, 'Z9'.repeat(64)]) {
      const c = await codeFor(svc, 'sender@demo.example', 'sender-demo', { code_challenge: s256(verifier) });
      const ok = await redeem({ ...c, verifier });
      expect(ok.status, verifier).toBe(200);
      expect(ok.body.access_token).toBeTruthy();
    }
  });
});

describe('the challenge an app sends to /authorize is an S256 one: 43 base64url characters, nothing before or after', () => {
  it('one character more, fewer, or another character at either end: refused with what PKCE needs; the 43 themselves: the sign-in goes on', async () => {
    const reg = await register(svc, [REDIRECT]);
    const good = s256('c'.repeat(43));
    const ok = await fetch(authorizeUrl(svc, reg.body.client_id, { code_challenge: good }), { redirect: 'manual' });
    expect(ok.status).toBe(200);
    for (const challenge of [`${good}A`, `!${good}`, `${good}!`, good.slice(1), `.${good.slice(1)}`]) {
      const page = await fetch(authorizeUrl(svc, reg.body.client_id, { code_challenge: challenge, state: 'st' }), { redirect: 'manual' });
      const back = new URL(page.headers.get('location') ?? 'http://none.invalid/');
      expect({ status: page.status, error: back.searchParams.get('error'), why: back.searchParams.get('error_description') }, challenge).toEqual({
        status: 302,
        error: 'invalid_request',
        why: 'PKCE is required: code_challenge with code_challenge_method=S256.',
      });
    }
  });
});

describe('a refresh token is used only by the client it was issued to', () => {
  it('another client: refused, and the token still works for its own client', async () => {
    const c = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const tokens = await redeem(c);
    expect(tokens.status).toBe(200);
    const other = await register(svc, [REDIRECT]);
    expect(await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token!, client_id: other.body.client_id })).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The refresh token was issued to another client.' },
    });
    expect(await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token!, client_id: 'dcr_nobody' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
  });
});

describe('the scope and the resource an app asks for', () => {
  const back = async (params: Record<string, string>) => {
    const reg = await register(svc, [REDIRECT]);
    const res = await fetch(authorizeUrl(svc, reg.body.client_id, params), { redirect: 'manual' });
    return { status: res.status, location: res.status === 302 ? new URL(res.headers.get('location')!) : undefined };
  };

  it('any scope other than "docreq" is refused back at the app, with its state (none when it sent none) and our issuer', async () => {
    for (const scope of ['admin', 'docreq admin', 'admin docreq', 'openid']) {
      const { status, location } = await back({ scope, state: 's-1' });
      expect(status, scope).toBe(302);
      expect(location!.origin + location!.pathname).toBe(REDIRECT);
      expect(Object.fromEntries(location!.searchParams), scope).toEqual({
        error: 'invalid_scope',
        error_description: 'The only scope is docreq.',
        state: 's-1',
        iss: svc.url,
      });
    }
    const stateless = await back({ scope: 'admin' });
    expect(stateless.location!.searchParams.has('state')).toBe(false);
    for (const scope of ['docreq', 'docreq docreq', '', ' docreq ']) expect((await back({ scope })).status, JSON.stringify(scope)).toBe(200);
  });

  it("a resource other than this server's /mcp is refused naming the one it is; /mcp with a final slash is the same resource", async () => {
    const { location } = await back({ resource: 'https://other.example/mcp' });
    expect(location!.searchParams.get('error')).toBe('invalid_target');
    expect(location!.searchParams.get('error_description')).toBe(`This server issues tokens for ${svc.url}/mcp only.`);
    expect((await back({ resource: `${svc.url}/mcp/` })).status).toBe(200);
    expect((await back({ resource: `${svc.url}/mcp/x` })).status).toBe(302);
  });
});

describe('the metadata an app registers with (RFC 7591)', () => {
  it.each(['client_name', 'token_endpoint_auth_method', 'scope', 'client_uri', 'logo_uri'])('%s that is not a string is refused, naming it', async (field) => {
    for (const value of [5, true, ['x'], { x: 1 }, null]) {
      const reg = await register(svc, [REDIRECT], { [field]: value });
      expect(reg.status, JSON.stringify(value)).toBe(400);
      expect(reg.body).toEqual({ error: 'invalid_client_metadata', error_description: `${field} must be a string.` });
    }
  });

  it.each(['grant_types', 'response_types'])('%s that is not an array of strings is refused, naming it', async (field) => {
    for (const value of ['code', ['code', 1], [null], { 0: 'code' }, 7]) {
      const reg = await register(svc, [REDIRECT], { [field]: value });
      expect(reg.status, JSON.stringify(value)).toBe(400);
      expect(reg.body).toEqual({ error: 'invalid_client_metadata', error_description: `${field} must be an array of strings.` });
    }
  });

  it('a body that is not a JSON object is refused; well-typed metadata registers a public client, its name kept to 100 characters', async () => {
    const notJson = await fetch(`${svc.url}/register`, form({ redirect_uris: REDIRECT }));
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({
      error: 'invalid_client_metadata',
      error_description: 'Send the client metadata as a JSON object (Content-Type: application/json).',
    });
    const meta = {
      client_name: `An app ${'n'.repeat(120)}`,
      scope: 'mcp',
      client_uri: 'https://app.example',
      logo_uri: 'https://app.example/logo.png',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    };
    const reg = await register(svc, [REDIRECT], meta);
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({
      client_id: expect.stringMatching(/^dcr_/) as unknown,
      redirect_uris: [REDIRECT],
      client_name: meta.client_name.slice(0, 100),
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    const unnamed = await register(svc, [REDIRECT]);
    expect(unnamed.status).toBe(201);
    expect(unnamed.body).not.toHaveProperty('client_name');
  });
});

describe('redirect URIs an app may register', () => {
  const refusedAt = async (uris: unknown) => {
    const reg = await register(svc, uris);
    expect(reg.status, JSON.stringify(uris)).toBe(400);
    expect(reg.body.error).toBe('invalid_redirect_uri');
    return reg.body.error_description!;
  };

  it('refuses user info, plain http off loopback, other schemes, wildcards, fragments and URIs over 500 characters, naming which one', async () => {
    const good = 'https://claude.ai/api/mcp/auth_callback';
    for (const bad of [
      'https://user@claude.ai/cb',
      'https://:secret@claude.ai/cb',
      'https://u:p@claude.ai/cb',
      'http://claude.ai/cb',
      'javascript:alert(1)',
      'ftp://claude.ai/cb',
      'https://*.claude.ai/cb',
      'https://claude.ai/cb#x',
      `https://claude.ai/${'a'.repeat(483)}`,
      'not a url',
      42,
    ]) {
      const why = await refusedAt([good, bad]);
      expect(why, String(bad)).toMatch(
        /^redirect_uris\[1\] is not allowed: each https to a host this firm allows \(claude\.ai, [^)]*\), http on 127\.0\.0\.1, \[::1\] or localhost, or an app's own scheme; no fragment, user info or wildcard; at most 500 characters\.$/,
      );
    }
    // An app's scheme is the whole scheme: one that only ends like one (a named app's, or a reverse-domain name after a
    // character a domain cannot hold) is another scheme.
    for (const bad of [
      'mycursor://anysphere.cursor-retrieval/cb',
      'x-vscode://vscode.github-authentication/cb',
      'a+com.example.app:/oauth',
      'web+com.example:/cb',
    ]) {
      expect(await refusedAt([good, bad]), bad).toMatch(/^redirect_uris\[1\] is not allowed: /);
    }
    // Exactly 500 characters is allowed.
    const longest = `https://claude.ai/${'a'.repeat(482)}`;
    expect(longest).toHaveLength(500);
    expect((await register(svc, [longest])).status).toBe(201);
  });

  it('1 to 10 of them: none, 11 or not a list refused; 10 kept', async () => {
    const ten = Array.from({ length: 10 }, (_, i) => `http://127.0.0.1:9/cb${i}`);
    for (const uris of [[], [...ten, 'http://127.0.0.1:9/cb10'], 'http://127.0.0.1:9/cb', undefined])
      expect(await refusedAt(uris)).toMatch(/^redirect_uris: 1 to 10 addresses, each https to a host/);
    const kept = await register(svc, ten);
    expect(kept.status).toBe(201);
    expect(kept.body.redirect_uris).toEqual(ten);
  });

  it("an app's own scheme (named or reverse-domain) and loopback are kept; https to an unlisted host is dropped and logged by host", async () => {
    const ok = [
      'cursor://anysphere.cursor-retrieval/oauth/callback',
      'vscode://vscode.github-authentication/did-authenticate',
      'com.example.app:/oauth2redirect',
      'https://localhost:8443/cb',
      'http://[::1]:9/cb',
    ];
    const reg = await register(svc, [...ok, 'https://unlisted.example/cb', 'https://another.example/x']);
    expect(reg.status).toBe(201);
    expect(reg.body.redirect_uris).toEqual(ok);
    expect(lines.filter((l) => l.includes('were dropped'))).toContain(
      "docreq-mcp info: a registration's redirect URIs to unlisted.example, another.example were dropped: not in DOCREQ_AUTH_REDIRECT_HOSTS",
    );
    expect(await refusedAt(['https://unlisted.example/cb'])).toMatch(/^none of redirect_uris is allowed here: /);
  });

  it('a URI asked for matches its registration exactly; only http on loopback may change its port', async () => {
    const at = async (registered: string, asked: string) => {
      const reg = await register(svc, [registered]);
      return (await fetch(authorizeUrl(svc, reg.body.client_id, { redirect_uri: asked }), { redirect: 'manual' })).status;
    };
    expect(await at('http://127.0.0.1:9/callback', 'http://127.0.0.1:5555/callback')).toBe(200);
    expect(await at('http://127.0.0.1:9/callback', 'http://127.0.0.1:5555/other')).toBe(400);
    expect(await at('http://127.0.0.1:9/callback', 'https://127.0.0.1:9/callback')).toBe(400);
    expect(await at('https://127.0.0.1:8443/callback', 'https://127.0.0.1:9999/callback')).toBe(400);
    expect(await at('https://claude.ai/cb', 'https://claude.ai:444/cb')).toBe(400);
    expect(await at('http://127.0.0.1:9/callback', 'not a url')).toBe(400);
  });
});

describe('the two rules on their own: a redirect URI asked for, and a session at its time limit', () => {
  it('a redirect URI matches exactly, or on another port only for http on loopback', () => {
    expect(redirectMatches('https://app.example/cb', 'https://app.example/cb')).toBe(true);
    // Another port of the same https host is another redirect URI.
    expect(redirectMatches('https://app.example/cb', 'https://app.example:8443/cb')).toBe(false);
    expect(redirectMatches('http://app.example/cb', 'http://app.example:8080/cb')).toBe(false);
    expect(redirectMatches('http://127.0.0.1:3000/cb', 'http://127.0.0.1:49152/cb')).toBe(true);
    expect(redirectMatches('http://127.0.0.1:3000/cb', 'http://127.0.0.1:49152/other')).toBe(false);
    expect(redirectMatches('http://127.0.0.1:3000/cb', 'https://127.0.0.1:49152/cb')).toBe(false);
    expect(redirectMatches('http://127.0.0.1:3000/cb', 'not a url')).toBe(false);
    // https on loopback may be registered too: its port is part of it, as for any https URI.
    expect(redirectMatches('https://127.0.0.1:3000/cb', 'https://127.0.0.1:4000/cb')).toBe(false);
    expect(redirectMatches('https://localhost:3000/cb', 'https://localhost:3000/cb')).toBe(true);
  });

  it('a session refreshes until its time limit, and not from that instant on', () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_800_000_000_000 });
    try {
      const at = (expires: number) => () => checkSessionTime({ expires } as Session);
      expect(at(Date.now() + 1)).not.toThrow();
      const limit = { code: 'invalid_grant', message: "This sign-in session has reached its time limit: sign in again at the firm's identity provider." };
      expect(at(Date.now())).toThrow(expect.objectContaining(limit));
      expect(at(Date.now() - 60_000)).toThrow(expect.objectContaining(limit));
    } finally {
      vi.useRealTimers();
    }
  });
});
