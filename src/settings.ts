import { z } from 'zod';

/**
 * Every setting, its environment twin and its flag: the one table. config.ts reads it
 * (readSettings, loadConfig), settings-docs.ts writes --help and the README's table from it, and
 * settings-names.ts names the variables and flags that are not in it.
 */

const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// Each setting's schema is built the first time it is read (settingSchema): a start reads a handful of
// the table's 35, and builds only those (docs/performance.md, "Cold start").
const booleanText = () =>
  z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', '']))
    .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

/** Text that is not empty once trimmed. */
const nonEmpty = () => z.string().trim().min(1, 'is empty');

const commaList = (check: (item: string) => boolean, what: string) =>
  z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .refine((items) => items.every(check), `must be a comma-separated list of ${what}`);

/** Host header values: a name or address, optionally with a port. */
const hostList = () => commaList((h) => /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i.test(h), 'host names (e.g. mcp.example.com,localhost)');
/** Browser origins: scheme://host[:port], nothing more. */
const originList = () =>
  commaList((o) => {
    try {
      return new URL(o).origin === o.replace(/\/$/, '').toLowerCase() && /^https?:$/.test(new URL(o).protocol);
    } catch {
      return false;
    }
  }, 'origins (e.g. https://app.example.com)');

/**
 * Every setting, its environment twin and its flag. The README's configuration table is checked
 * against this list by a test, so documentation and code cannot drift apart.
 */
