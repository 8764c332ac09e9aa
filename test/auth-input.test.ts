import { beforeAll, describe, expect, it } from 'vitest';
import type { HttpService } from '../src/transport/http.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, codeFor, form, REDIRECT, register, s256, signInService } from './support/sign-in.js';

/**
 * What sign-in accepts from a request, at its edges: PKCE S256 only, redirect URIs matched exactly,
 * the consent form only from our own page, and every bad body answered with an OAuth error and a 4xx
 * (never a 500), on every sign-in endpoint. The real service and the demo identity provider on loopback.
 */

const sb = await sandbox();
let svc: HttpService;
beforeAll(async () => {
  svc = await signInService(sb, { lines: [] });
});

/** The consent page for a fresh client: its transaction and the cookie that binds it to this "browser". */
async function consent(): Promise<{ transaction: string; cookie: string }> {
  const reg = await register(svc, [REDIRECT]);
  const res = await fetch(authorizeUrl(svc, reg.body.client_id));
  const body = await res.text();
  expect(res.status).toBe(200);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');
  return { transaction: /name="transaction" value="([^"]+)"/.exec(body)![1]!, cookie };
}

describe('sign-in guards', () => {
  it('PKCE: plain (or no method) is refused before the consent page; only S256', async () => {
    const reg = await register(svc, [REDIRECT]);
    const verifier = 'v'.repeat(43);
    for (const params of [
      { code_challenge: verifier, code_challenge_method: 'plain' },
      { code_challenge: s256(verifier), code_challenge_method: '' },
      { code_challenge: s256(verifier), code_challenge_method: 's256' },
    ]) {
      const res = await fetch(authorizeUrl(svc, reg.body.client_id, { ...params, state: 'p' }), { redirect: 'manual' });
      expect(res.status, JSON.stringify(params)).toBe(302);
      const back = new URL(res.headers.get('location')!);
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('error_description')).toContain('S256');
    }
    expect((await fetch(authorizeUrl(svc, reg.body.client_id, { code_challenge: s256(verifier), code_challenge_method: 'S256' }))).status).toBe(200);
  });

  it('a registered redirect URI matches exactly: the same origin with another path or query is refused', async () => {
    const registered = 'https://claude.ai/api/mcp/auth_callback';
    const reg = await register(svc, [registered]);
    expect(reg.status).toBe(201);
    for (const other of [
      'https://claude.ai/other',
      'https://claude.ai/api/mcp/auth_callback/x',
      'https://claude.ai/api/mcp/auth_callback?next=x',
      'https://claude.ai/',
    ]) {
      const res = await fetch(authorizeUrl(svc, reg.body.client_id, { redirect_uri: other }), { redirect: 'manual' });
      expect(res.status, other).toBe(400);
      expect(res.headers.get('location'), other).toBeNull(); // nothing is sent to an address the app did not register
      expect(await res.text()).toContain('did not register');
    }
    expect((await fetch(authorizeUrl(svc, reg.body.client_id, { redirect_uri: registered }))).status).toBe(200);
  });

  it('the consent form is accepted only from our own page: a foreign or missing Origin gets 403 and the sign-in stays unused', async () => {
    const { transaction, cookie } = await consent();
    const post = (headers: Record<string, string>) =>
      fetch(`${svc.url}/authorize/decision`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, ...headers },
        body: new URLSearchParams({ transaction, decision: 'continue' }).toString(),
      });
    for (const origin of ['https://evil.example', 'null', new URL(svc.url).origin.replace('127.0.0.1', 'localhost')]) {
      const res = await post({ Origin: origin });
      expect(res.status, origin).toBe(403);
      expect(await res.text()).toContain('can only be sent from the sign-in page');
    }
    expect((await post({})).status).toBe(403);
    // Still unused: our own page's form goes on to the identity provider.
    const ok = await post({ Origin: new URL(svc.url).origin });
    expect(ok.status).toBe(302);
    expect(ok.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/auth\?/);
  });
});

describe('the consent page names the app', () => {
  it('with its client_name, escaped, without invisible or direction characters, and where it returns; or says it gave none', async () => {
    const named = await register(svc, [REDIRECT], { client_name: '<img src=x onerror=alert(1)>Claude\u202Egnp.exe\u200B' });
    const page = await (await fetch(authorizeUrl(svc, named.body.client_id))).text();
    expect(page).toContain('An app that calls itself <strong>&#60;img src=x onerror=alert(1)&#62;Claudegnp.exe</strong>');
    expect(page).not.toMatch(/<img|\u202E|\u200B/);
    expect(page).toContain('returns you to <strong>127.0.0.1:9</strong>');
    const unnamed = await register(svc, [REDIRECT]);
    expect(await (await fetch(authorizeUrl(svc, unnamed.body.client_id))).text()).toContain('An app that gives no name asks');
  });
});

