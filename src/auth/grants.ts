import type { IncomingMessage, ServerResponse } from 'node:http';
import { jwtVerify } from 'jose';
import { signAccessToken } from './access-token.js';
import { sessionRecord, type AuthContext } from './context.js';
import { digest, random } from './crypto.js';
import type { Federation } from './federation.js';
import { checkCodeGrant, checkRefreshClient, checkResource, checkSessionTime } from './grant-checks.js';
import { OAuthError, formOf, json, one, readFormBody } from './oauth-http.js';
import { decide } from './policy.js';
import { recordSession, sessionEnded, updateSession, withdraw } from './sessions.js';
import { CODE_MS, type CodeGrant, type Session } from './types.js';

/** The token endpoint's grants (a code, a refresh token) and revocation: sessions begin, renew and end here. */
export function grants(ctx: AuthContext, idp: Federation) {
  return { ...tokenEndpoint(ctx, idp), ...revocation(ctx) };
}

/** Tokens for a session: issued at its start and at each refresh, after the person is decided on again. */
function sessionTokens(ctx: AuthContext, idp: Federation) {
  const { options, issuer, store, log, keys } = ctx;

  /** An access token and a rotated refresh token for a session; neither outlives it. */
  async function issue(grant: Session): Promise<Record<string, unknown>> {
    const left = Math.floor((grant.expires - Date.now()) / 1000);
    const seconds = Math.max(1, Math.min(ctx.accessSeconds, left));
    const accessToken = await signAccessToken({ secret: options.secret, issuer }, grant, seconds);
    const refreshToken = random();
    await store.set(keys.refreshKey(refreshToken), JSON.stringify(grant), Math.max(1, grant.expires - Date.now()));
    return { access_token: accessToken, token_type: 'Bearer', expires_in: seconds, refresh_token: refreshToken, scope: grant.scope };
  }

  /** A refresh (docs/sign-in.md): the identity provider asked again, and the role decided again against the current settings. */
  async function refresh(grant: Session, key: string): Promise<Record<string, unknown>> {
    const { person, idpRefresh } = await idp.renew(grant, key);
    const verdict = decide(options.policy, person);
    if ('refused' in verdict) {
      await ctx.endSession(grant, 'no longer allowed by the settings');
      throw new OAuthError('invalid_grant', 'This account is no longer allowed to use this service: ask your IT team.');
    }
    const next: Session = { ...grant, person, identity: { ...grant.identity, role: verdict.role }, ...(idpRefresh ? { idpRefresh } : {}) };
    if (verdict.role !== grant.identity.role) {
      log(JSON.stringify({ audit: 'role changed', email: grant.identity.email, sub: grant.identity.sub, from: grant.identity.role, to: verdict.role }));
      if (next.slot) await updateSession(store, next.slot, sessionRecord(next));
    }
    return issue(next);
  }

  return { issue, refresh };
}

/** The token endpoint: each grant checked before a session's tokens are issued or renewed. */
function tokenEndpoint(ctx: AuthContext, idp: Federation) {
  const { resource, store, keys } = ctx;
  const { issue, refresh } = sessionTokens(ctx, idp);

  return {
    /** POST /token: an authorization code or a refresh token for tokens. */
    async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const form = formOf(await readFormBody(req));
      const clientId = one(form, 'client_id');
      checkResource(one(form, 'resource'), resource);
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
        checkCodeGrant(clientId, form, grant);
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
        const key = keys.refreshKey(refreshToken);
        const stored = await store.get(key);
        // Unknown also when the auth secret was rotated: refresh tokens are looked up under a key derived from it.
        if (!stored) throw new OAuthError('invalid_grant', 'The refresh token is unknown or has expired: sign in again.');
        const grant = JSON.parse(stored) as Session;
        checkRefreshClient(clientId, grant);
        const ended = await sessionEnded(store, { family: grant.family, email: grant.identity.email, started: grant.started });
        if (ended) throw new OAuthError('invalid_grant', `${ended[0]!.toUpperCase()}${ended.slice(1)}.`);
        if (!(await store.claim(`${key}:used`, '1', Math.max(1, grant.expires - Date.now())))) {
          // A rotated refresh token came back: someone holds a copy. The whole session ends.
          await ctx.endSession(grant, 'refresh token reused');
          throw new OAuthError('invalid_grant', 'The refresh token was already used, so the session was ended: sign in again.');
        }
        checkSessionTime(grant);
        return json(res, 200, await refresh(grant, key));
      }
      throw new OAuthError('unsupported_grant_type', 'Only authorization_code and refresh_token are supported.');
    },
  };
}

/** Revocation: needs only the store and the signing secret, never the identity provider. */
function revocation(ctx: AuthContext) {
  const { options, issuer, store, keys } = ctx;

  return {
    /** POST /revoke (RFC 7009): a refresh or access token ends its whole session, on every replica. */
    async revoke(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const tokenText = one(formOf(await readFormBody(req)), 'token');
      if (!tokenText) throw new OAuthError('invalid_request', 'token is missing.');
      const stored = await store.get(keys.refreshKey(tokenText));
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
    },
  };
}
