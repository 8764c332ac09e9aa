import type { IncomingMessage } from 'node:http';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Role } from './policy.js';
import { random } from './crypto.js';
import { sessionEnded } from './sessions.js';
import type { AuthStore } from './store.js';
import { SCOPE, type Authentication, type Session } from './types.js';

/**
 * Access tokens: short-lived JWTs (HS256 under the secret the replicas share) whose audience is this
 * service's /mcp; and the check of each /mcp request's bearer token (resource verification, RFC 9728).
 */

interface TokenKeys {
  secret: Uint8Array;
  issuer: string;
}

/** An access token for a session, valid `seconds`. */
export function signAccessToken(keys: TokenKeys, grant: Session, seconds: number): Promise<string> {
  return new SignJWT({
    email: grant.identity.email,
    role: grant.identity.role,
    fam: grant.family,
    st: grant.started,
    client_id: grant.clientId,
    scope: grant.scope,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(keys.issuer)
    .setAudience(grant.resource)
    .setSubject(grant.identity.sub)
    .setIssuedAt()
    .setExpirationTime(`${seconds}s`)
    .setJti(random())
    .sign(keys.secret);
}

/** Checks a request's bearer token for /mcp: ours, for this resource, unexpired, its session not ended. */
export function resourceGuard(keys: TokenKeys & { resource: string; resourceMetadataUrl: string; apiKey: string; store: AuthStore }) {
  const challenge = (extra = '') => `Bearer resource_metadata="${keys.resourceMetadataUrl}", scope="${SCOPE}"${extra}`;
  return async function authenticate(req: IncomingMessage): Promise<Authentication> {
    const header = req.headers.authorization;
    const match = header ? /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header) : null;
    if (!header)
      return {
        ok: false,
        status: 401,
        wwwAuthenticate: challenge(),
        message: 'Unauthorized: sign in with your firm account (OAuth); this server publishes how at /.well-known/oauth-protected-resource/mcp.',
      };
    const refuse = (description: string) => ({
      ok: false as const,
      status: 401,
      wwwAuthenticate: challenge(`, error="invalid_token", error_description="${description}"`),
      message: `Unauthorized: ${description}.`,
    });
    if (!match || match[1]!.length > 4096) return refuse('malformed bearer token');
    try {
      const { payload } = await jwtVerify(match[1]!, keys.secret, {
        issuer: keys.issuer,
        audience: keys.resource,
        algorithms: ['HS256'],
        typ: 'at+jwt',
        requiredClaims: ['sub', 'exp', 'fam', 'email', 'role', 'st'],
      });
      const ended = await sessionEnded(keys.store, { family: String(payload.fam), email: String(payload.email), started: Number(payload.st) });
      if (ended) return refuse(ended);
      const role: Role = payload.role === 'sender' ? 'sender' : 'reader';
      return { ok: true, identity: { email: String(payload.email), sub: String(payload.sub), role }, apiKey: keys.apiKey };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) return refuse('the access token has expired; refresh it or sign in again');
      if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud') return refuse('the access token was issued for another resource');
      return refuse('the access token is not valid here');
    }
  };
}
