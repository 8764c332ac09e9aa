import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oidc from 'openid-client';
import { oneLine } from '../text/render.js';
import type { AuthContext } from './context.js';
import { digest, random } from './crypto.js';
import { OAuthError, redirect } from './oauth-http.js';
import { sendPage } from '../page.js';
import { errorPage, refusedPage } from './pages.js';
import { decide, personFrom, type Person } from './policy.js';
import { backTo } from './redirect-uris.js';
import { CODE_MS, TX_MS, type AuthOptions, type CodeGrant, type Identity, type Pending, type Session } from './types.js';

/** The identity provider's configuration, discovered at first use and shared by every sign-in and refresh after it. */
type IdpConfig = () => Promise<oidc.Configuration>;

/**
 * The sign-in itself, federated to the firm's OpenID Connect provider (openid-client): the way there
 * after consent, its answer at /login/callback (a code for the app), and its word again at each refresh.
 */
export function federation(ctx: AuthContext) {
  const { options } = ctx;
  const idpOrigin = new URL(options.idp.issuer).origin;
  const idpConfig = idpDiscovery(options);

  return {
    idpOrigin,
    ...signInStart(ctx, idpConfig),
    ...signInCallback(ctx, idpConfig),
    ...renewal(ctx, idpConfig),
  };
}

export type Federation = ReturnType<typeof federation>;

/** Discovery once; a failed attempt is forgotten, so the next sign-in tries again. */
function idpDiscovery(options: AuthOptions): IdpConfig {
  let idp: Promise<oidc.Configuration> | undefined;
  const idpConfig = () => {
    idp ??= oidc
      .discovery(
        new URL(options.idp.issuer),
        options.idp.clientId,
        options.idp.clientSecret,
        undefined,
        options.allowLoopbackHttp ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        idp = undefined; // tried again on the next sign-in
        throw error;
      });
    return idp;
  };
  return idpConfig;
}

/** The name this person goes by in audit lines and sends: a verified e-mail, else the provider's user name, else its subject. */
function label(claims: Record<string, unknown>, person: Person): string {
  if (person.email) return person.email;
  if (typeof claims.preferred_username === 'string' && claims.preferred_username) return claims.preferred_username.toLowerCase().slice(0, 200);
  return String(claims.sub);
}

/** The way out to the identity provider, once the person has consented. */
function signInStart(ctx: AuthContext, idpConfig: IdpConfig) {
  const { options, base, store, log } = ctx;

  return {
    /** The person chose Continue: on to the identity provider. */
    async toIdentityProvider(res: ServerResponse, pending: Pending): Promise<void> {
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
    },
  };
}

/** The way back from the identity provider: its answer, used once and only by the browser that consented. */
function signInCallback(ctx: AuthContext, idpConfig: IdpConfig) {
  const { options, base, issuer, store, log, consent, keys } = ctx;

  return {
    /** GET /login/callback: the identity provider's answer; the person's role; a code for the app. */
    async callback(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
      const idpState = url.searchParams.get('state');
      const key = idpState ? `login:${digest(idpState)}` : undefined;
      const stored = key ? await store.get(key) : undefined;
      if (!key || !stored) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
      const { pending, verifier, nonce } = JSON.parse(stored) as { pending: Pending; verifier: string; nonce: string };
      // The browser that said Continue, and no other: a colleague opening this link gets no code for the first person's app.
      if (!consent.sameBrowser(req, pending.browser)) return sendPage(res, consent.otherBrowser());
      if (!(await store.claim(`${key}:used`, '1', TX_MS))) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
      await store.delete(key);
      if (url.searchParams.has('error'))
        return redirect(res, backTo(pending, { error: 'access_denied', error_description: 'The sign-in at the identity provider did not finish.' }, issuer));
      let claims: Record<string, unknown>;
      let idpRefresh: string | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(await idpConfig(), new URL(`${base}/login/callback${url.search}`), {
          pkceCodeVerifier: verifier,
          expectedState: idpState!,
          expectedNonce: nonce,
          idTokenExpected: true,
        });
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
        ctx.signedIn('refused');
        // The person sees why; the app is told (access_denied) when they go back to it.
        const back = backTo(pending, { error: 'access_denied', error_description: 'This account is not allowed to use this service.' }, issuer);
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
        expires: started + ctx.sessionMs,
        ...(idpRefresh ? { idpRefresh: keys.seal(idpRefresh) } : {}),
        redirectUri: pending.redirectUri,
        codeChallenge: pending.codeChallenge,
      };
      await store.set(`code:${digest(code)}`, JSON.stringify(grant), CODE_MS);
      log(JSON.stringify({ audit: 'sign-in', email: name, sub: identity.sub, role: identity.role }));
      ctx.signedIn('signed_in');
      redirect(res, backTo(pending, { code }, issuer));
    },
  };
}

/** The identity provider asked again at each refresh, for the same person. */
function renewal(ctx: AuthContext, idpConfig: IdpConfig) {
  const { store, log, keys } = ctx;

  return {
    /**
     * At a refresh (docs/sign-in.md, "Sessions"): the identity provider asked again where it gave a refresh token (a person
     * disabled there is refused now); the person as it now describes them, and its next refresh token, sealed.
     */
    async renew(grant: Session, key: string): Promise<{ person: Person; idpRefresh: string | undefined }> {
      let person = grant.person;
      let idpRefresh = grant.idpRefresh;
      if (idpRefresh) {
        const held = keys.open(idpRefresh);
        if (!held) {
          await ctx.endSession(grant, 'identity provider token unreadable (damaged in the store, or sealed by another deployment)');
          throw new OAuthError('invalid_grant', 'This session can no longer be renewed: sign in again.');
        }
        let tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
        try {
          tokens = await oidc.refreshTokenGrant(await idpConfig(), held);
        } catch (error) {
          if (error instanceof oidc.ResponseBodyError) {
            await ctx.endSession(grant, `identity provider refused the refresh (${oneLine(error.error, 60)})`);
            throw new OAuthError('invalid_grant', "The firm's identity provider no longer accepts this sign-in: sign in again.");
          }
          log(
            `docreq-mcp warn: the identity provider could not be asked at a refresh: ${error instanceof Error ? oneLine(error.message, 200) : 'unknown error'}`,
          );
          await store.delete(`${key}:used`); // the same refresh token may be tried again
          throw new OAuthError('temporarily_unavailable', "The firm's identity provider cannot be reached right now; try again in a moment.", 503);
        }
        const claims = tokens.claims();
        if (claims) {
          if (String(claims.sub) !== grant.identity.sub) {
            // Ended, as every other refusal here: the session's last access token must not outlive it.
            await ctx.endSession(grant, 'identity provider answered for another person');
            throw new OAuthError('invalid_grant', 'The identity provider answered for another person: sign in again.');
          }
          person = personFrom({ ...claims });
        }
        if (tokens.refresh_token) idpRefresh = keys.seal(tokens.refresh_token);
      }
      return { person, idpRefresh };
    },
  };
}
