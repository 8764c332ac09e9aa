import { isAscii } from 'node:buffer';
import { oneLine } from '../text/render.js';
import { BadResponseError } from './errors.js';
import { listData } from './records.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const DATA_KEY = Buffer.from('"data"');
/** The longest spelling of the key "data" in JSON: four \uXXXX escapes and the quotes. */
const LONGEST_DATA_KEY = 26;
/** In the fast path, how much may wait for an element boundary before the exact scanner takes over. */
const PENDING_LIMIT = 1024 * 1024;
/** Inside a string, how many bytes the scanner steps through itself before asking for the next quote natively. */
const INLINE_STRING_BYTES = 32;
/** Where `data` opens with more than this left of the chunk, the rest goes to the fast path at once (a small body is read exactly, as before). */
const HAND_OFF_BYTES = 64 * 1024;
/** The largest scratch buffer kept between parses. */
const SCRATCH_KEPT = 4 * 1024 * 1024;
/** How deep an element of `data` may nest (the element itself is level 1; a request record needs 1). */
export const MAX_ELEMENT_DEPTH = 64;

export interface ListStreamOptions {
  /** Elements of `data` nested deeper than this many levels are refused (default {@link MAX_ELEMENT_DEPTH}). */
  maxDepth?: number;
  /**
   * The fields each element is read for. When given, nothing refuses the list for its depth: a value
   * anywhere else (another field of an object element, any part of an element that is not an
   * object) that nests deeper than `maxDepth` is skipped unread, whatever its depth, in constant
   * memory, and stands as null where it was cut; a read field nested too deep is skipped the same
   * way and stands as null as a whole, and its record is listed in {@link unreadableIn}.
   */
  fields?: readonly string[];
}

/** A record one or more of whose read fields could not be read (nested too deep): they stand as null. */
export interface Unreadable {
  /** Its place in the records. */
  index: number;
  /** The read fields that could not be read. */
  fields: string[];
}

/** The records of a list that could not be read in full, by the records array the parser answered. */
const UNREADABLE = new WeakMap<readonly unknown[], readonly Unreadable[]>();

/** Which records of a list (the very array a list parser answered) could not be read in full; none for any other array. */
export function unreadableIn(records: readonly unknown[]): readonly Unreadable[] {
  return UNREADABLE.get(records) ?? [];
}

/** How many records a note names by id before it counts the rest. */
const NAMED = 5;

/**
 * What the model reads of a list's records that could not be read in full: one note naming the first
 * few by id and the fields that stand empty, or none. Each such record is still listed and counted.
 */
export function unreadableNotes(records: readonly { id: string | null }[], noun: 'client' | 'request'): string[] {
  const bad = unreadableIn(records);
  if (bad.length === 0) return [];
  const named = bad.slice(0, NAMED).map((u) => {
    const id = records[u.index]?.id;
    return `${id ? `id ${oneLine(id, 40)}` : 'one with no readable id'} (${u.fields.join(', ')})`;
  });
  const more = bad.length > NAMED ? `, and ${(bad.length - NAMED).toLocaleString('en')} more` : '';
  const them = bad.length === 1 ? `1 ${noun}` : `${bad.length.toLocaleString('en')} ${noun}s`;
  return [
    `${them} in the service's list could not be read in full: ${named.join('; ')}${more}. ` +
      `Those fields are nested more than ${MAX_ELEMENT_DEPTH} levels deep, which no ${noun} field is, so they show as empty; ${bad.length === 1 ? 'it is' : 'each is'} still listed and counted.`,
  ];
}

const NULL = Buffer.from('null');

