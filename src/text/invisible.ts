/**
 * What counts as invisible text, in one place: the renderer removes it from what the service says,
 * the create tools refuse it in what will be e-mailed, and the duplicate guard ignores it.
 */

// Controls (C0, C1, DEL), format characters (bidi marks, overrides and isolates, zero-width
// characters, word joiner, invisible operators, Arabic letter mark, Mongolian vowel separator, tag
// characters), line and paragraph separators, lone surrogates, and every default-ignorable code
// point (variation selectors, Hangul fillers, combining grapheme joiner…).
const INVISIBLE_SOURCE = '[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}\\p{Default_Ignorable_Code_Point}]';
export const INVISIBLE = new RegExp(`${INVISIBLE_SOURCE}+`, 'gu');
const HAS_INVISIBLE = new RegExp(INVISIBLE_SOURCE, 'u');
/** Runs of anything but printable ASCII: an invisible character only ever lies inside one. */
const UNPRINTABLE = /[^\x20-\x7e]+/g;
const NOTHING = (): string => '';
/** What each short run became, per way of replacing: texts repeat a few ("\n", " · ", "…"), bounded. */
const RUNS = new WeakMap<(run: string) => string, Map<string, string>>();

/**
 * `text.replace(INVISIBLE, replace)`, the same string, found faster: the Unicode classes are matched
 * only inside the runs that are not printable ASCII (a long answer is mostly printable ASCII, which the
 * property classes scan slowly), and a short run seen before is not matched again.
 */
export function replaceInvisible(text: string, replace: (run: string) => string = NOTHING): string {
  let seen = RUNS.get(replace);
  if (!seen) RUNS.set(replace, (seen = new Map<string, string>()));
  const known = seen;
  return text.replace(UNPRINTABLE, (run) => {
    let out = known.get(run);
    if (out === undefined) {
      out = run.replace(INVISIBLE, replace);
      if (run.length <= 8) {
        if (known.size >= 512) known.clear();
        known.set(run, out);
      }
    }
    return out;
  });
}

/** Emoji presentation selectors: default-ignorable, but harmless and common in e-mailed titles ("❤️"). */
const EMOJI_SELECTOR = /[\ufe0e\ufe0f]/gu;

/** Length in characters (Unicode code points), not UTF-16 units: 150 emoji are 150 characters. */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export type EmailTextProblem = 'invisible' | 'empty' | 'too_long';

/**
 * Text that will be e-mailed to a client, as it will be sent: NFC, trimmed. Refused when it holds a
 * character that would show one thing in the preview and send another (controls, bidi overrides,
 * zero-width, tags, other invisible code points), when nothing in it is visible, or when it is over
 * `max` characters.
 */
export function checkEmailText(raw: string, max: number): { ok: true; text: string } | { ok: false; problem: EmailTextProblem; detail: string } {
  const nfc = raw.normalize('NFC');
  // Checked before trimming: trim() would silently drop a leading BOM or line separator.
  const probe = nfc.replace(EMOJI_SELECTOR, '');
  const bad = HAS_INVISIBLE.exec(probe);
  if (bad) {
    const cp = bad[0].codePointAt(0)!;
    return {
      ok: false,
      problem: 'invisible',
      detail: `must not contain invisible or control characters (found U+${cp.toString(16).toUpperCase().padStart(4, '0')}), which would make the e-mail differ from the preview`,
    };
  }
  if (!/[^\s]/u.test(probe)) return { ok: false, problem: 'empty', detail: 'must not be empty (nothing visible)' };
  const text = nfc.trim();
  const n = characters(text);
  if (n > max) return { ok: false, problem: 'too_long', detail: `must be at most ${max} characters (it is ${n})` };
  return { ok: true, text };
}

/**
 * The form two titles are compared in by the duplicate guard: NFKC, invisible characters removed,
 * white space removed (which errs on refusing: "Tax Docs" and "TaxDocs" count as the same), case
 * folded. "Tax  Docs", "tax docs" and "Tax\u200bDocs " are the same title.
 */
export function titleKey(title: string | null | undefined): string {
  if (!title) return '';
  return title.normalize('NFKC').replace(INVISIBLE, '').replace(/\s+/gu, '').toUpperCase().toLowerCase();
}