export const SETTINGS = {
  apiKey: {
    env: 'DOCREQ_API_KEY',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: "the firm's bearer key (stdio; never on the command line)",
  },
  apiKeyFile: {
    env: 'DOCREQ_API_KEY_FILE',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: 'a file holding the key (used when `DOCREQ_API_KEY` is unset)',
  },
  baseUrl: {
    env: 'DOCREQ_BASE_URL',
    flag: '--base-url',
    default: undefined,
    schema: nonEmpty,
    help: "the service's base URL; `/api/v1/...` is appended (a path prefix is kept). `https://` unless the host is loopback; no user-info, query or fragment",
  },
  sandbox: {
    env: 'DOCREQ_SANDBOX',
    flag: '--sandbox',
    default: 'off',
    schema: booleanText,
    help: 'serve the embedded sandbox service instead of a real one: demo data, no account or key needed, nothing reaches a real service',
  },
  sandboxService: {
    env: 'DOCREQ_SANDBOX_SERVICE',
    flag: '--sandbox-service',
    default: 'ours',
    schema: () =>
      z
        .string()
        .trim()
        .toLowerCase()
        .pipe(z.enum(['ours', 'other', 'ignoring', 'strict'])),
    help: 'which service the sandbox plays: `ours` (as the API document and the defaults say), `other` (another service: its own field names, statuses, dates and answers; docs/service-profile.md), `ignoring` (one that drops fields it does not know), `strict` (refuses them, wants date-times, answers 202, pages its lists)',
  },
  readOnly: {
    env: 'DOCREQ_READ_ONLY',
    flag: '--read-only',
    default: 'off',
    schema: booleanText,
    help: 'no tool that sends is offered at all; a value that cannot be read counts as on',
  },
  confirmSend: {
    env: 'DOCREQ_CONFIRM_SEND',
    flag: '--confirm-send',
    default: 'auto',
    schema: () =>
      z
        .string()
        .trim()
        .toLowerCase()
        .pipe(z.enum(['auto', 'person', 'always', 'never'])),
    help: "`auto`: the strongest way the host offers: the person presses Send on the preview page (hosts that show MCP Apps), else the host's form (elicitation), else the preview's confirmation token, passed back by the assistant; `person`: only a person's act (the page's Send or the host's form; a host with neither cannot send); `always`: only through the host's form (elicitation; a host without it cannot send); `never`: no confirmation (unattended scripts). A value that cannot be read disables sending",
  },
  timeoutMs: {
    env: 'DOCREQ_TIMEOUT_MS',
    flag: '--timeout-ms',
    default: '30000',
    schema: () => z.coerce.number().int().min(100).max(600_000),
    help: 'bound on one tool call, end to end (every API call it makes, retries included)',
  },
  maxResponseMb: {
    env: 'DOCREQ_MAX_RESPONSE_MB',
    flag: '--max-response-mb',
    default: '256',
    schema: () => z.coerce.number().min(1).max(4096),
    help: 'cap on one answer from the service, after decompression, in MB',
  },
  logLevel: {
    env: 'DOCREQ_LOG_LEVEL',
    flag: '--log-level',
    default: 'info',
    schema: () => z.string().trim().toLowerCase().pipe(z.enum(LOG_LEVELS)),
    help: '`error`, `warn`, `info`, `debug`; logs go to stderr and MCP logging, never stdout',
  },
  templatesFile: {
    env: 'DOCREQ_TEMPLATES_FILE',
    flag: '--templates',
    default: undefined,
    schema: nonEmpty,
    help: "the firm's own checklist templates, YAML or JSON, added to the built-ins (a regular file of at most 1 MB)",
  },
  serviceProfile: {
    env: 'DOCREQ_SERVICE_PROFILE',
    flag: '--service-profile',
    default: undefined,
    schema: nonEmpty,
    help: "how the firm's service differs where the API document is silent (field names, statuses, dates), YAML or JSON; docs/service-profile.md. Unreadable: sending is disabled",
  },
  tokenSecret: {
    env: 'DOCREQ_TOKEN_SECRET',
    flag: undefined,
    default: undefined,
    schema: () => z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)'),
    help: 'signs confirmation tokens; replicas of one team service must share it (default: random per process)',
  },
  // The send store (docs/sending.md, "The send store"); opened by src/store/index.ts.
  store: {
    env: 'DOCREQ_STORE',
    flag: '--store',
    default: undefined,
    schema: () =>
      z
        .string()
        .trim()
        .toLowerCase()
        .pipe(z.enum(['file', 'redis', 'memory'])),
    help: "where once-only sending is kept: file (default; shared by this user's processes), redis (replicas; implied by DOCREQ_STORE_URL), memory (this process only)",
  },
  stateDir: {
    env: 'DOCREQ_STATE_DIR',
    flag: '--state-dir',
    default: undefined,
    schema: nonEmpty,
    help: "the file store's folder (default: the OS's per-user state folder + docreq-mcp)",
  },
  storeUrl: {
    env: 'DOCREQ_STORE_URL',
    flag: undefined,
    default: undefined,
    schema: () =>
      z
        .string()
        .trim()
        .refine((t) => /^rediss?:\/\/[^\s]+$/i.test(t), 'must be a redis:// or rediss:// URL'),
    help: 'redis:// or rediss:// URL of Redis >= 6.2 or Valkey (may hold a password: never shown); implies DOCREQ_STORE=redis',
  },
  // Team mode (docs/team-mode.md); read by src/transport/http.ts.
  transport: {
    env: 'DOCREQ_TRANSPORT',
    flag: '--transport',
    default: 'stdio',
    schema: () =>
      z
        .string()
        .trim()
        .toLowerCase()
        .pipe(z.enum(['stdio', 'http'])),
    help: '`stdio` (one person, spawned by a host) or `http` (team mode: Streamable HTTP at `/mcp`, the key per request)',
  },
  httpHost: {
    env: 'DOCREQ_HTTP_HOST',
    flag: '--host',
    default: '127.0.0.1',
    // An IPv6 address may be written as in a URL ([::1]): the listener takes it without the brackets.
    schema: () =>
      nonEmpty()
        .transform((host) => host.replace(/^\[(.*)\]$/, '$1'))
        .pipe(z.string().min(1, 'is empty')),
    help: 'team mode: the interface to listen on',
  },
  httpPort: {
    env: 'DOCREQ_HTTP_PORT',
    flag: '--port',
    default: '8787',
    schema: () => z.coerce.number().int().min(0).max(65_535),
    help: 'team mode: the port to listen on',
  },
  allowedHosts: {
    env: 'DOCREQ_ALLOWED_HOSTS',
    flag: '--allowed-hosts',
    default: 'localhost,127.0.0.1,[::1]',
    schema: hostList,
    help: 'team mode: `Host` header values accepted, comma-separated (DNS-rebinding protection); others get `403`; a request with more than one `Host` header gets `400`',
  },
  allowedOrigins: {
    env: 'DOCREQ_ALLOWED_ORIGINS',
    flag: '--allowed-origins',
    default: undefined,
    schema: originList,
    help: 'team mode: browser origins allowed, comma-separated; bound to loopback, loopback origins (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`) are allowed without being listed; a request with another `Origin` gets `403`',
  },
  rateLimit: {
    env: 'DOCREQ_RATE_LIMIT',
    flag: '--rate-limit',
    default: '120',
    schema: () => z.coerce.number().int().min(1).max(1_000_000_000),
    help: 'team mode: tool calls per minute per key; beyond it `429` with `Retry-After`',
  },
  metricsPort: {
    env: 'DOCREQ_METRICS_PORT',
    flag: '--metrics-port',
    default: undefined,
    schema: () => z.coerce.number().int().min(1).max(65_535),
    help: 'team mode: serve Prometheus metrics at `http://127.0.0.1:<port>/metrics`, on loopback only (off when unset)',
  },
  // Firm sign-in (docs/sign-in-setup.md); read by src/auth/settings.ts.
  auth: {
    env: 'DOCREQ_AUTH',
    flag: '--auth',
    default: 'bearer',
    schema: () =>
      z
        .string()
        .trim()
        .toLowerCase()
        .pipe(z.enum(['bearer', 'oauth'])),
    help: "team mode: bearer (each request carries the firm's key) or oauth (staff sign in with the firm's identity provider; the key stays in the service)",
  },
  publicUrl: {
    env: 'DOCREQ_PUBLIC_URL',
    flag: '--public-url',
    default: undefined,
    schema: nonEmpty,
    help: 'oauth: the address hosts reach this service at, e.g. https://mcp.example.com (default: the address it listens on)',
  },
  oidcIssuer: {
    env: 'DOCREQ_OIDC_ISSUER',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: "oauth: the firm's OpenID Connect issuer URL (Entra ID, Google Workspace, Okta…)",
  },
  oidcClientId: {
    env: 'DOCREQ_OIDC_CLIENT_ID',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: "oauth: this service's client id at the identity provider",
  },
  oidcClientSecretFile: {
    env: 'DOCREQ_OIDC_CLIENT_SECRET_FILE',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: "oauth: a file holding this service's client secret at the identity provider",
  },
  authSecretFile: {
    env: 'DOCREQ_AUTH_SECRET_FILE',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: 'oauth: a file holding the secret that signs access tokens (replicas share it; default: derived from DOCREQ_TOKEN_SECRET)',
  },
  authReaders: {
    env: 'DOCREQ_AUTH_READERS',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: 'oauth: who may read, comma-separated: @domain or e-mail addresses (counted only when the IdP marks them verified), user:ID (the IdP subject), group:ID (the IdP groups claim); see docs/sign-in.md',
  },
  authSenders: {
    env: 'DOCREQ_AUTH_SENDERS',
    flag: undefined,
    default: undefined,
    schema: nonEmpty,
    help: 'oauth: who may also send, same form as DOCREQ_AUTH_READERS (nobody by default)',
  },
  authRedirectHosts: {
    env: 'DOCREQ_AUTH_REDIRECT_HOSTS',
    flag: undefined,
    default: 'claude.ai,claude.com,chatgpt.com,vscode.dev,insiders.vscode.dev',
    schema: () =>
      commaList((h) => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(h), 'host names (e.g. claude.ai,chatgpt.com), no wildcard'),
    help: 'oauth: the hosts whose https redirect URIs apps may register (exact names; http on loopback and app schemes are always accepted)',
  },
  // Sessions a firm can end (docs/sign-in.md, "Sessions"); read by src/auth/settings.ts. At most 168 (src/auth/sessions.ts MAX_SESSION_HOURS).
  authSessionHours: {
    env: 'DOCREQ_AUTH_SESSION_HOURS',
    flag: undefined,
    default: '12',
    schema: () => z.coerce.number().int().min(1).max(168),
    help: 'oauth: hours a sign-in lasts, refreshes included, before the person signs in at the identity provider again (1 to 168); who may read or send is decided again at every refresh',
  },
} as const;

