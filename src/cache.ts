import { deepFreeze } from './freeze.js';

/**
 * The one way this server keeps what it worked out, so that memory stays bounded whatever callers ask:
 *
 * - `BoundedCache`: at most `maxEntries` entries and, when entries are weighed, at most `maxWeight` together;
 *   the least recently used entry goes first (a hit makes an entry the last to go). Answers to questions,
 *   objects made once per key, values derived from a few repeated inputs.
 * - `onceFor`: values derived from objects, each made on first use and living exactly as long as its object
 *   (a WeakMap: the object's own lifetime is the bound).
 * - `answerCache`: the answers of the list tools, per list (`onceFor`) and then per question (`BoundedCache`).
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, { value: V; weight: number }>();
  #weight = 0;
  readonly #maxEntries: number;
  readonly #maxWeight: number;
  readonly #onDrop: ((key: K, value: V) => void) | undefined;

  /** `onDrop` hears of each entry dropped to make room (not of `delete` or `clear`), e.g. to release what it holds. */
  constructor(limits: { maxEntries: number; maxWeight?: number; onDrop?: (key: K, value: V) => void }) {
    if (!Number.isInteger(limits.maxEntries) || limits.maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    this.#maxEntries = limits.maxEntries;
    this.#maxWeight = limits.maxWeight ?? Infinity;
    this.#onDrop = limits.onDrop;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The weight of every entry kept, together (each entry weighs 1 unless `set` was told otherwise). */
  get weight(): number {
    return this.#weight;
  }

  /** The value kept for `key`, which becomes the most recently used; undefined when none is. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** The value kept for `key`, leaving the order of use as it was. */
  peek(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  /** Keeps `value` for `key` as the most recently used, first dropping the least recently used entries it needs room from; returns `value`. */
  set(key: K, value: V, weight = 1): V {
    this.delete(key);
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size < this.#maxEntries && this.#weight + weight <= this.#maxWeight) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
      this.#onDrop?.(oldest, entry.value);
    }
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    return value;
  }

  /** The value kept for `key`, or `make()` kept (weighing `weigh(value)`, 1 without it) and returned. */
  getOrMake(key: K, make: () => V, weigh?: (value: V) => number): V {
    const known = this.get(key);
    if (known !== undefined) return known;
    const value = make();
    return this.set(key, value, weigh ? weigh(value) : 1);
  }

  /** Forgets `key` (onDrop is not told); true when it was kept. */
  delete(key: K): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
    return true;
  }

  clear(): void {
    this.#entries.clear();
    this.#weight = 0;
  }
}

/** A table of values derived from objects: `(key, make)` gives `make(key)`, worked out once per `key` and kept as long as it lives. */
export function onceFor<K extends object, V>(): (key: K, make: (key: K) => V) => V {
  const made = new WeakMap<K, V>();
  return (key, make) => {
    let value = made.get(key);
    if (value === undefined) made.set(key, (value = make(key)));
    return value;
  };
}

/** How many answers are kept per list (or pair of lists). */
const MAX_ANSWERS = 64;

/**
 * The answer cache of list_requests, list_clients and list_templates: keyed by the list itself (the very array or
 * object the API client or the template loader keeps, handed back again while unchanged), then by a second list the
 * answer also read, then by the question. A changed list is a new object, so its answers start afresh and the old ones
 * go with the old object. An answer is frozen as it is kept: every caller shares it.
 */
export function answerCache<A extends object, B extends object, R>(): (first: A, second: B) => AnswersKept<R> {
  const table = onceFor<A, WeakMap<B, AnswersKept<R>>>();
  return (first, second) => {
    const bySecond = table(first, () => new WeakMap());
    let answers = bySecond.get(second);
    if (answers === undefined) bySecond.set(second, (answers = new AnswersKept<R>()));
    return answers;
  };
}

/** The answers kept for one list (or pair): at most MAX_ANSWERS questions, each answer frozen. */
export class AnswersKept<R> {
  readonly #answers = new BoundedCache<string, R>({ maxEntries: MAX_ANSWERS });

  get(question: string): R | undefined {
    return this.#answers.get(question);
  }

  /** Keeps `answer` (frozen: every caller shares it) as the answer to `question`; returns it. */
  keep(question: string, answer: R): R {
    return this.#answers.set(question, deepFreeze(answer));
  }

  get size(): number {
    return this.#answers.size;
  }
}
