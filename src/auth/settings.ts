import { hkdfSync, randomBytes } from 'node:crypto';
import { checkBaseUrl, readSettings, secretFromFile } from '../config.js';
import { SETTINGS, settingSchema, type FlagValues, type SettingName } from '../settings.js';
import * as oidc from 'openid-client';
import { createAuth, type Auth, type AuthStore } from './index.js';
import { parseRules, type Policy } from './policy.js';

/**
 * Reads the sign-in settings (DOCREQ_AUTH and the rows after it in SETTINGS) for team mode. Any
 * problem stops team mode from starting: sign-in is the door, and a door half-configured stays shut.
 */

export type AuthMode = 'bearer' | 'oauth';

export interface AuthSetup {
  mode: AuthMode;
  problems: string[];
  /** With oauth: builds sign-in once the service knows the address it listens on. */
  /** Builds sign-in once the address is known; `shared` is the send store (docs/sending.md, "The send store"), so every replica sharing it shares sign-in state. */
  create?: (listeningUrl: string, shared?: AuthStore) => Promise<Auth>;
  /** With oauth: the firm's key, for the start-up check; never printed. */
  apiKey?: string;
  /** What to print on stderr at start (the sandbox's demo users), never a secret. */
  notes: string[];
  /** Every secret sign-in read (the key, the client secret, the token secret): what `check`'s output masks. */
  secrets?: string[];
  /** With oauth and the firm's identity provider: what `check` reports on (never a secret). */
  probe?: {
    issuer: string | undefined;
    clientId: string | undefined;
    clientSecretRead: boolean;
    policy: Policy;
    publicUrl: string | undefined;
    /** Where the secret that signs access tokens comes from: random means a restart signs everyone out. */
    secretFrom: 'file' | 'token secret' | 'random';
    sessionHours: number;
    discover(): Promise<oidc.ServerMetadata>;
  };
  close(): Promise<void>;
}

function readSecretFile(path: string, what: string, problems: string[]): string | undefined {
  const { value, problem } = secretFromFile(path, what);
  if (problem) problems.push(problem);
  return value;
}

type Text = (name: SettingName) => string | undefined;

/** The firm's key, held by the service: from a file only (a secret manager's mount), or the sandbox's. */
function firmKey(text: Text, sandboxApiKey: string | undefined, problems: string[]): string | undefined {
  if (sandboxApiKey) return sandboxApiKey;
  const file = text('apiKeyFile');
  if (!file) {
    problems.push("--auth oauth needs DOCREQ_API_KEY_FILE: a file holding the firm's key, which the service uses for signed-in staff.");
    return undefined;
  }
  const apiKey = readSecretFile(file, 'DOCREQ_API_KEY_FILE', problems);
  if (apiKey && /\s/.test(apiKey)) {
    problems.push('DOCREQ_API_KEY_FILE holds white space inside the key: it must hold the key alone.');
    return undefined;
  }
  return apiKey;
}

/** The secret access tokens are signed with: its own file, or derived from DOCREQ_TOKEN_SECRET (both shared by replicas), else random. */
function signingSecret(
  text: Text,
  tokenSecret: string | undefined,
  found: { problems: string[]; notes: string[]; secrets: string[] },
): { secret: Uint8Array; secretFrom: 'file' | 'token secret' | 'random' } {
  const secretFile = text('authSecretFile');
  if (secretFile) {
    const value = readSecretFile(secretFile, 'DOCREQ_AUTH_SECRET_FILE', found.problems);
    if (value && value.length < 32) found.problems.push('DOCREQ_AUTH_SECRET_FILE must hold at least 32 characters (e.g. openssl rand -hex 32).');
    if (value) found.secrets.push(value);
    return { secret: new Uint8Array(Buffer.from(value ?? '')), secretFrom: 'file' };
  }
  if (tokenSecret && tokenSecret.length >= 32) {
    return { secret: new Uint8Array(hkdfSync('sha256', tokenSecret, 'docreq-mcp', 'access tokens', 32)), secretFrom: 'token secret' };
  }
  found.notes.push(
    'access tokens are signed with a random per-process secret: set DOCREQ_AUTH_SECRET_FILE (or DOCREQ_TOKEN_SECRET) so that every replica, and a restarted one, accepts them.',
  );
  return { secret: new Uint8Array(randomBytes(32)), secretFrom: 'random' };
}

