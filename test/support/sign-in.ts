// Team mode with sign-in for tests: signInService, the browser's sign-in over HTTP, and OAuth requests by hand.
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, expect } from 'vitest';
import { createAuth, MemoryAuthStore, type AuthOptions, type AuthStore, type Policy } from '../../src/auth/index.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Sandbox } from '../../src/sandbox/service.js';
import { DEMO_POLICY, startDemoIdp, type DemoIdp, type DemoIdpOptions } from '../../src/sandbox/idp.js';
import type { HttpService } from '../../src/transport/http.js';
import { captured } from './key-scan.js';
import { teamService } from './team-service.js';

/**
 * Team mode's sign-in set-up, in one place: the real service on loopback in front of the sandbox
 * (team-service.ts teamService) with sign-in (src/auth/) federated to the demo identity provider,
 * oidc-provider on loopback (signInService); and the browser's part of the sign-in played over HTTP.
 * Each service (and its identity provider) is closed after the test file.
 */

/** The host's callback: never fetched, the tests read the code from the redirect to it. */
export const REDIRECT = 'http://127.0.0.1:9/callback';

export interface SignInServiceOptions {
  /** The public address (a replica behind the same one as another service). */
  publicUrl?: string;
  confirmSend?: Config['confirmSend'];
  policy?: Policy;
  /** Shared by replicas: the auth store and the access-token secret. */
  store?: AuthStore;
  secret?: Uint8Array;
  /** Where the access and audit lines go (also kept for the key scan). */
  lines?: string[];
  /** createAuth's own options (e.g. the test-only loopback CIMD switch). */
  auth?: Partial<AuthOptions>;
  /** The demo identity provider's options (claims shaped as another IdP's, refresh tokens), and a hand on it once started. */
  idp?: DemoIdpOptions;
  onIdp?: (idp: DemoIdp) => void;
  /** Serve the metrics on this loopback port (team mode's DOCREQ_METRICS_PORT). */
  metricsPort?: number;
}

export async function signInService(sb: Sandbox, options: SignInServiceOptions = {}): Promise<HttpService> {
  const lines = options.lines ?? [];
  let closeIdp = () => Promise.resolve();
  afterAll(() => closeIdp());
  return teamService(sb, {
    ...(options.metricsPort === undefined ? {} : { metricsPort: options.metricsPort }),
    config: loadConfig({ confirmSend: options.confirmSend ?? 'never' }, { DOCREQ_BASE_URL: sb.url }),
    write: (line) => {
      lines.push(line);
      captured.push(line);
    },
    auth: async (url) => {
      const base = options.publicUrl ?? url;
      const idp = await startDemoIdp([`${base}/login/callback`], options.idp);
      closeIdp = () => idp.close();
      options.onIdp?.(idp);
      return createAuth({
        publicUrl: base,
        secret: options.secret ?? new Uint8Array(randomBytes(32)),
        idp,
        policy: options.policy ?? DEMO_POLICY,
        apiKey: sb.keys.demo,
        store: options.store ?? new MemoryAuthStore(),
        allowLoopbackHttp: true,
        log: (line) => lines.push(line),
        ...options.auth,
      });
    },
  });
}

/** What a host keeps for one person: the SDK asks it for its client, tokens and verifier. */
export class HostProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test host',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A browser's fetch: the cookies every answer sets (ours and the provider's, all on 127.0.0.1) sent again, redirects not followed. */
export function cookieFetch(): (url: string | URL, init?: RequestInit) => Promise<Response> {
  const cookies = new Map<string, string>();
  return async (url, init = {}) => {
    const jar = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(jar ? { Cookie: jar } : {}) } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return res;
  };
}

/**
 * The browser's part: our consent page (Continue), the identity provider's sign-in form, and the
 * redirects back, with the identity provider's cookies kept. Returns where the app is sent at the end.
 */
