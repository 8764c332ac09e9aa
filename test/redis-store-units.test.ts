import { once } from 'node:events';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { RedisStore } from '../src/store/redis.js';
import { freePort } from './support/ports.js';
import { startRedis } from './support/redis.js';

/**
 * The redis store's connection as the person running the server hears it (src/store/redis.ts): one
 * line when it is lost (its code only, never the URL), one when it is back, nothing in between; a call
 * while it is down refuses, naming the store; a store closed before it connected never connects.
 */
describe('RedisStore', () => {
  it('lost: one line with its code; back: one line; calls refused meanwhile, then served again', async () => {
    const redis = await startRedis();
    const lines: string[] = [];
    const store = new RedisStore(`redis://:hunter2@127.0.0.1:${redis.port}/3`, (line) => lines.push(line));
    try {
      await store.ready();
      await store.set('f:a', 'v', 60_000);
      expect(lines).toEqual([]);
      redis.child.kill('SIGKILL');
      await once(redis.child, 'exit');
      for (let i = 0; i < 250 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await expect(store.get('f:a')).rejects.toThrow(`the send store (redis at 127.0.0.1:${redis.port}/3) cannot be used (`);
      await new Promise((r) => setTimeout(r, 300));
      // One line for the loss (the socket's own error first: its code or its name), none per reconnect attempt.
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^send store redis at 127\\.0\\.0\\.1:${redis.port}/3: \\w+; sending is refused until it is back$`));
      const lost = lines[0]!;
      const again = await startRedis(redis.port);
      try {
        await store.ready(5_000);
        expect(lines).toEqual([lost, `send store redis at 127.0.0.1:${redis.port}/3: connected again; sending works`]);
        await store.set('f:b', 'w', 60_000);
        expect(await store.get('f:b')).toBe('w');
      } finally {
        again.child.kill('SIGKILL');
      }
      expect(lines.join('\n')).not.toContain('hunter2');
    } finally {
      await store.close();
      redis.child.kill('SIGKILL');
    }
  });

  it('nothing listening from the start: the first call waits for the first attempt, then refuses; ready() gives up; one line said', async () => {
    const port = await freePort();
    const lines: string[] = [];
    const store = new RedisStore(`redis://127.0.0.1:${port}/0`, (line) => lines.push(line));
    try {
      await expect(store.claim('f:a', 'v', 1_000)).rejects.toThrow(
        `the send store (redis at 127.0.0.1:${port}/0) cannot be used (not connected: ECONNREFUSED)`,
      );
      await expect(store.ready(200)).rejects.toThrow('not connected: ECONNREFUSED');
      expect(lines).toEqual([`send store redis at 127.0.0.1:${port}/0: ECONNREFUSED; sending is refused until it is back`]);
    } finally {
      await store.close();
    }
  });

  it('keeps every key under docreq:, apart from the keys of anything else sharing the database', async () => {
    const redis = await startRedis();
    const store = new RedisStore(`redis://127.0.0.1:${redis.port}/0`, () => undefined);
    const raw = createClient({ url: `redis://127.0.0.1:${redis.port}/0` });
    try {
      await store.ready();
      await raw.connect();
      await raw.set('a', 'not ours');
      await store.set('a', 'ours', 60_000);
      await store.claim('b', 'v', 60_000);
      await store.incr('c', 60_000);
      expect((await raw.keys('*')).sort()).toEqual(['a', 'docreq:a', 'docreq:b', 'docreq:c']);
      expect([await raw.get('a'), await store.get('a')]).toEqual(['not ours', 'ours']);
    } finally {
      await raw.quit();
      await store.close();
      redis.child.kill('SIGKILL');
    }
  });
});