type IdpAnswer = { issuer: string; clientId: string; clientSecret: string };
interface IdpSetup {
  idp: (publicUrl: string) => Promise<IdpAnswer>;
  allowLoopbackHttp: boolean;
  policy: Policy;
  close: () => Promise<void>;
  /** What `check` probes (the firm's provider only). */
  probe?: NonNullable<AuthSetup['probe']>;
}

/** The sandbox's demo identity provider, started once the service's address is known (its demo policy unless rules were set). */
async function demoIdp(policy: Policy, notes: string[]): Promise<IdpSetup> {
  const demo = await import('../sandbox/idp.js');
  const setup: IdpSetup = {
    policy: !policy.readers.length && !policy.senders.length ? { ...demo.DEMO_POLICY } : policy,
    allowLoopbackHttp: true,
    close: () => Promise.resolve(),
    idp: async (url) => {
      const started = await demo.startDemoIdp([`${url}/login/callback`]);
      setup.close = () => started.close();
      return started;
    },
  };
  notes.push(
    `sandbox demo identity provider: ${demo.DEMO_USERS.map((u) => `${u.email} (password ${u.password})`).join('; ')}; readers ${setup.policy.readers.join(', ')}; senders ${setup.policy.senders.join(', ')}`,
  );
  return setup;
}

/** The firm's OpenID Connect provider: issuer, client id and secret file checked; what `check` probes. */
function firmIdp(
  text: Text,
  policy: Policy,
  found: { problems: string[]; secrets: string[] },
  probed: Omit<NonNullable<AuthSetup['probe']>, 'issuer' | 'clientId' | 'clientSecretRead' | 'policy' | 'discover'>,
): IdpSetup {
  const { problems } = found;
  const issuer = text('oidcIssuer');
  const clientId = text('oidcClientId');
  const secretPath = text('oidcClientSecretFile');
  if (!issuer) problems.push("--auth oauth needs DOCREQ_OIDC_ISSUER: the firm's OpenID Connect issuer URL.");
  else if (!checkBaseUrl(issuer).ok) problems.push('DOCREQ_OIDC_ISSUER must be an https URL (http only on loopback), without user, query or fragment.');
  if (!clientId) problems.push("--auth oauth needs DOCREQ_OIDC_CLIENT_ID: this service's client id at the identity provider.");
  const clientSecret = secretPath ? readSecretFile(secretPath, 'DOCREQ_OIDC_CLIENT_SECRET_FILE', problems) : undefined;
  if (!secretPath) problems.push("--auth oauth needs DOCREQ_OIDC_CLIENT_SECRET_FILE: a file holding this service's client secret at the identity provider.");
  const allowLoopbackHttp = Boolean(issuer && /^http:/i.test(issuer));
  if (clientSecret) found.secrets.push(clientSecret);
  // The discovery document, fetched and checked (its issuer must be this one) by openid-client, as sign-in does.
  const discover = async () =>
    (
      await oidc.discovery(new URL(issuer!), clientId ?? '', undefined, undefined, {
        timeout: 5,
        ...(allowLoopbackHttp ? { execute: [oidc.allowInsecureRequests] } : {}),
      })
    ).serverMetadata();
  if (!policy.readers.length && !policy.senders.length)
    problems.push('--auth oauth needs DOCREQ_AUTH_READERS and/or DOCREQ_AUTH_SENDERS: nobody would be let in.');
  return {
    idp: () => Promise.resolve({ issuer: issuer!, clientId: clientId!, clientSecret: clientSecret! }),
    allowLoopbackHttp,
    policy,
    close: () => Promise.resolve(),
    probe: {
      issuer: issuer && checkBaseUrl(issuer).ok ? issuer : undefined,
      clientId,
      clientSecretRead: clientSecret !== undefined,
      policy,
      discover,
      ...probed,
    },
  };
}

