import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Confirmations } from '../src/send/token.js';
import { storeFingerprint } from '../src/store/index.js';
import { describeRedisUrl } from '../src/store/redis.js';

/** Names that must neither leak nor collide, exactly: the firm's store namespace, a token's person, a store's address. */
describe('storeFingerprint', () => {
  it('32 hex characters of SHA-256 over the base URL and the key, never the key itself', () => {
    const expected = createHash('sha256').update('docreq-mcp firm\0https://docs.example\0dr_live_key').digest('hex').slice(0, 32);
    expect(storeFingerprint('dr_live_key', 'https://docs.example')).toBe(expected);
    expect(storeFingerprint('dr_live_key')).toBe(createHash('sha256').update('docreq-mcp firm\0\0dr_live_key').digest('hex').slice(0, 32));
    expect(storeFingerprint('dr_live_key', 'https://other.example')).not.toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('a confirmation token bound to the person who previewed', () => {
  it('only that person confirms it; a token without a person is not one with', () => {
    const c = new Confirmations('s'.repeat(32));
    const binding = { tool: 'create_request', payload: { title: 'T' } };
    const { token } = c.issue('key', binding, 'alice');
    expect(c.verify(token, 'key', binding, 'alice')).toMatchObject({ ok: true });
    expect(c.verify(token, 'key', binding, 'bob')).toMatchObject({ ok: false, reason: 'mismatch' });
    expect(c.verify(token, 'key', binding)).toMatchObject({ ok: false, reason: 'mismatch' });
    const anyone = c.issue('key', binding).token;
    expect(c.verify(anyone, 'key', binding, 'alice')).toMatchObject({ ok: false, reason: 'mismatch' });
    expect(c.verify(anyone, 'key', binding)).toMatchObject({ ok: true });
  });
});

describe('describeRedisUrl', () => {
  it('scheme, host, port (6379 unless given) and database (0 unless given), never the password', () => {
    expect(describeRedisUrl('redis://:secret@cache.internal:6380/3')).toBe('redis at cache.internal:6380/3');
    expect(describeRedisUrl('rediss://user:pw@cache.internal')).toBe('rediss at cache.internal:6379/0');
    expect(describeRedisUrl('not a url')).toBe('redis (DOCREQ_STORE_URL, not a URL)');
  });
});
