import { isLoopbackHost } from '../config.js';
import { SETTINGS } from '../settings.js';
import type { Pending } from './types.js';

/** What a client may register as redirect URIs (RFC 8252, OAuth 2.1 §2.3.1; docs/sign-in-setup.md), and how one asked for matches. */

export const DEFAULT_REDIRECT_HOSTS = SETTINGS.authRedirectHosts.default.split(',');
const REDIRECT_URIS_MAX = 10;
const REDIRECT_URI_MAX_LENGTH = 500;
const APP_SCHEMES = /^(cursor|vscode|vscode-insiders|claude|windsurf):$/;
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/;

/**
 * One redirect URI: `ok`; `unlisted` (https to a host not in DOCREQ_AUTH_REDIRECT_HOSTS: dropped);
 * or `bad` (refused: not a URL, too long, a fragment, user info, a wildcard, plain http off loopback,
 * or any other scheme than https, http on loopback and an app's private-use scheme).
 */
function redirectUriVerdict(text: unknown, hosts: ReadonlySet<string>): 'ok' | 'unlisted' | 'bad' {
  if (typeof text !== 'string' || text.length > REDIRECT_URI_MAX_LENGTH || text.includes('*') || text.includes('#')) return 'bad';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'bad';
  }
  if (url.username || url.password || url.hash) return 'bad';
  if (url.protocol === 'https:') return hosts.has(url.hostname.toLowerCase()) || isLoopbackHost(url.hostname) ? 'ok' : 'unlisted';
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname) ? 'ok' : 'bad';
  return APP_SCHEMES.test(url.protocol) || REVERSE_DOMAIN_SCHEME.test(url.protocol) ? 'ok' : 'bad';
}

/** The redirect URIs kept from what a client asked for, or why none can be. */
export function allowedRedirectUris(uris: unknown, hosts: ReadonlySet<string>): { ok: true; uris: string[]; dropped: string[] } | { ok: false; why: string } {
  const policy = `each https to a host this firm allows (${[...hosts].join(', ')}), http on 127.0.0.1, [::1] or localhost, or an app's own scheme; no fragment, user info or wildcard; at most ${REDIRECT_URI_MAX_LENGTH} characters`;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > REDIRECT_URIS_MAX)
    return { ok: false, why: `redirect_uris: 1 to ${REDIRECT_URIS_MAX} addresses, ${policy}.` };
  const verdicts = uris.map((u) => redirectUriVerdict(u, hosts));
  const bad = verdicts.indexOf('bad');
  if (bad !== -1) return { ok: false, why: `redirect_uris[${bad}] is not allowed: ${policy}.` };
  const kept = uris.filter((_, i) => verdicts[i] === 'ok') as string[];
  if (!kept.length) return { ok: false, why: `none of redirect_uris is allowed here: ${policy}.` };
  return { ok: true, uris: kept, dropped: (uris as string[]).filter((_, i) => verdicts[i] !== 'ok').map((u) => new URL(u).hostname) };
}

/** RFC 8252 §7.3: an http loopback redirect URI matches on any port; every other one exactly. */
export function redirectMatches(registered: string, asked: string): boolean {
  if (registered === asked) return true;
  try {
    const a = new URL(registered);
    const b = new URL(asked);
    if (a.protocol !== 'http:' || b.protocol !== 'http:' || !isLoopbackHost(a.hostname)) return false;
    a.port = '';
    b.port = '';
    return a.href === b.href;
  } catch {
    return false;
  }
}

/** Where the app is told the outcome: its redirect URI with these parameters, its state and our issuer. */
export function backTo(pending: Pick<Pending, 'redirectUri' | 'state'>, params: Record<string, string>, issuer: string): string {
  const target = new URL(pending.redirectUri);
  for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
  if (pending.state) target.searchParams.set('state', pending.state);
  target.searchParams.set('iss', issuer);
  return target.href;
}
