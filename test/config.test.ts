import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBaseUrl, loadConfig, readSettings, startMode } from '../src/config.js';
import { loadHttpSettings } from '../src/transport/front-door.js';
import { suiteFolder } from './support/folders.js';

const KEY = 'drk_test_key_1234567890';
const base = { DOCREQ_API_KEY: KEY, DOCREQ_BASE_URL: 'https://docs.example.com' };

describe('configuration', () => {
  it('applies the contract defaults', () => {
    const c = loadConfig({}, base);
    expect(c).toMatchObject({ readOnly: false, confirmSend: 'auto', timeoutMs: 30_000, logLevel: 'info', problems: [] });
    expect(c.api).toEqual({ apiKey: KEY, baseUrl: 'https://docs.example.com' });
  });

  it('lets the flag win over its environment twin', () => {
    const c = loadConfig(
      { timeoutMs: '5000', readOnly: true, baseUrl: 'https://flag.example.com' },
      { ...base, DOCREQ_TIMEOUT_MS: '9000', DOCREQ_READ_ONLY: 'false' },
    );
    expect(c.timeoutMs).toBe(5000);
    expect(c.readOnly).toBe(true);
    expect(c.api?.baseUrl).toBe('https://flag.example.com');
  });

  it('reads the key from DOCREQ_API_KEY_FILE', () => {
    const dir = mkdtempSync(join(suiteFolder(), 'config-'));
    writeFileSync(join(dir, 'key'), `${KEY}\n`);
    const c = loadConfig({}, { DOCREQ_API_KEY_FILE: join(dir, 'key'), DOCREQ_BASE_URL: base.DOCREQ_BASE_URL });
    expect(c.api?.apiKey).toBe(KEY);
    const missing = loadConfig({}, { DOCREQ_API_KEY_FILE: join(dir, 'nope'), DOCREQ_BASE_URL: base.DOCREQ_BASE_URL });
    expect(missing.api).toBeUndefined();
    expect(missing.problems[0]).toContain('cannot be read (ENOENT)');
  });

  it('names the variable for each bad setting and never throws', () => {
    const c = loadConfig({}, { DOCREQ_TIMEOUT_MS: 'soon', DOCREQ_CONFIRM_SEND: 'maybe', DOCREQ_LOG_LEVEL: 'loud', DOCREQ_READ_ONLY: 'perhaps' });
    const text = c.problems.join('\n');
    for (const name of [
      'DOCREQ_API_KEY is not set',
      'DOCREQ_BASE_URL is not set',
      'DOCREQ_TIMEOUT_MS',
      'DOCREQ_CONFIRM_SEND',
      'DOCREQ_LOG_LEVEL',
      'DOCREQ_READ_ONLY',
    ]) {
      expect(text).toContain(name);
    }
    // Fail closed: an unreadable safety setting makes the server safer, never less safe.
    expect(c).toMatchObject({ api: undefined, timeoutMs: 30_000, confirmSend: 'auto', logLevel: 'info', readOnly: true });
    expect(c.sendingDisabled).toContain('DOCREQ_CONFIRM_SEND');
    expect(c.sendingDisabled).toContain('DOCREQ_READ_ONLY');
    // Values are described by their shape, never echoed (one might be a secret in the wrong variable).
    for (const value of ['soon', 'maybe', 'loud', 'perhaps']) expect(text).not.toContain(value);
    expect(text).toContain('a 5-character value of letters (not shown)');
  });

  it("words a number out of range with that setting's own bounds", () => {
    const c = loadConfig({}, { DOCREQ_TIMEOUT_MS: '5', DOCREQ_MAX_RESPONSE_MB: '5000' });
    expect(c.problems).toContain(
      'DOCREQ_TIMEOUT_MS (or --timeout-ms) must be a whole number from 100 to 600000: got a 1-character value of digits (not shown).',
    );
    expect(c.problems).toContain(
      'DOCREQ_MAX_RESPONSE_MB (or --max-response-mb) must be a number from 1 to 4096: got a 4-character value of digits (not shown).',
    );
  });

  it.each([
    ['DOCREQ_READ_ONLY', 'maybe'],
    ['DOCREQ_READ_ONLY', 'ture'],
    ['DOCREQ_CONFIRM_SEND', 'alwys'],
    ['DOCREQ_CONFIRM_SEND', 'nevr'],
    ['DOCREQ_TOKEN_SECRET', 'short'],
  ])('disables sending when %s cannot be read (%s), and leaves other settings alone', (name, value) => {
    const c = loadConfig({}, { ...base, [name]: value });
    expect(c.sendingDisabled).toContain(name);
    expect(c.api).toBeDefined();
    expect(c.problems.join(' ')).not.toContain(value);
  });

  it('never echoes DOCREQ_API_KEY_FILE, which may hold the key itself by mistake', () => {
    const c = loadConfig({}, { DOCREQ_API_KEY_FILE: 'drk_live_0123456789abcdef', DOCREQ_BASE_URL: 'https://x.example.com' });
    expect(c.api).toBeUndefined();
    expect(c.problems.join(' ')).toContain('DOCREQ_API_KEY_FILE names a file that cannot be read');
    expect(c.problems.join(' ')).not.toContain('drk_live_0123456789abcdef');
  });

  it.each([
    ['blank', '   ', 'DOCREQ_API_KEY is empty'],
    ['with white space inside', 'drk_abc def_123456', 'DOCREQ_API_KEY contains white space'],
  ])('refuses a key that is %s, without echoing it', (_, key, problem) => {
    const c = loadConfig({}, { ...base, DOCREQ_API_KEY: key });
    expect(c.api).toBeUndefined();
    expect(c.problems.join('\n')).toContain(problem);
    if (key.trim()) expect(c.problems.join('\n')).not.toContain(key);
  });

  it.each([
    ['https://docs.example.com/', 'https://docs.example.com'],
    ['https://docs.example.com/tenant/a/', 'https://docs.example.com/tenant/a'],
    ['http://localhost:8080', 'http://localhost:8080'],
    ['http://127.0.0.5:9', 'http://127.0.0.5:9'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
  ])('accepts %s as %s', (input, url) => {
    expect(checkBaseUrl(input)).toEqual({ ok: true, url });
  });

  it.each([
    ['http://docs.example.com', 'https://'],
    ['http://127.example.com', 'https://'],
    ['https://user:pw@docs.example.com', 'user name or password'],
    ['https://docs.example.com/?tenant=1', 'query'],
    ['https://docs.example.com/#x', 'fragment'],
    ['ftp://docs.example.com', 'ftp:'],
    ['docs.example.com', 'not a URL'],
  ])('refuses %s', (input, reason) => {
    const checked = checkBaseUrl(input);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.reason).toContain(reason);
  });
});

