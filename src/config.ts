import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { plainIssue } from './issues.js';
import type { ServiceProfile } from './domain/service-profile.js';
import { readServiceProfile } from './service-profile.js';
import { SETTINGS, settingSchema, type FlagValues, type LogLevel, type SettingName } from './settings.js';

/** What a tool call needs to reach the service; absent while the configuration is incomplete. */
interface ApiSettings {
  apiKey: string;
  baseUrl: string;
}

export interface Config {
  api: ApiSettings | undefined;
  readOnly: boolean;
  confirmSend: 'auto' | 'person' | 'always' | 'never';
  timeoutMs: number;
  /** Cap on one answer from the service, after decompression, in MB. */
  maxResponseMb: number;
  logLevel: LogLevel;
  /** The firm's templates file (DOCREQ_TEMPLATES_FILE); read at start and again whenever it changes (templates/catalogue.ts). */
  templatesFile: string | undefined;
  /** Signs confirmation tokens (DOCREQ_TOKEN_SECRET); undefined: random per process. */
  tokenSecret: string | undefined;
  /**
   * How the firm's service differs where the API document is silent (DOCREQ_SERVICE_PROFILE, read once at start:
   * src/service-profile.ts); absent: the defaults (src/domain/service-profile.ts DEFAULT_PROFILE).
   */
  serviceProfile?: ServiceProfile;
  /** The send store (docs/sending.md, "The send store"): backend, the file store's folder, the redis URL (may hold a password: never echoed). */
  store: { backend: 'file' | 'redis' | 'memory'; stateDir: string | undefined; url: string | undefined };
  /**
   * Why nothing may be sent, when a setting that governs safety cannot be read (fail closed:
   * reads still work); undefined when sending is allowed.
   */
  sendingDisabled: string | undefined;
  /** Each one names the variable to set and how; empty when the configuration is usable. */
  problems: string[];
  /**
   * The problems that stop every tool call (docs/settings.md): a setting other than the key, the base URL
   * (absent `api` says those) and the safety settings (which disable only sending) that cannot be read.
   */
  callsDisabled?: string[];
}

/** The settings that govern safety: when one cannot be read, nothing is sent until it is fixed. */
const SAFETY_SETTINGS = new Set(['readOnly', 'confirmSend', 'tokenSecret', 'store', 'stateDir', 'storeUrl', 'serviceProfile']);

/** Settings whose problems leave `api` unset, which already stops every call. */
const CONNECTION_SETTINGS = new Set(['apiKey', 'apiKeyFile', 'baseUrl']);

/** A value's shape, never the value: a setting may hold a secret pasted into the wrong variable. */
export function valueShape(text: string): string {
  const n = [...text].length;
  const kinds = [/[a-z]/i.test(text) ? 'letters' : '', /\d/.test(text) ? 'digits' : '', /[^a-z\d]/i.test(text) ? 'other characters' : ''].filter(Boolean);
  return `a ${n}-character value of ${kinds.join(', ') || 'nothing'} (not shown)`;
}

