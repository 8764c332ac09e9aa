import { beforeAll, describe, expect, it } from 'vitest';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, REDIRECT, register, signInService } from './support/sign-in.js';

/**
 * GET /authorize and POST /authorize/decision (src/auth/authorize.ts), each answer exactly: errors the
 * app cannot be trusted with shown as a page, the rest sent back to the app; the consent page's
 * policy; a decision taken once, from our page, in the browser that saw it, or cancelled.
 */
const sb = await sandbox();
let svc: HttpService;
beforeAll(async () => {
  svc = await signInService(sb);
});

/** The consent page for a new client: its transaction, the browser cookie, and the response. */
async function consentFor(redirect = REDIRECT, params: Record<string, string> = {}) {
  const reg = await register(svc, [redirect]);
  const res = await fetch(authorizeUrl(svc, reg.body.client_id, { redirect_uri: redirect, state: 'st-1', ...params }), { redirect: 'manual' });
  const body = await res.text();
  const transaction = /name="transaction" value="([^"]+)"/.exec(body)?.[1];
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');
  return { res, body, transaction, cookie, clientId: reg.body.client_id };
}
const decide = (fields: Record<string, string>, headers: Record<string, string>) =>
  fetch(`${svc.url}/authorize/decision`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: svc.url, ...headers },
    body: new URLSearchParams(fields).toString(),
  });

describe('GET /authorize', () => {
  it('a link with a parameter given twice: a page saying it is malformed', async () => {
    const res = await fetch(`${svc.url}/authorize?client_id=a&client_id=b&redirect_uri=${encodeURIComponent(REDIRECT)}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('The sign-in link is malformed.');
  });

  it('a response_type other than code: sent back to the app, with its state and our issuer', async () => {
    const { res } = await consentFor(REDIRECT, { response_type: 'token' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'unsupported_response_type',
      error_description: 'Only response_type=code is supported.',
      state: 'st-1',
      iss: svc.url,
    });
  });

  it("the consent page may send the browser to the identity provider and to the app's own origin (https) or scheme (an app's own)", async () => {
    const web = await consentFor('http://127.0.0.1:9/callback');
    expect(web.res.status).toBe(200);
    const csp = web.res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/form-action [^;]*'self'[^;]*http:\/\/127\.0\.0\.1:9[ ;]/);
    const app = await consentFor('cursor://anysphere.cursor-retrieval/oauth/callback');
    const appCsp = app.res.headers.get('content-security-policy')!;
    expect(appCsp).toMatch(/form-action [^;]* cursor:[ ;]/);
    expect(appCsp).not.toContain('cursor://anysphere');
    // A scheme that merely ends in "https:" is an app's own scheme, not the web.
    const odd = await consentFor('com.example.myhttps:/callback');
    expect(odd.res.status).toBe(200);
    expect(odd.res.headers.get('content-security-policy')).toMatch(/form-action [^;]* com\.example\.myhttps:[ ;]/);
  });
});

describe('POST /authorize/decision', () => {
  it('cancel: back to the app with access_denied and its state', async () => {
    const c = await consentFor();
    const res = await decide({ transaction: c.transaction!, decision: 'cancel' }, { Cookie: c.cookie });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The person cancelled the sign-in.',
      state: 'st-1',
      iss: svc.url,
    });
  });

  it('taken once: the same transaction again is expired or used; an unknown one likewise', async () => {
    const c = await consentFor();
    expect((await decide({ transaction: c.transaction!, decision: 'continue' }, { Cookie: c.cookie })).status).toBe(302);
    const again = await decide({ transaction: c.transaction!, decision: 'continue' }, { Cookie: c.cookie });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('This sign-in has expired or was already used.');
    const unknown = await decide({ transaction: 'nope', decision: 'continue' }, { Cookie: c.cookie });
    expect(await unknown.text()).toContain('This sign-in has expired or was already used.');
    const none = await decide({ decision: 'continue' }, { Cookie: c.cookie });
    expect(await none.text()).toContain('This sign-in has expired or was already used.');
  });

  it('two decisions at once on one transaction: one goes on, the other is told it was used', async () => {
    const c = await consentFor();
    const both = await Promise.all([1, 2, 3].map(() => decide({ transaction: c.transaction!, decision: 'continue' }, { Cookie: c.cookie })));
    expect(both.map((r) => r.status).sort()).toEqual([302, 400, 400]);
  });

  it('not a form, or from another page: refused with a page saying where it may come from', async () => {
    const c = await consentFor();
    const json = await fetch(`${svc.url}/authorize/decision`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: svc.url, Cookie: c.cookie },
      body: JSON.stringify({ transaction: c.transaction, decision: 'continue' }),
    });
    expect(json.status).toBe(400);
    expect(await json.text()).toContain('This form can only be sent from the sign-in page itself.');
    const foreign = await decide({ transaction: c.transaction!, decision: 'continue' }, { Cookie: c.cookie, Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain('This form can only be sent from the sign-in page itself.');
    // Still unused: the right page, the right browser goes on.
    expect((await decide({ transaction: c.transaction!, decision: 'continue' }, { Cookie: c.cookie })).status).toBe(302);
  });
});
