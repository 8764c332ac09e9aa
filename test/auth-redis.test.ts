import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/store/redis.js';
import { startRedis } from './support/redis.js';

/** Sign-in's shared state (the send store's redis backend, as sign-in uses it) on a real Redis (redis-server on loopback, a port of its own): two replicas, two connections. */

const REDIS = '/usr/bin/redis-server';
let server: ChildProcess | undefined;
const clients: RedisStore[] = [];

async function replica(port: number): Promise<RedisStore> {
  const store = new RedisStore(`redis://127.0.0.1:${port}`);
  clients.push(store);
  await store.ready();
  return store;
}

describe.skipIf(!existsSync(REDIS))('sign-in state in the redis send store', () => {
  let a: RedisStore;
  let b: RedisStore;
  beforeAll(async () => {
    const redis = await startRedis(undefined, 0);
    server = redis.child;
    a = await replica(redis.port);
    b = await replica(redis.port);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    server?.kill();
  });

  it('a claim is won once across replicas; what one sets the other reads; entries expire', async () => {
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claim('auth:code:x:used', '1', 10_000)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    await a.set('auth:revoked:fam', '1', 10_000);
    expect(await b.get('auth:revoked:fam')).toBe('1');
    await b.delete('auth:revoked:fam');
    expect(await a.get('auth:revoked:fam')).toBeUndefined();
    expect([await a.incr('auth:n', 10_000), await b.incr('auth:n', 10_000)]).toEqual([1, 2]);
    await a.set('auth:short', 'v', 50);
    await new Promise((r) => setTimeout(r, 120));
    expect(await b.get('auth:short')).toBeUndefined();
  });
});
