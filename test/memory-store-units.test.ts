import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/store/memory.js';

/** The memory store (src/store/memory.ts) on a clock of its own: expiry to the millisecond, eviction per namespace, delete and close. */
function store(max = 2) {
  let now = 1_000;
  const s = new MemoryStore(max, () => now);
  return { s, at: (t: number) => (now = t) };
}

describe('MemoryStore', () => {
  it('names itself; an entry lives until its expiry, not at it', async () => {
    const { s, at } = store();
    expect(s.name).toBe('the memory store of this process');
    await s.set('f:a', 'v', 100);
    at(1_099);
    expect(await s.get('f:a')).toBe('v');
    at(1_100);
    expect(await s.get('f:a')).toBeUndefined();
    expect(await s.claim('f:a', 'w', 100)).toBe(true);
  });

  it('over the bound, the expired go first, then the oldest of that namespace only', async () => {
    const { s, at } = store(2);
    await s.set('f:y', 'y', 500);
    await s.set('f:x', 'x', 100);
    await s.set('g:other', 'o', 10_000);
    at(1_100);
    await s.set('f:z', 'z', 500);
    // x expired exactly now: it goes, not y (the oldest but live).
    expect(await s.get('f:y')).toBe('y');
    expect(await s.get('f:z')).toBe('z');
    await s.set('f:w', 'w', 500);
    expect(await s.get('f:y')).toBeUndefined();
    expect(await s.get('f:z')).toBe('z');
    expect(await s.get('f:w')).toBe('w');
    expect(await s.get('g:other')).toBe('o');
  });

  it('an entry set again counts as the newest for eviction', async () => {
    const { s } = store(2);
    await s.set('f:a', 'a', 500);
    await s.set('f:b', 'b', 500);
    await s.set('f:a', 'a2', 500);
    await s.set('f:c', 'c', 500);
    expect([await s.get('f:a'), await s.get('f:b'), await s.get('f:c')]).toEqual(['a2', undefined, 'c']);
  });

  it('at the bound exactly, nothing is evicted', async () => {
    const { s } = store(2);
    await s.set('f:a', 'a', 500);
    await s.set('f:b', 'b', 500);
    expect([await s.get('f:a'), await s.get('f:b')]).toEqual(['a', 'b']);
  });

  it('delete and release of a key in a namespace never used: nothing happens; close forgets everything', async () => {
    const { s } = store();
    await expect(s.delete('nowhere:x')).resolves.toBeUndefined();
    expect(await s.release('nowhere:x', 'v')).toBe(false);
    await s.set('f:a', 'a', 500);
    expect(await s.claim('f:a', 'b', 500)).toBe(false);
    expect(await s.release('f:a', 'b')).toBe(false);
    expect(await s.release('f:a', 'a')).toBe(true);
    expect(await s.get('f:a')).toBeUndefined();
    await s.set('f:b', 'b', 500);
    await s.delete('f:b');
    expect(await s.get('f:b')).toBeUndefined();
    await s.set('f:c', 'c', 500);
    await s.close();
    expect(await s.get('f:c')).toBeUndefined();
  });

  it("renew extends only the holder's entry; incr counts from `by`", async () => {
    const { s, at } = store();
    await s.claim('f:l', 'me', 100);
    expect(await s.renew('f:l', 'you', 1_000)).toBe(false);
    expect(await s.renew('f:l', 'me', 1_000)).toBe(true);
    at(1_500);
    expect(await s.get('f:l')).toBe('me');
    expect(await s.incr('f:n', 100, 3)).toBe(3);
    expect(await s.incr('f:n', 100)).toBe(4);
  });
});
