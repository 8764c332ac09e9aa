import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { consentBinding } from '../src/auth/consent.js';
import { digest } from '../src/auth/crypto.js';

/** The consent page's binding to one browser (src/auth/consent.ts), exactly: which cookie counts, how it is set, whose form is taken. */
const good = 'A'.repeat(42) + '_';
const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('consentBinding', () => {
  const http = consentBinding('http://127.0.0.1:8080');
  const https = consentBinding('https://mcp.firm.example');

  it('reads its own cookie among others, trimmed; only 43 characters of base64url', () => {
    expect(http.browserOf(req({ cookie: `a=b; docreq-consent=${good}; c=d` }))).toBe(good);
    expect(http.browserOf(req({ cookie: ` docreq-consent = ${good} ` }))).toBe(good);
    expect(http.browserOf(req({ cookie: `docreq-consent=${good}x` }))).toBeUndefined();
    expect(http.browserOf(req({ cookie: `docreq-consent=x${good}` }))).toBeUndefined();
    expect(http.browserOf(req({ cookie: `docreq-consent=${good.slice(1)}` }))).toBeUndefined();
    expect(http.browserOf(req({ cookie: `docreq-consent=${'A'.repeat(42)}+` }))).toBeUndefined();
    expect(http.browserOf(req({ cookie: `other-docreq-consent=${good}` }))).toBeUndefined();
    expect(http.browserOf(req({ cookie: `=${good}` }))).toBeUndefined();
    expect(http.browserOf(req({ cookie: good }))).toBeUndefined();
    expect(http.browserOf(req({}))).toBeUndefined();
    expect(http.browserOf(req({ cookie: `x=1; docreq-consent=bad; docreq-consent=${good}` }))).toBe(good);
  });

  it('on https the cookie is __Host- and Secure; on http it goes without', () => {
    expect(https.browserOf(req({ cookie: `__Host-docreq-consent=${good}` }))).toBe(good);
    expect(https.browserOf(req({ cookie: `docreq-consent=${good}` }))).toBeUndefined();
    const set = (b: ReturnType<typeof consentBinding>) => {
      let header = '';
      b.setCookie({ setHeader: (_: string, v: string) => (header = v) } as unknown as ServerResponse, good);
      return header;
    };
    expect(set(https)).toBe(`__Host-docreq-consent=${good}; Path=/; Max-Age=600; HttpOnly; SameSite=Lax; Secure`);
    expect(set(http)).toBe(`docreq-consent=${good}; Path=/; Max-Age=600; HttpOnly; SameSite=Lax`);
  });

  it('the same browser: its cookie digests to what the sign-in was bound to; a form from our own origin only', () => {
    expect(http.sameBrowser(req({ cookie: `docreq-consent=${good}` }), digest(good))).toBe(true);
    expect(http.sameBrowser(req({ cookie: `docreq-consent=${good}` }), digest('other'))).toBe(false);
    expect(http.sameBrowser(req({}), digest(good))).toBe(false);
    expect(http.fromOwnPage(req({ origin: 'http://127.0.0.1:8080' }))).toBe(true);
    expect(http.fromOwnPage(req({ origin: 'http://127.0.0.1:8081' }))).toBe(false);
    expect(http.fromOwnPage(req({}))).toBe(false);
    expect(http.otherBrowser()).toMatchObject({ status: 403 });
  });
});
