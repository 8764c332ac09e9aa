import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/store/file.js';
import { MemoryStore } from '../src/store/memory.js';
import { describeRedisUrl, RedisStore } from '../src/store/redis.js';
import { StoreUnavailableError } from '../src/store/store.js';
import { suiteFolder } from './support/folders.js';
import { startRedis } from './support/redis.js';

/**
 * Each send store backend at its edges: a closed redis store gives its connection back and serves
 * nothing, one that never connected says so, and its name shows the path as written; the file store
 * leaves no file open and reports a claim it cannot finish or a record it cannot remove as the store
 * failing; the memory store deletes in a namespace never written without error.
 */

describe('RedisStore', () => {
  it('closed: the connection is given back and every call after it refuses', async () => {
    const redis = await startRedis();
    const store = new RedisStore(redis.url);
    try {
      await store.ready();
      await store.set('f:a', 'v', 60_000);
      expect(await store.get('f:a')).toBe('v');
      await store.close();
      await expect(store.get('f:a')).rejects.toThrow(StoreUnavailableError);
    } finally {
      await store.close();
      redis.child.kill('SIGKILL');
    }
  });

  it('closed before its client loaded: it never connects, and every call refuses', async () => {
    const redis = await startRedis();
    const store = new RedisStore(redis.url);
    try {
      await store.close();
      await expect(store.get('f:a')).rejects.toThrow(StoreUnavailableError);
      await expect(store.ready(300)).rejects.toThrow(StoreUnavailableError);
    } finally {
      await store.close();
      redis.child.kill('SIGKILL');
    }
  });

  it('a server that accepts and never answers: ready() gives up saying it never connected', async () => {
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => void sockets.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as { port: number };
    const store = new RedisStore(`redis://127.0.0.1:${port}/1`);
    try {
      await expect(store.ready(150)).rejects.toThrow(`the send store (redis at 127.0.0.1:${port}/1) cannot be used (not connected: not connected yet)`);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
      await Promise.race([store.close(), new Promise((r) => setTimeout(r, 500))]);
    }
  });

  it('its name shows the path as written, only a leading slash dropped', () => {
    expect(describeRedisUrl('redis:cache/2')).toBe('redis at :6379/cache/2');
  });
});

describe('FileStore', () => {
  const folderOf = (dir: string) => join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);
  const entries = (dir: string) =>
    readdirSync(folderOf(dir))
      .filter((n) => !n.startsWith('.') && !n.endsWith('.tmp'))
      .map((n) => join(folderOf(dir), n));
  /** The files this process holds open now (Linux). */
  const openFiles = () =>
    readdirSync('/proc/self/fd').map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    });

  it('a claim leaves its file closed', async () => {
    const dir = mkdtempSync(join(suiteFolder(), 'proof-file-'));
    const store = new FileStore(dir);
    expect(await store.claim('f:c', 'me', 60_000)).toBe(true);
    const [path] = entries(dir);
    expect(openFiles()).not.toContain(path);
  });

  // A clock at the end of Date's range: the claim file is created, then setting its expiry (mtime)
  // fails (EINVAL), as a full disk fails the write after the create. Node 20 refuses a time outside
  // Date's range so; Node 22 and 24 set the present instead, and on them this way of failing the write
  // does not exist (the probe below asks the running Node).
  const refusesInvalidTimes = (() => {
    const probe = join(mkdtempSync(join(suiteFolder(), 'proof-time-')), 'probe');
    writeFileSync(probe, '');
    try {
      utimesSync(probe, new Date(), new Date(8.64e15 + 60_000));
      return false;
    } catch {
      return true;
    }
  })();
  it.skipIf(!refusesInvalidTimes)('a claim file it cannot finish is the store failing, never a claim held elsewhere', async () => {
    const dir = mkdtempSync(join(suiteFolder(), 'proof-file-'));
    const store = new FileStore(dir, undefined, () => 8.64e15);
    await expect(store.claim('f:c', 'me', 60_000)).rejects.toThrow(/cannot be used \(EINVAL on futime\)/);
  });

  it('a record it cannot remove is the store failing, not a removal', async () => {
    const dir = mkdtempSync(join(suiteFolder(), 'proof-file-'));
    const store = new FileStore(dir);
    await store.set('f:r', 'v', 60_000);
    const [path] = entries(dir);
    unlinkSync(path!);
    mkdirSync(path!);
    await expect(store.delete('f:r')).rejects.toThrow(/cannot be used \(EISDIR on unlink\)/);
    // Nothing there at all is not an error.
    await expect(store.delete('f:never')).resolves.toBeUndefined();
  });
});

describe('MemoryStore', () => {
  it('deleting in a namespace never written is no error', async () => {
    await expect(new MemoryStore().delete('nobody:x')).resolves.toBeUndefined();
  });
});
