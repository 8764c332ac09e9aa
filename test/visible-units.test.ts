import { describe, expect, it } from 'vitest';
import { MARKS, markInvisible, visibleResult, visibleStructured, withoutInvisibles } from '../src/text/visible.js';

/**
 * The renderer's invisible-character rule on structured data (src/text/visible.ts), exactly: which
 * strings it changes and which it keeps, how deep it goes, and what it keeps of a shared (frozen) answer.
 */
const ZW = '\u200b';

/** `{ n: { n: … { s } } }` with the object holding `s` at nesting depth `depth` (the top object is 0). */
function nested(depth: number, s: string): Record<string, unknown> {
  let v: Record<string, unknown> = { s };
  for (let i = 0; i < depth; i++) v = { n: v };
  return v;
}
function deepListOf(depth: number, s: string): unknown {
  let v: unknown = [s];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}
function innermost(v: unknown): unknown {
  let o = v as Record<string, unknown>;
  while (o.n) o = o.n as Record<string, unknown>;
  return o.s;
}

describe('visibleStructured', () => {
  it('a shared (frozen) row is judged whole each answer until found plain: one with a change is cleaned in every answer holding it', () => {
    const row = Object.freeze({ name: `Ac${ZW}me`, n: 1 });
    const nameKeyRow = Object.freeze({ [`na${ZW}me`]: 'Acme' });
    const list = Object.freeze([row]);
    for (let i = 0; i < 3; i++) {
      expect(visibleStructured({ i, rows: [row] })).toEqual({ i, rows: [{ name: 'Acme', n: 1 }] });
      expect(visibleStructured({ i, rows: [nameKeyRow] })).toEqual({ i, rows: [{ name: 'Acme' }] });
      expect(visibleStructured({ i, rows: [list] })).toEqual({ i, rows: [[{ name: 'Acme', n: 1 }]] });
    }
  });

  it('a shared row found plain still counts when another string of a later answer would read like one of its strings', () => {
    const row = Object.freeze({ name: 'Acme Ltd' });
    expect(visibleStructured({ rows: [row] })).toEqual({ rows: [{ name: 'Acme Ltd' }] });
    expect(visibleStructured({ rows: [row], other: `Acme${ZW} Ltd` })).toEqual({ rows: [{ name: 'Acme Ltd' }], other: 'Acme⟨U+200B⟩ Ltd' });
  });

  it('nothing past the depth cut is looked at: a value whose only invisible characters lie beyond it comes back as the very value', () => {
    const deep = nested(65, `Ac${ZW}me`); // the object holding the string at depth 65: cut
    expect(visibleStructured(deep)).toBe(deep);
    const deepList = deepListOf(65, `Ac${ZW}me`);
    expect(visibleStructured(deepList)).toBe(deepList);
    const justIn = nested(64, `Ac${ZW}me`);
    expect(innermost(visibleStructured(justIn))).toBe('Acme');
  });

  it('the second look (something reads alike) goes exactly as deep as the first: a string at the cut counts, an array index is not a key', () => {
    const out = visibleStructured({ a: `Acme${ZW} Ltd`, deep: nested(63, 'Acme Ltd') }) as Record<string, unknown>;
    expect(out.a).toBe('Acme⟨U+200B⟩ Ltd');
    const cut = visibleStructured({ a: `Acme${ZW} Ltd`, deep: nested(64, 'Acme Ltd') }) as Record<string, unknown>;
    expect(cut.a).toBe('Acme Ltd');
    expect(visibleStructured({ a: `0${ZW}`, list: ['x'] })).toEqual({ a: '0', list: ['x'] });
  });

  it('a shared row first met beyond the depth cut (not seen whole) is still cleaned where it is met higher up', () => {
    const row = Object.freeze({ inner: Object.freeze({ name: `Ac${ZW}me` }) });
    const deep: Record<string, unknown> = nested(63, 'x');
    let at = deep;
    for (let i = 0; i < 63; i++) at = at.n as Record<string, unknown>;
    at.row = row; // the row's object at depth 64, its inner object at 65: cut
    expect(JSON.stringify(visibleStructured(deep))).toContain(`Ac${ZW}me`);
    expect(visibleStructured({ row })).toEqual({ row: { inner: { name: 'Acme' } } });
  });

  it('a string alone, a number, null: the rule on the one string, the rest as it is', () => {
    expect(visibleStructured(`A${ZW}cme`)).toBe('Acme');
    expect(visibleStructured(`a\u2028b`)).toBe('a b');
    expect(visibleStructured(5)).toBe(5);
    expect(visibleStructured(null)).toBeNull();
  });

  it('strings and keys cleaned; identifiers (id, token, payload, a key ending in a lower-case letter and Id) kept exact', () => {
    const out = visibleStructured({
      [`na${ZW}me`]: `Ac${ZW}me`,
      id: `x${ZW}`,
      token: `t${ZW}`,
      payload: { title: `p${ZW}` },
      clientId: `c${ZW}`,
      list: [`a${ZW}b`],
      clientIdName: `d${ZW}`,
      ID: `e${ZW}`,
      Id: `f${ZW}`,
    });
    expect(out).toEqual({
      name: 'Acme',
      id: `x${ZW}`,
      token: `t${ZW}`,
      payload: { title: `p${ZW}` },
      clientId: `c${ZW}`,
      list: ['ab'],
      clientIdName: 'd',
      ID: 'e',
      Id: 'f',
    });
  });

  it('invisible characters only inside lists are found and removed; numbers, booleans and null stay as they are', () => {
    expect(visibleStructured({ list: [`a${ZW}`, ['b'], [`c${ZW}`]] })).toEqual({ list: ['a', ['b'], ['c']] });
    expect(visibleStructured(Object.freeze({ n: 5, t: true, z: null, s: `x${ZW}` }))).toEqual({ n: 5, t: true, z: null, s: 'x' });
  });

  it('identifiers are not compared: an id that reads like a name does not make the name show marks', () => {
    expect(visibleStructured({ id: `Acme${ZW} Ltd`, name: 'Acme\u200c Ltd' })).toEqual({ id: `Acme${ZW} Ltd`, name: 'Acme Ltd' });
    // Nor in the second look: an id that already reads as a changed name is no second spelling of it.
    expect(visibleStructured({ id: 'Acme Ltd', name: `Acme${ZW} Ltd` })).toEqual({ id: 'Acme Ltd', name: 'Acme Ltd' });
    expect(visibleStructured({ payload: { title: 'Acme Ltd' }, name: `Acme${ZW} Ltd` })).toEqual({ payload: { title: 'Acme Ltd' }, name: 'Acme Ltd' });
  });

  it('two different invisible spellings of one reading both show their marks; a run of them shows each', () => {
    expect(visibleStructured({ a: `Acme${ZW} Ltd`, b: 'Acme\u200c Ltd' })).toEqual({ a: 'Acme⟨U+200B⟩ Ltd', b: 'Acme⟨U+200C⟩ Ltd' });
    expect(markInvisible(`a${ZW}\u200cb`)).toBe('a⟨U+200B⟩⟨U+200C⟩b');
  });

  it('two strings that would read the same show their invisible characters as marks, four or more hex digits', () => {
    const out = visibleStructured({ a: 'Acme Ltd', b: `Acme${ZW} Ltd`, c: 'Acme Ltd\u{E0041}', d: `Other${ZW}` });
    expect(out).toEqual({ a: 'Acme Ltd', b: 'Acme⟨U+200B⟩ Ltd', c: 'Acme Ltd⟨U+E0041⟩', d: 'Other' });
    expect(markInvisible('a\u00adb')).toBe('a⟨U+00AD⟩b');
    expect(withoutInvisibles(`a${ZW}\u2028b`)).toBe('a b');
  });

  it('goes 64 objects deep and no deeper (a deeper object is handed on as it is)', () => {
    expect(innermost(visibleStructured(nested(64, `a${ZW}b`)))).toBe('ab');
    expect(innermost(visibleStructured(nested(65, `a${ZW}b`)))).toBe(`a${ZW}b`);
    const deepList = (depth: number) => {
      let v: unknown = [`a${ZW}b`];
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    expect(JSON.stringify(visibleStructured(deepList(64)))).not.toContain(ZW);
    expect(JSON.stringify(visibleStructured(deepList(65)))).toContain(ZW);
    // What lies deeper is neither changed nor compared: a deep "Acme Ltd" does not make a shallow one show marks.
    const deepAlike = (depth: number) => {
      let v: unknown = ['Acme Ltd'];
      for (let i = 0; i < depth; i++) v = [v];
      return { top: `Acme${ZW} Ltd`, deep: v, o: nested(65, 'Acme Ltd') };
    };
    expect((visibleStructured(deepAlike(65)) as { top: string }).top).toBe('Acme Ltd');
    expect((visibleStructured(deepAlike(10)) as { top: string }).top).toBe('Acme⟨U+200B⟩ Ltd');
    // Where something is changed, what lies deeper than 64 is handed on as it is.
    const both = visibleStructured({ top: `y${ZW}`, o: nested(65, `x${ZW}`), l: deepListOf(65, `z${ZW}`) }) as { top: string; o: unknown; l: unknown };
    expect(both.top).toBe('y');
    expect(innermost(both.o)).toBe(`x${ZW}`);
    expect(JSON.stringify(both.l)).toContain(ZW);
  });

  it('the value is never changed; a value with nothing to change goes on as the very same object', () => {
    const value = { a: [`x${ZW}`], b: 'y' };
    const copy = structuredClone(value);
    const out = visibleStructured(value);
    expect(value).toEqual(copy);
    expect(out).not.toBe(value);
    const plain = { a: ['x'], b: { c: 'y' } };
    expect(visibleStructured(plain)).toBe(plain);
  });

  it('a frozen value: its answer worked out once, frozen all the way down, and the same object every time', () => {
    const shared = Object.freeze({ rows: Object.freeze([Object.freeze({ name: `Ac${ZW}me` })]), meta: Object.freeze({ n: 1 }) });
    const first = visibleStructured(shared) as { rows: { name: string }[]; meta: object };
    expect(first).toEqual({ rows: [{ name: 'Acme' }], meta: { n: 1 } });
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.rows)).toBe(true);
    expect(Object.isFrozen(first.rows[0])).toBe(true);
    expect(Object.isFrozen(first.meta)).toBe(true);
    expect(visibleStructured(shared)).toBe(first);
    const clean = Object.freeze({ a: 'b' });
    expect(visibleStructured(clean)).toBe(clean);
    expect(visibleStructured(clean)).toBe(clean);
  });

  it('an unfrozen value is worked out afresh each time, and its answer is not frozen', () => {
    const value = { rows: [{ name: `Ac${ZW}me` }] };
    const first = visibleStructured(value);
    expect(Object.isFrozen(first)).toBe(false);
    expect(Object.isFrozen(first.rows)).toBe(false);
    value.rows[0]!.name = `Zen${ZW}ith`;
    expect(visibleStructured(value)).toEqual({ rows: [{ name: 'Zenith' }] });
  });
});

