import { isAscii } from 'node:buffer';

/**
 * The byte-level pieces of the list parser (./list-stream.ts): JSON's structural bytes, where a string
 * ends, where an object element likely ends, and how deep a parsed value nests.
 */

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
/** Inside a string, how many bytes the scanner steps through itself before asking for the next quote natively. */
const INLINE_STRING_BYTES = 32;
export const NULL = Buffer.from('null');

/** JSON white space: anything else between elements is an error, as JSON.parse says. */
export function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** The last comma of buf that follows a "}" (white space between allowed), or -1: a likely end of an object element. */
export function lastObjectBoundary(buf: Buffer): number {
  let comma = buf.lastIndexOf(COMMA);
  // Each search starts before the last one's comma, so together they read buf once.
  while (comma > 0) {
    let k = comma - 1;
    while (k >= 0 && isSpace(buf[k]!)) k--;
    if (k >= 0 && buf[k] === CLOSE_OBJECT) return comma;
    comma = k > 0 ? buf.lastIndexOf(COMMA, k) : -1;
  }
  return -1;
}

/** How many backslashes come right before `at`, looking no further back than `from`. */
function backslashesBefore(chunk: Buffer, at: number, from: number): number {
  let k = at - 1;
  while (k >= from && chunk[k] === BACKSLASH) k--;
  return at - 1 - k;
}

/**
 * From `i` inside a string, the index of its closing quote; n when the chunk ends inside it, n + 1
 * when it ends right after a backslash (the next chunk's first byte is escaped). Short stretches are
 * stepped through; a long one is crossed with the native search for a quote (a quote after an odd
 * run of backslashes is escaped, and the runs counted are disjoint, so no byte is read twice).
 */
export function stringEnd(chunk: Buffer, i: number, n: number): number {
  for (;;) {
    const stop = Math.min(n, i + INLINE_STRING_BYTES);
    while (i < stop) {
      const c = chunk[i]!;
      if (c === QUOTE) return i;
      i += c === BACKSLASH ? 2 : 1;
    }
    if (i >= n) return i;
    const q = chunk.indexOf(QUOTE, i);
    if (q < 0) return backslashesBefore(chunk, n, i) % 2 === 1 ? n + 1 : n;
    if (backslashesBefore(chunk, q, i) % 2 === 0) return q;
    i = q + 1;
  }
}

/** True when `value` holds objects or arrays more than `levels` deep (a container itself is one level). */
export function deeperThan(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (levels <= 0) return true;
  if (Array.isArray(value)) {
    for (const v of value as unknown[]) if (v !== null && typeof v === 'object' && deeperThan(v, levels - 1)) return true;
  } else {
    for (const key in value) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== null && typeof v === 'object' && deeperThan(v, levels - 1)) return true;
    }
  }
  return false;
}

/** `value` with every container more than `levels` deep replaced by null (copied only where something is cut). */
function pruned(value: unknown, levels: number): unknown {
  const cut = (v: unknown, left: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (left <= 0) return null;
    if (Array.isArray(v)) return (v as unknown[]).map((x) => cut(x, left - 1));
    const out: Record<string, unknown> = {};
    for (const key in v) out[key] = cut((v as Record<string, unknown>)[key], left - 1);
    return out;
  };
  return deeperThan(value, levels) ? cut(value, levels) : value;
}

/**
 * An object element parsed whole, with read `fields`: a read field nested more than `max` levels
 * becomes null as a whole (its name pushed on `cut`), and what is too deep elsewhere becomes null where
 * it is cut (as the scanner skips it). Copied only where something is cut.
 */
export function prunedElement(value: unknown, max: number, fields: ReadonlySet<string>, cut: string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return pruned(value, max);
  if (max <= 0) return null;
  const element = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key in element) {
    const v = element[key];
    if (v === null || typeof v !== 'object') continue;
    if (fields.has(key)) {
      if (deeperThan(v, max - 1)) {
        (out ??= { ...element })[key] = null;
        cut.push(key);
      }
    } else {
      const kept = pruned(v, max - 1);
      if (kept !== v) (out ??= { ...element })[key] = kept;
    }
  }
  return out ?? value;
}

/** The largest scratch buffer kept between parses. */
const SCRATCH_KEPT = 4 * 1024 * 1024;

/** Puts pieces of bytes together as one text, in a scratch buffer reused between parses (a run is a chunk's worth of bytes). */
export class TextJoiner {
  private scratch = Buffer.alloc(0);

  /** The text of the pieces between `open` and `close`, copied once (ASCII is decoded as Latin-1, which is quicker), and its length in bytes. */
  join(pieces: Buffer[], open: string, close: string): { text: string; length: number } {
    let length = open.length + close.length;
    for (const piece of pieces) length += piece.length;
    if (this.scratch.length < length) this.scratch = Buffer.allocUnsafe(Math.max(length, 2 * this.scratch.length));
    const bytes = this.scratch.subarray(0, length);
    let at = bytes.write(open, 0, 'latin1');
    for (const piece of pieces) at += piece.copy(bytes, at);
    bytes.write(close, at, 'latin1');
    const text = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
    if (this.scratch.length > SCRATCH_KEPT) this.scratch = Buffer.alloc(0); // one huge element: not kept
    return { text, length };
  }
}

const DATA_KEY = Buffer.from('"data"');
/** The longest spelling of the key "data" in JSON: four \uXXXX escapes and the quotes. */
const LONGEST_DATA_KEY = 26;

/** Whether a key's bytes (quotes included, in the pieces chunks cut it into) read "data". */
export function readsData(pieces: Buffer[]): boolean {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  if (length > LONGEST_DATA_KEY) return false;
  const key = Buffer.concat(pieces, length);
  if (key.equals(DATA_KEY)) return true;
  if (!key.includes(BACKSLASH)) return false;
  try {
    return JSON.parse(key.toString('utf8')) === 'data'; // "\u0064ata" is "data" too
  } catch {
    return false; // the skeleton's parse reports it
  }
}

/** The read field a key's bytes (quotes included, in pieces) name, if any; `longest`: the longest read field as JSON can spell it. */
export function fieldNamed(pieces: Buffer[], longest: number, fields: ReadonlySet<string>): string | undefined {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  if (length > longest) return undefined;
  try {
    const key: unknown = JSON.parse(Buffer.concat(pieces, length).toString('utf8'));
    return typeof key === 'string' && fields.has(key) ? key : undefined;
  } catch {
    return undefined; // the element's parse reports it
  }
}