const LOOPBACK_NAMES = new Set(['localhost', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (LOOPBACK_NAMES.has(host) || host.endsWith('.localhost')) return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** Checks a base URL (https, or http on loopback only); returns the URL without a trailing slash, or a reason. */
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

/** A secret held in a file (a secret manager's mount): its text trimmed, or why it cannot be used. The path's content is never echoed: a key pasted there instead of a path must not reach any log. */
export function secretFromFile(path: string, what: string, hint = ''): { value?: string; problem?: string } {
  try {
    const value = readFileSync(path, 'utf8').trim();
    return value ? { value } : { problem: `${what} names a file that is empty.` };
  } catch (error) {
    return { problem: `${what} names a file that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})${hint}.` };
  }
}

function issueText(error: z.ZodError, schema: z.ZodType): string {
  const inner = schema instanceof z.ZodPipe ? (schema.out as z.ZodType) : schema;
  // Two findings worded alike (too big for a safe integer, and over the maximum) are said once.
  return [...new Set(error.issues.map((i) => plainIssue(i, inner)))].join('; ');
}

/**
 * What is wrong with a setting's value, in every mode (stdio and team mode alike): the variable
 * (and flag), what it must be, and the value's shape, never the value (it may be a secret).
 */
function settingProblem(name: SettingName, error: z.ZodError, text: string): string {
  const setting = SETTINGS[name];
  const where = setting.flag ? `${setting.env} (or ${setting.flag})` : setting.env;
  return `${where} ${issueText(error, settingSchema(name))}: got ${valueShape(text)}.`;
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

type SettingValue<N extends SettingName> = z.output<ReturnType<(typeof SETTINGS)[N]['schema']>>;

/** A setting's value as its schema reads it; undefined when unset, with the problem when it cannot be read. */
export function settingValue<N extends SettingName>(reading: SettingsReading, name: N): { value: SettingValue<N> | undefined; problem?: string } {
  const text = reading.text(name);
  if (text === undefined) return { value: undefined };
  const parsed = settingSchema(name).safeParse(text);
  if (parsed.success) return { value: parsed.data as SettingValue<N> };
  return { value: undefined, problem: settingProblem(name, parsed.error, text) };
}

/** A setting's default as its schema reads it (for a setting that has one): what stands while the value given cannot be read. */
export function settingDefault<N extends SettingName>(name: N): SettingValue<N> {
  return settingSchema(name).parse(SETTINGS[name].default) as SettingValue<N>;
}

/** How the process starts, from one reading: stdio or team mode (or why neither), sign-in, the sandbox (unreadable counts as off). */
export function startMode(reading: SettingsReading): {
  transport: 'stdio' | 'http' | undefined;
  transportProblem?: string;
  team: boolean;
  oauth: boolean;
  sandbox: boolean;
} {
  const transport = settingValue(reading, 'transport');
  return {
    transport: transport.value,
    ...(transport.problem ? { transportProblem: transport.problem } : {}),
    team: transport.value === 'http',
    oauth: settingSchema('auth').safeParse(reading.text('auth')).data === 'oauth',
    sandbox: settingSchema('sandbox').safeParse(reading.text('sandbox')).data === true,
  };
}

/** How loadConfig reads one setting: its value, or the fallback with the problem collected. */
type ReadSetting = <N extends SettingName, F>(name: N, fallback: F) => SettingValue<N> | F;

/** The key: DOCREQ_API_KEY, else the file DOCREQ_API_KEY_FILE names; one holding white space is refused. */
function apiKeyOf(read: ReadSetting, raw: (name: SettingName) => string | undefined, problems: string[]): string | undefined {
  let apiKey = read('apiKey', undefined);
  const keyFile = read('apiKeyFile', undefined);
  if (apiKey === undefined && keyFile !== undefined) {
    const fromFile = secretFromFile(
      keyFile,
      'DOCREQ_API_KEY_FILE',
      '; it must be the path of a file holding the key (to give the key itself, use DOCREQ_API_KEY)',
    );
    apiKey = fromFile.value;
    if (fromFile.problem) problems.push(fromFile.problem);
  } else if (apiKey === undefined && raw('apiKey') === undefined) {
    problems.push(KEY_MISSING);
  }
  if (apiKey && /\s/.test(apiKey)) {
    problems.push('DOCREQ_API_KEY contains white space: set it to the key alone.');
    return undefined;
  }
  return apiKey;
}

/** The service's address (DOCREQ_BASE_URL), checked. */
function baseUrlOf(read: ReadSetting, raw: (name: SettingName) => string | undefined, problems: string[]): string | undefined {
  const baseText = read('baseUrl', undefined);
  if (baseText !== undefined) {
    const checked = checkBaseUrl(baseText);
    if (checked.ok) return checked.url;
    problems.push(`DOCREQ_BASE_URL (or --base-url) ${checked.reason}.`);
  } else if (raw('baseUrl') === undefined) {
    problems.push('DOCREQ_BASE_URL is not set: set it (or --base-url) to the service address, e.g. https://docs.example.com.');
  }
  return undefined;
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
  // The profile decides the body a send POSTs: one that cannot be used disables sending (reads keep the defaults).
  const profileRead = readServiceProfile(read('serviceProfile', undefined));
  if (profileRead.problem) {
    problems.push(profileRead.problem);
    unreadableSafety.push(profileRead.problem);
  }
  const storeUrl = read('storeUrl', undefined);
  const stateDir = read('stateDir', undefined);
  let backend = read('store', undefined) ?? (storeUrl ? 'redis' : 'file');
  if (backend === 'redis' && !storeUrl) {
    const problem = 'DOCREQ_STORE is redis, but DOCREQ_STORE_URL is not set: set it to redis://host:6379 (or rediss://).';
    problems.push(problem);
    unreadableSafety.push(problem);
    backend = 'memory';
  }

  const apiKey = apiKeyOf(read, raw, problems);
  const baseUrl = baseUrlOf(read, raw, problems);

  return {
    api: apiKey && baseUrl ? { apiKey, baseUrl } : undefined,
    readOnly,
    confirmSend,
    timeoutMs,
    maxResponseMb,
    logLevel,
    templatesFile,
    tokenSecret,
    serviceProfile: profileRead.profile,
    store: { backend, stateDir, url: storeUrl },
    sendingDisabled: unreadableSafety.length ? unreadableSafety.join(' ') : undefined,
    problems,
    callsDisabled: unreadableOther,
  };
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
