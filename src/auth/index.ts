import type { ServerResponse } from 'node:http';
import { StoreUnavailableError } from '../store/store.js';
import { resourceGuard } from './access-token.js';
import { authorization } from './authorize.js';
import { clients } from './clients.js';
import { authContext } from './context.js';
import { federation } from './federation.js';
import { grants } from './grants.js';
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata.js';
import { OAuthError, json } from './oauth-http.js';
import type { Auth, AuthOptions } from './types.js';

/**
 * Firm sign-in (docs/sign-in-setup.md): this service is an OAuth 2.1 protected resource (RFC 9728) and its own
 * authorization server (RFC 8414), which federates the sign-in itself to the firm's OpenID Connect
 * provider through openid-client. Access tokens are short-lived JWTs (jose, HS256 under a secret the
 * replicas share) whose audience is this service's /mcp; refresh tokens, codes, sign-ins in progress,
 * registered clients and revoked sessions live in an AuthStore that replicas share.
 *
 * This file is the authorization server's face: its routes (its metadata in ./metadata.ts). The parts: ./authorize.ts
 * (consent), ./federation.ts (the identity provider), ./grants.ts (tokens), ./clients.ts (apps),
 * ./access-token.ts (resource verification); the checks in ./pkce.ts, ./redirect-uris.ts, ./consent.ts
 * and ./grant-checks.ts.
 */

export type { AuthStore } from './store.js';
export { MemoryAuthStore } from './store.js';
export type { Policy } from './policy.js';
export type { Auth, AuthOptions, Identity } from './types.js';

/** Sign-in's routes and the one method each answers. */
const ROUTES: Record<string, string> = {
  '/register': 'POST',
  '/authorize': 'GET',
  '/authorize/decision': 'POST',
  '/login/callback': 'GET',
  '/token': 'POST',
  '/revoke': 'POST',
};

export function createAuth(options: AuthOptions): Auth {
  const ctx = authContext(options, (outcome) => auth.onSignIn?.(outcome));
  const { base, issuer, resource, resourceMetadataUrl, log } = ctx;
  const apps = clients(ctx);
  const idp = federation(ctx);
  const flow = authorization(ctx, apps, idp);
  const tokens = grants(ctx, idp);

  const protectedResource = protectedResourceMetadata(resource, issuer);
  const serverMetadata = authorizationServerMetadata(base, issuer);

  const auth: Auth = {
    resource,
    resourceMetadataUrl,
    async handle(req, res) {
      const url = new URL(req.url ?? '/', base);
      const path = url.pathname;
      const method = req.method ?? 'GET';
      const api = ['/token', '/register', '/revoke'].includes(path) || path.startsWith('/.well-known/');
      if (api && method === 'OPTIONS') return preflight(res);
      try {
        if (method === 'GET' && (path === '/.well-known/oauth-protected-resource' || path === '/.well-known/oauth-protected-resource/mcp'))
          json(res, 200, protectedResource, { 'Cache-Control': 'max-age=300' });
        else if (method === 'GET' && path === '/.well-known/oauth-authorization-server') json(res, 200, serverMetadata, { 'Cache-Control': 'max-age=300' });
        else if (method === 'POST' && path === '/register') await apps.register(req, res);
        else if (method === 'GET' && path === '/authorize') await flow.authorize(req, url, res);
        else if (method === 'POST' && path === '/authorize/decision') await flow.decision(req, res);
        else if (method === 'GET' && path === '/login/callback') await idp.callback(req, url, res);
        else if (method === 'POST' && path === '/token') await tokens.token(req, res);
        else if (method === 'POST' && path === '/revoke') await tokens.revoke(req, res);
        else if (ROUTES[path]) {
          // A sign-in route asked with another method: an OAuth error, not the MCP endpoint's 404.
          json(res, 405, { error: 'invalid_request', error_description: `${path} answers ${ROUTES[path]} only.` }, { Allow: ROUTES[path] });
        } else return false;
      } catch (error) {
        failed(error, path, res, log);
      }
      return true;
    },
    authenticate: resourceGuard({ secret: options.secret, issuer, resource, resourceMetadataUrl, apiKey: options.apiKey, store: ctx.store }),
  };
  return auth;
}

/** A browser's CORS preflight for sign-in's API routes and metadata: any origin, GET and POST. */
function preflight(res: ServerResponse): true {
  res.writeHead(204, {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': 'GET, POST',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, Mcp-Protocol-Version',
    'Access-Control-Max-Age': '600',
  });
  res.end();
  return true;
}

/** A sign-in route that threw: its OAuth error as such, anything else as OAuth words it (503 while the store is down), logged by name only. */
function failed(error: unknown, path: string, res: ServerResponse, log: (line: string) => void): void {
  if (error instanceof OAuthError) json(res, error.status, { error: error.code, error_description: error.message });
  else {
    // Not the input's fault (the store, a bug): said as OAuth says it, without the details.
    log(`docreq-mcp warn: sign-in ${path} failed: ${error instanceof Error ? error.name : 'error'}`);
    const storeDown = error instanceof StoreUnavailableError;
    if (!res.headersSent)
      json(
        res,
        storeDown ? 503 : 500,
        { error: storeDown ? 'temporarily_unavailable' : 'server_error', error_description: 'Sign-in cannot answer right now; try again in a moment.' },
        storeDown ? { 'Retry-After': '5' } : {},
      );
  }
}
