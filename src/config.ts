import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { plainIssue } from './issues.js';

/** What a tool call needs to reach the service; absent while the configuration is incomplete. */
interface ApiSettings {
  apiKey: string;
  baseUrl: string;
}

export interface Config {
  api: ApiSettings | undefined;
  readOnly: boolean;
  confirmSend: 'auto' | 'always' | 'never';
  timeoutMs: number;
  /** Cap on one answer from the service, after decompression, in MB. */
  maxResponseMb: number;
  logLevel: LogLevel;
  /** The firm's templates file (DOCREQ_TEMPLATES_FILE); read once at start by templates/load.ts. */
  templatesFile: string | undefined;
  /** Signs confirmation tokens (DOCREQ_TOKEN_SECRET); undefined: random per process. */
  tokenSecret: string | undefined;
  /** The send store (contract §7): backend, the file store's folder, the redis URL (may hold a password: never echoed). */
  store: { backend: 'file' | 'redis' | 'memory'; stateDir: string | undefined; url: string | undefined };
  /**
   * Why nothing may be sent, when a setting that governs safety cannot be read (fail closed:
   * reads still work); undefined when sending is allowed.
   */
  sendingDisabled: string | undefined;
  /** Each one names the variable to set and how; empty when the configuration is usable. */
  problems: string[];
  /**
   * The problems that stop every tool call (contract §2): a setting other than the key, the base URL
   * (absent `api` says those) and the safety settings (which disable only sending) that cannot be read.
   */
  callsDisabled?: string[];
}

/** The settings that govern safety: when one cannot be read, nothing is sent until it is fixed. */
const SAFETY_SETTINGS = new Set(['readOnly', 'confirmSend', 'tokenSecret', 'store', 'stateDir', 'storeUrl']);

/** Settings whose problems leave `api` unset, which already stops every call. */
const CONNECTION_SETTINGS = new Set(['apiKey', 'apiKeyFile', 'baseUrl']);

