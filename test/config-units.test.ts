import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBaseUrl, KEY_MISSING, loadConfig, secretFromFile, secretsOf, valueShape } from '../src/config.js';
import { suiteFolder } from './support/folders.js';

/**
 * The settings read once (src/config.ts), each rule on its own: a base URL is the service's address and nothing
 * more; a secret's file names no content; what cannot be read fails closed (a safety setting disables sending,
 * another setting stops the calls it governs); every secret a configuration holds is one the redaction masks.
 */

const BASE = { DOCREQ_API_KEY: 'drk_test_key_123456', DOCREQ_BASE_URL: 'https://docs.example.com' };

describe('checkBaseUrl', () => {
  it('the service address only: no user, query or fragment; a trailing /api/v1 named with the address to set; slashes trimmed', () => {
    expect(checkBaseUrl('https://docs.example.com/')).toEqual({ ok: true, url: 'https://docs.example.com' });
    expect(checkBaseUrl('https://docs.example.com/base//')).toEqual({ ok: true, url: 'https://docs.example.com/base' });
    expect(checkBaseUrl('https://user@docs.example.com')).toEqual({ ok: false, reason: 'must not carry a user name or password' });
    expect(checkBaseUrl('https://:secret@docs.example.com')).toEqual({ ok: false, reason: 'must not carry a user name or password' });
    expect(checkBaseUrl('https://docs.example.com/?')).toEqual({ ok: false, reason: 'must not carry a query (?...)' });
    expect(checkBaseUrl('https://docs.example.com/?a=1')).toEqual({ ok: false, reason: 'must not carry a query (?...)' });
    expect(checkBaseUrl('https://docs.example.com/#')).toEqual({ ok: false, reason: 'must not carry a fragment (#...)' });
    expect(checkBaseUrl('https://docs.example.com/#top')).toEqual({ ok: false, reason: 'must not carry a fragment (#...)' });
    expect(checkBaseUrl('https://docs.example.com/api/v1')).toEqual({
      ok: false,
      reason: 'ends in /api/v1, which is added to it: set it to https://docs.example.com',
    });
    expect(checkBaseUrl('https://docs.example.com/firm/API/V1//')).toEqual({
      ok: false,
      reason: 'ends in /api/v1, which is added to it: set it to https://docs.example.com/firm',
    });
    expect(checkBaseUrl('https://docs.example.com/api/v1/more')).toEqual({ ok: true, url: 'https://docs.example.com/api/v1/more' });
  });
});

describe('valueShape and secretFromFile: a value described, never shown', () => {
  it('the shape names length and kinds of characters', () => {
    expect(valueShape('ab-12')).toBe('a 5-character value of letters, digits, other characters (not shown)');
    expect(valueShape('')).toBe('a 0-character value of nothing (not shown)');
  });

  it('an empty file and a missing one are named as such, without their content', () => {
    const dir = mkdtempSync(join(suiteFolder(), 'config-'));
    const empty = join(dir, 'empty');
    writeFileSync(empty, '  \n');
    expect(secretFromFile(empty, 'DOCREQ_API_KEY_FILE')).toEqual({ problem: 'DOCREQ_API_KEY_FILE names a file that is empty.' });
    expect(secretFromFile(join(dir, 'none'), 'DOCREQ_API_KEY_FILE', '; a hint')).toEqual({
      problem: 'DOCREQ_API_KEY_FILE names a file that cannot be read (ENOENT); a hint.',
    });
    const key = join(dir, 'key');
    writeFileSync(key, ' drk_from_file_0001 \n');
    expect(secretFromFile(key, 'DOCREQ_API_KEY_FILE')).toEqual({ value: 'drk_from_file_0001' });
  });
});

