import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { characters, checkEmailText, INVISIBLE, replaceInvisible, titleKey } from '../src/text/invisible.js';

/** What will be e-mailed, checked exactly (src/text/invisible.ts), and the title key of the duplicate guard. */
describe('checkEmailText', () => {
  it('as it will be sent: NFC, trimmed; emoji presentation selectors allowed', () => {
    expect(checkEmailText('  Cafe\u0301 ❤️ ', 20)).toEqual({ ok: true, text: 'Café ❤️' });
  });

  it('an invisible or control character: refused naming it (four or more hex digits, upper case)', () => {
    expect(checkEmailText('a\u200bb', 20)).toEqual({
      ok: false,
      problem: 'invisible',
      detail: 'must not contain invisible or control characters (found U+200B), which would make the e-mail differ from the preview',
    });
    expect(checkEmailText('a\u00adb', 20)).toMatchObject({ problem: 'invisible', detail: expect.stringContaining('(found U+00AD)') as unknown });
    expect(checkEmailText('a\u{e0061}b', 20)).toMatchObject({ problem: 'invisible', detail: expect.stringContaining('(found U+E0061)') as unknown });
    expect(checkEmailText('\ufeffTitle', 20)).toMatchObject({ problem: 'invisible', detail: expect.stringContaining('(found U+FEFF)') as unknown });
  });

  it('nothing visible: refused as empty', () => {
    for (const text of ['', '   ', '\ufe0f', ' \ufe0e '])
      expect(checkEmailText(text, 20), JSON.stringify(text)).toEqual({ ok: false, problem: 'empty', detail: 'must not be empty (nothing visible)' });
  });

  it('over max characters (code points, after trimming): refused with the count; max itself is fine', () => {
    expect(checkEmailText('😀'.repeat(3), 3)).toEqual({ ok: true, text: '😀😀😀' });
    expect(checkEmailText(' abcd ', 3)).toEqual({ ok: false, problem: 'too_long', detail: 'must be at most 3 characters (it is 4)' });
    expect(characters('a😀b')).toBe(3);
  });
});

describe('titleKey', () => {
  it('compatibility forms, invisible characters, white space and case do not count', () => {
    expect(titleKey('Tax  Docs')).toBe('taxdocs');
    expect(titleKey('ＴＡＸ\u200b docs ')).toBe('taxdocs');
    expect(titleKey('Straße')).toBe('strasse');
    expect(titleKey(null)).toBe('');
    expect(titleKey('')).toBe('');
  });
});

describe('replaceInvisible: the same as replacing INVISIBLE in the whole text, found run by run', () => {
  // With the edges of the blocks that hold invisible characters (C1, the soft hyphen, general punctuation's marks and operators).
  const parts = fc.constantFrom(
    ...[
      'a',
      'Tax ',
      ' · ',
      '\n',
      '\r\n',
      '…',
      '\u200b',
      '\u202e',
      '\u00ad',
      '\u{E0041}',
      '\ud800',
      '\udc00',
      '😀',
      '\ufe0f',
      'é',
      'e\u0301',
      '\u2028',
      '\t',
      ' ',
    ],
    ...[
      '\u007f',
      '\u009f',
      '\u00a0',
      '\u00ac',
      '\u00ae',
      '\u02ff',
      '\u0300',
      '\u034f',
      '\u200a',
      '\u2010',
      '\u2027',
      '\u2029',
      '\u202f',
      '\u2030',
      '\u205f',
      '\u2060',
      '\u2064',
      '\u206f',
      '\u2070',
      '\u2bff',
      '\u2c00',
    ],
  );
  const text = fc.oneof(
    fc.array(parts, { maxLength: 40 }).map((p) => p.join('')),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
  const keepBreaks = (run: string) => (/\s/u.test(run) ? ' ' : '');
  it('removes, or replaces by run, exactly what the whole-text replace does, on every call (short runs are remembered)', () => {
    fc.assert(
      fc.property(text, (t) => {
        for (let i = 0; i < 2; i++) {
          expect(replaceInvisible(t)).toBe(t.replace(INVISIBLE, ''));
          expect(replaceInvisible(t, keepBreaks)).toBe(t.replace(INVISIBLE, keepBreaks));
        }
      }),
      { numRuns: 500 },
    );
  });
});
