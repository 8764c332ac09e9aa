import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyFingerprinter, KeyScopeStore, RateBucket } from '../src/transport/key-scope.js';

/**
 * What team mode keeps between requests is bounded and per key (src/transport/key-scope.ts): the contract
 * of that store, which the HTTP tests (team-mode, front-door) reach only at its default size. The bound
 * itself is test/cache-units.test.ts's.
 */

describe('the per-key scopes', () => {
  it('hold at least one firm: a size of 0, a negative one or a fraction is refused', () => {
    for (const n of [0, -1, 1.5, Number.NaN]) expect(() => new KeyScopeStore(n), String(n)).toThrow(new RangeError('maxScopes must be a positive integer'));
    expect(new KeyScopeStore(1).maxScopes).toBe(1);
  });

  it('evict the least recently used firm, and what was kept for it goes with it', () => {
    const store = new KeyScopeStore(2);
    const a = store.scope('a');
    a.set('rate', 1);
    const b = store.scope('b');
    b.set('rate', 2);
    expect(store.scope('a')).toBe(a); // a is now the most recent
    store.scope('c');
    expect(store.size).toBe(2);
    expect(store.peek('b')).toBeUndefined();
    expect(b.size).toBe(0);
    expect(store.peek('a')?.get('rate')).toBe(1);
  });

  it('drop ends one firm at once; a scope forgets one slot or all of them', () => {
    const store = new KeyScopeStore(5);
    const a = store.scope('a');
    a.set('x', 1);
    a.set('y', 2);
    a.delete('x');
    expect(a.get('x')).toBeUndefined();
    expect(a.size).toBe(1);
    store.drop('a');
    expect(store.peek('a')).toBeUndefined();
    expect(store.size).toBe(0);
    expect(a.size).toBe(0);
    store.drop('never-seen');
    const b = store.scope('b');
    b.set('z', 3);
    b.clear();
    expect(b.size).toBe(0);
  });

  it('fingerprints are stable for one secret, differ between keys and between secrets, and never hold the key', () => {
    const secret = Buffer.alloc(32, 7);
    const one = new KeyFingerprinter(secret);
    expect(one.fingerprint('k-1')).toBe(new KeyFingerprinter(secret).fingerprint('k-1'));
    expect(one.fingerprint('k-1')).toMatch(/^[0-9a-f]{12}$/);
    expect(one.fingerprint('k-1')).not.toBe(one.fingerprint('k-2'));
    expect(one.fingerprint('k-1')).not.toBe(new KeyFingerprinter(Buffer.alloc(32, 8)).fingerprint('k-1'));
  });

  it("a fingerprint kept for reuse is always its own key's HMAC, past the 1,024 kept and after they turn over", () => {
    const secret = Buffer.alloc(32, 9);
    const hmac = (key: string) => createHmac('sha256', secret).update(key, 'utf8').digest('hex').slice(0, 12);
    const fingerprinter = new KeyFingerprinter(secret);
    const keys = Array.from({ length: 1_100 }, (_, i) => `dr_live_${i}`);
    // Twice over: the second pass asks for keys kept, and for keys dropped and made again.
    for (let pass = 0; pass < 2; pass++) for (const key of keys) expect(fingerprinter.fingerprint(key)).toBe(hmac(key));
    expect(fingerprinter.fingerprint('')).toBe(hmac(''));
  });
});

describe('the rate bucket', () => {
  it('says how long until a call is allowed from what has refilled, not from empty', () => {
    const bucket = new RateBucket(60, 0); // one token a second
    expect(bucket.take(60, 0)).toBe(0);
    expect(bucket.take(1, 0)).toBe(1_000);
    expect(bucket.take(1, 500)).toBe(500); // half a token back: half a second to go
    expect(bucket.take(2, 1_000)).toBe(1_000);
    expect(bucket.take(1, 1_000)).toBe(0);
  });
});