describe('loadConfig fails closed', () => {
  it('DOCREQ_STORE=redis without a store URL: sending disabled, saying so; the memory store stands in', () => {
    const config = loadConfig({}, { ...BASE, DOCREQ_STORE: 'redis' });
    const problem = 'DOCREQ_STORE is redis, but DOCREQ_STORE_URL is not set: set it to redis://host:6379 (or rediss://).';
    expect(config.problems).toContain(problem);
    expect(config.sendingDisabled).toBe(problem);
    expect(config.store.backend).toBe('memory');
    expect(loadConfig({}, { ...BASE }).store.backend).toBe('file');
    expect(loadConfig({}, { ...BASE, DOCREQ_STORE_URL: 'redis://127.0.0.1:6379' }).store.backend).toBe('redis');
  });

  it('two unreadable safety settings: both named in the one reason sending is disabled; reads go on', () => {
    const config = loadConfig({}, { ...BASE, DOCREQ_READ_ONLY: 'maybe', DOCREQ_CONFIRM_SEND: 'alwys' });
    expect(config.readOnly).toBe(true);
    expect(config.sendingDisabled).toMatch(/DOCREQ_READ_ONLY[\s\S]* DOCREQ_CONFIRM_SEND/);
    expect(config.callsDisabled).toEqual([]);
    expect(config.api).toEqual({ apiKey: BASE.DOCREQ_API_KEY, baseUrl: BASE.DOCREQ_BASE_URL });
  });

  it('an unreadable service profile is a problem that disables sending', () => {
    const config = loadConfig({}, { ...BASE, DOCREQ_SERVICE_PROFILE: join(suiteFolder(), 'no-such-profile.yaml') });
    expect(config.sendingDisabled).toBeDefined();
    expect(config.problems).toContain(config.sendingDisabled);
  });

  it('an unreadable setting that is not a connection setting stops the calls (callsDisabled); the address and key only leave api unset', () => {
    const timeout = loadConfig({}, { ...BASE, DOCREQ_TIMEOUT_MS: 'soon' });
    expect(timeout.callsDisabled).toHaveLength(1);
    expect(timeout.timeoutMs).toBe(30_000);
    const address = loadConfig({}, { ...BASE, DOCREQ_BASE_URL: 'ftp://docs.example.com' });
    expect(address.callsDisabled).toEqual([]);
    expect(address.api).toBeUndefined();
    expect(address.problems).toEqual(['DOCREQ_BASE_URL (or --base-url) uses ftp: (expected https://).']);
  });

  it('the key: missing, from a file, from a file that cannot be used, or with white space', () => {
    expect(loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL }).problems).toEqual([KEY_MISSING]);
    const dir = mkdtempSync(join(suiteFolder(), 'config-key-'));
    const key = join(dir, 'key');
    writeFileSync(key, 'drk_from_file_0002\n');
    const fromFile = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, DOCREQ_API_KEY_FILE: key });
    expect(fromFile.problems).toEqual([]);
    expect(fromFile.api?.apiKey).toBe('drk_from_file_0002');
    // The key itself wins over a file.
    expect(loadConfig({}, { ...BASE, DOCREQ_API_KEY_FILE: key }).api?.apiKey).toBe(BASE.DOCREQ_API_KEY);
    const missing = loadConfig({}, { DOCREQ_BASE_URL: BASE.DOCREQ_BASE_URL, DOCREQ_API_KEY_FILE: join(dir, 'none') });
    expect(missing.problems).toEqual([
      'DOCREQ_API_KEY_FILE names a file that cannot be read (ENOENT); it must be the path of a file holding the key (to give the key itself, use DOCREQ_API_KEY).',
    ]);
    expect(missing.api).toBeUndefined();
    expect(loadConfig({}, { ...BASE, DOCREQ_API_KEY: 'drk two words' }).problems).toEqual(['DOCREQ_API_KEY contains white space: set it to the key alone.']);
    expect(loadConfig({}, { DOCREQ_API_KEY: BASE.DOCREQ_API_KEY }).problems).toEqual([
      'DOCREQ_BASE_URL is not set: set it (or --base-url) to the service address, e.g. https://docs.example.com.',
    ]);
  });
});

describe('secretsOf', () => {
  it('the key, the token secret, the store URL and its password (as written and decoded); nothing under 4 characters', () => {
    const config = loadConfig(
      {},
      { ...BASE, DOCREQ_TOKEN_SECRET: 'a-token-secret-of-32-characters!', DOCREQ_STORE_URL: 'redis://:p%40ss%2Fword@127.0.0.1:6379/2' },
    );
    expect(secretsOf(config)).toEqual([
      BASE.DOCREQ_API_KEY,
      'a-token-secret-of-32-characters!',
      'redis://:p%40ss%2Fword@127.0.0.1:6379/2',
      'p@ss/word',
      'p%40ss%2Fword',
    ]);
    expect(
      secretsOf({ api: { apiKey: 'abc', baseUrl: 'https://x' }, tokenSecret: undefined, store: { backend: 'file', stateDir: undefined, url: undefined } }),
    ).toEqual([]);
    expect(secretsOf({ api: undefined, tokenSecret: undefined, store: { backend: 'redis', stateDir: undefined, url: 'not a url at all' } })).toEqual([
      'not a url at all',
    ]);
  });
});
