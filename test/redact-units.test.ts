import { describe, expect, it } from 'vitest';
import { redactor, sealer } from '../src/text/redact.js';

/**
 * The one redaction (src/text/redact.ts), exactly: which secrets it hides, in which spellings, and how
 * the seal walks a result (how deep, what it copies, what it remembers of a shared answer).
 */
const R = '[redacted]';

describe('redactor', () => {
  it('hides secrets of four characters or more, never shorter ones; ignores what is not a string', () => {
    const r = redactor([undefined, null, 'abc', 'wxyz']);
    expect(r('abc wxyz')).toBe(`abc ${R}`);
    expect(redactor(['abc'])('abc')).toBe('abc');
    expect(redactor([])('anything')).toBe('anything');
    expect(redactor([undefined, 'abc'])('Müller \u200b')).toBe('Müller \u200b');
    expect(r(42 as never)).toBe(42);
    expect(r(undefined as never)).toBeUndefined();
  });

  it('the longest secret first: one that begins with another is hidden whole', () => {
    const r = redactor(['abcd1234', 'abcd12345678']);
    expect(r('key=abcd12345678;')).toBe(`key=${R};`);
    expect(redactor(['abcd12345678', 'abcd1234'])('key=abcd12345678;')).toBe(`key=${R};`);
  });

  it('every spelling: as is, any case, JSON-escaped, URL-encoded (either hex case)', () => {
    const secret = 'sk/AB"cd+ef';
    const r = redactor([secret]);
    expect(r(`a ${secret} b`)).toBe(`a ${R} b`);
    expect(r(`a ${secret.toUpperCase()} b`)).toBe(`a ${R} b`);
    expect(r(`a ${JSON.stringify(secret).slice(1, -1)} b`)).toBe(`a ${R} b`);
    expect(r(`a ${encodeURIComponent(secret)} b`)).toBe(`a ${R} b`);
    expect(r(`a ${encodeURIComponent(secret).toLowerCase()} b`)).toBe(`a ${R} b`);
  });

  it('letters kept apart by invisible characters, or in compatibility forms, even where that text is shorter than the secret', () => {
    const r = redactor(['dr_live_fixture_key']);
    expect(r('dr_live_\u200bfixture_key')).toBe(R);
    expect(r('ｄｒ_live_fixture_key')).toBe(R);
    // ﬁ (U+FB01) is one character that NFKC reads as "fi": the text is shorter than the key it shows.
    expect(r('dr_live_\ufb01xture_key')).toBe(R);
    expect(r('dr_live_fixture_ke')).toBe('dr_live_fixture_ke');
    expect(r('ﬁ')).toBe('ﬁ');
    // Written wholly in full-width forms, with no printable ASCII left to give it away.
    const wide = (t: string) => [...t].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join('');
    expect(wide('dr_live_fixture_key')).not.toMatch(/[\x20-\x7e]/);
    expect(r(wide('dr_live_fixture_key'))).toBe(R);
  });
});

/** `{ n: … { s } }` with the object holding `s` at nesting depth `depth` (the top object is 0). */
function nested(depth: number, s: string): Record<string, unknown> {
  let v: Record<string, unknown> = { s };
  for (let i = 0; i < depth; i++) v = { n: v };
  return v;
}
const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
function frozen<T>(v: T): T {
  if (v && typeof v === 'object') {
    Object.values(v).forEach(frozen);
    Object.freeze(v);
  }
  return v;
}

