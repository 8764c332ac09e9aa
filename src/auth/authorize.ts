import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clients } from './clients.js';
import type { AuthContext } from './context.js';
import { digest, random } from './crypto.js';
import type { Federation } from './federation.js';
import { checkResource, checkScope } from './grant-checks.js';
import { OAuthError, one, readFormBody, redirect } from './oauth-http.js';
import { sendPage } from '../page.js';
import { consentPage, errorPage } from './pages.js';
import { pkceChallenge } from './pkce.js';
import { backTo, redirectMatches } from './redirect-uris.js';
import { SCOPE, TX_MS, type Pending } from './types.js';

/** The authorization endpoint: the app's request checked, the consent page, and the person's decision. */
export function authorization(ctx: AuthContext, clients: Clients, idp: Federation) {
  const { issuer, resource, store, consent } = ctx;

  return {
    /** GET /authorize: checks the client and its redirect first (an error page, no redirect), then the rest (an error sent back to the app). */
    async authorize(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
      const q = url.searchParams;
      let clientId: string | undefined;
      let redirectUri: string | undefined;
      try {
        clientId = one(q, 'client_id');
        redirectUri = one(q, 'redirect_uri');
      } catch {
        return sendPage(res, errorPage('The sign-in link is malformed.'));
      }
      const client = clientId ? await clients.findClient(clientId) : undefined;
      if (!clientId || !client)
        return sendPage(
          res,
          errorPage('The app asking to sign you in is not known here (its registration or metadata document could not be found or is not valid).'),
        );
      if (!redirectUri || !client.redirectUris.some((r) => redirectMatches(r, redirectUri)))
        return sendPage(res, errorPage('The app asked to send the answer to an address it did not register.'));
      let state: string | undefined;
      try {
        state = one(q, 'state');
        if (one(q, 'response_type') !== 'code') throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported.');
        const codeChallenge = pkceChallenge(q);
        checkResource(one(q, 'resource'), resource);
        checkScope(one(q, 'scope'));
        const app = new URL(redirectUri);
        const returnsTo = app.host || app.protocol;
        // The browser that sees this page: one cookie per browser (tabs share it), checked at the decision and the callback.
        const browser = consent.browserOf(req) ?? random();
        const pending: Pending = {
          clientId,
          redirectUri,
          codeChallenge,
          state,
          resource,
          scope: SCOPE,
          browser: digest(browser),
          app: client.clientName ?? returnsTo,
        };
        const transaction = random();
        await store.set(`tx:${digest(transaction)}`, JSON.stringify(pending), TX_MS);
        consent.setCookie(res, browser);
        // The form leads to the identity provider (continue) or back to the app (cancel).
        sendPage(res, consentPage(client.clientName, returnsTo, transaction), [idp.idpOrigin, /^https?:$/.test(app.protocol) ? app.origin : app.protocol]);
      } catch (error) {
        if (error instanceof OAuthError) return redirect(res, backTo({ redirectUri, state }, { error: error.code, error_description: error.message }, issuer));
        throw error;
      }
    },

    /** POST /authorize/decision: the person chose; on to the identity provider, or back to the app. */
    async decision(req: IncomingMessage, res: ServerResponse): Promise<void> {
      if (!consent.fromOwnPage(req)) return sendPage(res, errorPage('This form can only be sent from the sign-in page itself.', 403));
      const body = await readFormBody(req);
      if (body.kind !== 'form')
        return sendPage(
          res,
          errorPage(body.kind === 'bad' ? body.why : 'This form can only be sent from the sign-in page itself.', body.kind === 'bad' ? body.status : 400),
        );
      const form = body.params;
      const transaction = form.get('transaction');
      const key = transaction ? `tx:${digest(transaction)}` : undefined;
      const stored = key ? await store.get(key) : undefined;
      if (!key || !stored) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
      const pending = JSON.parse(stored) as Pending;
      if (!consent.sameBrowser(req, pending.browser)) return sendPage(res, consent.otherBrowser());
      if (!(await store.claim(`${key}:used`, '1', TX_MS))) return sendPage(res, errorPage('This sign-in has expired or was already used.'));
      await store.delete(key);
      if (form.get('decision') !== 'continue')
        return redirect(res, backTo(pending, { error: 'access_denied', error_description: 'The person cancelled the sign-in.' }, issuer));
      await idp.toIdentityProvider(res, pending);
    },
  };
}
