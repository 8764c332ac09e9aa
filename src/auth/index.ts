import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import * as oidc from 'openid-client';
import { isLoopbackHost, SETTINGS } from '../config.js';
import { fetchPublicJson } from './outbound.js';
import { consentPage, errorPage, refusedPage, sendPage } from './pages.js';
import { decide, personFrom, type Person, type Policy, type Role } from './policy.js';
import { recordSession, sessionEnded, updateSession, withdraw, type SessionRecord } from './sessions.js';
import { MemoryAuthStore, type AuthStore } from './store.js';
import { oneLine } from '../text/render.js';
import { StoreUnavailableError } from '../store/store.js';

/**
 * Firm sign-in (contract §8): this service is an OAuth 2.1 protected resource (RFC 9728) and its own
 * authorization server (RFC 8414), which federates the sign-in itself to the firm's OpenID Connect
 * provider through openid-client. Access tokens are short-lived JWTs (jose, HS256 under a secret the
 * replicas share) whose audience is this service's /mcp; refresh tokens, codes, sign-ins in progress,
 * registered clients and revoked sessions live in an AuthStore that replicas share.
 */

export type { AuthStore } from './store.js';
export { MemoryAuthStore } from './store.js';
export type { Policy } from './policy.js';

export interface Identity {
  email: string;
  /** The identity provider's subject. */
  sub: string;
  role: Role;
}

type Authentication = { ok: true; identity: Identity; apiKey: string } | { ok: false; status: number; wwwAuthenticate: string; message: string };

export interface AuthOptions {
  /** The address hosts reach this service at (no trailing slash): the issuer, and `${publicUrl}/mcp` the resource. */
  publicUrl: string;
  /** Signs access tokens; every replica must have the same. */
  secret: Uint8Array;
  /** The firm's identity provider. */
  idp: { issuer: string; clientId: string; clientSecret: string };
  policy: Policy;
  /** The firm's key: used for the service on behalf of signed-in staff, never shown to anyone. */
  apiKey: string;
  store?: AuthStore;
  /** http:// on loopback for the identity provider (an http issuer on loopback was configured, or the sandbox's). */
  allowLoopbackHttp?: boolean;
  /**
   * @internal Tests only, never a setting: Client ID Metadata Documents may be fetched from loopback
   * (http or https). Otherwise their host must resolve to public addresses only.
   */
  unsafeAllowLoopbackClientDocuments?: boolean;
  /** Hosts whose https redirect URIs clients may register (DOCREQ_AUTH_REDIRECT_HOSTS); loopback http and app schemes always. */
  redirectHosts?: readonly string[];
  accessTokenSeconds?: number;
  /** How long a session lives, refreshes included, before the person signs in at the identity provider again (DOCREQ_AUTH_SESSION_HOURS). */
  sessionSeconds?: number;
  /** Log lines (stderr by default); never given a token or the key. */
  log?: (line: string) => void;
}

export interface Auth {
  readonly resource: string;
  readonly resourceMetadataUrl: string;
  /** Serves sign-in's own routes; false when the request is not one of them. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Checks a request's access token for /mcp. */
  authenticate(req: IncomingMessage): Promise<Authentication>;
  /** Told of each sign-in as it ends: a session started, or the person refused (team mode's metrics). */
  onSignIn?: (outcome: 'signed_in' | 'refused') => void;
}

const SCOPE = 'docreq';
const DEFAULT_REDIRECT_HOSTS = SETTINGS.authRedirectHosts.default.split(',');
const MINUTE = 60_000;
const TX_MS = 10 * MINUTE;
const CODE_MS = MINUTE;
const CLIENT_MS = 180 * 24 * 60 * MINUTE;
const MAX_FORM = 16 * 1024;
/** Sign-in's routes and the one method each answers. */
const ROUTES: Record<string, string> = { '/register': 'POST', '/authorize': 'GET', '/authorize/decision': 'POST', '/login/callback': 'GET', '/token': 'POST', '/revoke': 'POST' };

const b64url = (bytes: Buffer) => bytes.toString('base64url');
const random = () => b64url(randomBytes(32));
const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

interface ClientRecord {
  clientName: string | undefined;
  redirectUris: string[];
}

interface Pending {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  resource: string;
  scope: string;
  /** The digest of the consent cookie of the browser that saw the consent page. */
  browser: string;
  /** The app as the consent page named it (its client_name, else where it returns). */
  app: string;
}