/** JSON white space: anything else between elements is an error, as JSON.parse says. */
function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** The last comma of buf that follows a "}" (white space between allowed), or -1: a likely end of an object element. */
function lastObjectBoundary(buf: Buffer): number {
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
function stringEnd(chunk: Buffer, i: number, n: number): number {
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
function deeperThan(value: unknown, levels: number): boolean {
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
 * Reads a `{ "data": [ ... ] }` body as it streams, turning each element of `data` into a record
 * without ever holding the whole body, its text or its full object tree: memory stays near the size
 * of the records kept. The answer is the one JSON.parse of the whole body would give (a repeated
 * top-level "data" key included: the last one wins), except that an element nested more than
 * `maxDepth` levels deep is refused (no request record is: such an answer is not the documented list).
 *
 * Every byte costs O(1) however the body is chunked: no state is rebuilt by rescanning, an element
 * cut by chunks is kept as a list of pieces and copied once when it ends, and each byte is passed
 * over a bounded number of times (searched for a cut, tried by the fast path, scanned at most twice,
 * copied and parsed once). `examined` counts those passes, so tests can check the bound.
 *
 * Fast path, inside `data`: each chunk is cut at its last "}," and the bytes from the current
 * element's start to the cut are parsed with one JSON.parse. Those bytes start at an element's
 * start, so if the cut fell inside a string or a nested value they would end in an open string or
 * open brackets and JSON.parse would refuse them: a successful parse proves the cut was between
 * elements. When it fails (a string holding "},", the end of `data`, elements that are not objects,
 * or nothing to cut for PENDING_LIMIT bytes) the exact scanner reads those bytes and goes on until
 * a chunk ends between two elements or inside one begun in that chunk, where the fast path resumes
 * (see resumeFastPath). Elements it parses are checked for depth after the parse.
 *
 * Exact scanner: tracks strings and nesting byte by byte (long strings are crossed with the
 * platform's byte search). Everything outside `data` forms a small skeleton parsed at the end, so
 * malformed JSON and a wrong shape are caught exactly as JSON.parse of the whole body would catch them.
 */
export class ListStreamParser<T> {
  private passes = 0;
  private readonly maxDepth: number;
  private readonly fields: Set<string> | undefined;
  /** The longest read field's name as JSON can spell it (every character a \\uXXXX escape, and the quotes). */
  private readonly longestField: number;
  /** The element being read is an object; at its top level, between a key's colon and the next comma. */
  private elemIsObject = false;
  private elemAfterColon = false;
  /** The element's current top-level key is a read field, and its name. */
  private elemKeyRead = false;
  private elemKey = '';
  /** Read fields of the element being scanned that were cut for their depth. */
  private elemCut: string[] = [];
  /** Records whose read fields could not be read. */
  private unreadable: Unreadable[] = [];
  /** Pieces of an element's top-level key cut by a chunk's end. */
  private elemKeyPieces: Buffer[] = [];
  /** Skipping a value nested too deep outside the read fields: the depth at which it ends (0: not skipping). */
  private skipUntil = 0;
  private readonly records: T[] = [];
  private readonly skeleton: Buffer[] = [];
  private depth = 0;
  /** The body's top-level value is an object (its depth-1 strings before a colon are keys). */
  private topIsObject = false;
  private inString = false;
  /** The next byte is escaped (a backslash ended the previous chunk inside a string). */
  private escaped = false;
  /** At depth 1, between a key's colon and the next comma. */
  private afterColon = false;
  private lastKeyIsData = false;
  /** Pieces of a top-level key cut by a chunk's end. */
  private keyPieces: Buffer[] = [];
  /** Inside a top-level "data" array (its elements are at depth 2). */
  private inData = false;
  /** The element being read began in an earlier chunk: its bytes so far. */
  private carried: Buffer[] = [];
  /** The last element ended with a comma, so another must follow. */
  private afterComma = false;
  /** In the fast path (inside `data`, from an element's start): bytes not yet parsed. */
  private fast = false;
  private pending: Buffer[] = [];
  private pendingLength = 0;
  /** Failed fast tries in a row, and how many chunks the exact scanner reads before the next try. */
  private fastMisses = 0;
  private fastWait = 0;
  /** The element in `carried` began in the chunk last scanned. */
  private carriedIsFresh = false;
  /** Where the text to parse is put together (reused: a run is a chunk's worth of bytes). */
  private scratch = Buffer.alloc(0);

  constructor(
    private readonly what: string,
    private readonly toRecord: (raw: unknown) => T,
    options: ListStreamOptions = {},
  ) {
    this.maxDepth = options.maxDepth ?? MAX_ELEMENT_DEPTH;
    this.fields = options.fields ? new Set(options.fields) : undefined;
    this.longestField = Math.max(0, ...(options.fields ?? []).map((f) => f.length * 6 + 2));
  }

  /** Bytes scanned, copied or parsed so far (every pass over a byte counts): for tests of linear work. */
  get examined(): number {
    return this.passes;
  }

  write(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.fast) {
      this.writeFast(chunk);
    } else {
      this.scan(chunk, true);
    }
    if (!this.fast && this.inData) this.resumeFastPath();
  }

  /**
   * Inside `data`, the next chunk may try the fast path again: from between two elements, or from
   * an element begun in the chunk just scanned (its bytes become the pending ones, and the scanner's
   * state goes back to that element's start). Bytes carried from earlier chunks stay with the exact
   * scanner, so a failed try re-reads no byte twice. After failed tries the fast path waits a number
   * of chunks that doubles with each failure in a row.
   */
  private resumeFastPath(): void {
    if (this.carried.length > 0 && !this.carriedIsFresh) return;
    if (this.fastWait > 0) {
      this.fastWait--;
      return;
    }
    this.fast = true;
    this.pending = this.carried;
    this.pendingLength = 0;
    for (const piece of this.pending) this.pendingLength += piece.length;
    this.carried = [];
    Object.assign(this, { depth: 2, inString: false, escaped: false });
  }

  /** The records, once the body has ended; throws when the body is not the documented list. */
  end(): T[] {
    if (this.fast) this.leaveFastPath();
    if (this.inData || this.depth !== 0 || this.inString) {
      throw new BadResponseError(`The service's ${this.what} list is not valid JSON: the body ended early.`);
    }
    let shape: unknown;
    try {
      shape = JSON.parse(this.decode(this.skeleton, '', ''));
    } catch {
      throw this.invalid();
    }
    // The skeleton holds "data": [] where the elements were streamed, so an array here is that one.
    const data = listData(shape, this.what);
    if (data.length > 0) return data.map(this.toRecord);
    if (this.unreadable.length > 0) UNREADABLE.set(this.records, this.unreadable);
    return this.records;
  }

  private writeFast(chunk: Buffer): void {
    this.passes += chunk.length;
    const cut = lastObjectBoundary(chunk);
    if (cut >= 0) {
      const head = chunk.subarray(0, cut);
      if (this.tryRun([...this.pending, head])) {
        this.pending = [chunk.subarray(cut + 1)];
        this.pendingLength = chunk.length - cut - 1;
        this.afterComma = true;
        this.fastMisses = 0;
        return;
      }
      this.fastMisses++;
      this.fastWait = 2 ** Math.min(this.fastMisses - 1, 6) - 1;
    } else if (this.pendingLength + chunk.length < PENDING_LIMIT) {
      this.pending.push(chunk);
      this.pendingLength += chunk.length;
      return;
    }
    this.pending.push(chunk);
    this.leaveFastPath();
  }

  /** Hands what waits to the exact scanner: it is inside `data` at an element's start, as the fast path was. */
  private leaveFastPath(): void {
    const pending = this.pending;
    this.fast = false;
    this.pending = [];
    this.pendingLength = 0;
    for (const piece of pending) this.scan(piece);
  }

  /** Parses the pieces as whole elements; false (keeping nothing) when they are not. */
  private tryRun(pieces: Buffer[]): boolean {
    let values: unknown[];
    try {
      values = JSON.parse(this.decode(pieces, '[', ']')) as unknown[];
    } catch {
      return false;
    }
    for (const value of values) {
      this.elemCut = [];
      const kept = this.withinDepth(value);
      this.keep(kept, this.elemCut);
    }
    this.elemCut = [];
    return true;
  }

  /** Keeps an element as a record, noting the read fields `cut` for their depth. */
  private keep(value: unknown, cut?: readonly string[]): void {
    if (cut?.length) this.unreadable.push({ index: this.records.length, fields: [...new Set(cut)] });
    this.records.push(this.toRecord(value));
  }

  /**
   * An element parsed whole, checked for depth: without `fields` any part too deep refuses the list;
   * with them a read field too deep becomes null as a whole (and is noted), and what is too deep
   * elsewhere becomes null where it is cut (as the scanner skips it).
   */
  private withinDepth(value: unknown): unknown {
    const max = this.maxDepth;
    if (!this.fields) {
      if (deeperThan(value, max)) throw this.tooDeep();
      return value;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return pruned(value, max);
    if (max <= 0) return null;
    const element = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const key in element) {
      const v = element[key];
      if (v === null || typeof v !== 'object') continue;
      if (this.fields.has(key)) {
        if (deeperThan(v, max - 1)) {
          (out ??= { ...element })[key] = null;
          this.elemCut.push(key);
        }
      } else {
        const kept = pruned(v, max - 1);
        if (kept !== v) (out ??= { ...element })[key] = kept;
      }
    }
    return out ?? value;
  }

  /**
   * Parses complete elements that lie side by side ("e1,e2,e3"), already depth-checked, and keeps their
   * records; `cut`: the one element's read fields cut for their depth, which stand as null as a whole.
   */
  private parseRun(pieces: Buffer[], cut?: readonly string[]): void {
    let values: unknown[];
    try {
      values = JSON.parse(this.decode(pieces, '[', ']')) as unknown[];
    } catch {
      throw this.invalid();
    }
    if (cut?.length) {
      const element = values[0] as Record<string, unknown>;
      for (const key of cut) element[key] = null;
      this.keep(element, cut);
      return;
    }
    for (const value of values) this.keep(value);
  }

  /** The text of the pieces between `open` and `close`, copied once (ASCII is decoded as Latin-1, which is quicker). */
  private decode(pieces: Buffer[], open: string, close: string): string {
    let length = open.length + close.length;
    for (const piece of pieces) length += piece.length;
    this.passes += length;
    if (this.scratch.length < length) this.scratch = Buffer.allocUnsafe(Math.max(length, 2 * this.scratch.length));
    const bytes = this.scratch.subarray(0, length);
    let at = bytes.write(open, 0, 'latin1');
    for (const piece of pieces) at += piece.copy(bytes, at);
    bytes.write(close, at, 'latin1');
    const text = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
    if (this.scratch.length > SCRATCH_KEPT) this.scratch = Buffer.alloc(0); // one huge element: not kept
    return text;
  }

  /**
   * `handOff`: where `data` opens in this chunk (and the fast path may run) with more than
   * HAND_OFF_BYTES after it, the rest goes to the fast path at once, so the exact scanner reads only
   * the body's first bytes, not a whole chunk of elements (cold, on a process's first list).
   */
  private scan(chunk: Buffer, handOff = false): void {
    if (chunk.length === 0) return;
    this.passes += chunk.length;
    // The state lives in locals during the loop and is saved after.
    let { depth, inString, escaped, afterColon, inData, topIsObject } = this;
    const limit = this.maxDepth + 2;
    let skeletonFrom = inData ? -1 : 0;
    let keyStart = this.keyPieces.length && inString ? 0 : -1;
    // Within this chunk: where the current element began (-1: none yet; 0 with `carried`: it
    // continues from the last chunk), and the run of complete elements not yet parsed.
    let elementStart = this.carried.length ? 0 : -1;
    let fresh = elementStart < 0;
    // Where the element's bytes not yet kept begin in this chunk, after a skipped value ended here (-1: none).
    let segFrom = -1;
    let skipUntil = this.skipUntil;
    let elemKeyStart = this.elemKeyPieces.length && inString ? 0 : -1;
    let runStart = -1;
    let runEnd = -1;
    let rest = -1;
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (inString) {
        if (escaped) {
          escaped = false;
          i++;
        }
        const end = stringEnd(chunk, i, n);
        if (end >= n) {
          escaped = end > n;
          break;
        }
        i = end;
        inString = false;
        if (keyStart >= 0) {
          this.lastKeyIsData = this.isDataKey(chunk.subarray(keyStart, i + 1));
          keyStart = -1;
        }
        if (elemKeyStart >= 0) {
          this.elemKeyRead = this.isReadField(chunk.subarray(elemKeyStart, i + 1));
          elemKeyStart = -1;
        }
        i++;
        continue;
      }
      const b = chunk[i]!;
      if (skipUntil > 0) {
        // Inside a value skipped unread: only strings and brackets matter, and nothing is kept.
        if (b === QUOTE) inString = true;
        else if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
        else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
          depth--;
          if (depth === skipUntil) {
            skipUntil = 0;
            segFrom = i + 1;
          }
        }
        i++;
        continue;
      }
      if (inData && depth === 2) {
        if (b === COMMA || b === CLOSE_ARRAY) {
          // An element ends here (or, for "[]", none was there).
          if (elementStart < 0) {
            if (b === COMMA || this.afterComma) throw this.invalid(); // "[1,,2]", "[,1]", "[1,]"
          } else if (this.carried.length) {
            this.carried.push(chunk.subarray(segFrom >= 0 ? segFrom : 0, i));
            this.parseRun(this.carried, this.elemCut);
            this.carried = [];
            this.elemCut = [];
            segFrom = -1;
          } else {
            if (runStart < 0) runStart = elementStart;
            runEnd = i;
          }
          this.afterComma = b === COMMA;
          elementStart = -1;
          fresh = true;
          if (b === CLOSE_ARRAY) {
            if (runStart >= 0) this.parseRun([chunk.subarray(runStart, runEnd)]);
            runStart = runEnd = -1;
            inData = false;
            depth--;
            skeletonFrom = i; // the skeleton gets "[" … "]" with nothing between
          }
          i++;
          continue;
        }
        if (elementStart < 0 && !isSpace(b)) {
          elementStart = i;
          this.elemIsObject = b === OPEN_OBJECT;
          this.elemAfterColon = false;
          this.elemKeyRead = false;
          this.elemCut = [];
        }
      }
      if (b === QUOTE) {
        inString = true;
        if (depth === 1 && topIsObject && !afterColon) {
          keyStart = i;
          this.keyPieces = [];
        } else if (depth === 3 && inData && this.fields && this.elemIsObject && !this.elemAfterColon) {
          elemKeyStart = i;
          this.elemKeyPieces = [];
        }
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (depth === 0) topIsObject = b === OPEN_OBJECT;
        depth++;
        if (inData && depth > limit) {
          // Too deep: without read fields the list is refused; otherwise skipped unread, standing as null
          // where it is cut, and a read field as a whole (its record noted).
          if (!this.fields) throw this.tooDeep();
          if (this.elemIsObject && this.elemKeyRead && !this.elemCut.includes(this.elemKey)) this.elemCut.push(this.elemKey);
          if (runStart >= 0) this.parseRun([chunk.subarray(runStart, runEnd)]);
          runStart = runEnd = -1;
          this.carried.push(chunk.subarray(segFrom >= 0 ? segFrom : elementStart, i), NULL);
          segFrom = -1;
          if (elementStart < 0) elementStart = 0;
          fresh = false;
          skipUntil = depth - 1;
          i++;
          continue;
        }
        if (depth === 2 && b === OPEN_ARRAY && topIsObject && afterColon && this.lastKeyIsData) {
          this.skeleton.push(chunk.subarray(skeletonFrom, i + 1));
          skeletonFrom = -1;
          inData = true;
          // A repeated "data" key: the last one wins, as in JSON.parse (the earlier one was parsed, so validated).
          this.records.length = 0;
          this.unreadable = [];
          this.afterComma = false;
          if (handOff && this.fastWait === 0 && n - i > HAND_OFF_BYTES) {
            rest = i + 1;
            break;
          }
        }
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        depth--;
        if (depth < 1) afterColon = false;
      } else if (depth === 1) {
        if (b === COLON) afterColon = true;
        else if (b === COMMA) afterColon = false;
      } else if (depth === 3 && inData) {
        if (b === COLON) this.elemAfterColon = true;
        else if (b === COMMA) this.elemAfterColon = false;
      }
      i++;
    }
    if (runStart >= 0) this.parseRun([chunk.subarray(runStart, runEnd)]);
    if (inData && elementStart >= 0 && skipUntil === 0) this.carried.push(chunk.subarray(segFrom >= 0 ? segFrom : elementStart));
    if (elemKeyStart >= 0) this.elemKeyPieces.push(chunk.subarray(elemKeyStart));
    this.skipUntil = skipUntil;
    this.carriedIsFresh = fresh;
    if (!inData && skeletonFrom >= 0) this.skeleton.push(chunk.subarray(skeletonFrom));
    if (keyStart >= 0) this.keyPieces.push(chunk.subarray(keyStart));
    Object.assign(this, { depth, inString, escaped, afterColon, inData, topIsObject });
    if (rest >= 0) {
      // Between "[" and the first element: the fast path's own starting point (resumeFastPath).
      this.fast = true;
      this.pending = [];
      this.pendingLength = 0;
      this.writeFast(chunk.subarray(rest));
    }
  }

  /** Whether a top-level key (its bytes, quotes included, with any pieces cut by chunks) reads "data". */
  private isDataKey(tail: Buffer): boolean {
    const pieces = [...this.keyPieces, tail];
    this.keyPieces = [];
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

  /** Whether an element's top-level key (its bytes, quotes included, with any pieces cut by chunks) is a read field. */
  private isReadField(tail: Buffer): boolean {
    const pieces = [...this.elemKeyPieces, tail];
    this.elemKeyPieces = [];
    let length = 0;
    for (const piece of pieces) length += piece.length;
    if (length > this.longestField) return false;
    try {
      const key: unknown = JSON.parse(Buffer.concat(pieces, length).toString('utf8'));
      if (typeof key !== 'string' || !this.fields!.has(key)) return false;
      this.elemKey = key;
      return true;
    } catch {
      return false; // the element's parse reports it
    }
  }

  private tooDeep(): BadResponseError {
    return new BadResponseError(
      `The service's ${this.what} list holds an element nested more than ${this.maxDepth} levels deep; no ${this.what} record is, so the list was refused.`,
    );
  }

  private invalid(): BadResponseError {
    return new BadResponseError(`The service's ${this.what} list is not valid JSON.`);
  }
}