describe('visibleResult', () => {
  it('only structuredContent is changed; a result without one, or with nothing to change, is the very same object', () => {
    const none = { content: [{ type: 'text', text: `a${ZW}` }] };
    expect(visibleResult(none)).toBe(none);
    const scalar = { content: [], structuredContent: `a${ZW}` };
    expect(visibleResult(scalar)).toBe(scalar);
    const clean = { content: [], structuredContent: { a: 'b' } };
    expect(visibleResult(clean)).toBe(clean);
    const dirty = { content: [{ type: 'text', text: `t${ZW}` }], isError: false, structuredContent: { a: `b${ZW}` } };
    const out = visibleResult(dirty);
    expect(out).toEqual({ content: [{ type: 'text', text: `t${ZW}` }], isError: false, structuredContent: { a: 'b' } });
    expect(dirty.structuredContent.a).toBe(`b${ZW}`);
  });
});

describe('MARKS', () => {
  it('splits a shown identifier into text and the marks markInvisible wrote (odd places), from four to six hex digits', () => {
    const shown = markInvisible(`req${ZW}_1\u{E0041}`);
    expect(shown).toBe('req⟨U+200B⟩_1⟨U+E0041⟩');
    expect(shown.split(MARKS)).toEqual(['req', '⟨U+200B⟩', '_1', '⟨U+E0041⟩', '']);
    expect('a⟨U+10FFFF⟩b'.split(MARKS)).toEqual(['a', '⟨U+10FFFF⟩', 'b']);
    // Not a mark: too few or too many digits, lower case, or not hex; such text stays text.
    for (const text of ['⟨U+20B⟩', '⟨U+1234567⟩', '⟨U+200b⟩', '⟨U+20GB⟩', '⟨U+⟩']) expect(text.split(MARKS)).toEqual([text]);
  });
});
