/**
 * What sign-in keeps between requests (registered clients, sign-ins in progress, codes, refresh
 * tokens, revoked sessions), behind the same five primitives as the send store, so that every
 * replica sharing the store accepts what another issued. Keys are hashes or random ids, never a token.
 */
export interface AuthStore {
  /** Sets key to value only when it is absent; true when this call set it. */
  claim(key: string, value: string, ttlMs: number): Promise<boolean>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  incr(key: string, ttlMs: number): Promise<number>;
}

/** One process's store (tests, one replica): the send store's memory backend, bounded per namespace. */
export { MemoryStore as MemoryAuthStore } from '../store/memory.js';
