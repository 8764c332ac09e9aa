import { INVISIBLE, replaceInvisible } from './invisible.js';

/**
 * The renderer's invisible-character rule (text/invisible.ts's set, as text/render.ts applies it) for
 * structured data: what `structuredContent` carries out of the server, and what a page shows. The
 * pages bundle this file, so it imports nothing but the set.
 *
 * - A string's invisible characters are removed; a run of them that held white space (a line break)
 *   becomes one space, as the renderer makes it.
 * - Where removing them would make two different strings of one result read the same ("Acme Ltd",
 *   "Acme\u200b Ltd", "Acme Ltd\u{E0041}"), those strings instead show each invisible character as a
 *   visible mark, ⟨U+200B⟩, so two clients never look alike. The rule is idempotent (a shown string
 *   has no invisible character left), so a page applies it again to what the server sent; a service
 *   string that spells "⟨U+200B⟩" itself differs from the others by visible characters and reads so.
 * - Identifiers stay exact (a later call passes them back as they are): `id`, `token`, keys ending in
 *   `Id`, and the `payload` a send POSTs (checked to hold no invisible character before it is
 *   previewed). A page shows an identifier's invisible characters as marks (markInvisible).
 */

/** Splits a shown string into text and marks (odd indexes are marks). */
export const MARKS = /(⟨U\+[0-9A-F]{4,6}⟩)/u;

/** Each invisible character as a visible mark, ⟨U+200B⟩. */
export function markInvisible(text: string): string {
  return text.replace(INVISIBLE, (run) => [...run].map((c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`).join(''));
}

/** A run of invisible characters that held a line break reads as a space; any other, as nothing. */
const SPACE_OR_NOTHING = (run: string): string => (/\s/u.test(run) ? ' ' : '');

/** The renderer's rule on one string: invisible characters removed, a run that held a line break a space. */
export function withoutInvisibles(text: string): string {
  return replaceInvisible(text, SPACE_OR_NOTHING);
}

const EXACT_KEYS = new Set(['id', 'token', 'payload']);
const exact = (key: string | undefined) => key !== undefined && (EXACT_KEYS.has(key) || /[a-z]Id$/.test(key));

const RESHOWN = new WeakMap<object, unknown>();
/**
 * Frozen values (rows a tool keeps and shares across answers) whose every string and key, seen whole,
 * reads as it is: the first look of a later answer holding them does not visit them again.
 */
const PLAIN = new WeakSet<object>();

/**
 * A JSON value with the rule applied to every string and key, except identifiers (kept exact). The
 * value is not changed; a frozen value's answer is worked out once and frozen too.
 */
export function visibleStructured<T>(value: T): T {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? (shown(new Map(), value) as T) : value;
  const frozen = Object.isFrozen(value);
  if (frozen && RESHOWN.has(value)) return RESHOWN.get(value) as T;
  // Which strings would read the same with their invisible characters removed: first the changed
  // ones by their reading, then any string that already reads so.
  const readAs = new Map<string, Set<string>>();
  collect(value, undefined, 0, readAs);
  if (!readAs.size) {
    // Nothing to change: the very value goes on (a shared answer stays shared).
    if (frozen) RESHOWN.set(value, value);
    return value;
  }
  visit(value, undefined, 0, (s) => readAs.get(s)?.add(s));
  const out = walk(value, undefined, 0, (s) => shown(readAs, s));
  if (frozen) RESHOWN.set(value, deepFreezeJson(out));
  return out as T;
}

function shown(readAs: Map<string, Set<string>>, s: string): string {
  const plain = withoutInvisibles(s);
  const alike = readAs.get(plain);
  if (alike && alike.size > 1) return markInvisible(s);
  return plain;
}

/** What `collect` found in a value: nothing to change, seen whole; nothing to change in what was seen, but nesting was cut; something to change. */
const SEEN_PLAIN = 0;
const CUT = 1;
const CHANGES = 2;

/** A string that reads otherwise without its invisible characters, noted under that reading; whether it does. */
function note(readAs: Map<string, Set<string>>, s: string): boolean {
  const plain = withoutInvisibles(s);
  if (plain === s) return false;
  let raws = readAs.get(plain);
  if (!raws) readAs.set(plain, (raws = new Set()));
  raws.add(s);
  return true;
}

/** The first look: every string (and key) that the rule changes, by its reading; a frozen value seen whole with nothing to change is remembered and passed over after. */
function collect(v: unknown, key: string | undefined, depth: number, readAs: Map<string, Set<string>>): number {
  if (exact(key)) return SEEN_PLAIN;
  if (typeof v === 'string') return note(readAs, v) ? CHANGES : SEEN_PLAIN;
  if (v === null || typeof v !== 'object') return SEEN_PLAIN;
  if (depth > 64) return CUT;
  const frozen = Object.isFrozen(v);
  if (frozen && PLAIN.has(v)) return SEEN_PLAIN;
  let found = SEEN_PLAIN;
  if (Array.isArray(v)) {
    for (const x of v) found = Math.max(found, collect(x, undefined, depth + 1, readAs));
  } else {
    for (const [k, x] of Object.entries(v)) {
      if (!exact(k) && note(readAs, k)) found = CHANGES;
      found = Math.max(found, collect(x, k, depth + 1, readAs));
    }
  }
  if (frozen && found === SEEN_PLAIN) PLAIN.add(v);
  return found;
}

function visit(v: unknown, key: string | undefined, depth: number, see: (s: string) => void): void {
  if (exact(key)) return;
  if (typeof v === 'string') return see(v);
  if (v === null || typeof v !== 'object' || depth > 64) return;
  if (Array.isArray(v)) {
    for (const x of v) visit(x, undefined, depth + 1, see);
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    if (!exact(k)) see(k);
    visit(x, k, depth + 1, see);
  }
}

function walk(v: unknown, key: string | undefined, depth: number, fix: (s: string) => string): unknown {
  if (exact(key)) return v;
  if (typeof v === 'string') return fix(v);
  if (v === null || typeof v !== 'object' || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => walk(x, undefined, depth + 1, fix));
  const copy: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) copy[exact(k) ? k : fix(k)] = walk(x, k, depth + 1, fix);
  return copy;
}

function deepFreezeJson<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreezeJson(x);
    Object.freeze(v);
  }
  return v;
}

/** A tool result with the rule applied to its structuredContent (the text is the renderer's already). */
export function visibleResult<R extends object>(result: R): R {
  const before = (result as { structuredContent?: unknown }).structuredContent;
  if (!before || typeof before !== 'object') return result;
  const structuredContent = visibleStructured(before);
  return structuredContent === before ? result : { ...result, structuredContent };
}
