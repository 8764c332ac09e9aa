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

/** One process's store: for one replica, tests and the sandbox. Bounded: the oldest entries go first. */
export class MemoryAuthStore implements AuthStore {
  private readonly entries = new Map<string, { value: string; expires: number }>();
  constructor(private readonly max = 100_000) {}

  private live(key: string): { value: string; expires: number } | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private put(key: string, value: string, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: Date.now() + ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  claim(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) return Promise.resolve(false);
    this.put(key, value, ttlMs);
    return Promise.resolve(true);
  }

  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.live(key)?.value);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    this.put(key, value, ttlMs);
    return Promise.resolve();
  }

  delete(key: string): Promise<void> {
    this.entries.delete(key);
    return Promise.resolve();
  }

  incr(key: string, ttlMs: number): Promise<number> {
    const n = Number(this.live(key)?.value ?? 0) + 1;
    this.put(key, String(n), ttlMs);
    return Promise.resolve(n);
  }
}

/** The few commands RedisAuthStore uses, as node-redis (`redis` v4+) offers them. */
export interface RedisCommands {
  set(key: string, value: string, options: { PX: number; NX?: true }): Promise<string | null>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<number>;
  incr(key: string): Promise<number>;
  pExpire(key: string, ms: number): Promise<unknown>;
}

/** Shared by every replica: each primitive is one atomic Redis command (SET NX PX for claims). */
export class RedisAuthStore implements AuthStore {
  constructor(
    private readonly redis: RedisCommands,
    private readonly prefix = 'docreq:auth:',
  ) {}

  async claim(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.prefix + key, value, { PX: ttlMs, NX: true })) === 'OK';
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.prefix + key)) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.prefix + key, value, { PX: ttlMs });
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async incr(key: string, ttlMs: number): Promise<number> {
    const n = await this.redis.incr(this.prefix + key);
    if (n === 1) await this.redis.pExpire(this.prefix + key, ttlMs);
    return n;
  }
}
