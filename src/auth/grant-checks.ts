import { OAuthError, one } from './oauth-http.js';
import { checkVerifier } from './pkce.js';
import { SCOPE, type CodeGrant, type Session } from './types.js';

/** The checks of what an app asks for: the resource and scope at /authorize and /token, and each grant at /token. */

/** RFC 8707: a resource, when named, must be this server's /mcp. */
export function checkResource(asked: string | undefined, resource: string): void {
  if (asked !== undefined && asked.replace(/\/$/, '') !== resource) throw new OAuthError('invalid_target', `This server issues tokens for ${resource} only.`);
}

export function checkScope(scope: string | undefined): void {
  if (scope !== undefined && scope.split(' ').some((s) => s && s !== SCOPE)) throw new OAuthError('invalid_scope', `The only scope is ${SCOPE}.`);
}

/** An authorization code is redeemed by the client it was issued to, with its redirect URI and its PKCE verifier. */
export function checkCodeGrant(clientId: string | undefined, form: URLSearchParams, grant: CodeGrant): void {
  if (clientId !== grant.clientId) throw new OAuthError('invalid_grant', 'The code was issued to another client.');
  if (one(form, 'redirect_uri') !== grant.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request.');
  checkVerifier(one(form, 'code_verifier'), grant.codeChallenge);
}

/** A refresh token is used by the client it was issued to. */
export function checkRefreshClient(clientId: string | undefined, grant: Session): void {
  if (clientId !== grant.clientId) throw new OAuthError('invalid_grant', 'The refresh token was issued to another client.');
}

/** A session ends at its time limit, refreshes included. */
export function checkSessionTime(grant: Session): void {
  if (Date.now() >= grant.expires)
    throw new OAuthError('invalid_grant', "This sign-in session has reached its time limit: sign in again at the firm's identity provider.");
}
