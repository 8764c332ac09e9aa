import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import type OidcProvider from 'oidc-provider';
import type { Adapter, AdapterPayload, Configuration, FindAccount } from 'oidc-provider';
import { escapeHtml, sendPage } from '../page.js';

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
  /** Disables a person, as a firm does for a leaver: they can no longer sign in, and their refresh tokens are refused. */
  disable(email: string): void;
  close(): Promise<void>;
}

export interface DemoIdpOptions {
  port?: number;
  /** The people it knows (default: DEMO_USERS). */
  users?: DemoUser[];
  /**
   * The ID token's claims for a person (default: sub = e-mail, email, email_verified: true, name,
   * groups). Tests shape them as Entra ID, Google Workspace or Okta send theirs (docs/sign-in.md).
   */
  claims?: (user: DemoUser) => Record<string, unknown>;
  /** Whether it gives refresh tokens, as Entra ID and Okta do for offline_access (default: yes). */
  refreshTokens?: boolean;
  /**
   * Whom it answers for when it looks up a person it signed in, e.g. at a refresh (default: that
   * person): another person's e-mail address makes its tokens (the ID token's sub and claims) name
   * that person instead, as a misbehaving provider would. Asked at each look-up, so a test can change
   * its answer after sign-in.
   */
  answerAs?: (email: string) => string | undefined;
}

/** Every claim a provider shape may send, by scope; a person's claims() decides which are present. */
const CLAIMS = {
  openid: ['sub', 'oid', 'tid'],
  email: ['email', 'email_verified', 'xms_edov', 'hd'],
  profile: ['name', 'groups', 'preferred_username'],
};

const demoClaims = (user: DemoUser) => ({ sub: user.email, email: user.email, email_verified: true, name: user.name, groups: user.groups });

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
        "<p>This is the sandbox's demo identity provider, standing in for your firm's (Entra ID, Google Workspace, Okta…).</p>" +
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

/**
 * oidc-provider, loaded without its start-up warnings: "Unsupported runtime" on Node 20 (the demo
 * provider is tested on Node 20, and it is the sandbox's, not a firm's) — a person trying the sandbox
 * should not read a third party's warnings. Only that exact warning is held back.
 */
async function loadProvider(): Promise<typeof import('oidc-provider').default> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider WARNING: Unsupported runtime')) return;
    warn(...args);
  };
  try {
    return (await import('oidc-provider')).default;
  } finally {
    console.warn = warn;
  }
}

/**
 * The demo provider's storage: in memory, like oidc-provider's development adapter, but our own so
 * that it does not print that a development adapter is in use (it is the sandbox's, by design).
 */
