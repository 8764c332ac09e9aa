import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkBaseUrl,
  type Config,
  isLoopbackHost,
  KEY_MISSING,
  loadConfig,
  processEnvironment,
  readSettings,
  secretFromFile,
  secretsOf,
  settingDefault,
  settingValue,
  startMode,
  valueShape,
} from '../src/config.js';
import { DEFAULT_PROFILE } from '../src/domain/service-profile.js';

/**
 * The settings' rules one by one (src/config.ts), beside config-units.test.ts and config.test.ts: which setting
 * disables sending (the safety settings and the store), which stops the calls (the others) and which only leaves
 * the connection unset (the key and the address); each value accepted and refused at both sides of its bounds; the
 * exact words of every problem, with the variable to set and the value's shape, never the value; every secret kept
 * out of every message.
 */

const KEY = 'drk_rules_key_0123456789';
const BASE = { DOCREQ_API_KEY: KEY, DOCREQ_BASE_URL: 'https://docs.example.com' };
const SECRET_32 = 'rules-token-secret-of-32-chars!!';

const dir = mkdtempSync(join(tmpdir(), 'docreq-config-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Every message a configuration carries, as one text. */
function messages(config: Config): string {
  return [JSON.stringify(config.problems), config.sendingDisabled ?? '', JSON.stringify(config.callsDisabled ?? [])].join('\n');
}

describe('valueShape: length and kinds of characters, never the value', () => {
  it.each([
    ['abc', 'a 3-character value of letters (not shown)'],
    ['ABC', 'a 3-character value of letters (not shown)'],
    ['123', 'a 3-character value of digits (not shown)'],
    ['-_ ', 'a 3-character value of other characters (not shown)'],
    ['Ab9', 'a 3-character value of letters, digits (not shown)'],
    ['a.b', 'a 3-character value of letters, other characters (not shown)'],
    ['1.5', 'a 3-character value of digits, other characters (not shown)'],
    ['\u{1F600}', 'a 1-character value of other characters (not shown)'],
  ])('%j is %s', (text, shape) => {
    expect(valueShape(text)).toBe(shape);
  });
});

describe('isLoopbackHost', () => {
  it.each(['localhost', 'LocalHost', '[::1]', '::1', 'app.localhost', 'A.B.LOCALHOST', '127.0.0.1', '127.255.255.254', '127.0.0.0'])(
    '%s is loopback',
    (host) => {
      expect(isLoopbackHost(host)).toBe(true);
    },
  );

  it.each([
    'example.com',
    'localhost.example.com',
    'xlocalhost',
    'localhost.',
    '127.example.com',
    '127.0.0.1.example.com',
    '128.0.0.1',
    '10.0.0.1',
    '1.2.3.127',
    '0.0.0.0',
    '::2',
    '[::2]',
    '::ffff:127.0.0.1',
    '',
  ])('%j is not loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('checkBaseUrl: the rules beyond config-units', () => {
  it.each([
    ['HTTPS://Docs.Example.COM/Path/', 'https://docs.example.com/Path'],
    ['https://docs.example.com:443/', 'https://docs.example.com'],
    ['https://docs.example.com:8443', 'https://docs.example.com:8443'],
    ['https://docs.example.com/a//b/', 'https://docs.example.com/a//b'],
    ['https://docs.example.com/xapi/v1', 'https://docs.example.com/xapi/v1'],
    ['https://docs.example.com/api/v1x', 'https://docs.example.com/api/v1x'],
    ['http://localhost', 'http://localhost'],
    ['http://LOCALHOST:8080/base/', 'http://localhost:8080/base'],
    ['http://app.localhost:3000', 'http://app.localhost:3000'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://127.200.1.1/', 'http://127.200.1.1'],
    ['http://[::1]/', 'http://[::1]'],
    ['https://10.1.2.3/', 'https://10.1.2.3'],
  ])('accepts %s as %s', (text, url) => {
    expect(checkBaseUrl(text)).toEqual({ ok: true, url });
  });

  it.each([
    ['docs.example.com', 'is not a URL (expected e.g. https://docs.example.com)'],
    ['', 'is not a URL (expected e.g. https://docs.example.com)'],
    ['ftp://docs.example.com', 'uses ftp: (expected https://)'],
    ['ws://docs.example.com', 'uses ws: (expected https://)'],
    ['file:///etc/passwd', 'uses file: (expected https://)'],
    ['http://docs.example.com', 'must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1)'],
    ['http://10.0.0.1', 'must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1)'],
    ['http://0.0.0.0:8080', 'must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1)'],
    ['http://localhost.example.com', 'must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1)'],
    ['http://[::ffff:127.0.0.1]/', 'must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1)'],
    ['http://user:pw@localhost', 'must not carry a user name or password'],
    ['https://docs.example.com/api/v1?key=x', 'must not carry a query (?...)'],
    ['http://localhost/#', 'must not carry a fragment (#...)'],
    ['https://docs.example.com/api/v1', 'ends in /api/v1, which is added to it: set it to https://docs.example.com'],
    ['https://docs.example.com/api/v1/', 'ends in /api/v1, which is added to it: set it to https://docs.example.com'],
    ['https://docs.example.com/Api/V1///', 'ends in /api/v1, which is added to it: set it to https://docs.example.com'],
    ['https://docs.example.com/api/v1/x/api/v1', 'ends in /api/v1, which is added to it: set it to https://docs.example.com/api/v1/x'],
    ['http://127.0.0.1:9/firm/api/v1', 'ends in /api/v1, which is added to it: set it to http://127.0.0.1:9/firm'],
  ])('refuses %j: %s', (text, reason) => {
    expect(checkBaseUrl(text)).toEqual({ ok: false, reason });
  });

  it('checks the scheme before the user, the user before the query, the query before the fragment and /api/v1 last', () => {
    expect(checkBaseUrl('http://user:pw@docs.example.com/?a#b')).toEqual({
      ok: false,
      reason: 'must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1)',
    });
    expect(checkBaseUrl('https://user:pw@docs.example.com/api/v1?a#b')).toEqual({ ok: false, reason: 'must not carry a user name or password' });
    expect(checkBaseUrl('https://docs.example.com/api/v1?a#b')).toEqual({ ok: false, reason: 'must not carry a query (?...)' });
    expect(checkBaseUrl('https://docs.example.com/api/v1#b')).toEqual({ ok: false, reason: 'must not carry a fragment (#...)' });
  });
});

describe('secretFromFile', () => {
  it('a folder cannot be read (EISDIR); a missing file without a hint ends at the code; a file of white space is empty', () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    expect(secretFromFile(folder, 'DOCREQ_API_KEY_FILE')).toEqual({ problem: 'DOCREQ_API_KEY_FILE names a file that cannot be read (EISDIR).' });
    expect(secretFromFile(join(dir, 'missing'), 'SOME_FILE')).toEqual({ problem: 'SOME_FILE names a file that cannot be read (ENOENT).' });
    expect(secretFromFile(file('blank', '\t \n\n'), 'SOME_FILE', '; hint')).toEqual({ problem: 'SOME_FILE names a file that is empty.' });
    expect(secretFromFile(file('inner', '\n two words \n'), 'SOME_FILE')).toEqual({ value: 'two words' });
  });
});

describe('readSettings, settingValue and settingDefault', () => {
  it('keeps the flags and environment it was given; a boolean flag reads as its text; the flag wins even when false', () => {
    const flags = { readOnly: false, sandbox: true };
    const env = { DOCREQ_READ_ONLY: 'on', DOCREQ_SANDBOX: 'off' };
    const reading = readSettings(flags, env);
    expect(reading.flags).toBe(flags);
    expect(reading.env).toBe(env);
    expect(reading.text('readOnly')).toBe('false');
    expect(reading.text('sandbox')).toBe('true');
    expect(loadConfig(flags, env).readOnly).toBe(false);
    expect(loadConfig({ readOnly: true }, { DOCREQ_READ_ONLY: 'off' }).readOnly).toBe(true);
  });

  it('the environment as given (not trimmed), the default when unset or empty, undefined when there is neither', () => {
    expect(readSettings({}, { DOCREQ_LOG_LEVEL: ' DEBUG ' }).text('logLevel')).toBe(' DEBUG ');
    expect(readSettings({}, {}).text('logLevel')).toBe('info');
    expect(readSettings({}, { DOCREQ_LOG_LEVEL: '' }).text('logLevel')).toBe('info');
    expect(readSettings({}, {}).text('apiKey')).toBeUndefined();
    expect(readSettings({}, { DOCREQ_API_KEY: '' }).text('apiKey')).toBeUndefined();
    expect(readSettings({ logLevel: undefined }, { DOCREQ_LOG_LEVEL: 'warn' }).text('logLevel')).toBe('warn');
  });

  it('without arguments it reads no flags and the process environment', () => {
    expect(processEnvironment()).toBe(process.env);
    const reading = readSettings();
    expect(reading.flags).toEqual({});
    expect(reading.env).toBe(process.env);
  });

  it('settingValue: unset is no value and no problem; a value as the schema reads it; a problem with no value', () => {
    expect(settingValue(readSettings({}, {}), 'templatesFile')).toStrictEqual({ value: undefined });
    expect(settingValue(readSettings({}, { DOCREQ_TIMEOUT_MS: ' 1e3 ' }), 'timeoutMs')).toStrictEqual({ value: 1000 });
    expect(settingValue(readSettings({}, { DOCREQ_CONFIRM_SEND: ' Never ' }), 'confirmSend')).toStrictEqual({ value: 'never' });
    expect(settingValue(readSettings({}, { DOCREQ_TIMEOUT_MS: 'soon' }), 'timeoutMs')).toStrictEqual({
      value: undefined,
      problem: 'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a number from 100 to 600000: got a 4-character value of letters (not shown).',
    });
    expect(settingValue(readSettings({}, { DOCREQ_AUTH_SESSION_HOURS: '0' }), 'authSessionHours')).toStrictEqual({
      value: undefined,
      problem: 'DOCREQ_AUTH_SESSION_HOURS must be a whole number from 1 to 168: got a 1-character value of digits (not shown).',
    });
  });

  it('settingDefault: each default as its schema reads it', () => {
    expect(settingDefault('confirmSend')).toBe('auto');
    expect(settingDefault('timeoutMs')).toBe(30_000);
    expect(settingDefault('maxResponseMb')).toBe(256);
    expect(settingDefault('logLevel')).toBe('info');
    expect(settingDefault('readOnly')).toBe(false);
    expect(settingDefault('sandbox')).toBe(false);
    expect(settingDefault('transport')).toBe('stdio');
    expect(settingDefault('httpPort')).toBe(8787);
    expect(settingDefault('rateLimit')).toBe(120);
    expect(settingDefault('allowedHosts')).toEqual(['localhost', '127.0.0.1', '[::1]']);
  });
});

describe('startMode', () => {
  it('stdio by default: no problem, no team, no sign-in, no sandbox', () => {
    expect(startMode(readSettings({}, {}))).toStrictEqual({ transport: 'stdio', team: false, oauth: false, sandbox: false });
  });

  it('the flag wins; http is team mode; oauth is sign-in, bearer is not', () => {
    expect(
      startMode(readSettings({ transport: 'http', sandbox: false }, { DOCREQ_TRANSPORT: 'stdio', DOCREQ_AUTH: 'bearer', DOCREQ_SANDBOX: 'on' })),
    ).toStrictEqual({
      transport: 'http',
      team: true,
      oauth: false,
      sandbox: false,
    });
    expect(startMode(readSettings({ sandbox: true }, { DOCREQ_TRANSPORT: 'STDIO' }))).toStrictEqual({
      transport: 'stdio',
      team: false,
      oauth: false,
      sandbox: true,
    });
    expect(startMode(readSettings({ auth: 'OAUTH' }, { DOCREQ_AUTH: 'bearer', DOCREQ_SANDBOX: '1' }))).toStrictEqual({
      transport: 'stdio',
      team: false,
      oauth: true,
      sandbox: true,
    });
  });

  it('an unreadable transport is neither mode, named in words; an unreadable sign-in or sandbox counts as off', () => {
    expect(startMode(readSettings({}, { DOCREQ_TRANSPORT: 'udp', DOCREQ_AUTH: 'saml', DOCREQ_SANDBOX: 'maybe' }))).toStrictEqual({
      transport: undefined,
      transportProblem: 'DOCREQ_TRANSPORT (or --transport) must be one of "stdio", "http": got a 3-character value of letters (not shown).',
      team: false,
      oauth: false,
      sandbox: false,
    });
  });
});

describe('loadConfig: defaults and accepted values', () => {
  it('the whole configuration from the key and the address alone', () => {
    expect(loadConfig(undefined, BASE)).toStrictEqual({
      api: { apiKey: KEY, baseUrl: 'https://docs.example.com' },
      readOnly: false,
      confirmSend: 'auto',
      timeoutMs: 30_000,
      maxResponseMb: 256,
      logLevel: 'info',
      templatesFile: undefined,
      tokenSecret: undefined,
      serviceProfile: DEFAULT_PROFILE,
      store: { backend: 'file', stateDir: undefined, url: undefined },
      sendingDisabled: undefined,
      problems: [],
      callsDisabled: [],
    });
  });

  it('every setting given, read as its schema reads it', () => {
    const profile = file('profile.json', '{"body": {"client": "client_id"}}');
    const config = loadConfig(
      {},
      {
        ...BASE,
        DOCREQ_BASE_URL: 'https://docs.example.com/firm/',
        DOCREQ_READ_ONLY: ' YES ',
        DOCREQ_CONFIRM_SEND: 'Person',
        DOCREQ_TIMEOUT_MS: '100',
        DOCREQ_MAX_RESPONSE_MB: '1.5',
        DOCREQ_LOG_LEVEL: 'DEBUG',
        DOCREQ_TEMPLATES_FILE: '/srv/templates.yaml',
        DOCREQ_TOKEN_SECRET: SECRET_32,
        DOCREQ_SERVICE_PROFILE: profile,
        DOCREQ_STORE: 'Memory',
        DOCREQ_STATE_DIR: '/var/lib/docreq',
        DOCREQ_STORE_URL: ' redis://cache:6379 ',
      },
    );
    expect(config).toMatchObject({
      api: { apiKey: KEY, baseUrl: 'https://docs.example.com/firm' },
      readOnly: true,
      confirmSend: 'person',
      timeoutMs: 100,
      maxResponseMb: 1.5,
      logLevel: 'debug',
      templatesFile: '/srv/templates.yaml',
      tokenSecret: SECRET_32,
      store: { backend: 'memory', stateDir: '/var/lib/docreq', url: 'redis://cache:6379' },
      sendingDisabled: undefined,
      problems: [],
      callsDisabled: [],
    });
    expect(config.serviceProfile).toBeDefined();
    expect(config.serviceProfile).not.toBe(DEFAULT_PROFILE);
    expect(config.serviceProfile?.body({ clientId: 'c1', title: 't', items: [] })).toHaveProperty('client_id', 'c1');
  });

  it.each([
    ['1', true],
    ['true', true],
    ['On', true],
    ['yes', true],
    ['0', false],
    ['false', false],
    ['OFF', false],
    [' no ', false],
  ])('DOCREQ_READ_ONLY=%j is %s', (text, readOnly) => {
    const config = loadConfig({}, { ...BASE, DOCREQ_READ_ONLY: text });
    expect(config.readOnly).toBe(readOnly);
    expect(config.problems).toEqual([]);
  });

  it.each(['auto', 'person', 'always', 'never'] as const)('DOCREQ_CONFIRM_SEND=%s', (mode) => {
    expect(loadConfig({}, { ...BASE, DOCREQ_CONFIRM_SEND: mode.toUpperCase() })).toMatchObject({ confirmSend: mode, problems: [], sendingDisabled: undefined });
  });

  it.each(['error', 'warn', 'info', 'debug'] as const)('DOCREQ_LOG_LEVEL=%s', (level) => {
    expect(loadConfig({}, { ...BASE, DOCREQ_LOG_LEVEL: ` ${level} ` })).toMatchObject({ logLevel: level, problems: [] });
  });

  it.each([
    ['100', 100],
    ['101', 101],
    ['599999', 599_999],
    ['600000', 600_000],
  ])('DOCREQ_TIMEOUT_MS=%s is read', (text, ms) => {
    expect(loadConfig({}, { ...BASE, DOCREQ_TIMEOUT_MS: text })).toMatchObject({ timeoutMs: ms, problems: [], callsDisabled: [] });
  });

  it.each([
    ['1', 1],
    ['1.01', 1.01],
    ['4095.5', 4095.5],
    ['4096', 4096],
  ])('DOCREQ_MAX_RESPONSE_MB=%s is read', (text, mb) => {
    expect(loadConfig({}, { ...BASE, DOCREQ_MAX_RESPONSE_MB: text })).toMatchObject({ maxResponseMb: mb, problems: [], callsDisabled: [] });
  });

  it('a token secret of exactly 32 characters is enough, and kept as given', () => {
    const secret = ` ${'x'.repeat(30)} `;
    expect(loadConfig({}, { ...BASE, DOCREQ_TOKEN_SECRET: secret })).toMatchObject({ tokenSecret: secret, problems: [], sendingDisabled: undefined });
  });

  it('the store: file by default, redis implied by a URL, the named store wins over the URL', () => {
    expect(loadConfig({}, { ...BASE, DOCREQ_STORE_URL: 'REDISS://cache:6380/1' })).toMatchObject({
      store: { backend: 'redis', url: 'REDISS://cache:6380/1' },
      problems: [],
      sendingDisabled: undefined,
    });
    expect(loadConfig({}, { ...BASE, DOCREQ_STORE: 'redis', DOCREQ_STORE_URL: 'redis://cache' })).toMatchObject({
      store: { backend: 'redis', url: 'redis://cache' },
      problems: [],
    });
    expect(loadConfig({}, { ...BASE, DOCREQ_STORE: 'file', DOCREQ_STORE_URL: 'redis://cache' }).store.backend).toBe('file');
    expect(loadConfig({}, { ...BASE, DOCREQ_STORE: 'memory' })).toMatchObject({ store: { backend: 'memory', url: undefined }, problems: [] });
    expect(loadConfig({ store: 'memory' }, { ...BASE, DOCREQ_STORE: 'file' }).store.backend).toBe('memory');
  });

  it('an empty service profile file keeps the defaults and allows sending', () => {
    const config = loadConfig({}, { ...BASE, DOCREQ_SERVICE_PROFILE: file('empty-profile.json', '{}') });
    expect(config.problems).toEqual([]);
    expect(config.sendingDisabled).toBeUndefined();
    expect(config.serviceProfile?.body({ clientId: 'c1', title: 't', items: [] })).toHaveProperty('clientId', 'c1');
  });
});

describe('loadConfig: a safety setting or a store that cannot be read disables sending (reads and other calls go on)', () => {
  it.each([
    [
      'DOCREQ_READ_ONLY',
      'maybe',
      'DOCREQ_READ_ONLY (or --read-only) must be one of "0", "1", "true", "false", "yes", "no", "on", "off", "": got a 5-character value of letters (not shown).',
    ],
    [
      'DOCREQ_READ_ONLY',
      '2',
      'DOCREQ_READ_ONLY (or --read-only) must be one of "0", "1", "true", "false", "yes", "no", "on", "off", "": got a 1-character value of digits (not shown).',
    ],
    [
      'DOCREQ_CONFIRM_SEND',
      'sometimes',
      'DOCREQ_CONFIRM_SEND (or --confirm-send) must be one of "auto", "person", "always", "never": got a 9-character value of letters (not shown).',
    ],
    [
      'DOCREQ_TOKEN_SECRET',
      'y'.repeat(31),
      'DOCREQ_TOKEN_SECRET must be at least 32 characters (e.g. openssl rand -hex 32): got a 31-character value of letters (not shown).',
    ],
    [
      'DOCREQ_TOKEN_SECRET',
      '   ',
      'DOCREQ_TOKEN_SECRET must be at least 32 characters (e.g. openssl rand -hex 32): got a 3-character value of other characters (not shown).',
    ],
    ['DOCREQ_STORE', 'disk', 'DOCREQ_STORE (or --store) must be one of "file", "redis", "memory": got a 4-character value of letters (not shown).'],
    ['DOCREQ_STATE_DIR', '  ', 'DOCREQ_STATE_DIR (or --state-dir) is empty: got a 2-character value of other characters (not shown).'],
    [
      'DOCREQ_STORE_URL',
      'http://cache:6379',
      'DOCREQ_STORE_URL must be a redis:// or rediss:// URL: got a 17-character value of letters, digits, other characters (not shown).',
    ],
    ['DOCREQ_STORE_URL', 'redis://', 'DOCREQ_STORE_URL must be a redis:// or rediss:// URL: got a 8-character value of letters, other characters (not shown).'],
    [
      'DOCREQ_STORE_URL',
      'redis://a b',
      'DOCREQ_STORE_URL must be a redis:// or rediss:// URL: got a 11-character value of letters, other characters (not shown).',
    ],
    [
      'DOCREQ_STORE_URL',
      'xredis://cache',
      'DOCREQ_STORE_URL must be a redis:// or rediss:// URL: got a 14-character value of letters, other characters (not shown).',
    ],
    ['DOCREQ_SERVICE_PROFILE', ' ', 'DOCREQ_SERVICE_PROFILE (or --service-profile) is empty: got a 1-character value of other characters (not shown).'],
  ])('%s=%j: sending disabled with the one problem, the calls and the connection untouched', (name, value, problem) => {
    const config = loadConfig({}, { ...BASE, [name]: value });
    expect(config.problems).toEqual([problem]);
    expect(config.sendingDisabled).toBe(problem);
    expect(config.callsDisabled).toEqual([]);
    expect(config.api).toEqual({ apiKey: KEY, baseUrl: 'https://docs.example.com' });
  });

  it('each unreadable safety setting falls back to the safe side: read-only on, confirmation auto, no token secret, the default store', () => {
    const config = loadConfig(
      {},
      {
        ...BASE,
        DOCREQ_READ_ONLY: 'maybe',
        DOCREQ_CONFIRM_SEND: 'nope',
        DOCREQ_TOKEN_SECRET: 'short',
        DOCREQ_STORE: 'disk',
        DOCREQ_STATE_DIR: ' ',
        DOCREQ_STORE_URL: 'http://x',
      },
    );
    expect(config).toMatchObject({
      readOnly: true,
      confirmSend: 'auto',
      tokenSecret: undefined,
      store: { backend: 'file', stateDir: undefined, url: undefined },
      serviceProfile: DEFAULT_PROFILE,
    });
    expect(config.problems).toHaveLength(6);
    expect(config.sendingDisabled).toBe(config.problems.join(' '));
  });

  it('an unreadable store name with a store URL falls back to redis (the URL implies it)', () => {
    const config = loadConfig({}, { ...BASE, DOCREQ_STORE: 'disk', DOCREQ_STORE_URL: 'redis://cache' });
    expect(config.store.backend).toBe('redis');
    expect(config.sendingDisabled).toContain('DOCREQ_STORE (or --store)');
  });

  it('redis with an unreadable URL: both problems, in order, in the one reason; the memory store stands in', () => {
    const config = loadConfig({}, { ...BASE, DOCREQ_STORE: 'REDIS', DOCREQ_STORE_URL: 'memcached://cache' });
    const url = 'DOCREQ_STORE_URL must be a redis:// or rediss:// URL: got a 17-character value of letters, other characters (not shown).';
    const missing = 'DOCREQ_STORE is redis, but DOCREQ_STORE_URL is not set: set it to redis://host:6379 (or rediss://).';
    expect(config.problems).toEqual([url, missing]);
    expect(config.sendingDisabled).toBe(`${url} ${missing}`);
    expect(config.store).toEqual({ backend: 'memory', stateDir: undefined, url: undefined });
    expect(config.callsDisabled).toEqual([]);
  });

  it('a service profile that cannot be used: named with the reason, sending disabled, the defaults kept for reading', () => {
    const folder = join(dir, 'profile-folder');
    mkdirSync(folder);
    const cases: [string, string][] = [
      [folder, 'is not a regular file'],
      [file('bad.json', '{"body": '), 'is not valid JSON'],
      [file('bad-name.json', '{"body": {"sk_live_secret": 1,}}'), 'is not valid JSON (at position 30'],
      [file('unknown.json', '{"colour": "red"}'), 'has problems: (the whole file): has a field it does not know: colour'],
      [file('big.json', `{"x": "${'a'.repeat(256 * 1024)}"}`), 'is larger than 256 KB'],
    ];
    for (const [path, why] of cases) {
      const config = loadConfig({}, { ...BASE, DOCREQ_SERVICE_PROFILE: path });
      expect(config.problems).toHaveLength(1);
      expect(config.problems[0]).toContain(`DOCREQ_SERVICE_PROFILE (${path}) ${why}`);
      expect(config.problems[0]).toMatch(/; sending is disabled until it is fixed\.$/);
      expect(config.sendingDisabled).toBe(config.problems[0]);
      expect(config.callsDisabled).toEqual([]);
      expect(config.serviceProfile).toBe(DEFAULT_PROFILE);
      expect(config.api).toBeDefined();
    }
    // Node's own message quotes the start of the text; only where it went wrong is kept.
    // (Node 22 and later add the line and column.)
    const quoted = loadConfig({}, { ...BASE, DOCREQ_SERVICE_PROFILE: file('quoted.json', '{sk_live_secret') }).problems[0];
    expect([
      `DOCREQ_SERVICE_PROFILE (${join(dir, 'quoted.json')}) is not valid JSON (at position 1); sending is disabled until it is fixed.`,
      `DOCREQ_SERVICE_PROFILE (${join(dir, 'quoted.json')}) is not valid JSON (at position 1 (line 1 column 2)); sending is disabled until it is fixed.`,
    ]).toContain(quoted);
  });

  it('a service profile path that names no file: the value is not echoed (a key pasted there instead of a path reaches no log)', () => {
    const pasted = 'sk_live_0123456789abcdef';
    const config = loadConfig({}, { ...BASE, DOCREQ_SERVICE_PROFILE: pasted });
    expect(config.problems).toEqual([
      'DOCREQ_SERVICE_PROFILE must be the path of the profile file (the value set is not shown), and names a file that cannot be read (ENOENT); sending is disabled until it is fixed.',
    ]);
    expect(config.sendingDisabled).toBe(config.problems[0]);
    expect(config.serviceProfile).toBe(DEFAULT_PROFILE);
  });
});

describe('loadConfig: another setting that cannot be read stops the calls, and does not disable sending on its own', () => {
  it.each([
    [
      'DOCREQ_TIMEOUT_MS',
      '99',
      'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a whole number from 100 to 600000: got a 2-character value of digits (not shown).',
    ],
    [
      'DOCREQ_TIMEOUT_MS',
      '600001',
      'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a whole number from 100 to 600000: got a 6-character value of digits (not shown).',
    ],
    [
      'DOCREQ_TIMEOUT_MS',
      '1000.5',
      'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a whole number from 100 to 600000: got a 6-character value of digits, other characters (not shown).',
    ],
    [
      'DOCREQ_TIMEOUT_MS',
      'Infinity',
      'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a number from 100 to 600000: got a 8-character value of letters (not shown).',
    ],
    [
      'DOCREQ_MAX_RESPONSE_MB',
      '0.99',
      'DOCREQ_MAX_RESPONSE_MB (or --max-response-mb) must be a number from 1 to 4096: got a 4-character value of digits, other characters (not shown).',
    ],
    [
      'DOCREQ_MAX_RESPONSE_MB',
      '4096.01',
      'DOCREQ_MAX_RESPONSE_MB (or --max-response-mb) must be a number from 1 to 4096: got a 7-character value of digits, other characters (not shown).',
    ],
    [
      'DOCREQ_MAX_RESPONSE_MB',
      'lots',
      'DOCREQ_MAX_RESPONSE_MB (or --max-response-mb) must be a number from 1 to 4096: got a 4-character value of letters (not shown).',
    ],
    [
      'DOCREQ_LOG_LEVEL',
      'trace',
      'DOCREQ_LOG_LEVEL (or --log-level) must be one of "error", "warn", "info", "debug": got a 5-character value of letters (not shown).',
    ],
    ['DOCREQ_TEMPLATES_FILE', '  ', 'DOCREQ_TEMPLATES_FILE (or --templates) is empty: got a 2-character value of other characters (not shown).'],
  ])('%s=%j: the calls stop, with the one problem; sending is not disabled by it', (name, value, problem) => {
    const config = loadConfig({}, { ...BASE, [name]: value });
    expect(config.problems).toEqual([problem]);
    expect(config.callsDisabled).toEqual([problem]);
    expect(config.sendingDisabled).toBeUndefined();
    expect(config).toMatchObject({ timeoutMs: 30_000, maxResponseMb: 256, logLevel: 'info', templatesFile: undefined, readOnly: false });
  });

  it('a value zod finds wrong twice in the same words (too big for a whole number and for the range): said once', () => {
    const [problem] = loadConfig({}, { ...BASE, DOCREQ_TIMEOUT_MS: '1e16' }).callsDisabled ?? [];
    const [rules, shape] = problem!.replace('DOCREQ_TIMEOUT_MS (or --timeout-ms) ', '').split(': got ');
    expect(shape).toBe('a 4-character value of letters, digits (not shown).');
    expect(rules).toBe('must be a whole number from 100 to 600000');
  });

  it('the flag is named beside the variable, and a value given by flag is judged the same', () => {
    expect(loadConfig({ timeoutMs: '50' }, BASE).callsDisabled).toEqual([
      'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a whole number from 100 to 600000: got a 2-character value of digits (not shown).',
    ]);
    expect(loadConfig({ confirmSend: 'x' }, BASE).sendingDisabled).toBe(
      'DOCREQ_CONFIRM_SEND (or --confirm-send) must be one of "auto", "person", "always", "never": got a 1-character value of letters (not shown).',
    );
  });
});

describe('loadConfig: the key and the address only leave the connection unset (neither list of disabled things)', () => {
  it('a blank key: that it is empty, not that it is missing', () => {
    const config = loadConfig({}, { ...BASE, DOCREQ_API_KEY: ' \t ' });
    expect(config.problems).toEqual(['DOCREQ_API_KEY is empty: got a 3-character value of other characters (not shown).']);
    expect(config).toMatchObject({ api: undefined, sendingDisabled: undefined, callsDisabled: [] });
  });

  it('a blank key file: that it is empty, and that no key is set', () => {
    const config = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, DOCREQ_API_KEY_FILE: '  ' });
    expect(config.problems).toEqual(['DOCREQ_API_KEY_FILE is empty: got a 2-character value of other characters (not shown).', KEY_MISSING]);
    expect(config).toMatchObject({ api: undefined, sendingDisabled: undefined, callsDisabled: [] });
  });

  it('a key file that is empty, or a folder: named without the hint or with it', () => {
    const empty = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, DOCREQ_API_KEY_FILE: file('empty-key', '\n') });
    expect(empty.problems).toEqual(['DOCREQ_API_KEY_FILE names a file that is empty.']);
    expect(empty.api).toBeUndefined();
    const folder = join(dir, 'key-folder');
    mkdirSync(folder);
    const config = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, DOCREQ_API_KEY_FILE: folder });
    expect(config.problems).toEqual([
      'DOCREQ_API_KEY_FILE names a file that cannot be read (EISDIR); it must be the path of a file holding the key (to give the key itself, use DOCREQ_API_KEY).',
    ]);
    expect(config).toMatchObject({ api: undefined, sendingDisabled: undefined, callsDisabled: [] });
  });

  it('a key from a file with white space inside is refused like one set directly', () => {
    const config = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, DOCREQ_API_KEY_FILE: file('spaced-key', 'drk_one\tdrk_two\n') });
    expect(config.problems).toEqual(['DOCREQ_API_KEY contains white space: set it to the key alone.']);
    expect(config.api).toBeUndefined();
  });

  it('a blank address: that it is empty, not that it is missing; a refused one names the variable and the flag', () => {
    const blank = loadConfig({}, { ...BASE, DOCREQ_BASE_URL: '   ' });
    expect(blank.problems).toEqual(['DOCREQ_BASE_URL (or --base-url) is empty: got a 3-character value of other characters (not shown).']);
    expect(blank).toMatchObject({ api: undefined, sendingDisabled: undefined, callsDisabled: [] });
    const refused = loadConfig({ baseUrl: 'http://docs.example.com' }, BASE);
    expect(refused.problems).toEqual(['DOCREQ_BASE_URL (or --base-url) must use https:// (plain http is allowed only for localhost, 127.0.0.0/8 and ::1).']);
    expect(refused).toMatchObject({ api: undefined, sendingDisabled: undefined, callsDisabled: [] });
  });

  it('the connection needs both: a key without an address, or an address without a key, is no connection', () => {
    expect(loadConfig({}, { DOCREQ_API_KEY: KEY }).api).toBeUndefined();
    expect(loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL }).api).toBeUndefined();
    expect(loadConfig({}, {}).problems).toEqual([
      KEY_MISSING,
      'DOCREQ_BASE_URL is not set: set it (or --base-url) to the service address, e.g. https://docs.example.com.',
    ]);
    expect(KEY_MISSING).toBe("DOCREQ_API_KEY is not set: set it to the firm's API key (or DOCREQ_API_KEY_FILE to a file holding it).");
  });

  it('every problem at once, in the order the settings are read; each kind in its own list', () => {
    const config = loadConfig(
      {},
      {
        DOCREQ_READ_ONLY: 'x',
        DOCREQ_TOKEN_SECRET: 'x',
        DOCREQ_CONFIRM_SEND: 'x',
        DOCREQ_TIMEOUT_MS: 'x',
        DOCREQ_MAX_RESPONSE_MB: 'x',
        DOCREQ_LOG_LEVEL: 'x',
        DOCREQ_TEMPLATES_FILE: ' ',
        DOCREQ_SERVICE_PROFILE: ' ',
        DOCREQ_STORE_URL: 'x',
        DOCREQ_STATE_DIR: ' ',
        DOCREQ_STORE: 'x',
        DOCREQ_API_KEY: ' ',
        DOCREQ_BASE_URL: ' ',
      },
    );
    const names = config.problems.map((p) => /^DOCREQ_[A-Z_]+/.exec(p)?.[0]);
    expect(names).toEqual([
      'DOCREQ_READ_ONLY',
      'DOCREQ_TOKEN_SECRET',
      'DOCREQ_CONFIRM_SEND',
      'DOCREQ_TIMEOUT_MS',
      'DOCREQ_MAX_RESPONSE_MB',
      'DOCREQ_LOG_LEVEL',
      'DOCREQ_TEMPLATES_FILE',
      'DOCREQ_SERVICE_PROFILE',
      'DOCREQ_STORE_URL',
      'DOCREQ_STATE_DIR',
      'DOCREQ_STORE',
      'DOCREQ_API_KEY',
      'DOCREQ_BASE_URL',
    ]);
    const [readOnly, token, confirm, timeout, maxMb, logLevel, templates, profile, storeUrl, stateDir, store] = config.problems;
    expect(config.sendingDisabled).toBe([readOnly, token, confirm, profile, storeUrl, stateDir, store].join(' '));
    expect(config.callsDisabled).toEqual([timeout, maxMb, logLevel, templates]);
    expect(config.api).toBeUndefined();
  });
});

