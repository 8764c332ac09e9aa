import { digest, sameText } from './crypto.js';
import { OAuthError, one } from './oauth-http.js';

/** PKCE (RFC 7636), S256 only: the challenge an app sends to /authorize, and the verifier it proves it with at /token. */

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The authorization request's code_challenge; refused unless it is an S256 one. */
export function pkceChallenge(query: URLSearchParams): string {
  const codeChallenge = one(query, 'code_challenge');
  if (!codeChallenge || one(query, 'code_challenge_method') !== 'S256' || !CHALLENGE.test(codeChallenge)) {
    throw new OAuthError('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256.');
  }
  return codeChallenge;
}

/** The token request's code_verifier must be well-formed and hash to the code's challenge. */
export function checkVerifier(verifier: string | undefined, codeChallenge: string): void {
  if (!verifier || !VERIFIER.test(verifier) || !sameText(digest(verifier), codeChallenge)) {
    throw new OAuthError('invalid_grant', 'The PKCE code_verifier does not match the code_challenge.');
  }
}