/** A value's shape, never the value: a setting may hold a secret pasted into the wrong variable. */
export function valueShape(text: string): string {
  const n = [...text].length;
  const kinds = [/[a-z]/i.test(text) ? 'letters' : '', /\d/.test(text) ? 'digits' : '', /[^a-z\d]/i.test(text) ? 'other characters' : ''].filter(Boolean);
  return `a ${n}-character value of ${kinds.join(', ') || 'nothing'} (not shown)`;
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const booleanText = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', '']))
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const commaList = (check: (item: string) => boolean, what: string) =>
  z
    .string()
    .transform((text) => text.split(',').map((t) => t.trim()).filter(Boolean))
    .refine((items) => items.every(check), `must be a comma-separated list of ${what}`);

/** Host header values: a name or address, optionally with a port. */
const hostList = commaList((h) => /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i.test(h), 'host names (e.g. mcp.example.com,localhost)');
/** Browser origins: scheme://host[:port], nothing more. */
const originList = commaList((o) => {
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
    schema: z.string().trim().min(1, 'is empty'),
    help: "the firm's bearer key (stdio; never on the command line)",
  },
  apiKeyFile: {
    env: 'DOCREQ_API_KEY_FILE',
    flag: undefined,
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: 'a file holding the key (used when `DOCREQ_API_KEY` is unset)',
  },
  baseUrl: {
    env: 'DOCREQ_BASE_URL',
    flag: '--base-url',
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: "the service's base URL; `/api/v1/...` is appended (a path prefix is kept). `https://` unless the host is loopback; no user-info, query or fragment",
  },
  sandbox: {
    env: 'DOCREQ_SANDBOX',
    flag: '--sandbox',
    default: 'off',
    schema: booleanText,
    help: 'serve the embedded sandbox service instead of a real one: demo data, no account or key needed, nothing reaches a real service',
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
    schema: z.string().trim().toLowerCase().pipe(z.enum(['auto', 'always', 'never'])),
    help: '`auto`: ask through MCP elicitation when the host supports it, otherwise a send needs the preview\'s confirmation token; `always`: only through elicitation (a host without it cannot send); `never`: no confirmation (unattended scripts). A value that cannot be read disables sending',
  },
  timeoutMs: {
    env: 'DOCREQ_TIMEOUT_MS',
    flag: '--timeout-ms',
    default: '30000',
    schema: z.coerce.number().int().min(100).max(600_000),
    help: 'bound on one tool call, end to end (every API call it makes, retries included)',
  },
  maxResponseMb: {
    env: 'DOCREQ_MAX_RESPONSE_MB',
    flag: '--max-response-mb',
    default: '256',
    schema: z.coerce.number().min(1).max(4096),
    help: 'cap on one answer from the service, after decompression, in MB',
  },
  logLevel: {
    env: 'DOCREQ_LOG_LEVEL',
    flag: '--log-level',
    default: 'info',
    schema: z.string().trim().toLowerCase().pipe(z.enum(LOG_LEVELS)),
    help: '`error`, `warn`, `info`, `debug`; logs go to stderr and MCP logging, never stdout',
  },
  templatesFile: {
    env: 'DOCREQ_TEMPLATES_FILE',
    flag: '--templates',
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: "the firm's own checklist templates, YAML or JSON, added to the built-ins (a regular file of at most 1 MB)",
  },
  tokenSecret: {
    env: 'DOCREQ_TOKEN_SECRET',
    flag: undefined,
    default: undefined,
    schema: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)'),
    help: 'signs confirmation tokens; replicas of one team service must share it (default: random per process)',
  },
  // The send store (contract §7); opened by src/store/index.ts.
  store: {
    env: 'DOCREQ_STORE',
    flag: '--store',
    default: undefined,
    schema: z.string().trim().toLowerCase().pipe(z.enum(['file', 'redis', 'memory'])),
    help: 'where once-only sending is kept: file (default; shared by this user\'s processes), redis (replicas; implied by DOCREQ_STORE_URL), memory (this process only)',
  },
  stateDir: {
    env: 'DOCREQ_STATE_DIR',
    flag: '--state-dir',
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: "the file store's folder (default: the OS's per-user state folder + docreq-mcp)",
  },
  storeUrl: {
    env: 'DOCREQ_STORE_URL',
    flag: undefined,
    default: undefined,
    schema: z
      .string()
      .trim()
      .refine((t) => /^rediss?:\/\/[^\s]+$/i.test(t), 'must be a redis:// or rediss:// URL'),
    help: 'redis:// or rediss:// URL of Redis >= 6.2 or Valkey (may hold a password: never shown); implies DOCREQ_STORE=redis',
  },
  // Team mode (contract §6); read by src/transport/http.ts.
  transport: {
    env: 'DOCREQ_TRANSPORT',
    flag: '--transport',
    default: 'stdio',
    schema: z.string().trim().toLowerCase().pipe(z.enum(['stdio', 'http'])),
    help: '`stdio` (one person, spawned by a host) or `http` (team mode: Streamable HTTP at `/mcp`, the key per request)',
  },
  httpHost: {
    env: 'DOCREQ_HTTP_HOST',
    flag: '--host',
    default: '127.0.0.1',
    schema: z.string().trim().min(1, 'is empty'),
    help: 'team mode: the interface to listen on',
  },
  httpPort: {
    env: 'DOCREQ_HTTP_PORT',
    flag: '--port',
    default: '8787',
    schema: z.coerce.number().int().min(0).max(65_535),
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
    schema: z.coerce.number().int().min(1).max(1_000_000_000),
    help: 'team mode: tool calls per minute per key; beyond it `429` with `Retry-After`',
  },
  metricsPort: {
    env: 'DOCREQ_METRICS_PORT',
    flag: '--metrics-port',
    default: undefined,
    schema: z.coerce.number().int().min(1).max(65_535),
    help: 'team mode: serve Prometheus metrics at `http://127.0.0.1:<port>/metrics`, on loopback only (off when unset)',
  },
  // Firm sign-in (contract §8); read by src/auth/settings.ts.
  auth: {
    env: 'DOCREQ_AUTH',
    flag: '--auth',
    default: 'bearer',
    schema: z.string().trim().toLowerCase().pipe(z.enum(['bearer', 'oauth'])),
    help: "team mode: bearer (each request carries the firm's key) or oauth (staff sign in with the firm's identity provider; the key stays in the service)",
  },
  publicUrl: {
    env: 'DOCREQ_PUBLIC_URL',
    flag: '--public-url',
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: 'oauth: the address hosts reach this service at, e.g. https://mcp.example.com (default: the address it listens on)',
  },
  oidcIssuer: {
    env: 'DOCREQ_OIDC_ISSUER',
    flag: undefined,
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: "oauth: the firm's OpenID Connect issuer URL (Entra ID, Google Workspace, Okta…)",
  },
  oidcClientId: {
    env: 'DOCREQ_OIDC_CLIENT_ID',
    flag: undefined,
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: "oauth: this service's client id at the identity provider",
  },
  oidcClientSecretFile: {
    env: 'DOCREQ_OIDC_CLIENT_SECRET_FILE',
    flag: undefined,
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: "oauth: a file holding this service's client secret at the identity provider",
  },
  authSecretFile: {
    env: 'DOCREQ_AUTH_SECRET_FILE',
    flag: undefined,
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: 'oauth: a file holding the secret that signs access tokens (replicas share it; default: derived from DOCREQ_TOKEN_SECRET)',
  },
  authReaders: {
    env: 'DOCREQ_AUTH_READERS',
    flag: undefined,
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: 'oauth: who may read, comma-separated: @domain or e-mail addresses (counted only when the IdP marks them verified), user:ID (the IdP subject), group:ID (the IdP groups claim); see docs/sign-in.md',
  },
  authSenders: {
    env: 'DOCREQ_AUTH_SENDERS',
    flag: undefined,
    default: undefined,
    schema: z.string().trim().min(1, 'is empty'),
    help: 'oauth: who may also send, same form as DOCREQ_AUTH_READERS (nobody by default)',
  },
  authRedirectHosts: {
    env: 'DOCREQ_AUTH_REDIRECT_HOSTS',
    flag: undefined,
    default: 'claude.ai,claude.com,chatgpt.com,vscode.dev,insiders.vscode.dev',
    schema: commaList((h) => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(h), 'host names (e.g. claude.ai,chatgpt.com), no wildcard'),
    help: 'oauth: the hosts whose https redirect URIs apps may register (exact names; http on loopback and app schemes are always accepted)',
  },
  // Sessions a firm can end (contract §8.1); read by src/auth/settings.ts. At most 168 (src/auth/sessions.ts MAX_SESSION_HOURS).
  authSessionHours: {
    env: 'DOCREQ_AUTH_SESSION_HOURS',
    flag: undefined,
    default: '12',
    schema: z.coerce.number().int().min(1).max(168),
    help: 'oauth: hours a sign-in lasts, refreshes included, before the person signs in at the identity provider again (1 to 168); who may read or send is decided again at every refresh',
  },
} as const;