describe('no secret in any message', () => {
  it('secrets refused: a key with white space, a short token secret, a store URL with a password, an address with one', () => {
    const config = loadConfig(
      {},
      {
        DOCREQ_API_KEY: 'drk_live SECRETKEY0001',
        DOCREQ_TOKEN_SECRET: 'SECRETTOKEN0002',
        DOCREQ_STORE_URL: 'http://:SECRETPASS0003@cache:6379',
        DOCREQ_BASE_URL: 'https://admin:SECRETPASS0004@docs.example.com/api/v1?token=SECRETQUERY0005',
      },
    );
    expect(config.problems).toHaveLength(4);
    const text = messages(config);
    for (const secret of ['SECRETKEY0001', 'SECRETTOKEN0002', 'SECRETPASS0003', 'SECRETPASS0004', 'admin', 'SECRETQUERY0005'])
      expect(text).not.toContain(secret);
    expect(text).toContain('DOCREQ_BASE_URL (or --base-url) must not carry a user name or password.');
  });

  it('secrets accepted, beside other settings that cannot be read: none of them in a message', () => {
    const config = loadConfig(
      {},
      {
        DOCREQ_API_KEY: 'drk_live_SECRETKEY0011',
        DOCREQ_BASE_URL: 'https://docs.example.com',
        DOCREQ_TOKEN_SECRET: 'SECRETTOKEN0012-SECRETTOKEN0012-',
        DOCREQ_STORE: 'redis',
        DOCREQ_STORE_URL: 'rediss://default:SECRETPASS0013@cache:6380',
        DOCREQ_READ_ONLY: 'maybe',
        DOCREQ_TIMEOUT_MS: 'soon',
      },
    );
    expect(config.problems).toHaveLength(2);
    expect(config.api?.apiKey).toBe('drk_live_SECRETKEY0011');
    const text = messages(config);
    for (const secret of ['SECRETKEY0011', 'SECRETTOKEN0012', 'SECRETPASS0013']) expect(text).not.toContain(secret);
  });

  it('a secret pasted into the wrong setting is described by its shape only', () => {
    const pasted = 'drk_live_PASTED0021';
    for (const name of [
      'DOCREQ_READ_ONLY',
      'DOCREQ_CONFIRM_SEND',
      'DOCREQ_TIMEOUT_MS',
      'DOCREQ_MAX_RESPONSE_MB',
      'DOCREQ_LOG_LEVEL',
      'DOCREQ_STORE',
      'DOCREQ_STORE_URL',
      'DOCREQ_BASE_URL',
      'DOCREQ_API_KEY_FILE',
    ]) {
      const config = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, [name]: pasted });
      expect(config.problems.length).toBeGreaterThan(0);
      expect(messages(config)).not.toContain('PASTED0021');
    }
    expect(loadConfig({}, { ...BASE, DOCREQ_TIMEOUT_MS: pasted }).problems).toEqual([
      'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a number from 100 to 600000: got a 19-character value of letters, digits, other characters (not shown).',
    ]);
  });
});

