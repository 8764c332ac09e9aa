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
/** In the fast path, how much may wait for an element boundary before the exact scanner takes over. */
const PENDING_LIMIT = 4 * 1024 * 1024;

/** The last comma that follows a "}" (white space between allowed), or -1: a likely end of an object element. */
function lastObjectBoundary(buf: Buffer): number {
  let comma = buf.lastIndexOf(COMMA);
  for (let tries = 0; comma > 0 && tries < 10_000; tries++) {
    let k = comma - 1;
    while (k >= 0 && buf[k]! <= 0x20) k--;
    if (k >= 0 && buf[k] === CLOSE_OBJECT) return comma;
    comma = buf.lastIndexOf(COMMA, comma - 1);
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
 * Reads a `{ "data": [ ... ] }` body as it streams, turning each element of `data` into a record
 * without ever holding the whole body, its text or its full object tree: memory stays near the size
 * of the records kept.
 *
 * Fast path, inside `data`: each chunk is cut at its last "}," and everything before the cut is
 * parsed with one JSON.parse. The text parsed starts at an element's start, so if the cut fell inside
 * a string or a nested value the text would end in an open string or open brackets and JSON.parse
 * would refuse it: a successful parse proves the cut was between elements. When it fails (a string
 * holding "},", the end of `data`, elements that are not objects) the exact scanner takes over: it
 * tracks strings and nesting byte by byte (jumping through strings with the platform's byte search).
 * Everything outside `data` forms a small skeleton parsed at the end, so malformed JSON and a wrong
 * shape are caught exactly as JSON.parse of the whole body would catch them.
 */
export class ListStreamParser<T> {
  private readonly records: T[] = [];
  private readonly skeleton: Buffer[] = [];
  private depth = 0;
  private inString = false;
  /** The next byte is escaped (a backslash ended the previous chunk inside a string). */
  private escaped = false;
  /** At depth 1, between a key's colon and the next comma. */
  private afterColon = false;
  private lastKeyIsData = false;
  /** Pieces of a top-level key cut by a chunk's end. */
  private keyPieces: Buffer[] = [];
  /** Inside the top-level "data" array (its elements are at depth 2). */
  private inData = false;
  /** The element being read began in an earlier chunk: its bytes so far. */
  private carried: Buffer[] = [];
  /** The last element ended with a comma, so another must follow. */
  private afterComma = false;
  /** In the fast path (inside `data`): bytes from an element's start, not yet parsed. */
  private fast = false;
  private pending: Buffer | undefined;

  constructor(
    private readonly what: string,
    private readonly toRecord: (raw: unknown) => T,
  ) {}

  write(chunk: Buffer): void {
    if (!this.fast) {
      this.scan(chunk);
      // Inside `data` now: take the fast path, starting from the element the chunk cut (if any).
      if (this.inData) {
        this.fast = true;
        this.pending = this.carried.length ? Buffer.concat(this.carried) : undefined;
        this.carried = [];
      }
      return;
    }
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const cut = lastObjectBoundary(buf);
    if (cut > 0 && this.tryRun(buf, cut)) {
      this.pending = buf.subarray(cut + 1);
      this.afterComma = true;
    } else if (cut < 0 && buf.length < PENDING_LIMIT) {
      this.pending = buf;
    } else {
      this.leaveFastPath(buf);
    }
  }

  /** Hands what waits to the exact scanner, which goes on from an element's start inside `data`. */
  private leaveFastPath(buf: Buffer): void {
    this.fast = false;
    this.pending = undefined;
    Object.assign(this, { depth: 2, inString: false, escaped: false, inData: true, carried: [] });
    this.scan(buf);
  }

  /** Parses buf[0, cut) as whole elements; false (keeping nothing) when they are not. */
  private tryRun(buf: Buffer, cut: number): boolean {
    let values: unknown[];
    try {
      values = JSON.parse(`[${buf.toString('utf8', 0, cut)}]`) as unknown[];
    } catch {
      return false;
    }
    for (const value of values) this.records.push(this.toRecord(value));
    return true;
  }

  private scan(chunk: Buffer): void {
    // The state lives in locals during the loop and is saved after.
    let { depth, inString, escaped, afterColon, inData } = this;
    let skeletonFrom = inData ? -1 : 0;
    let keyStart = this.keyPieces.length && inString ? 0 : -1;
    // Within this chunk: where the current element began (-1: none yet; 0 with `carried`: it
    // continues from the last chunk), and the run of complete elements not yet parsed.
    let elementStart = this.carried.length ? 0 : -1;
    let runStart = -1;
    let runEnd = -1;
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (inString) {
        // Jump to the closing quote; a quote after an odd run of backslashes is escaped.
        if (escaped) {
          escaped = false;
          i++;
        }
        let q = chunk.indexOf(QUOTE, i);
        while (q >= 0 && backslashesBefore(chunk, q, i) % 2 === 1) q = chunk.indexOf(QUOTE, q + 1);
        if (q < 0) {
          escaped = backslashesBefore(chunk, n, i) % 2 === 1;
          break;
        }
        inString = false;
        if (keyStart >= 0) {
          this.lastKeyIsData = this.isDataKey(chunk.subarray(keyStart, q + 1));
          keyStart = -1;
        }
        i = q + 1;
        continue;
      }
      const b = chunk[i]!;
      if (inData && depth === 2) {
        if (b === COMMA || b === CLOSE_ARRAY) {
          // An element ends here (or, for "[]", none was there).
          if (elementStart < 0) {
            if (b === COMMA || this.afterComma) throw this.invalid(); // "[1,,2]", "[,1]", "[1,]"
          } else if (this.carried.length) {
            this.carried.push(chunk.subarray(0, i));
            this.parseRun(Buffer.concat(this.carried).toString('utf8'));
            this.carried = [];
          } else {
            if (runStart < 0) runStart = elementStart;
            runEnd = i;
          }
          this.afterComma = b === COMMA && elementStart >= 0;
          elementStart = -1;
          if (b === CLOSE_ARRAY) {
            if (runStart >= 0) this.parseRun(chunk.toString('utf8', runStart, runEnd));
            runStart = runEnd = -1;
            inData = false;
            depth--;
            skeletonFrom = i; // the skeleton gets "[" … "]" with nothing between
          }
          i++;
          continue;
        }
        if (elementStart < 0 && b > 0x20) elementStart = i;
      }
      if (b === QUOTE) {
        inString = true;
        if (depth === 1 && !afterColon) {
          keyStart = i;
          this.keyPieces = [];
        }
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        depth++;
        if (depth === 2 && b === OPEN_ARRAY && afterColon && this.lastKeyIsData) {
          this.skeleton.push(chunk.subarray(skeletonFrom, i + 1));
          skeletonFrom = -1;
          inData = true;
          // A repeated "data" key: the last one wins, as in JSON.parse (the earlier one was parsed, so validated).
          this.records.length = 0;
          this.afterComma = false;
        }
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        depth--;
        if (depth < 1) afterColon = false;
      } else if (depth === 1) {
        if (b === COLON) afterColon = true;
        else if (b === COMMA) afterColon = false;
      }
      i++;
    }
    if (runStart >= 0) this.parseRun(chunk.toString('utf8', runStart, runEnd));
    if (inData && elementStart >= 0) this.carried.push(chunk.subarray(elementStart));
    if (!inData && skeletonFrom >= 0) this.skeleton.push(chunk.subarray(skeletonFrom));
    if (keyStart >= 0) this.keyPieces.push(chunk.subarray(keyStart));
    Object.assign(this, { depth, inString, escaped, afterColon, inData });
  }

  /** The records, once the body has ended; throws when the body is not the documented list. */
  end(): T[] {
    if (this.fast) this.leaveFastPath(this.pending ?? Buffer.alloc(0));
    if (this.inData || this.depth !== 0 || this.inString) {
      throw new BadResponseError(`The service's ${this.what} list is not valid JSON: the body ended early.`);
    }
    let shape: unknown;
    try {
      shape = JSON.parse(Buffer.concat(this.skeleton).toString('utf8'));
    } catch {
      throw this.invalid();
    }
    // The skeleton holds "data": [] when the elements were streamed; otherwise what the body had.
    const data = listData(shape, this.what);
    return data.length > 0 ? data.map(this.toRecord) : this.records;
  }

  private isDataKey(tail: Buffer): boolean {
    const key = this.keyPieces.length ? Buffer.concat([...this.keyPieces, tail]) : tail;
    this.keyPieces = [];
    return key.equals(DATA_KEY);
  }

  /** Parses complete elements that lie side by side ("e1,e2,e3") and keeps their records. */
  private parseRun(text: string): void {
    let values: unknown[];
    try {
      values = JSON.parse(`[${text}]`) as unknown[];
    } catch {
      throw this.invalid();
    }
    for (const value of values) this.records.push(this.toRecord(value));
  }

  private invalid(): BadResponseError {
    return new BadResponseError(`The service's ${this.what} list is not valid JSON.`);
  }
}