/** What a sign-in gave: who, what they may do, the facts the role was decided on, and the session's bounds. */
interface Grant {
  clientId: string;
  resource: string;
  scope: string;
  identity: Identity;
  person: Person;
  app: string;
  started: number;
  expires: number;
  /** The identity provider's refresh token, sealed; absent where it gives none. */
  idpRefresh?: string;
}
type CodeGrant = Grant & { redirectUri: string; codeChallenge: string };
/** A session as each refresh token holds it: its family (the session's id) and its entry in the list. */
type Session = Grant & { family: string; slot: string };

class OAuthError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** What a client may register as redirect URIs (RFC 8252, OAuth 2.1 §2.3.1; README "Deploying it for a firm"). */
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
function allowedRedirectUris(uris: unknown, hosts: ReadonlySet<string>): { ok: true; uris: string[]; dropped: string[] } | { ok: false; why: string } {
  const policy = `each https to a host this firm allows (${[...hosts].join(', ')}), http on 127.0.0.1, [::1] or localhost, or an app's own scheme; no fragment, user info or wildcard; at most ${REDIRECT_URI_MAX_LENGTH} characters`;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > REDIRECT_URIS_MAX) return { ok: false, why: `redirect_uris: 1 to ${REDIRECT_URIS_MAX} addresses, ${policy}.` };
  const verdicts = uris.map((u) => redirectUriVerdict(u, hosts));
  const bad = verdicts.indexOf('bad');
  if (bad !== -1) return { ok: false, why: `redirect_uris[${bad}] is not allowed: ${policy}.` };
  const kept = uris.filter((_, i) => verdicts[i] === 'ok') as string[];
  if (!kept.length) return { ok: false, why: `none of redirect_uris is allowed here: ${policy}.` };
  return { ok: true, uris: kept, dropped: (uris as string[]).filter((_, i) => verdicts[i] !== 'ok').map((u) => new URL(u).hostname) };
}

/** RFC 7591 §2: each client metadata field this server reads, when present, has its type; the first that has not. */
function metadataTypeProblem(meta: Record<string, unknown>): string | undefined {
  const strings = ['client_name', 'token_endpoint_auth_method', 'scope', 'client_uri', 'logo_uri'];
  const lists = ['grant_types', 'response_types'];
  for (const name of strings) if (name in meta && typeof meta[name] !== 'string') return `${name} must be a string.`;
  for (const name of lists) if (name in meta && !(Array.isArray(meta[name]) && (meta[name] as unknown[]).every((v) => typeof v === 'string'))) return `${name} must be an array of strings.`;
  return undefined;
}

/** RFC 8252 §7.3: an http loopback redirect URI matches on any port; every other one exactly. */
function redirectMatches(registered: string, asked: string): boolean {
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

/** A request body as sign-in reads it: a form, a JSON object, or why it cannot be used (a 4xx, never a 500). */
type Body = { kind: 'form'; params: URLSearchParams } | { kind: 'json'; value: Record<string, unknown> } | { kind: 'bad'; status: number; why: string };

function readBody(req: IncomingMessage): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORM) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_FORM) return resolve({ kind: 'bad', status: 413, why: `The request body is larger than ${MAX_FORM / 1024} KiB.` });
      const text = Buffer.concat(chunks).toString('utf8');
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type === 'application/json') {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return resolve({ kind: 'bad', status: 400, why: 'The body is not valid JSON.' });
        }
        if (!value || typeof value !== 'object' || Array.isArray(value)) return resolve({ kind: 'bad', status: 400, why: 'The body must be a JSON object.' });
        return resolve({ kind: 'json', value: value as Record<string, unknown> });
      }
      if (type !== '' && type !== 'application/x-www-form-urlencoded') return resolve({ kind: 'bad', status: 415, why: 'Send application/x-www-form-urlencoded or application/json.' });
      resolve({ kind: 'form', params: new URLSearchParams(text) });
    });
    req.on('error', reject);
  });
}

/** The form a token, revocation or consent request must be; anything else is an OAuth error (4xx). */
function formOf(body: Body): URLSearchParams {
  if (body.kind === 'form') return body.params;
  throw new OAuthError('invalid_request', body.kind === 'bad' ? body.why : 'Send this request as application/x-www-form-urlencoded.', body.kind === 'bad' ? body.status : 400);
}

/** One value of a form parameter; a repeated parameter is refused, as OAuth requires. */
function one(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new OAuthError('invalid_request', `${name} is given more than once.`);
  return all[0] === '' ? undefined : all[0];
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*', ...headers });
  res.end(JSON.stringify(body));
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
  res.end();
}