describe('secretsOf: the rules beyond config-units', () => {
  const store = (url: string | undefined) => ({ backend: 'redis' as const, stateDir: undefined, url });

  it('a password of 4 characters counts, one of 3 does not; a URL without a password adds nothing', () => {
    expect(secretsOf({ api: undefined, tokenSecret: undefined, store: store('redis://user:abcd@cache:6379') })).toEqual([
      'redis://user:abcd@cache:6379',
      'abcd',
      'abcd',
    ]);
    expect(secretsOf({ api: undefined, tokenSecret: undefined, store: store('redis://user:abc@cache:6379') })).toEqual(['redis://user:abc@cache:6379']);
    expect(secretsOf({ api: undefined, tokenSecret: undefined, store: store('redis://cache:6379') })).toEqual(['redis://cache:6379']);
  });

  it('a key or token secret of 4 characters counts, of 3 does not; an empty store URL is none', () => {
    expect(secretsOf({ api: { apiKey: 'abcd', baseUrl: 'https://x' }, tokenSecret: 'wxyz', store: store('') })).toEqual(['abcd', 'wxyz']);
    expect(secretsOf({ api: { apiKey: 'abc', baseUrl: 'https://x' }, tokenSecret: 'xyz', store: store(undefined) })).toEqual([]);
  });

  it('a configuration without a store gives the key and the token secret', () => {
    const partial = { api: { apiKey: KEY, baseUrl: 'https://x' }, tokenSecret: SECRET_32 } as Pick<Config, 'api' | 'tokenSecret' | 'store'>;
    expect(secretsOf(partial)).toEqual([KEY, SECRET_32]);
  });

  it('from loadConfig: the key read from a file is a secret too', () => {
    const config = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, DOCREQ_API_KEY_FILE: file('key-for-secrets', `${KEY}\n`) });
    expect(secretsOf(config)).toEqual([KEY]);
  });
});