export async function signIn(
  authorizationUrl: URL | string,
  email: string,
  password: string,
): Promise<{ location: URL; pages: { url: string; status: number; body: string }[] }> {
  const pages: { url: string; status: number; body: string }[] = [];
  const get = cookieFetch();
  let res = await get(String(authorizationUrl));
  let body = await res.text();
  pages.push({ url: String(authorizationUrl), status: res.status, body });
  if (res.status !== 200) throw new Error(`consent page: ${res.status} ${body.slice(0, 200)}`);
  const transaction = /name="transaction" value="([^"]+)"/.exec(body)![1]!;
  const origin = new URL(String(authorizationUrl)).origin;
  res = await get(`${origin}/authorize/decision`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: origin },
    body: new URLSearchParams({ transaction, decision: 'continue' }).toString(),
  });
  let url = new URL(res.headers.get('location')!, origin);
  // Follow the identity provider until it shows its form, submit it, then follow to the app.
  for (let hops = 0; hops < 20; hops++) {
    if (url.origin === new URL(REDIRECT).origin || !url.protocol.startsWith('http')) return { location: url, pages };
    res = await get(url.href);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url);
      continue;
    }
    body = await res.text();
    pages.push({ url: url.href, status: res.status, body });
    const action = /<form method="post" action="([^"]+)"/.exec(body)?.[1];
    if (!action || res.status !== 200) return { location: url, pages };
    res = await get(new URL(action.replace(/&#47;/g, '/'), url).href, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, password }).toString(),
    });
    url = new URL(res.headers.get('location')!, url);
  }
  throw new Error('too many redirects');
}

/** The SDK client's whole flow for one person; returns a connected client and the host's state. */
export async function connectAs(svc: HttpService, email: string, password: string) {
  const provider = new HostProvider();
  const first = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { authProvider: provider });
  await expect(new Client({ name: 'host', version: '1' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.client?.client_id).toMatch(/^dcr_/); // registered dynamically
  const authUrl = provider.authorizationUrl!;
  expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authUrl.searchParams.get('resource')).toBe(`${svc.url}/mcp`);
  const { location } = await signIn(authUrl, email, password);
  expect(location.searchParams.get('iss')).toBe(svc.url); // RFC 9207
  await first.finishAuth(location.searchParams.get('code')!);
  const client = new Client({ name: 'host', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { authProvider: provider }));
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    captured.push(JSON.stringify(result));
    return { ...result, text: (result.content as { text: string }[]).map((c) => c.text).join('\n') };
  };
  return { client, provider, call };
}

export const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** POST /register with these redirect URIs; the answer's status and body. */
export async function register(svc: HttpService, redirectUris: unknown, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${svc.url}/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ redirect_uris: redirectUris, token_endpoint_auth_method: 'none', ...extra }),
  });
  return { status: res.status, body: (await res.json()) as { client_id: string; redirect_uris?: string[]; error?: string; error_description?: string } };
}

/** An /authorize URL for a client (PKCE S256 with a throwaway verifier unless overridden). */
export function authorizeUrl(svc: HttpService, clientId: string, params: Record<string, string> = {}): URL {
  const url = new URL(`${svc.url}/authorize`);
  const all = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: s256(randomBytes(32).toString('base64url')),
    code_challenge_method: 'S256',
    ...params,
  };
  for (const [k, v] of Object.entries(all)) url.searchParams.set(k, v);
  return url;
}

/** A registered client and a code for `email`, without the SDK: for the refusals the SDK would never send. */
export async function codeFor(svc: HttpService, email: string, password: string, overrides: Record<string, string> = {}) {
  const reg = await register(svc, [REDIRECT]);
  const verifier = randomBytes(32).toString('base64url');
  const url = authorizeUrl(svc, reg.body.client_id, { code_challenge: s256(verifier), state: 'st', resource: `${svc.url}/mcp`, ...overrides });
  const { location } = await signIn(url, email, password);
  return { clientId: reg.body.client_id, verifier, code: location.searchParams.get('code')!, location };
}

export const mcpList = (token: string, svc: HttpService) =>
  fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

/** The tool names a bearer token is offered (tools/list over HTTP), or the HTTP status when it is refused. */
export async function toolNames(svc: HttpService, accessToken: string): Promise<string[] | number> {
  const res = await mcpList(accessToken, svc);
  if (res.status !== 200) return res.status;
  const text = await res.text();
  const data = text.includes('data: ')
    ? text
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6)
    : text;
  return (JSON.parse(data) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
}
