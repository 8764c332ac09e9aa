import { replaceInvisible } from './invisible.js';

/**
 * The one renderer for text that came from the service (records, error messages, field details):
 * it is data, never instructions. Each value becomes one line, invisible and control characters
 * removed, capped, and — where free text could pass for our own words — JSON-quoted.
 */

// Characters that break a line (controls, separators) become a space; the rest of the invisible set is removed.
// eslint-disable-next-line no-control-regex
const BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

export function oneLine(value: string | null | undefined, max = 80): string {
  if (value === null || value === undefined) return '';
  let clean = value.length > max * 4 + 64 ? value.slice(0, max * 4 + 64) : value;
  clean = replaceInvisible(clean.replace(BREAKS, ' ')).replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return clean;
  // Cut on a code point boundary, never inside a surrogate pair.
  const cut = [...clean.slice(0, max)].slice(0, -1).join('');
  return `${cut.replace(/[\ud800-\udbff]$/, '')}…`;
}

/** A free-text field shown quoted, so it cannot pass for our own words (a quote inside is escaped). */
export function quoted(value: string | null | undefined, max = 80): string {
  return JSON.stringify(oneLine(value, max));
}

/** Case- and accent-insensitive form for matching (NFKD, combining marks removed, lower case). */
export function fold(value: string | null | undefined): string {
  if (!value) return '';
  return value
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** A date or date-time shown as its day (YYYY-MM-DD); anything else shown as it came, capped. */
export function dayText(value: string | null | undefined): string {
  if (value && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
  return oneLine(value, 30);
}

/**
 * Any JSON value from the service as short text, however deep or large: nesting beyond `depth` and
 * entries beyond a few are summarised, never walked (a hostile body cannot exhaust the stack).
 */
export function shortValue(value: unknown, max = 200, depth = 3, redact: (text: string) => string = (t) => t): string {
  const walk = (v: unknown, d: number): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    if (d <= 0) return Array.isArray(v) ? '[…]' : '{…}';
    if (Array.isArray(v))
      return `[${v
        .slice(0, 5)
        .map((x) => walk(x, d - 1))
        .join(', ')}${v.length > 5 ? ', …' : ''}]`;
    if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      return `{${entries
        .slice(0, 5)
        .map(([k, x]) => `${k}: ${walk(x, d - 1)}`)
        .join(', ')}${entries.length > 5 ? ', …' : ''}}`;
    }
    return '';
  };
  return oneLine(redact(walk(value, depth)), max);
}

/**
 * A record's other fields (scalars and short lists of scalars) as one line of data: each name made
 * one line, each text quoted, lists shortened to `items` entries, the whole capped at `max`.
 */
export function fieldsLine(fields: Record<string, unknown>, max = 600, items = 10): string {
  const scalar = (v: unknown) =>
    typeof v === 'string' ? quoted(v, 120) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : v === null || v === undefined ? 'null' : '…';
  const parts = Object.entries(fields).map(([key, v]) => {
    const shown = Array.isArray(v) ? `[${v.slice(0, items).map(scalar).join(', ')}${v.length > items ? ', …' : ''}]` : scalar(v);
    // A plain name (phone, externalRef) as it is; any other name quoted, like every free text.
    return `${/^[A-Za-z0-9_.-]{1,40}$/.test(key) ? key : quoted(key, 40)} ${shown}`;
  });
  const line = parts.join('; ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
