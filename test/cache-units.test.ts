import { describe, expect, it } from 'vitest';
import { answerCache, BoundedCache, onceFor } from '../src/cache.js';
import { deepFreeze } from '../src/freeze.js';

/**
 * The one way the server keeps what it worked out (src/cache.ts): a bounded cache that drops the least
 * recently used entry first, by count and by weight; values derived once per object; and the list tools'
 * answer cache built from both. The tools' tests reach these only at their default sizes.
 */

const keys = <V>(cache: BoundedCache<string, V>, names: string[]): string[] => names.filter((k) => cache.peek(k) !== undefined);

describe('a bounded cache', () => {
  it('holds at least one entry: a bound of 0, a negative one or a fraction is refused', () => {
    for (const n of [0, -1, 1.5, Number.NaN])
      expect(() => new BoundedCache({ maxEntries: n }), String(n)).toThrow(new RangeError('maxEntries must be a positive integer'));
    const one = new BoundedCache<string, number>({ maxEntries: 1 });
    one.set('a', 1);
    one.set('b', 2);
    expect([one.size, one.peek('a'), one.peek('b')]).toEqual([1, undefined, 2]);
  });

  it('keeps at most maxEntries, dropping the least recently used: a get makes an entry the last to go, a peek does not', () => {
    const dropped: [string, number][] = [];
    const cache = new BoundedCache<string, number>({ maxEntries: 3, onDrop: (k, v) => dropped.push([k, v]) });
    expect(cache.set('a', 1)).toBe(1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.size).toBe(3);
    expect(dropped).toEqual([]);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    expect(cache.peek('b')).toBe(2); // b stays the least recent
    cache.set('d', 4);
    expect(keys(cache, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    expect(dropped).toEqual([['b', 2]]);
    cache.set('e', 5);
    expect(dropped).toEqual([
      ['b', 2],
      ['c', 3],
    ]);
    expect(cache.size).toBe(3);
    expect(cache.get('zz')).toBeUndefined();
  });

  it('keeps a key once: setting it again replaces its value and its weight, and drops nothing', () => {
    const dropped: string[] = [];
    const cache = new BoundedCache<string, number>({ maxEntries: 2, maxWeight: 10, onDrop: (k) => dropped.push(k) });
    cache.set('a', 1, 4);
    cache.set('b', 2, 4);
    cache.set('a', 3, 6);
    expect([cache.size, cache.weight, cache.peek('a'), cache.peek('b')]).toEqual([2, 10, 3, 2]);
    expect(dropped).toEqual([]);
  });

  it('keeps at most maxWeight together, dropping the least recently used until the new entry fits', () => {
    const dropped: string[] = [];
    const cache = new BoundedCache<string, string>({ maxEntries: 100, maxWeight: 10, onDrop: (k) => dropped.push(k) });
    cache.set('a', 'A', 4);
    cache.set('b', 'B', 4);
    expect(cache.weight).toBe(8);
    cache.set('c', 'C', 2); // exactly 10: nothing dropped
    expect([cache.weight, dropped]).toEqual([10, []]);
    cache.set('d', 'D', 5); // a and b go (4 + 4), c stays: 2 + 5
    expect(dropped).toEqual(['a', 'b']);
    expect([cache.weight, cache.size]).toEqual([7, 2]);
    cache.set('huge', 'H', 50); // heavier than the bound: everything else goes, it is kept
    expect(keys(cache, ['c', 'd', 'huge'])).toEqual(['huge']);
    expect(cache.weight).toBe(50);
    const unweighed = new BoundedCache<string, string>({ maxEntries: 100 });
    for (let i = 0; i < 50; i++) unweighed.set(`k${i}`, 'v', 1_000_000);
    expect(unweighed.size).toBe(50); // no maxWeight: only the count bounds it
  });

  it('getOrMake makes a value once, weighs it, and keeps it as the most recent', () => {
    const cache = new BoundedCache<string, number[]>({ maxEntries: 2, maxWeight: 100 });
    let made = 0;
    const make = (): number[] => (made++, [1, 2, 3]);
    const first = cache.getOrMake('a', make, (v) => v.length * 10);
    expect(cache.getOrMake('a', make)).toBe(first);
    expect([made, cache.weight]).toEqual([1, 30]);
    cache.getOrMake('b', () => [9]);
    expect(cache.weight).toBe(31); // without weigh: 1
    cache.getOrMake('a', make); // a again: now the most recent
    cache.getOrMake('c', () => [7]);
    expect(keys(cache, ['a', 'b', 'c'])).toEqual(['a', 'c']);
  });

  it('delete and clear forget without telling onDrop, and give the weight back', () => {
    const dropped: string[] = [];
    const cache = new BoundedCache<string, number>({ maxEntries: 5, maxWeight: 20, onDrop: (k) => dropped.push(k) });
    cache.set('a', 1, 5);
    cache.set('b', 2, 7);
    expect(cache.delete('a')).toBe(true);
    expect(cache.delete('a')).toBe(false);
    expect([cache.size, cache.weight]).toEqual([1, 7]);
    cache.clear();
    expect([cache.size, cache.weight, cache.peek('b')]).toEqual([0, 0, undefined]);
    cache.set('c', 3, 20); // the whole weight is free again: nothing to drop
    expect(dropped).toEqual([]);
  });
});

describe('values derived once per object', () => {
  it('are made on first use, once per object, whatever make is given later', () => {
    const lengthOf = onceFor<number[], number>();
    const list = [1, 2, 3];
    let made = 0;
    expect(lengthOf(list, (l) => (made++, l.length))).toBe(3);
    expect(lengthOf(list, () => 99)).toBe(3);
    expect(lengthOf([1], (l) => (made++, l.length))).toBe(1);
    expect(made).toBe(2);
  });
});

describe('answers kept', () => {
  it('are kept per list and second list, frozen all the way down, at most 64 per pair with the least recently used dropped first', () => {
    const answersFor = answerCache<object, object, { rows: { n: number }[] }>();
    const [list, other] = [{}, {}];
    const answers = answersFor(list, other);
    expect(answersFor(list, other)).toBe(answers);
    expect(answersFor(list, {})).not.toBe(answers);
    expect(answersFor({}, other)).not.toBe(answers);
    const first = answers.keep('q0', { rows: [{ n: 0 }] });
    expect(answers.get('q0')).toBe(first);
    expect(Object.isFrozen(first.rows[0])).toBe(true);
    for (let i = 1; i < 64; i++) answers.keep(`q${i}`, { rows: [] });
    expect(answers.size).toBe(64);
    answers.get('q0'); // q0 used again: q1 is now the least recent
    answers.keep('q64', { rows: [] });
    expect(answers.size).toBe(64);
    expect(answers.get('q0')).toBe(first);
    expect(answers.get('q1')).toBeUndefined();
    expect(answers.get('q2')).toEqual({ rows: [] });
    expect(deepFreeze(null)).toBeNull();
  });
});
