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

/**
 * Sign-in's part of the send store (docs/sending.md, "The send store"): its keys under `auth:`, so that every replica, and
 * `docreq-mcp sessions`, sharing that store shares sign-in state.
 */
export function authStoreOf(store: AuthStore): AuthStore {
  const k = (key: string) => `auth:${key}`;
  return {
    claim: (key, value, ttlMs) => store.claim(k(key), value, ttlMs),
    get: (key) => store.get(k(key)),
    set: (key, value, ttlMs) => store.set(k(key), value, ttlMs),
    delete: (key) => store.delete(k(key)),
    incr: (key, ttlMs) => store.incr(k(key), ttlMs),
  };
}