export type SettingName = keyof typeof SETTINGS;
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

const LOOPBACK_NAMES = new Set(['localhost', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (LOOPBACK_NAMES.has(host) || host.endsWith('.localhost')) return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** Checks a base URL against the contract; returns the URL without a trailing slash, or a reason. */
export function checkBaseUrl(text: string): { ok: true; url: string } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'is not a URL (expected e.g. https://docs.example.com)' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: `uses ${url.protocol} (expected https://)` };
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return { ok: false, reason: 'must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1)' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry a user name or password' };
  if (url.search || text.includes('?')) return { ok: false, reason: 'must not carry a query (?...)' };
  if (url.hash || text.includes('#')) return { ok: false, reason: 'must not carry a fragment (#...)' };
  if (/\/api\/v1\/*$/i.test(url.pathname)) {
    return { ok: false, reason: `ends in /api/v1, which is added to it: set it to ${url.origin}${url.pathname.replace(/\/api\/v1\/*$/i, '') || ''}` };
  }
  return { ok: true, url: url.origin + url.pathname.replace(/\/+$/, '') };
}

function readKeyFile(path: string): { key?: string; problem?: string } {
  try {
    const key = readFileSync(path, 'utf8').trim();
    return key ? { key } : { problem: 'DOCREQ_API_KEY_FILE names a file that is empty.' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    // The value is not echoed: a key pasted here instead of a path must not reach any log.
    return { problem: `DOCREQ_API_KEY_FILE names a file that cannot be read (${code}); it must be the path of a file holding the key (to give the key itself, use DOCREQ_API_KEY).` };
  }
}

function issueText(error: z.ZodError, schema: z.ZodType): string {
  const inner = schema instanceof z.ZodPipe ? (schema.out as z.ZodType) : schema;
  return error.issues.map((i) => plainIssue(i, inner)).join('; ');
}

/**
 * What is wrong with a setting's value, in every mode (stdio and team mode alike): the variable
 * (and flag), what it must be, and the value's shape, never the value (it may be a secret).
 */
function settingProblem(name: SettingName, error: z.ZodError, text: string): string {
  const setting = SETTINGS[name];
  const where = setting.flag ? `${setting.env} (or ${setting.flag})` : setting.env;
  return `${where} ${issueText(error, setting.schema)}: got ${valueShape(text)}.`;
}

/** The problem loadConfig reports when no key is set (team mode's `check` leaves it out: there the key comes with each request, or from sign-in's own settings). */
export const KEY_MISSING = "DOCREQ_API_KEY is not set: set it to the firm's API key (or DOCREQ_API_KEY_FILE to a file holding it).";

/** The process's environment. This module alone reads it; every other one is handed what it needs. */
export function processEnvironment(): NodeJS.ProcessEnv {
  return process.env;
}

/**
 * One reading of the settings, which every reader takes its text from (stdio, team mode, sign-in,
 * `check`, `sessions`): the flag wins, then the environment (empty counts as unset), then the
 * SETTINGS table's default.
 */
export interface SettingsReading {
  readonly flags: FlagValues;
  readonly env: NodeJS.ProcessEnv;
  text(name: SettingName): string | undefined;
}

export function readSettings(flags: FlagValues = {}, env: NodeJS.ProcessEnv = processEnvironment()): SettingsReading {
  return {
    flags,
    env,
    text(name) {
      const fromFlag = flags[name];
      if (fromFlag !== undefined) return String(fromFlag);
      const fromEnv = env[SETTINGS[name].env];
      return fromEnv === undefined || fromEnv === '' ? SETTINGS[name].default : fromEnv;
    },
  };
}

type SettingValue<N extends SettingName> = z.output<(typeof SETTINGS)[N]['schema']>;

/** A setting's value as its schema reads it; undefined when unset, with the problem when it cannot be read. */
export function settingValue<N extends SettingName>(reading: SettingsReading, name: N): { value: SettingValue<N> | undefined; problem?: string } {
  const text = reading.text(name);
  if (text === undefined) return { value: undefined };
  const parsed = SETTINGS[name].schema.safeParse(text);
  if (parsed.success) return { value: parsed.data as SettingValue<N> };
  return { value: undefined, problem: settingProblem(name, parsed.error, text) };
}

/** A setting's default as its schema reads it (for a setting that has one): what stands while the value given cannot be read. */
export function settingDefault<N extends SettingName>(name: N): SettingValue<N> {
  return SETTINGS[name].schema.parse(SETTINGS[name].default) as SettingValue<N>;
}

/** How the process starts, from one reading: stdio or team mode (or why neither), sign-in, the sandbox (unreadable counts as off). */
export function startMode(reading: SettingsReading): { transport: 'stdio' | 'http' | undefined; transportProblem?: string; team: boolean; oauth: boolean; sandbox: boolean } {
  const transport = settingValue(reading, 'transport');
  return {
    transport: transport.value,
    ...(transport.problem ? { transportProblem: transport.problem } : {}),
    team: transport.value === 'http',
    oauth: SETTINGS.auth.schema.safeParse(reading.text('auth')).data === 'oauth',
    sandbox: SETTINGS.sandbox.schema.safeParse(reading.text('sandbox')).data === true,
  };
}

/**
 * Reads the configuration from flags and environment (the flag wins). Never throws: what is wrong
 * is collected in `problems`, each naming the variable to set, and the rest takes its default.
 */
export function loadConfig(flags: FlagValues = {}, env: NodeJS.ProcessEnv = processEnvironment()): Config {
  const problems: string[] = [];
  const unreadableSafety: string[] = [];
  const unreadableOther: string[] = [];
  const reading = readSettings(flags, env);
  const raw = (name: SettingName) => reading.text(name);
  function read<N extends SettingName, F>(name: N, fallback: F): SettingValue<N> | F {
    const { value, problem } = settingValue(reading, name);
    if (!problem) return value === undefined ? fallback : value;
    problems.push(problem);
    if (SAFETY_SETTINGS.has(name)) unreadableSafety.push(problem);
    else if (!CONNECTION_SETTINGS.has(name)) unreadableOther.push(problem);
    return fallback;
  }

  // Fail closed: an unreadable DOCREQ_READ_ONLY means read-only.
  const readOnly = read('readOnly', true);
  const tokenSecret = read('tokenSecret', undefined);
  const confirmSend = read('confirmSend', settingDefault('confirmSend'));
  const timeoutMs = read('timeoutMs', settingDefault('timeoutMs'));
  const maxResponseMb = read('maxResponseMb', settingDefault('maxResponseMb'));
  const logLevel = read('logLevel', settingDefault('logLevel'));
  const templatesFile = read('templatesFile', undefined);
  const storeUrl = read('storeUrl', undefined);
  const stateDir = read('stateDir', undefined);
  let backend = read('store', undefined) ?? (storeUrl ? 'redis' : 'file');
  if (backend === 'redis' && !storeUrl) {
    const problem = 'DOCREQ_STORE is redis, but DOCREQ_STORE_URL is not set: set it to redis://host:6379 (or rediss://).';
    problems.push(problem);
    unreadableSafety.push(problem);
    backend = 'memory';
  }

  let apiKey = read('apiKey', undefined);
  const keyFile = read('apiKeyFile', undefined);
  if (apiKey === undefined && keyFile !== undefined) {
    const fromFile = readKeyFile(keyFile);
    apiKey = fromFile.key;
    if (fromFile.problem) problems.push(fromFile.problem);
  } else if (apiKey === undefined && raw('apiKey') === undefined) {
    problems.push(KEY_MISSING);
  }
  if (apiKey && /\s/.test(apiKey)) {
    problems.push('DOCREQ_API_KEY contains white space: set it to the key alone.');
    apiKey = undefined;
  }

  let baseUrl: string | undefined;
  const baseText = read('baseUrl', undefined);
  if (baseText !== undefined) {
    const checked = checkBaseUrl(baseText);
    if (checked.ok) baseUrl = checked.url;
    else problems.push(`DOCREQ_BASE_URL (or --base-url) ${checked.reason}.`);
  } else if (raw('baseUrl') === undefined) {
    problems.push('DOCREQ_BASE_URL is not set: set it (or --base-url) to the service address, e.g. https://docs.example.com.');
  }

  return {
    api: apiKey && baseUrl ? { apiKey, baseUrl } : undefined,
    readOnly,
    confirmSend,
    timeoutMs,
    maxResponseMb,
    logLevel,
    templatesFile,
    tokenSecret,
    store: { backend, stateDir, url: storeUrl },
    sendingDisabled: unreadableSafety.length ? unreadableSafety.join(' ') : undefined,
    problems,
    callsDisabled: unreadableOther,
  };
}

/** A setting's help as plain text (for `--help`, manifest.json and server.json): the table's words without Markdown. */
export function plainHelp(help: string): string {
  return help.replace(/`/g, '');
}

/** The options part of `--help`, one line per setting, generated from SETTINGS. */
export function settingsHelp(): string {
  return Object.values(SETTINGS)
    .map((s) => `  ${(s.flag ?? '').padEnd(16)} ${s.env.padEnd(22)} ${plainHelp(s.help)}${s.default !== undefined ? ` (default ${s.default})` : ''}`)
    .join('\n');
}

/** The README's settings table (between its settings-table markers), generated from SETTINGS by scripts/readme.mjs. */
export function settingsTable(): string {
  const code = (text: string | undefined) => (text === undefined ? '—' : `\`${text}\``);
  return [
    '| env | flag | default | meaning |',
    '|---|---|---|---|',
    ...Object.values(SETTINGS).map((s) => `| ${code(s.env)} | ${code(s.flag)} | ${code(s.default)} | ${s.help} |`),
  ].join('\n');
}

/** Every secret a configuration holds (the key, the token secret, the store URL and its password): what the one redaction masks. */
export function secretsOf(config: Pick<Config, 'api' | 'tokenSecret' | 'store'>): string[] {
  const out = [config.api?.apiKey, config.tokenSecret, config.store?.url];
  if (config.store?.url) {
    try {
      const url = new URL(config.store.url);
      out.push(decodeURIComponent(url.password), url.password);
    } catch {
      // not a URL: the whole text is masked above
    }
  }
  return out.filter((s): s is string => typeof s === 'string' && s.length >= 4);
}

/** Variables with the DOCREQ_ prefix that are not settings but are known (tests and examples). */
const NOT_SETTINGS = new Set(['DOCREQ_TEST_ERA', 'DOCREQ_MCP_URL']);
/** Settings whose misspelling would leave sending on or widen access: a name close to one of these stops the start. */
const GUARDING: ReadonlySet<SettingName> = new Set<SettingName>(['readOnly', 'confirmSend', 'auth', 'authReaders', 'authSenders', 'allowedOrigins', 'allowedHosts']);

/** Edit distance with transpositions (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name closest to `name` (compared without case, `-` or `_`), when it is close enough to be a slip. */
function closestName<T extends string>(name: string, known: readonly T[]): T | undefined {
  const plain = (s: string) => s.toLowerCase().replace(/^(docreq_|--)/, '').replace(/[-_]/g, '');
  const target = plain(name);
  let best: T | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    const score = distance(target, plain(candidate));
    if (score < bestScore) [best, bestScore] = [candidate, score];
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(target.length / 4)) ? best : undefined;
}

/**
 * Every `DOCREQ_*` variable that is not a setting, named with the closest setting. `stop` holds those
 * whose closest setting guards sending or access (`DOCREQ_READONLY` for `DOCREQ_READ_ONLY`): starting
 * would silently leave the guard off, so the start is refused.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): { warn: string[]; stop: string[] } {
  const entries = Object.entries(SETTINGS) as [SettingName, (typeof SETTINGS)[SettingName]][];
  const known = new Set<string>(entries.map(([, s]) => s.env));
  const names = entries.map(([, s]) => s.env);
  const warn: string[] = [];
  const stop: string[] = [];
  for (const variable of Object.keys(env).sort()) {
    if (!variable.toUpperCase().startsWith('DOCREQ_') || known.has(variable) || NOT_SETTINGS.has(variable)) continue;
    const near = closestName(variable, names);
    const setting = near && entries.find(([, s]) => s.env === near)?.[0];
    const text = `${variable} is not a setting${near ? ` (did you mean ${near}?)` : ''}`;
    if (setting && GUARDING.has(setting)) stop.push(`${text}: it would be ignored and ${near} left at its default, so docreq-mcp does not start; rename it, or unset it.`);
    else warn.push(`${text}; it is ignored.`);
  }
  return { warn, stop };
}

/** An unknown flag, named with the closest known one. */
export function unknownFlag(flag: string, known: readonly string[]): string {
  const near = closestName(flag, known.map((k) => `--${k}`));
  return `unknown option ${flag}${near ? ` (did you mean ${near}?)` : ''}.`;
}
