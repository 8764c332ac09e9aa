import { createHmac, randomBytes } from 'node:crypto';
import { BoundedCache } from '../cache.js';

/**
 * Team mode holds no key of its own: each HTTP request carries the firm's key. Anything kept
 * between requests (rate-limit buckets now; the API client's client-list and revalidation caches
 * later) is kept per key *fingerprint*, never per key, in a bounded store.
 */

/** Fingerprints keys under a per-process random secret: stable within a process, useless outside it. */
export class KeyFingerprinter {
  private readonly secret: Buffer;
  /**
   * Every team-mode request fingerprints its key; an HMAC each time was a visible part of a cheap call.
   * The keys in use are few, so their fingerprints are kept, in this process's memory only (as the
   * redactions compiled from keys are: src/mcp/context.ts), at most KNOWN_KEYS, the least recently used dropped.
   */
  private readonly known = new BoundedCache<string, string>({ maxEntries: KNOWN_KEYS });

  constructor(secret: Buffer = randomBytes(32)) {
    this.secret = secret;
  }

  /** HMAC-SHA256 of the key, first 12 hex characters: safe to log, not reversible, not comparable across processes. */
  fingerprint(key: string): string {
    return this.known.getOrMake(key, () => createHmac('sha256', this.secret).update(key, 'utf8').digest('hex').slice(0, 12));
  }
}

/** How many keys' fingerprints a process keeps at once. */
const KNOWN_KEYS = 1_024;

/**
 * One firm's (one key's) slots. Each feature owns a slot name (e.g. "rate", "clients", "etags")
 * and decides what it keeps there; the whole scope is dropped when the firm is evicted.
 */
export class KeyScope {
  private readonly slots = new Map<string, unknown>();

  constructor(readonly fingerprint: string) {}

  get<T>(slot: string): T | undefined {
    return this.slots.get(slot) as T | undefined;
  }

  /** The slot's value, made with `create` the first time. */
  ensure<T>(slot: string, create: () => T): T {
    if (!this.slots.has(slot)) this.slots.set(slot, create());
    return this.slots.get(slot) as T;
  }

  set(slot: string, value: unknown): void {
    this.slots.set(slot, value);
  }

  delete(slot: string): void {
    this.slots.delete(slot);
  }

  /** Drops everything kept for this key (e.g. after a 401 or a send). */
  clear(): void {
    this.slots.clear();
  }

  get size(): number {
    return this.slots.size;
  }
}

/**
 * A least-recently-used map of fingerprint → KeyScope, holding at most `maxScopes` firms. Whatever
 * is kept per key lives in a scope, so the memory kept for keys is bounded by the number of scopes
 * times what each slot bounds itself to.
 */
export class KeyScopeStore {
  // An evicted scope is cleared, so that nothing still holding it keeps what it kept.
  private readonly scopes: BoundedCache<string, KeyScope>;

  constructor(readonly maxScopes = 1_000) {
    if (!Number.isInteger(maxScopes) || maxScopes < 1) throw new RangeError('maxScopes must be a positive integer');
    this.scopes = new BoundedCache({ maxEntries: maxScopes, onDrop: (_fingerprint, scope) => scope.clear() });
  }

  /** The scope for this fingerprint (now the most recently used), made when new. */
  scope(fingerprint: string): KeyScope {
    return this.scopes.getOrMake(fingerprint, () => new KeyScope(fingerprint));
  }

  /** Looks without creating and without touching recency. */
  peek(fingerprint: string): KeyScope | undefined {
    return this.scopes.peek(fingerprint);
  }

  drop(fingerprint: string): void {
    this.scopes.peek(fingerprint)?.clear();
    this.scopes.delete(fingerprint);
  }

  get size(): number {
    return this.scopes.size;
  }
}

/**
 * A token bucket per key: `perMinute` tool calls a minute, bursts up to `perMinute`. `take`
 * answers 0 when allowed, otherwise the milliseconds until `count` calls would be; more calls at
 * once than the bucket holds (a JSON-RPC batch larger than the limit) never are: Infinity.
 */
export class RateBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly perMinute: number,
    now = Date.now(),
  ) {
    this.tokens = perMinute;
    this.at = now;
  }

  take(count = 1, now = Date.now()): number {
    const ratePerMs = this.perMinute / 60_000;
    this.tokens = Math.min(this.perMinute, this.tokens + (now - this.at) * ratePerMs);
    this.at = now;
    if (count > this.perMinute) return Number.POSITIVE_INFINITY;
    if (this.tokens >= count) {
      this.tokens -= count;
      return 0;
    }
    return Math.ceil((count - this.tokens) / ratePerMs);
  }
}
