/**
 * How names are compared (case- and accent-insensitive, white space collapsed), which clients share one, and
 * counts keyed by text from the service: the rules every list and the client lookup count names by.
 */
import { fold } from '../text/render.js';

/** The form names are compared in: case- and accent-insensitive, white space collapsed. */
export function nameKey(value: string | null | undefined): string {
  if (!value) return '';
  // Most names are plain ASCII: no accents to strip, so skip Unicode normalisation.
  const folded = PLAIN.test(value) ? value.toLowerCase() : fold(value);
  return SPACED.test(folded) ? folded.replace(/\s+/g, ' ').trim() : folded;
}
const PLAIN = /^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/;
const SPACED = /^\s|\s$|\s\s|[^\S ]/;

/** nameKey, remembered per raw name (names repeat across many requests). */
export function nameKeys(): (value: string | null | undefined) => string {
  const memo = new Map<string, string>();
  return (value) => {
    if (!value) return '';
    let key = memo.get(value);
    if (key === undefined) {
      key = nameKey(value);
      memo.set(value, key);
    }
    return key;
  };
}

/** Clients per name key, kept only for names two or more clients share. */
export function sharedNames<C extends { displayName: string | null }>(
  clients: readonly C[],
  keyOf: (value: string | null) => string = nameKey,
): Map<string, C[]> {
  const byKey = new Map<string, C[]>();
  for (const c of clients) {
    const key = keyOf(c.displayName);
    if (!key) continue;
    const list = byKey.get(key);
    if (list) list.push(c);
    else byKey.set(key, [c]);
  }
  for (const [key, list] of byKey) if (list.length < 2) byKey.delete(key);
  return byKey;
}

/** Adds `key` to a count object without touching the prototype (keys come from the API). */
export function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (Object.hasOwn(counts, key) ? counts[key]! : 0) + 1;
}

export function newCounts(): Record<string, number> {
  return Object.create(null) as Record<string, number>;
}
