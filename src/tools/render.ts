/** Shared rendering: API text is data, so every field is made one safe line and capped. */

// C0/C1 controls, DEL, line and paragraph separators, bidi overrides and isolates, zero-width marks.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]+/g;

export function oneLine(value: string | null | undefined, max = 80): string {
  if (value === null || value === undefined) return '';
  const clean = value.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** A date or date-time shown as its day (YYYY-MM-DD); anything else shown as it came, capped. */
export function dayText(value: string | null | undefined): string {
  if (value && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
  return oneLine(value, 30);
}

/** A free-text field shown quoted, so it cannot pass for our own words. */
export function quoted(value: string | null | undefined, max = 80): string {
  return JSON.stringify(oneLine(value, max));
}

/** Case- and accent-insensitive form for matching. */
export function fold(value: string | null | undefined): string {
  if (!value) return '';
  return value.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

export function countsText(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return entries.map(([k, n]) => `${oneLine(k, 30)} ${n}`).join(', ');
}

/** Adds `key` to a count object without touching the prototype (keys come from the API). */
export function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (Object.hasOwn(counts, key) ? counts[key]! : 0) + 1;
}

export function newCounts(): Record<string, number> {
  return Object.create(null) as Record<string, number>;
}

const TEXT_BUDGET = 7_600;

/**
 * Joins a header and record lines within the text budget, then says how many more there are and
 * the offset that shows them. Exact counts stay in the header whatever is cut.
 */
export function pageText(header: string, lines: string[], offset: number, matched: number, emptyHint: string): string {
  if (matched === 0) return `${header}\n${emptyHint}`;
  if (lines.length === 0) return `${header}\nNo records at offset ${offset}: ${matched} matched; use offset=0.`;
  let text = header;
  let shown = 0;
  for (const line of lines) {
    if (text.length + line.length + 60 > TEXT_BUDGET) break;
    text += `\n${line}`;
    shown++;
  }
  const rest = matched - offset - shown;
  if (rest > 0) text += `\n…${rest} more; use offset=${offset + shown}`;
  return text;
}

export function range(offset: number, returned: number): string {
  return returned === 0 ? 'none' : `${offset + 1}–${offset + returned}`;
}