describe('bad bodies: an OAuth error and a 4xx on every sign-in endpoint, never a 500', () => {
  const json = 'application/json';
  const formType = 'application/x-www-form-urlencoded';
  const bodies: { name: string; type?: string; body: string }[] = [
    { name: 'form __json=%7Bbad', type: formType, body: '__json=%7Bbad' },
    { name: 'form __json=null', type: formType, body: '__json=null' },
    { name: 'JSON syntax error', type: json, body: '{bad' },
    { name: 'JSON null', type: json, body: 'null' },
    { name: 'JSON array', type: json, body: '[1,2]' },
    { name: 'JSON string', type: json, body: '"x"' },
    { name: 'JSON number', type: json, body: '123' },
    { name: 'JSON wrong types', type: json, body: JSON.stringify({ redirect_uris: 'x', client_name: 5, grant_type: 5, token: null, transaction: [1] }) },
    { name: 'JSON nulls', type: json, body: JSON.stringify({ redirect_uris: [null], client_name: null, grant_types: null }) },
    { name: 'JSON deep', type: json, body: `${'['.repeat(5000)}${']'.repeat(5000)}` },
    {
      name: 'form repeated parameters',
      type: formType,
      body: 'grant_type=authorization_code&grant_type=refresh_token&token=a&token=b&transaction=a&transaction=b',
    },
    { name: 'form, wrong values', type: formType, body: 'grant_type=password&token=&decision=continue&transaction=nope&redirect_uris=x' },
    { name: 'empty body', type: formType, body: '' },
    { name: 'no content type', body: 'a=b' },
    { name: 'text/plain', type: 'text/plain', body: 'hello' },
    { name: 'invalid UTF-8', type: formType, body: '%FF%FE=%C0' },
    { name: 'oversized form', type: formType, body: `token=${'a'.repeat(40_000)}` },
    { name: 'oversized JSON', type: json, body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(40_000) }) },
  ];
  const endpoints = ['/register', '/token', '/revoke', '/authorize/decision', '/authorize', '/login/callback'];

  it.each(endpoints)('%s', async (path) => {
    const answers: string[] = [];
    for (const { name, type, body } of bodies) {
      const headers: Record<string, string> = { Origin: new URL(svc.url).origin, ...(type ? { 'Content-Type': type } : {}) };
      const res = await fetch(`${svc.url}${path}`, { method: 'POST', redirect: 'manual', headers, body });
      const text = await res.text();
      captured.push(text);
      answers.push(`${name}: ${res.status}`);
      expect(res.status, `${path} ${name}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${path} ${name}: ${text.slice(0, 200)}`).toBeLessThan(500);
      if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
        const answer = JSON.parse(text) as { error?: unknown; error_description?: unknown };
        expect(answer.error, `${path} ${name}`).toMatch(
          /^(invalid_request|invalid_client_metadata|invalid_redirect_uri|unsupported_grant_type|invalid_grant)$/,
        );
        expect(typeof answer.error_description).toBe('string');
        expect(text).not.toContain('jsonrpc');
      } else {
        // The consent form is a browser's: its answer is the error page, still a 4xx.
        expect(path).toBe('/authorize/decision');
        expect(text).toContain('Sign-in could not start');
      }
    }
    expect(answers).toHaveLength(bodies.length);
  });

  it('the browser endpoints answer bad query strings with a page and a 4xx', async () => {
    for (const query of [
      '',
      '?client_id=a&client_id=b',
      '?client_id=%00&redirect_uri=%FF',
      `?client_id=${'x'.repeat(5000)}`,
      '?state=a&state=b',
      '?state=nope&code=x',
      '?error=access_denied',
    ]) {
      for (const path of ['/authorize', '/login/callback']) {
        const res = await fetch(`${svc.url}${path}${query}`, { redirect: 'manual' });
        expect(res.status, `${path}${query.slice(0, 40)}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${path}${query.slice(0, 40)}`).toBeLessThan(500);
        expect(res.headers.get('location')).toBeNull();
      }
    }
  });
});

describe('a code is redeemed only as it was issued (src/auth/grant-checks.ts)', () => {
  const redeem = (fields: Record<string, string>) => fetch(`${svc.url}/token`, form({ grant_type: 'authorization_code', ...fields }));
  it('by the client it was issued to, with the redirect URI it was asked with: otherwise invalid_grant and no token', async () => {
    const issued = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const other = await register(svc, [REDIRECT]);
    const foreign = await redeem({ code: issued.code, code_verifier: issued.verifier, client_id: other.body.client_id, redirect_uri: REDIRECT });
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toEqual({ error: 'invalid_grant', error_description: 'The code was issued to another client.' });
    const elsewhere = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const moved = await redeem({ code: elsewhere.code, code_verifier: elsewhere.verifier, client_id: elsewhere.clientId, redirect_uri: `${REDIRECT}other` });
    expect(moved.status).toBe(400);
    expect(await moved.json()).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request.' });
  });
});