describe('the one reading of the settings (readSettings)', () => {
  it('the flag wins, then the environment, and an empty variable counts as unset (the default stands), in every reader', () => {
    const env = { DOCREQ_TIMEOUT_MS: '', DOCREQ_HTTP_PORT: '', DOCREQ_TRANSPORT: 'HTTP ', DOCREQ_AUTH: ' OAuth', DOCREQ_SANDBOX: 'yes' };
    expect(readSettings({}, env).text('timeoutMs')).toBe('30000');
    expect(readSettings({ timeoutMs: '5000' }, { DOCREQ_TIMEOUT_MS: '9000' }).text('timeoutMs')).toBe('5000');
    const config = loadConfig({}, env);
    expect(config.timeoutMs).toBe(30_000);
    expect(config.problems.join(' ')).not.toContain('DOCREQ_TIMEOUT_MS');
    expect(loadHttpSettings({}, env)).toMatchObject({ settings: { port: 8787 }, problems: [] });
    expect(startMode(readSettings({}, env))).toEqual({ transport: 'http', team: true, oauth: true, sandbox: true });
    const udp = startMode(readSettings({ transport: 'udp' }, {}));
    expect(udp).toMatchObject({ transport: undefined, team: false, oauth: false, sandbox: false });
    expect(udp.transportProblem).toContain('DOCREQ_TRANSPORT (or --transport)');
  });
});