function memoryAdapter(): new (name: string) => Adapter {
  const entries = new Map<string, { payload: AdapterPayload; expires: number }>();
  const grants = new Map<string, Set<string>>();
  const live = (key: string) => {
    const entry = entries.get(key);
    if (entry && entry.expires <= Date.now()) entries.delete(key);
    return entries.get(key)?.payload;
  };
  return class MemoryAdapter implements Adapter {
    constructor(private readonly name: string) {}
    private key(id: string) {
      return `${this.name}:${id}`;
    }
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      entries.set(key, { payload, expires: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
      if (payload.grantId) grants.set(payload.grantId, (grants.get(payload.grantId) ?? new Set()).add(key));
      if (payload.uid) entries.set(`${this.name}:uid:${payload.uid}`, { payload, expires: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
      if (payload.userCode)
        entries.set(`${this.name}:userCode:${payload.userCode}`, { payload, expires: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
      return Promise.resolve();
    }
    find(id: string): Promise<AdapterPayload | undefined> {
      return Promise.resolve(live(this.key(id)));
    }
    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return Promise.resolve(live(`${this.name}:uid:${uid}`));
    }
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return Promise.resolve(live(`${this.name}:userCode:${userCode}`));
    }
    consume(id: string): Promise<void> {
      const payload = live(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      return Promise.resolve();
    }
    destroy(id: string): Promise<void> {
      const payload = entries.get(this.key(id))?.payload;
      entries.delete(this.key(id));
      // Its look-ups by uid and user code go with it.
      if (payload?.uid && entries.get(`${this.name}:uid:${payload.uid}`)?.payload === payload) entries.delete(`${this.name}:uid:${payload.uid}`);
      if (payload?.userCode && entries.get(`${this.name}:userCode:${payload.userCode}`)?.payload === payload)
        entries.delete(`${this.name}:userCode:${payload.userCode}`);
      return Promise.resolve();
    }
    revokeByGrantId(grantId: string): Promise<void> {
      for (const key of grants.get(grantId) ?? []) entries.delete(key);
      grants.delete(grantId);
      return Promise.resolve();
    }
  };
}

/** Who the provider knows: its people, the ones disabled, and each one's claims and subject. */
interface People {
  users: DemoUser[];
  disabled: Set<string>;
  claimsOf: (user: DemoUser) => Record<string, unknown>;
  /** A person who may sign in, by e-mail address (not disabled). */
  known: (email: string | undefined) => DemoUser | undefined;
  /** The provider's subject for a person (its account id): the shape's sub, else the e-mail address. */
  subOf: (user: DemoUser) => string;
}

function demoPeople(options: DemoIdpOptions): People {
  const users = options.users ?? DEMO_USERS;
  const claimsOf = options.claims ?? demoClaims;
  const disabled = new Set<string>();
  return {
    users,
    disabled,
    claimsOf,
    known: (email) => users.find((u) => u.email === email && !disabled.has(u.email)),
    subOf: (u) => {
      const sub = claimsOf(u).sub;
      return typeof sub === 'string' ? sub : u.email;
    },
  };
}

/** The account the provider finds for a subject: that person's, or whoever `answerAs` names in their place (asked at each look-up). */
function accountFinder(people: People, options: DemoIdpOptions): FindAccount {
  const { users, disabled, claimsOf, subOf } = people;
  return (_ctx, id) => {
    const user = users.find((u) => subOf(u) === id && !disabled.has(u.email));
    if (!user) return undefined;
    // oidc-provider takes the ID token's sub from the accountId found, not the one asked for.
    const other = options.answerAs?.(user.email);
    const answer = other === undefined ? undefined : users.find((u) => u.email === other);
    if (answer) return { accountId: subOf(answer), claims: () => ({ ...claimsOf(answer), sub: subOf(answer) }) };
    return { accountId: id, claims: () => ({ ...claimsOf(user), sub: id }) };
  };
}

/** The provider's configuration: our one client (`ours`), PKCE always, its own signing key and cookie key, nothing printed. */
async function providerConfiguration(
  ours: { clientId: string; clientSecret: string; redirectUris: string[]; refresh: boolean },
  findAccount: FindAccount,
): Promise<Configuration> {
  return {
    adapter: memoryAdapter(),
    clients: [
      {
        client_id: ours.clientId,
        client_secret: ours.clientSecret,
        redirect_uris: ours.redirectUris,
        grant_types: ours.refresh ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: CLAIMS,
    // A refresh token whenever the client may have one (a firm's IdP: offline_access granted to its own app).
    issueRefreshToken: (_ctx, client) => Promise.resolve(client.grantTypeAllowed('refresh_token')),
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    pkce: { required: () => true },
    jwks: { keys: [{ ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)), alg: 'RS256', use: 'sig' }] },
    // Set, so the provider does not print notices about its defaults (stdout is the protocol's).
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 14 * 86400, Session: 14 * 86400, RefreshToken: 14 * 86400 },
    findAccount,
  };
}

/** One interaction: the sign-in page (GET), then its form (POST) checked against the demo users, then back to the provider. */
async function signIn(provider: OidcProvider, people: People, req: IncomingMessage, res: ServerResponse, login: boolean): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET' && !login) return loginPage(res, details.uid, false);
  if (req.method !== 'POST' || !login) return void res.writeHead(405).end();
  const form = await readForm(req);
  const user = people.known(form.get('email')?.toLowerCase());
  if (user && user.password !== form.get('password')) return loginPage(res, details.uid, true);
  if (!user) return loginPage(res, details.uid, true);
  // The demo firm's own app: consent is implied, as at a firm's IdP for its own registered app.
  const grant = new provider.Grant({ accountId: people.subOf(user), clientId: String(details.params.client_id) });
  grant.addOIDCScope('openid email profile');
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: people.subOf(user) }, consent: { grantId: await grant.save() } },
    { mergeWithLastSubmission: false },
  );
}

/** Starts the demo identity provider on 127.0.0.1; `redirectUris` are the docreq-mcp service's /login/callback. */
export async function startDemoIdp(redirectUris: string[], options: DemoIdpOptions = {}): Promise<DemoIdp> {
  const people = demoPeople(options);
  const refresh = options.refreshTokens !== false;
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'docreq-mcp';
  const clientSecret = randomBytes(24).toString('base64url');
  const Provider = await loadProvider();
  const provider = new Provider(issuer, await providerConfiguration({ clientId, clientSecret, redirectUris, refresh }, accountFinder(people, options)));
  provider.on('server_error', () => undefined);
  const callback = provider.callback();

  server.on('request', (req, res) => {
    const match = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec((req.url ?? '').split('?')[0]!);
    if (!match) return void callback(req, res);
    void signIn(provider, people, req, res, Boolean(match[2])).catch(() => {
      if (!res.headersSent) sendPage(res, { title: 'Sign-in expired', status: 400, body: '<p>This sign-in has expired. Start again from your assistant.</p>' });
    });
  });

  return {
    issuer,
    clientId,
    clientSecret,
    users: people.users,
    disable: (email) => void people.disabled.add(email),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