describe('sealer', () => {
  const seal = sealer(['sk_live_SECRET1']);

  it('every string and key of a result, text and structuredContent alike', () => {
    const out = seal({ ...text('key sk_live_SECRET1'), structuredContent: { sk_live_SECRET1: ['x sk_live_secret1'], n: 1, ok: true, none: null } });
    expect(out).toEqual({ ...text(`key ${R}`), structuredContent: { [R]: [`x ${R}`], n: 1, ok: true, none: null } });
  });

  it('no secrets: the very result goes on, unwalked', () => {
    const result = { ...text('anything'), structuredContent: { a: ['b'] } };
    expect(sealer([])(result)).toBe(result);
    expect(sealer([undefined, 'abc'])(result)).toBe(result);
  });

  it('a frozen answer whose only secret is a key: the copy is redacted', () => {
    const shared = frozen({ ...text('fine'), structuredContent: { sk_live_SECRET1: 1 } });
    expect(seal(shared)).toEqual({ ...text('fine'), structuredContent: { [R]: 1 } });
  });

  it('lists nested beyond 64 levels are cut off too', () => {
    const deepList = (depth: number) => {
      let v: unknown = ['v'];
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    expect(JSON.stringify(seal({ ...text(''), structuredContent: { l: deepList(62) } }))).toContain('"v"');
    expect(JSON.stringify(seal({ ...text(''), structuredContent: { l: deepList(63) } }))).not.toContain('"v"');
  });

  it('nesting beyond 64 levels is cut off, 64 is kept', () => {
    const at = (depth: number) => JSON.stringify(seal({ ...text(''), structuredContent: nested(depth, 'v') }));
    expect(at(63)).toContain('"s":"v"');
    expect(at(64)).not.toContain('"s":"v"');
    expect(at(64)).toContain('"n":null');
    expect(at(62)).not.toContain('null');
  });

  it('a frozen answer with a secret: the copy is redacted, the answer itself untouched', () => {
    const shared = frozen({ ...text('sk_live_SECRET1'), structuredContent: { a: ['sk_live_SECRET1'] } });
    expect(seal(shared)).toEqual({ ...text(R), structuredContent: { a: [R] } });
    expect(seal(shared)).toEqual({ ...text(R), structuredContent: { a: [R] } });
    expect(shared.structuredContent.a[0]).toBe('sk_live_SECRET1');
  });

  it('a frozen answer found clean is handed on as the very object; an unfrozen one is looked at again each time', () => {
    const clean = frozen({ ...text('nothing here'), structuredContent: { a: 'b' } });
    expect(seal(clean)).toBe(clean);
    const loose = { ...text('nothing'), structuredContent: { a: 'b' } };
    seal(loose);
    loose.structuredContent.a = 'now sk_live_SECRET1';
    expect(seal(loose).structuredContent).toEqual({ a: `now ${R}` });
  });

  it('a clean unfrozen result goes on as the very object; one holding a secret is copied whole, in order, the original untouched', () => {
    const loose = { ...text('nothing'), structuredContent: { a: 'b', list: ['x', 'y'], n: 1 } };
    expect(seal(loose)).toBe(loose);
    const mixed = {
      ...text('fine'),
      structuredContent: { first: 1, second: 'two', sk_live_SECRET1: 'k', hidden: 'sk_live_SECRET1', after: 'z', list: ['p', 'q sk_live_SECRET1', 'r', 's'] },
    };
    const before = JSON.stringify(mixed);
    const out = seal(mixed);
    // Compared as JSON text: the order of keys and elements counts too.
    expect(JSON.stringify(out)).toBe(
      JSON.stringify({ ...text('fine'), structuredContent: { first: 1, second: 'two', [R]: 'k', hidden: R, after: 'z', list: ['p', `q ${R}`, 'r', 's'] } }),
    );
    expect(JSON.stringify(mixed)).toBe(before);
    expect(out.content).toBe(mixed.content);
  });

  it('several changes in one list or object: each is redacted, nothing else is added or lost', () => {
    const out = seal({
      ...text('fine'),
      structuredContent: { list: ['a sk_live_SECRET1', 'b', 'c sk_live_SECRET1', 'd'], x: 'sk_live_SECRET1', y: 1, z: 'sk_live_SECRET1' },
    });
    expect(out.structuredContent).toStrictEqual({ list: [`a ${R}`, 'b', `c ${R}`, 'd'], x: R, y: 1, z: R });
    expect(Object.keys(out.structuredContent)).toEqual(['list', 'x', 'y', 'z']);
  });

  it('what is walked, counted by a getter: nothing without secrets; a shared answer found clean, once for every sealer of the same secrets', () => {
    let reads = 0;
    const counted = () => {
      const value: Record<string, unknown> = {};
      Object.defineProperty(value, 'a', { enumerable: true, get: () => (reads++, 'plain') });
      return value;
    };
    const loose = { ...text('x'), structuredContent: counted() };
    expect(sealer([])(loose)).toBe(loose);
    expect(reads).toBe(0);
    const shared = frozen({ ...text('x'), structuredContent: counted() });
    reads = 0; // freezing read it
    expect(seal(shared)).toBe(shared);
    expect(reads).toBe(1);
    expect(seal(shared)).toBe(shared);
    // Another sealer of the same secrets (team mode builds one per key) knows it clean too.
    expect(sealer(['sk_live_SECRET1'])(shared)).toBe(shared);
    expect(reads).toBe(1);
  });

  it('an object found clean before it was frozen is walked again once frozen: it may have changed in between', () => {
    const later: { content: { type: 'text'; text: string }[]; structuredContent: { a: string } } = { ...text('x'), structuredContent: { a: 'clean' } };
    expect(seal(later)).toBe(later);
    later.structuredContent.a = 'sk_live_SECRET1';
    frozen(later);
    expect(seal(later).structuredContent).toEqual({ a: R });
  });

  it('what one set of secrets found clean is not taken as clean for another set', () => {
    // Joined without a separator both sets would read "abcdefghi".
    const first = sealer(['abcde', 'fghi']);
    const second = sealer(['abcd', 'efghi']);
    const shared = frozen({ ...text('abcdx'), structuredContent: { a: 'abcdx' } });
    expect(first(shared)).toBe(shared);
    expect(second(shared)).toEqual({ ...text(`${R}x`), structuredContent: { a: `${R}x` } });
  });
});
