import { BadResponseError } from './errors.js';
import { listData } from './records.js';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  deeperThan,
  fieldNamed,
  isSpace,
  lastObjectBoundary,
  NULL,
  OPEN_ARRAY,
  OPEN_OBJECT,
  prunedElement,
  QUOTE,
  readsData,
  stringEnd,
  TextJoiner,
} from './json-scan.js';
import { bodyPaging, markUnreadable, MAX_ELEMENT_DEPTH, type Unreadable } from './unreadable.js';

export { MAX_ELEMENT_DEPTH, unreadableIn, unreadableNotes, type Unreadable } from './unreadable.js';

/** A survey keeps at most this many distinct fields (the first met), and names each in at most SURVEY_NAME characters. */
const SURVEY_FIELDS = 50;
const SURVEY_NAME = 64;
/** How much of a field's name the parser keeps for the survey: enough to redact a secret in it before it is cut to SURVEY_NAME. */
const SURVEY_KEY_KEPT = 1024;

/** In the fast path, how much may wait for an element boundary before the exact scanner takes over. */
const PENDING_LIMIT = 1024 * 1024;
/** Where `data` opens with more than this left of the chunk, the rest goes to the fast path at once (a small body is read exactly, as before). */
const HAND_OFF_BYTES = 64 * 1024;
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
  /**
   * Also count, per element, its top-level keys other than `fields` (see {@link ListStreamParser.surveyed}).
   * For a check of the service's answer only: it costs a pass over every element's keys.
   */
  survey?: boolean;
}

/** A survey of a list's records: each field beyond the read ones, with how many records carry it. */
export interface ListSurvey {
  fields: Record<string, number>;
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
  /** Where the text to parse is put together. */
  private readonly joiner = new TextJoiner();
  /** With `survey`: each unread top-level key of the elements (cut to SURVEY_KEY_KEPT), and how many elements carry it. */
  private readonly surveyCounts: Map<string, number> | undefined;
  /** Set when the body ends (see `paging`). */
  private signal: string | undefined;

  constructor(
    private readonly what: string,
    private readonly toRecord: (raw: unknown) => T,
    options: ListStreamOptions = {},
  ) {
    this.maxDepth = options.maxDepth ?? MAX_ELEMENT_DEPTH;
    this.fields = options.fields ? new Set(options.fields) : undefined;
    this.longestField = Math.max(0, ...(options.fields ?? []).map((f) => f.length * 6 + 2));
    this.surveyCounts = options.survey ? new Map() : undefined;
  }

  /**
   * Once the body has ended: the answer's sign of more pages than it gave, as one sentence, or
   * undefined when it gives none. Read from the skeleton (everything but the records), so it costs
   * nothing per record.
   */
  get paging(): string | undefined {
    return this.signal;
  }

  /** With `survey`, once the body has ended: the records' unread top-level keys, raw, and how many records carry each. */
  get surveyed(): ReadonlyMap<string, number> | undefined {
    return this.surveyCounts;
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
    this.signal = bodyPaging(shape, data.length > 0 ? data.length : this.records.length);
    if (data.length > 0) {
      if (this.surveyCounts) for (const value of data) this.survey(value);
      return data.map(this.toRecord);
    }
    if (this.unreadable.length > 0) markUnreadable(this.records, this.unreadable);
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
    const values = this.elements(pieces);
    if (!values) return false;
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
    // The survey's one branch per element: without it no element costs more.
    if (this.surveyCounts) this.survey(value);
    this.records.push(this.toRecord(value));
  }

  /** Counts an element's top-level keys that are not read fields (an element that is not an object has none). */
  private survey(value: unknown): void {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
    const counts = this.surveyCounts!;
    const fields = this.fields;
    for (const key in value) {
      if (fields?.has(key) || key === '__proto__') continue;
      const name = key.length > SURVEY_KEY_KEPT ? key.slice(0, SURVEY_KEY_KEPT) : key;
      const n = counts.get(name);
      if (n !== undefined) counts.set(name, n + 1);
      else if (counts.size < SURVEY_FIELDS) counts.set(name, 1);
    }
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
    return prunedElement(value, max, this.fields, this.elemCut);
  }

  /**
   * Parses complete elements that lie side by side ("e1,e2,e3"), already depth-checked, and keeps their
   * records; `cut`: the one element's read fields cut for their depth, which stand as null as a whole.
   */
  private parseRun(pieces: Buffer[], cut?: readonly string[]): void {
    const values = this.elements(pieces);
    if (!values) throw this.invalid();
    if (cut?.length) {
      const element = values[0] as Record<string, unknown>;
      for (const key of cut) element[key] = null;
      this.keep(element, cut);
      return;
    }
    for (const value of values) this.keep(value);
  }

  /** The pieces parsed as elements side by side ("e1,e2,e3"), or undefined when they are not. */
  private elements(pieces: Buffer[]): unknown[] | undefined {
    try {
      return JSON.parse(this.decode(pieces, '[', ']')) as unknown[];
    } catch {
      return undefined;
    }
  }

  /** The text of the pieces between `open` and `close`, copied once. */
  private decode(pieces: Buffer[], open: string, close: string): string {
    const { text, length } = this.joiner.join(pieces, open, close);
    this.passes += length;
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
          this.surveyCounts?.clear();
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
    return readsData(pieces);
  }

  /** Whether an element's top-level key (its bytes, quotes included, with any pieces cut by chunks) is a read field. */
  private isReadField(tail: Buffer): boolean {
    const pieces = [...this.elemKeyPieces, tail];
    this.elemKeyPieces = [];
    const key = fieldNamed(pieces, this.longestField, this.fields!);
    if (key === undefined) return false;
    this.elemKey = key;
    return true;
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

/**
 * A parser's survey as a list answer gives it: each name redacted (by `redact`, the key's redaction)
 * before it is cut to SURVEY_NAME characters, in an object with no prototype; names that meet once
 * cut keep the larger count, so no count exceeds the records.
 */
export function surveyOf(counts: ReadonlyMap<string, number>, redact: (text: string) => string): ListSurvey {
  const fields = Object.create(null) as Record<string, number>;
  for (const [key, n] of counts) {
    const clean = redact(key);
    const name = clean.length > SURVEY_NAME ? `${clean.slice(0, SURVEY_NAME - 1)}…` : clean;
    if (name === '__proto__') continue;
    fields[name] = Math.max(fields[name] ?? 0, n);
  }
  return { fields };
}
