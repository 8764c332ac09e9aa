import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisAuthStore } from '../src/auth/store.js';

/** Sign-in's shared state on a real Redis (redis-server on loopback, a port of its own): two replicas, two connections. */

const REDIS = '/usr/bin/redis-server';
let server: ChildProcess | undefined;
const clients: { quit(): Promise<unknown> }[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

async function replica(port: number): Promise<RedisAuthStore> {
  const client = createClient({ url: `redis://127.0.0.1:${port}` });
  await client.connect();
  clients.push(client);
  return new RedisAuthStore(client, 'test:auth:');
}

describe.skipIf(!existsSync(REDIS))('RedisAuthStore', () => {
  let a: RedisAuthStore;
  let b: RedisAuthStore;
  beforeAll(async () => {
    const port = await freePort();
    server = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 50; i++) {
      try {
        a = await replica(port);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    b = await replica(port);
  });
  afterAll(async () => {
    for (const c of clients) await c.quit().catch(() => undefined);
    server?.kill();
  });

  it('a claim is won once across replicas; what one sets the other reads; entries expire', async () => {
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claim('code:x:used', '1', 10_000)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    await a.set('revoked:fam', '1', 10_000);
    expect(await b.get('revoked:fam')).toBe('1');
    await b.delete('revoked:fam');
    expect(await a.get('revoked:fam')).toBeUndefined();
    expect([await a.incr('n', 10_000), await b.incr('n', 10_000)]).toEqual([1, 2]);
    await a.set('short', 'v', 50);
    await new Promise((r) => setTimeout(r, 120));
    expect(await b.get('short')).toBeUndefined();
  });
});