export async function loadAuthSetup(
  flags: FlagValues,
  env: NodeJS.ProcessEnv,
  options: { sandboxApiKey?: string; store?: AuthStore } = {},
): Promise<AuthSetup> {
  const problems: string[] = [];
  const notes: string[] = [];
  const secrets: string[] = [];
  const reading = readSettings(flags, env);
  // Sign-in's values trimmed, white space alone counting as unset.
  const text: Text = (name) => {
    const value = reading.text(name);
    return value === undefined || value.trim() === '' ? SETTINGS[name].default : value.trim();
  };
  const modeText = text('auth') ?? 'bearer';
  const mode = settingSchema('auth').safeParse(modeText);
  if (!mode.success) return { mode: 'bearer', problems: [`DOCREQ_AUTH (or --auth) must be bearer or oauth.`], notes, close: () => Promise.resolve() };
  if (mode.data === 'bearer') return { mode: 'bearer', problems, notes, close: () => Promise.resolve() };

  const apiKey = firmKey(text, options.sandboxApiKey, problems);
  const { secret, secretFrom } = signingSecret(text, reading.text('tokenSecret'), { problems, notes, secrets });

  const readers = parseRules(text('authReaders'));
  const senders = parseRules(text('authSenders'));
  for (const p of readers.problems) problems.push(`DOCREQ_AUTH_READERS: ${p}.`);
  for (const p of senders.problems) problems.push(`DOCREQ_AUTH_SENDERS: ${p}.`);
  const rules: Policy = { readers: readers.rules, senders: senders.rules };
  const hosts = settingSchema('authRedirectHosts').safeParse(text('authRedirectHosts'));
  const redirectHosts = hosts.success ? hosts.data : [];
  if (!hosts.success) problems.push(`DOCREQ_AUTH_REDIRECT_HOSTS ${hosts.error.issues[0]?.message ?? 'cannot be read'}.`);

  const hoursRead = settingSchema('authSessionHours').safeParse(text('authSessionHours'));
  const sessionHours = hoursRead.success ? hoursRead.data : Number(SETTINGS.authSessionHours.default);
  if (!hoursRead.success) problems.push('DOCREQ_AUTH_SESSION_HOURS must be a whole number of hours from 1 to 168.');

  let publicUrl: string | undefined;
  const publicText = text('publicUrl');
  if (publicText) {
    const checked = checkBaseUrl(publicText);
    if (checked.ok) publicUrl = checked.url;
    else problems.push(`DOCREQ_PUBLIC_URL (or --public-url) ${checked.reason}.`);
  }

  const setup =
    options.sandboxApiKey && !text('oidcIssuer')
      ? await demoIdp(rules, notes)
      : firmIdp(text, rules, { problems, secrets }, { publicUrl, secretFrom, sessionHours });
  const { policy, allowLoopbackHttp } = setup;
  return {
    mode: 'oauth',
    problems,
    notes,
    apiKey,
    secrets: [apiKey, ...secrets].filter((x): x is string => typeof x === 'string' && x.length >= 4),
    ...(setup.probe ? { probe: setup.probe } : {}),
    create: async (listeningUrl, shared) => {
      const url = publicUrl ?? listeningUrl;
      const store = options.store ?? shared;
      return createAuth({
        publicUrl: url,
        secret,
        idp: await setup.idp(url),
        policy,
        apiKey: apiKey!,
        allowLoopbackHttp,
        redirectHosts,
        sessionSeconds: sessionHours * 3600,
        ...(store ? { store } : {}),
      });
    },
    close: () => setup.close(),
  };
}