export function createAuth(options: AuthOptions): Auth {
  const base = options.publicUrl.replace(/\/+$/, '');
  const issuer = base;
  const resource = `${base}/mcp`;
  const resourceMetadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
  const store = options.store ?? new MemoryAuthStore();
  const accessSeconds = options.accessTokenSeconds ?? 600;
  const sessionMs = (options.sessionSeconds ?? Number(SETTINGS.authSessionHours.default) * 3600) * 1000;
  // On https the cookie is __Host- (Secure, this host only); on plain-http loopback that prefix cannot be set (it requires Secure), so it goes without.
  const secureCookie = base.startsWith('https:');
  const CONSENT_COOKIE = secureCookie ? '__Host-docreq-consent' : 'docreq-consent';
  // Keys derived from the auth secret: rotating it ends every refresh token and every identity provider token kept.
  const refreshSecret = Buffer.from(hkdfSync('sha256', options.secret, 'docreq-mcp', 'refresh tokens', 32));
  const sealKey = Buffer.from(hkdfSync('sha256', options.secret, 'docreq-mcp', 'identity provider tokens', 32));
  const refreshKey = (token: string) => `refresh:${createHmac('sha256', refreshSecret).update(token).digest('base64url')}`;
  /** An identity provider's refresh token, encrypted (AES-256-GCM) before it reaches the store. */
  const seal = (text: string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  };
  const open = (sealed: string): string | undefined => {
    try {
      const bytes = Buffer.from(sealed, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', sealKey, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  };
  const sessionRecord = (s: Session): SessionRecord => ({ family: s.family, email: s.identity.email, sub: s.identity.sub, role: s.identity.role, app: s.app, started: s.started, expires: s.expires });
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const idpOrigin = new URL(options.idp.issuer).origin;
  const redirectHosts: ReadonlySet<string> = new Set((options.redirectHosts ?? DEFAULT_REDIRECT_HOSTS).map((h) => h.toLowerCase()));
  const challenge = (extra = '') => `Bearer resource_metadata="${resourceMetadataUrl}", scope="${SCOPE}"${extra}`;

  let idp: Promise<oidc.Configuration> | undefined;
  const idpConfig = () => {
    idp ??= oidc
      .discovery(new URL(options.idp.issuer), options.idp.clientId, options.idp.clientSecret, undefined, options.allowLoopbackHttp ? { execute: [oidc.allowInsecureRequests] } : undefined)
      .catch((error: unknown) => {
        idp = undefined; // tried again on the next sign-in
        throw error;
      });
    return idp;
  };

  const protectedResource = { resource, authorization_servers: [issuer], scopes_supported: [SCOPE], bearer_methods_supported: ['header'], resource_name: 'Document Requests' };
  const serverMetadata = {
    issuer,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    revocation_endpoint: `${base}/revoke`,
    scopes_supported: [SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };

  /** A client by id: a registered one, or the metadata document its URL names (fetched, checked, cached briefly). */
  async function findClient(clientId: string): Promise<ClientRecord | undefined> {
    if (/^https?:\/\//i.test(clientId)) return metadataDocument(clientId);
    const stored = await store.get(`client:${digest(clientId)}`);
    return stored ? (JSON.parse(stored) as ClientRecord) : undefined;
  }

  async function metadataDocument(clientId: string): Promise<ClientRecord | undefined> {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      return undefined;
    }
    // https, a path, no fragment or credentials; the address is checked where the socket connects (./outbound.ts).
    if (url.hash || url.username || url.password || url.pathname === '/') return undefined;
    const cached = await store.get(`cimd:${digest(clientId)}`);
    if (cached) return JSON.parse(cached) as ClientRecord;
    const why = (reason: string) => log(`docreq-mcp info: client metadata document ${url.origin}${url.pathname.slice(0, 100)} not used: ${reason}`);
    const text = await fetchPublicJson(url, { allowLoopback: options.unsafeAllowLoopbackClientDocuments === true, maxBytes: 20_000, timeoutMs: 5_000 }, why);
    if (text === undefined) return undefined;
    try {
      const doc = JSON.parse(text) as { client_id?: unknown; redirect_uris?: unknown; client_name?: unknown };
      if (doc.client_id !== clientId) return void why('its client_id is not its own URL');
      const uris = allowedRedirectUris(doc.redirect_uris, redirectHosts);
      if (!uris.ok) return void why(uris.why);
      const record: ClientRecord = { clientName: typeof doc.client_name === 'string' ? doc.client_name.slice(0, 100) : undefined, redirectUris: uris.uris };
      await store.set(`cimd:${digest(clientId)}`, JSON.stringify(record), 5 * MINUTE);
      return record;
    } catch {
      return undefined;
    }
  }

  async function register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body.kind !== 'json') {
      const why = body.kind === 'bad' ? body.why : 'Send the client metadata as a JSON object (Content-Type: application/json).';
      return json(res, body.kind === 'bad' ? body.status : 400, { error: 'invalid_client_metadata', error_description: why });
    }
    const meta = body.value;
    const wrongType = metadataTypeProblem(meta);
    if (wrongType) return json(res, 400, { error: 'invalid_client_metadata', error_description: wrongType });
    const uris = allowedRedirectUris(meta.redirect_uris, redirectHosts);
    if (!uris.ok) return json(res, 400, { error: 'invalid_redirect_uri', error_description: uris.why });
    if ((await store.incr(`registrations:${Math.floor(Date.now() / MINUTE)}`, 2 * MINUTE)) > 600) {
      return json(res, 429, { error: 'temporarily_unavailable', error_description: 'Too many registrations; try again in a minute.' }, { 'Retry-After': '60' });
    }
    if (uris.dropped.length) log(`docreq-mcp info: a registration's redirect URIs to ${[...new Set(uris.dropped)].slice(0, 5).join(', ')} were dropped: not in DOCREQ_AUTH_REDIRECT_HOSTS`);
    const clientId = `dcr_${random()}`;
    const record: ClientRecord = { clientName: typeof meta.client_name === 'string' ? meta.client_name.slice(0, 100) : undefined, redirectUris: uris.uris };
    await store.set(`client:${digest(clientId)}`, JSON.stringify(record), CLIENT_MS);
    json(res, 201, {
      client_id: clientId,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      redirect_uris: record.redirectUris,
      ...(record.clientName ? { client_name: record.clientName } : {}),
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
  }

  /** The browser's binding to a sign-in (contract §8.1): its cookie's value, when well-formed. */
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
  const sameBrowser = (req: IncomingMessage, bound: string) => {
    const value = browserOf(req);
    return value !== undefined && sameText(digest(value), bound);
  };
  const otherBrowser = () =>
    errorPage('This sign-in was started in another browser, or this browser does not keep its cookie. Start again from your assistant, in the browser it opens.', 403);

  /** Where the app is told the outcome: its redirect URI with these parameters, its state and our issuer. */
  function backTo(pending: Pending, params: Record<string, string>): string {
    const target = new URL(pending.redirectUri);
    for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
    if (pending.state) target.searchParams.set('state', pending.state);
    target.searchParams.set('iss', issuer);
    return target.href;
  }

  /** GET /authorize: checks the client and its redirect first (an error page, no redirect), then the rest (an error sent back to the app). */
  async function authorize(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
    const q = url.searchParams;
    let clientId: string | undefined;
    let redirectUri: string | undefined;
    try {
      clientId = one(q, 'client_id');
      redirectUri = one(q, 'redirect_uri');
    } catch {
      return sendPage(res, errorPage('The sign-in link is malformed.'));
    }
    const client = clientId ? await findClient(clientId) : undefined;
    if (!clientId || !client) return sendPage(res, errorPage('The app asking to sign you in is not known here (its registration or metadata document could not be found or is not valid).'));
    if (!redirectUri || !client.redirectUris.some((r) => redirectMatches(r, redirectUri))) return sendPage(res, errorPage('The app asked to send the answer to an address it did not register.'));
    let state: string | undefined;
    try {
      state = one(q, 'state');
      if (one(q, 'response_type') !== 'code') throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported.');
      const codeChallenge = one(q, 'code_challenge');
      if (!codeChallenge || one(q, 'code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
        throw new OAuthError('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256.');
      }
      const asked = one(q, 'resource');
      if (asked !== undefined && asked.replace(/\/$/, '') !== resource) throw new OAuthError('invalid_target', `This server issues tokens for ${resource} only.`);
      const scope = one(q, 'scope');
      if (scope !== undefined && scope.split(' ').some((s) => s && s !== SCOPE)) throw new OAuthError('invalid_scope', `The only scope is ${SCOPE}.`);
      const app = new URL(redirectUri);
      const returnsTo = app.host || app.protocol;
      // The browser that sees this page: one cookie per browser (tabs share it), checked at the decision and the callback.
      const browser = browserOf(req) ?? random();
      const pending: Pending = { clientId, redirectUri, codeChallenge, state, resource, scope: SCOPE, browser: digest(browser), app: client.clientName ?? returnsTo };
      const transaction = random();
      await store.set(`tx:${digest(transaction)}`, JSON.stringify(pending), TX_MS);
      res.setHeader('Set-Cookie', `${CONSENT_COOKIE}=${browser}; Path=/; Max-Age=${TX_MS / 1000}; HttpOnly; SameSite=Lax${secureCookie ? '; Secure' : ''}`);
      // The form leads to the identity provider (continue) or back to the app (cancel).
      sendPage(res, consentPage(client.clientName, returnsTo, transaction), [idpOrigin, /^https?:$/.test(app.protocol) ? app.origin : app.protocol]);
    } catch (error) {
      if (error instanceof OAuthError) return redirect(res, backTo({ redirectUri, state } as Pending, { error: error.code, error_description: error.message }));
      throw error;
    }
  }

  /** POST /authorize/decision: the person chose; on to the identity provider, or back to the app. */
  async function decision(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A form on our own page only: another site cannot make a signed-in browser go on.
    if (req.headers.origin !== new URL(base).origin) return sendPage(res, errorPage('This form can only be sent from the sign-in page itself.', 403));
    const body = await readBody(req);
    if (body.kind !== 'form') return sendPage(res, errorPage(body.kind === 'bad' ? body.why : 'This form can only be sent from the sign-in page itself.', body.kind === 'bad' ? body.status : 400));
    const form = body.params;
    const transaction = form.get('transaction');
    const key = transaction ? `tx:${digest(transaction)}` : undefined;
    const stored = key ? await store.get(key) : undefined;
    if (!key || !stored) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
    const pending = JSON.parse(stored) as Pending;
    if (!sameBrowser(req, pending.browser)) return sendPage(res, otherBrowser());
    if (!(await store.claim(`${key}:used`, '1', TX_MS))) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
    await store.delete(key);
    if (form.get('decision') !== 'continue') return redirect(res, backTo(pending, { error: 'access_denied', error_description: 'The person cancelled the sign-in.' }));
    let config: oidc.Configuration;
    try {
      config = await idpConfig();
    } catch {
      log(`docreq-mcp warn: the identity provider at ${options.idp.issuer} cannot be reached (DOCREQ_OIDC_ISSUER)`);
      return sendPage(res, errorPage("The firm's identity provider cannot be reached right now. Try again in a moment.", 502));
    }
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const idpState = random();
    await store.set(`login:${digest(idpState)}`, JSON.stringify({ pending, verifier, nonce }), TX_MS);
    // A refresh token from the identity provider where it offers one (offline_access): asked again at each of our refreshes.
    const offline = config.serverMetadata().scopes_supported?.includes('offline_access') ? ' offline_access' : '';
    const target = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${base}/login/callback`,
      scope: `openid email profile${offline}`,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: idpState,
      nonce,
    });
    redirect(res, target.href);
  }

  /** The name this person goes by in audit lines and sends: a verified e-mail, else the provider's user name, else its subject. */
  function label(claims: Record<string, unknown>, person: Person): string {
    if (person.email) return person.email;
    if (typeof claims.preferred_username === 'string' && claims.preferred_username) return claims.preferred_username.toLowerCase().slice(0, 200);
    return String(claims.sub);
  }

  /** GET /login/callback: the identity provider's answer; the person's role; a code for the app. */
  async function callback(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
    const idpState = url.searchParams.get('state');
    const key = idpState ? `login:${digest(idpState)}` : undefined;
    const stored = key ? await store.get(key) : undefined;
    if (!key || !stored) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
    const { pending, verifier, nonce } = JSON.parse(stored) as { pending: Pending; verifier: string; nonce: string };
    // The browser that said Continue, and no other: a colleague opening this link gets no code for the first person's app.
    if (!sameBrowser(req, pending.browser)) return sendPage(res, otherBrowser());
    if (!(await store.claim(`${key}:used`, '1', TX_MS))) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
    await store.delete(key);
    if (url.searchParams.has('error')) return redirect(res, backTo(pending, { error: 'access_denied', error_description: 'The sign-in at the identity provider did not finish.' }));
    let claims: Record<string, unknown>;
    let idpRefresh: string | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(await idpConfig(), new URL(`${base}/login/callback${url.search}`), { pkceCodeVerifier: verifier, expectedState: idpState!, expectedNonce: nonce, idTokenExpected: true });
      claims = { ...(tokens.claims() ?? {}) };
      idpRefresh = tokens.refresh_token;
    } catch (error) {
      log(`docreq-mcp warn: sign-in at the identity provider failed: ${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'}`);
      return sendPage(res, errorPage('The answer from the identity provider could not be accepted. Try signing in again.', 502));
    }
    const person = personFrom(claims);
    const verdict = decide(options.policy, person);
    const name = label(claims, person);
    if ('refused' in verdict) {
      log(JSON.stringify({ audit: 'sign-in refused', email: name, sub: claims.sub }));
      auth.onSignIn?.('refused');
      // The person sees why; the app is told (access_denied) when they go back to it.
      const back = backTo(pending, { error: 'access_denied', error_description: 'This account is not allowed to use this service.' });
      return sendPage(res, refusedPage(name, verdict.refused, { app: pending.app, href: back }));
    }
    const identity: Identity = { email: name, sub: String(claims.sub), role: verdict.role };
    const started = Date.now();
    const code = random();
    const grant: CodeGrant = {
      clientId: pending.clientId,
      resource: pending.resource,
      scope: pending.scope,
      identity,
      person,
      app: pending.app,
      started,
      expires: started + sessionMs,
      ...(idpRefresh ? { idpRefresh: seal(idpRefresh) } : {}),
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
    };
    await store.set(`code:${digest(code)}`, JSON.stringify(grant), CODE_MS);
    log(JSON.stringify({ audit: 'sign-in', email: name, sub: identity.sub, role: identity.role }));
    auth.onSignIn?.('signed_in');
    redirect(res, backTo(pending, { code }));
  }

  /** An access token and a rotated refresh token for a session; neither outlives it. */
  async function issue(grant: Session): Promise<Record<string, unknown>> {
    const left = Math.floor((grant.expires - Date.now()) / 1000);
    const seconds = Math.max(1, Math.min(accessSeconds, left));
    const accessToken = await new SignJWT({ email: grant.identity.email, role: grant.identity.role, fam: grant.family, st: grant.started, client_id: grant.clientId, scope: grant.scope })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(grant.resource)
      .setSubject(grant.identity.sub)
      .setIssuedAt()
      .setExpirationTime(`${seconds}s`)
      .setJti(random())
      .sign(options.secret);
    const refreshToken = random();
    await store.set(refreshKey(refreshToken), JSON.stringify(grant), Math.max(1, grant.expires - Date.now()));
    return { access_token: accessToken, token_type: 'Bearer', expires_in: seconds, refresh_token: refreshToken, scope: grant.scope };
  }

  /** Ends a session on every replica; an audit line says whose and why. */
  async function endSession(grant: Session, why: string): Promise<void> {
    await withdraw(store, grant.family);
    log(JSON.stringify({ audit: 'session ended', why, email: grant.identity.email, sub: grant.identity.sub }));
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = formOf(await readBody(req));
    const clientId = one(form, 'client_id');
    const asked = one(form, 'resource');
    if (asked !== undefined && asked.replace(/\/$/, '') !== resource) throw new OAuthError('invalid_target', `This server issues tokens for ${resource} only.`);
    const grantType = one(form, 'grant_type');
    if (grantType === 'authorization_code') {
      const code = one(form, 'code');
      if (!code) throw new OAuthError('invalid_request', 'code is missing.');
      const key = `code:${digest(code)}`;
      const stored = await store.get(key);
      if (!stored) throw new OAuthError('invalid_grant', 'The code is unknown or has expired.');
      if (!(await store.claim(`${key}:used`, '1', 2 * CODE_MS))) {
        // A code used twice: whatever it gave is withdrawn too (RFC 9700 §4.2.4 / OAuth 2.1).
        const family = await store.get(`${key}:family`);
        if (family) await withdraw(store, family);
        throw new OAuthError('invalid_grant', 'The code was already used.');
      }
      const grant = JSON.parse(stored) as CodeGrant;
      if (clientId !== grant.clientId) throw new OAuthError('invalid_grant', 'The code was issued to another client.');
      if (one(form, 'redirect_uri') !== grant.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request.');
      const verifier = one(form, 'code_verifier');
      if (!verifier || !/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier) || !sameText(digest(verifier), grant.codeChallenge)) {
        throw new OAuthError('invalid_grant', 'The PKCE code_verifier does not match the code_challenge.');
      }
      const family = random();
      await store.set(`${key}:family`, family, Math.max(1, grant.expires - Date.now()));
      const { redirectUri: _r, codeChallenge: _c, ...rest } = grant;
      const session: Session = { ...rest, family, slot: '' };
      session.slot = await recordSession(store, sessionRecord(session));
      return json(res, 200, await issue(session));
    }
    if (grantType === 'refresh_token') {
      const refreshToken = one(form, 'refresh_token');
      if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is missing.');
      const key = refreshKey(refreshToken);
      const stored = await store.get(key);
      // Unknown also when the auth secret was rotated: refresh tokens are looked up under a key derived from it.
      if (!stored) throw new OAuthError('invalid_grant', 'The refresh token is unknown or has expired: sign in again.');
      const grant = JSON.parse(stored) as Session;
      if (clientId !== grant.clientId) throw new OAuthError('invalid_grant', 'The refresh token was issued to another client.');
      const ended = await sessionEnded(store, { family: grant.family, email: grant.identity.email, started: grant.started });
      if (ended) throw new OAuthError('invalid_grant', `${ended[0]!.toUpperCase()}${ended.slice(1)}.`);
      if (!(await store.claim(`${key}:used`, '1', Math.max(1, grant.expires - Date.now())))) {
        // A rotated refresh token came back: someone holds a copy. The whole session ends.
        await endSession(grant, 'refresh token reused');
        throw new OAuthError('invalid_grant', 'The refresh token was already used, so the session was ended: sign in again.');
      }
      if (Date.now() >= grant.expires) throw new OAuthError('invalid_grant', "This sign-in session has reached its time limit: sign in again at the firm's identity provider.");
      return json(res, 200, await refresh(grant, key));
    }
    throw new OAuthError('unsupported_grant_type', 'Only authorization_code and refresh_token are supported.');
  }

  /**
   * A refresh (contract §8.1): the identity provider asked again where it gave a refresh token (a person
   * disabled there is refused now), and the role decided again against the current settings.
   */
  async function refresh(grant: Session, key: string): Promise<Record<string, unknown>> {
    let person = grant.person;
    let idpRefresh = grant.idpRefresh;
    if (idpRefresh) {
      const held = open(idpRefresh);
      if (!held) {
        await endSession(grant, 'identity provider token unreadable (auth secret rotated)');
        throw new OAuthError('invalid_grant', 'This session can no longer be renewed: sign in again.');
      }
      let tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
      try {
        tokens = await oidc.refreshTokenGrant(await idpConfig(), held);
      } catch (error) {
        if (error instanceof oidc.ResponseBodyError) {
          await endSession(grant, `identity provider refused the refresh (${oneLine(error.error, 60)})`);
          throw new OAuthError('invalid_grant', "The firm's identity provider no longer accepts this sign-in: sign in again.");
        }
        log(`docreq-mcp warn: the identity provider could not be asked at a refresh: ${error instanceof Error ? oneLine(error.message, 200) : 'unknown error'}`);
        await store.delete(`${key}:used`); // the same refresh token may be tried again
        throw new OAuthError('temporarily_unavailable', "The firm's identity provider cannot be reached right now; try again in a moment.", 503);
      }
      const claims = tokens.claims();
      if (claims) {
        if (String(claims.sub) !== grant.identity.sub) throw new OAuthError('invalid_grant', 'The identity provider answered for another person: sign in again.');
        person = personFrom({ ...claims });
      }
      if (tokens.refresh_token) idpRefresh = seal(tokens.refresh_token);
    }
    const verdict = decide(options.policy, person);
    if ('refused' in verdict) {
      await endSession(grant, 'no longer allowed by the settings');
      throw new OAuthError('invalid_grant', 'This account is no longer allowed to use this service: ask your IT team.');
    }
    const next: Session = { ...grant, person, identity: { ...grant.identity, role: verdict.role }, ...(idpRefresh ? { idpRefresh } : {}) };
    if (verdict.role !== grant.identity.role) {
      log(JSON.stringify({ audit: 'role changed', email: grant.identity.email, sub: grant.identity.sub, from: grant.identity.role, to: verdict.role }));
      if (next.slot) await updateSession(store, next.slot, sessionRecord(next));
    }
    return issue(next);
  }

  /** POST /revoke (RFC 7009): a refresh or access token ends its whole session, on every replica. */
  async function revoke(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const tokenText = one(formOf(await readBody(req)), 'token');
    if (!tokenText) throw new OAuthError('invalid_request', 'token is missing.');
    const stored = await store.get(refreshKey(tokenText));
    if (stored) {
      await withdraw(store, (JSON.parse(stored) as Session).family);
    } else {
      try {
        const { payload } = await jwtVerify(tokenText, options.secret, { issuer, algorithms: ['HS256'] });
        if (typeof payload.fam === 'string') await withdraw(store, payload.fam);
      } catch {
        // An unknown token is not an error (RFC 7009 §2.2).
      }
    }
    res.writeHead(200, { 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*' });
    res.end();
  }

  const auth: Auth = {
    resource,
    resourceMetadataUrl,
    async handle(req, res) {
      const url = new URL(req.url ?? '/', base);
      const path = url.pathname;
      const method = req.method ?? 'GET';
      const api = ['/token', '/register', '/revoke'].includes(path) || path.startsWith('/.well-known/');
      if (api && method === 'OPTIONS') {
        res.writeHead(204, { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET, POST', 'Access-Control-Allow-Headers': 'Content-Type, Authorization, Mcp-Protocol-Version', 'Access-Control-Max-Age': '600' });
        res.end();
        return true;
      }
      try {
        if (method === 'GET' && (path === '/.well-known/oauth-protected-resource' || path === '/.well-known/oauth-protected-resource/mcp')) json(res, 200, protectedResource, { 'Cache-Control': 'max-age=300' });
        else if (method === 'GET' && path === '/.well-known/oauth-authorization-server') json(res, 200, serverMetadata, { 'Cache-Control': 'max-age=300' });
        else if (method === 'POST' && path === '/register') await register(req, res);
        else if (method === 'GET' && path === '/authorize') await authorize(req, url, res);
        else if (method === 'POST' && path === '/authorize/decision') await decision(req, res);
        else if (method === 'GET' && path === '/login/callback') await callback(req, url, res);
        else if (method === 'POST' && path === '/token') await token(req, res);
        else if (method === 'POST' && path === '/revoke') await revoke(req, res);
        else if (ROUTES[path]) {
          // A sign-in route asked with another method: an OAuth error, not the MCP endpoint's 404.
          json(res, 405, { error: 'invalid_request', error_description: `${path} answers ${ROUTES[path]} only.` }, { Allow: ROUTES[path] });
        } else return false;
      } catch (error) {
        if (error instanceof OAuthError) json(res, error.status, { error: error.code, error_description: error.message });
        else {
          // Not the input's fault (the store, a bug): said as OAuth says it, without the details.
          log(`docreq-mcp warn: sign-in ${path} failed: ${error instanceof Error ? error.name : 'error'}`);
          const storeDown = error instanceof StoreUnavailableError;
          if (!res.headersSent) json(res, storeDown ? 503 : 500, { error: storeDown ? 'temporarily_unavailable' : 'server_error', error_description: 'Sign-in cannot answer right now; try again in a moment.' }, storeDown ? { 'Retry-After': '5' } : {});
        }
      }
      return true;
    },
    async authenticate(req) {
      const header = req.headers.authorization;
      const match = header ? /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header) : null;
      if (!header) return { ok: false, status: 401, wwwAuthenticate: challenge(), message: 'Unauthorized: sign in with your firm account (OAuth); this server publishes how at /.well-known/oauth-protected-resource/mcp.' };
      const refuse = (description: string) => ({ ok: false as const, status: 401, wwwAuthenticate: challenge(`, error="invalid_token", error_description="${description}"`), message: `Unauthorized: ${description}.` });
      if (!match || match[1]!.length > 4096) return refuse('malformed bearer token');
      try {
        const { payload } = await jwtVerify(match[1]!, options.secret, { issuer, audience: resource, algorithms: ['HS256'], typ: 'at+jwt', requiredClaims: ['sub', 'exp', 'fam', 'email', 'role', 'st'] });
        const ended = await sessionEnded(store, { family: String(payload.fam), email: String(payload.email), started: Number(payload.st) });
        if (ended) return refuse(ended);
        const role: Role = payload.role === 'sender' ? 'sender' : 'reader';
        return { ok: true, identity: { email: String(payload.email), sub: String(payload.sub), role }, apiKey: options.apiKey };
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) return refuse('the access token has expired; refresh it or sign in again');
        if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud') return refuse('the access token was issued for another resource');
        return refuse('the access token is not valid here');
      }
    },
  };
  return auth;
}
