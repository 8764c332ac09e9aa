import type { RedisClientType } from 'redis';
import { StoreUnavailableError, type SendStore } from './store.js';

/**
 * The redis store (team mode with replicas): Redis >= 6.2 or Valkey, shared by every replica.
 * Claims are SET NX PX, renewed and released by their owner only (compare-and-expire and
 * compare-and-delete scripts); records are
 * SET PX; counters INCRBY with PEXPIRE on the first increment (one script, so a counter never
 * outlives its window). The offline queue is off: while Redis is down every command fails at once,
 * so sending is refused at once (fail closed) instead of hanging, and works again on reconnect.
 * Entries expire by TTL; each firm's entries are bounded by its rate limit (at most one record per
 * send, 24 hours), and Redis's own maxmemory policy should be noeviction (README).
 */
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const INCR = "local n = redis.call('incrby', KEYS[1], ARGV[2]) if redis.call('pttl', KEYS[1]) < 0 then redis.call('pexpire', KEYS[1], ARGV[1]) end return n";
const PREFIX = 'docreq:';

/** Where a redis URL points, without user or password: what messages may say. */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol === 'rediss:' ? 'rediss' : 'redis'} at ${u.hostname}:${u.port || 6379}/${u.pathname.replace(/^\//, '') || '0'}`;
  } catch {
    return 'redis (DOCREQ_STORE_URL, not a URL)';
  }
}

export class RedisStore implements SendStore {
  readonly backend = 'redis' as const;
  readonly scope = 'replicas' as const;
  readonly name: string;
  /** Made once `redis` is loaded: the package is imported only when this store is used, so a server on another store never pays for it. */
  private client: RedisClientType | undefined;
  private readonly loading: Promise<void>;
  /** Settles when the first connection attempt ends (ready, or its first error): commands wait for it, not for reconnects. */
  private readonly firstAttempt: Promise<void>;
  private closed = false;
  private lastError = 'not connected yet';

  constructor(url: string, onError: (message: string) => void = () => undefined) {
    this.name = describeRedisUrl(url);
    let attempted: () => void = () => undefined;
    this.firstAttempt = new Promise((resolve) => (attempted = resolve));
    this.loading = import('redis').then(
      (m) => {
        // Bundled, the CommonJS package's namespace may hold only `default` (module.exports).
        const createClient = (m.createClient as typeof m.createClient | undefined) ?? m.default.createClient;
        if (this.closed) return attempted();
        const client = createClient({
          url,
          disableOfflineQueue: true,
          socket: { connectTimeout: 3_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000) },
        }) as RedisClientType;
        this.client = client;
        let reported = false;
        client.on('error', (error: Error) => {
          // The client's message may quote the URL: only its code goes out.
          this.lastError = (error as NodeJS.ErrnoException).code ?? error.name;
          if (!reported) onError(`send store ${this.name}: ${this.lastError}; sending is refused until it is back`);
          reported = true;
          attempted();
        });
        client.on('ready', () => {
          if (reported) onError(`send store ${this.name}: connected again; sending works`);
          reported = false;
          attempted();
        });
        client.connect().catch(() => undefined);
      },
      (error: unknown) => {
        this.lastError = (error as NodeJS.ErrnoException).code ?? 'the redis client could not be loaded';
        onError(`send store ${this.name}: ${this.lastError}; sending is refused`);
        attempted();
      },
    );
  }

  private async run<T>(work: (client: RedisClientType) => Promise<T>): Promise<T> {
    // Right after start the client is still loading or connecting: wait for that first attempt (bounded by the connect timeout).
    if (!this.client?.isReady) await this.firstAttempt;
    const client = this.client;
    if (!client?.isReady) throw new StoreUnavailableError(this.name, `not connected: ${this.lastError}`);
    try {
      return await work(client);
    } catch (error) {
      throw new StoreUnavailableError(this.name, (error as NodeJS.ErrnoException).code ?? (error as Error).name);
    }
  }

  /** Resolves once connected (or rejects after `ms`): for start-up checks and tests. */
  async ready(ms = 3_000): Promise<void> {
    const until = Date.now() + ms;
    while (!this.client?.isReady) {
      if (Date.now() > until) throw new StoreUnavailableError(this.name, `not connected: ${this.lastError}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  claim(key: string, value: string, ttlMs: number): Promise<boolean> {
    return this.run(async (client) => (await client.set(PREFIX + key, value, { NX: true, PX: Math.max(1, Math.round(ttlMs)) })) === 'OK');
  }

  renew(key: string, value: string, ttlMs: number): Promise<boolean> {
    return this.run(
      async (client) => Number(await client.eval(RENEW, { keys: [PREFIX + key], arguments: [value, String(Math.max(1, Math.round(ttlMs)))] })) === 1,
    );
  }

  release(key: string, value: string): Promise<boolean> {
    return this.run(async (client) => Number(await client.eval(RELEASE, { keys: [PREFIX + key], arguments: [value] })) === 1);
  }

  get(key: string): Promise<string | undefined> {
    return this.run(async (client) => (await client.get(PREFIX + key)) ?? undefined);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    return this.run(async (client) => void (await client.set(PREFIX + key, value, { PX: Math.max(1, Math.round(ttlMs)) })));
  }

  delete(key: string): Promise<void> {
    return this.run(async (client) => void (await client.del(PREFIX + key)));
  }

  incr(key: string, ttlMs: number, by = 1): Promise<number> {
    return this.run(async (client) =>
      Number(await client.eval(INCR, { keys: [PREFIX + key], arguments: [String(Math.max(1, Math.round(ttlMs))), String(by)] })),
    );
  }

  /** Gives the connection back; a store closed before its client loaded never connects. Every call after it refuses. */
  async close(): Promise<void> {
    this.closed = true;
    await this.loading;
    await this.client?.close?.().catch(() => undefined);
  }
}
