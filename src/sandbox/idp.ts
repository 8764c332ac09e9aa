import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { escapeHtml, sendPage } from '../auth/pages.js';

/**
 * The sandbox's demo identity provider: a real OpenID Connect provider (oidc-provider) on loopback,
 * standing in for the firm's Entra ID / Google Workspace / Okta, with a reader, a sender and someone
 * the firm has not allowed. Its sign-in page is plain HTML (the same page style as ours).
 */

export interface DemoUser {
  email: string;
  password: string;
  name: string;
  groups: string[];
}

export const DEMO_USERS: DemoUser[] = [
  { email: 'reader@demo.example', password: 'reader-demo', name: 'Riley Reader', groups: ['staff'] },
  { email: 'sender@demo.example', password: 'sender-demo', name: 'Sam Sender', groups: ['staff', 'senders'] },
  { email: 'outsider@elsewhere.example', password: 'outsider-demo', name: 'Olive Outsider', groups: [] },
];

/** Who the demo firm lets read and send. */
export const DEMO_POLICY = { readers: ['@demo.example'], senders: ['group:senders'] };

export interface DemoIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  users: DemoUser[];
  close(): Promise<void>;
}

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      if (text.length < 8192) text += chunk;
    });
    req.on('end', () => resolve(new URLSearchParams(text)));
    req.on('error', reject);
  });
}

function loginPage(res: ServerResponse, uid: string, failed: boolean): void {
  const action = `/interaction/${encodeURIComponent(uid)}/login`;
  sendPage(
    res,
    {
      title: 'Demo firm sign-in',
      status: failed ? 401 : 200,
      body:
        '<p>This is the sandbox\'s demo identity provider, standing in for your firm\'s (Entra ID, Google Workspace, Okta…).</p>' +
        (failed ? '<p role="alert"><strong>That e-mail address and password do not match a demo user.</strong></p>' : '') +
        `<form method="post" action="${escapeHtml(action)}">` +
        '<p><label for="email">E-mail address</label><br><input id="email" name="email" type="email" autocomplete="username" required></p>' +
        '<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>' +
        '<div class="actions"><button class="primary" type="submit">Sign in</button></div></form>' +
        `<p class="note">Demo users: ${DEMO_USERS.map((u) => `${escapeHtml(u.email)} / ${escapeHtml(u.password)}`).join('; ')}.</p>`,
    },
    // After this form, the provider redirects to docreq-mcp and on to the app: any web origin (demo only).
    ['http:', 'https:'],
  );
}

/** Starts the demo identity provider on 127.0.0.1; `redirectUri` is the docreq-mcp service's /login/callback. */
export async function startDemoIdp(redirectUris: string[], port = 0): Promise<DemoIdp> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'docreq-mcp';
  const clientSecret = randomBytes(24).toString('base64url');
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    pkce: { required: () => true },
    jwks: { keys: [{ ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)), alg: 'RS256', use: 'sig' }] },
    // Set, so the provider does not print notices about its defaults (stdout is the protocol's).
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 3600, Session: 3600 },
    findAccount: (_ctx, id) => {
      const user = DEMO_USERS.find((u) => u.email === id);
      return user ? { accountId: id, claims: () => ({ sub: id, email: user.email, email_verified: true, name: user.name, groups: user.groups }) } : undefined;
    },
  });
  provider.on('server_error', () => undefined);
  const callback = provider.callback();

  server.on('request', (req, res) => {
    const match = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec((req.url ?? '').split('?')[0]!);
    if (!match) return void callback(req, res);
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (req.method === 'GET' && !match[2]) return loginPage(res, details.uid, false);
      if (req.method !== 'POST' || !match[2]) return void res.writeHead(405).end();
      const form = await readForm(req);
      const user = DEMO_USERS.find((u) => u.email === form.get('email')?.toLowerCase() && u.password === form.get('password'));
      if (!user) return loginPage(res, details.uid, true);
      // The demo firm's own app: consent is implied, as at a firm's IdP for its own registered app.
      const grant = new provider.Grant({ accountId: user.email, clientId: String(details.params.client_id) });
      grant.addOIDCScope('openid email profile');
      await provider.interactionFinished(req, res, { login: { accountId: user.email }, consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: false });
    })().catch(() => {
      if (!res.headersSent) sendPage(res, { title: 'Sign-in expired', status: 400, body: '<p>This sign-in has expired. Start again from your assistant.</p>' });
    });
  });

  return {
    issuer,
    clientId,
    clientSecret,
    users: DEMO_USERS,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