export type SettingName = keyof typeof SETTINGS;
type SchemaOf<N extends SettingName> = ReturnType<(typeof SETTINGS)[N]['schema']>;

const built: Partial<Record<SettingName, z.ZodType>> = {};

/** A setting's schema, built the first time it is asked for and kept. */
export function settingSchema<N extends SettingName>(name: N): SchemaOf<N> {
  return (built[name] ??= SETTINGS[name].schema()) as SchemaOf<N>;
}
export type FlagValues = Partial<Record<SettingName, string | boolean | undefined>>;

type FlagOption = { type: 'string' } | { type: 'boolean' };

/** `parseArgs` options for every setting with a flag; a setting read as a boolean takes a bare flag. */
export function settingFlagOptions(): Record<string, FlagOption> {
  const options: Record<string, FlagOption> = {};
  for (const setting of Object.values(SETTINGS)) {
    if (setting.flag) options[setting.flag.slice(2)] = { type: setting.schema === booleanText ? 'boolean' : 'string' };
  }
  return options;
}

/** The settings given as flags, from what `parseArgs` read with `settingFlagOptions()`. */
export function settingsFromFlags(values: Record<string, string | boolean | undefined>): FlagValues {
  const flags: FlagValues = {};
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, (typeof SETTINGS)[SettingName]][]) {
    if (setting.flag) flags[name] = values[setting.flag.slice(2)];
  }
  return flags;
}
