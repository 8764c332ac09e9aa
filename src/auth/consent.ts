import type { IncomingMessage, ServerResponse } from 'node:http';
import { digest, sameText } from './crypto.js';
import type { Page } from '../page.js';
import { errorPage } from './pages.js';
import { TX_MS } from './types.js';

/**
 * The browser's binding to a sign-in (docs/sign-in.md): a cookie set with the consent page, checked at the
 * decision and at the identity provider's callback; and the decision taken on our own page only.
 */
export function consentBinding(base: string) {
  // On https the cookie is __Host- (Secure, this host only); on plain-http loopback that prefix cannot be set (it requires Secure), so it goes without.
  const secureCookie = base.startsWith('https:');
  const CONSENT_COOKIE = secureCookie ? '__Host-docreq-consent' : 'docreq-consent';
  const origin = new URL(base).origin;

  /** This browser's cookie value, when well-formed. */
  function browserOf(req: IncomingMessage): string | undefined {
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const at = part.indexOf('=');
      if (at > 0 && part.slice(0, at).trim() === CONSENT_COOKIE) {
        const value = part.slice(at + 1).trim();
        if (/^[A-Za-z0-9_-]{43}$/.test(value)) return value;
      }
    }
    return undefined;
  }

  return {
    browserOf,
    /** The request comes from the browser the sign-in is bound to (its cookie's digest). */
    sameBrowser(req: IncomingMessage, bound: string): boolean {
      const value = browserOf(req);
      return value !== undefined && sameText(digest(value), bound);
    },
    /** One cookie per browser (tabs share it). */
    setCookie(res: ServerResponse, browser: string): void {
      res.setHeader('Set-Cookie', `${CONSENT_COOKIE}=${browser}; Path=/; Max-Age=${TX_MS / 1000}; HttpOnly; SameSite=Lax${secureCookie ? '; Secure' : ''}`);
    },
    /** A form on our own page only: another site cannot make a signed-in browser go on. */
    fromOwnPage: (req: IncomingMessage) => req.headers.origin === origin,
    otherBrowser: (): Page =>
      errorPage(
        'This sign-in was started in another browser, or this browser does not keep its cookie. Start again from your assistant, in the browser it opens.',
        403,
      ),
  };
}
