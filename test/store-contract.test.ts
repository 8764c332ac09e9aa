import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SendLedger } from '../src/send/ledger.js';
import { defaultStateDir, FileStore, MemoryStore, openStore, RedisStore, StoreUnavailableError, storeReach, type SendStore } from '../src/store/index.js';
import { childProcesses, stop } from './support/children.js';

/**
 * What every send store backend (memory, file, redis) promises, called in this process: a claim is one
 * owner's until it expires or is released, a record lives its TTL, a counter counts from its first
 * increment; the file store's modes, locks, failures and pruning; one firm never evicts another; and
 * where the store is and what once-only and the rate limit hold across. Redis is a real redis-server
 * started here on a port of its own.
 */
const { startRedis } = childProcesses();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-store-'));
  dirs.push(dir);
  return dir;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('bounded per firm: one firm never evicts another', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => stop(redis.child));

  async function floods(store: SendStore, sends: number): Promise<void> {
    const ledger = new SendLedger(store);
    await ledger.record('firmB', 'client-1', 'tax', { outcome: 'sent', requestId: 'r-b', title: 'Tax' });
    for (let i = 0; i < sends; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, sends - i) }, (_, j) =>
          ledger.record('firmA', `client-${i + j}`, 'tax', { outcome: 'sent', requestId: null, title: 'Tax' }),
        ),
      );
    }
    expect((await ledger.recent('firmB', 'client-1', 'tax'))?.requestId).toBe('r-b');
  }

  it("memory: firm A's 20,000 sends keep firm B's record, and A stays within its own bound", async () => {
    const store = new MemoryStore(5_000);
    await floods(store, 20_000);
    expect(await new SendLedger(store).recent('firmA', 'client-19999', 'tax')).toBeDefined();
    expect(await new SendLedger(store).recent('firmA', 'client-0', 'tax')).toBeUndefined();
  });

  it("file: firm A's sends beyond its bound prune only firm A's folder", async () => {
    const dir = tempDir();
    const store = new FileStore(dir, 300);
    await floods(store, 2_000);
    const folders = readdirSync(join(dir, 'v1')).map((f) => readdirSync(join(dir, 'v1', f)).filter((n) => !n.startsWith('.')).length);
    expect(Math.max(...folders)).toBeLessThanOrEqual(300 + 500);
  });

  it("redis: firm A's 20,000 sends keep firm B's record", async () => {
    const store = new RedisStore(redis.url);
    await store.ready();
    await floods(store, 20_000);
    await store.close();
  });
});

describe('every backend keeps the one store contract (memory, file, redis)', () => {
  // Memory and file run on a clock the test moves; redis keeps its own time, so its waits are real and short.
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => stop(redis.child));

  interface Backend {
    store: SendStore;
    /** Moves time on by `ms` (the fake clock, or a real wait for redis). */
    pass: (ms: number) => Promise<unknown>;
  }
  const backends: [string, () => Promise<Backend>][] = [
    [
      'memory',
      () => {
        let now = 1_000_000;
        return Promise.resolve({ store: new MemoryStore(undefined, () => now), pass: (ms) => Promise.resolve((now += ms)) });
      },
    ],
    [
      'file',
      () => {
        let now = Date.now();
        return Promise.resolve({ store: new FileStore(tempDir(), undefined, () => now), pass: (ms) => Promise.resolve((now += ms)) });
      },
    ],
    [
      'redis',
      async () => {
        const store = new RedisStore(redis.url);
        await store.ready();
        return { store, pass: (ms) => sleep(ms) };
      },
    ],
  ];
  // Redis waits for real: the lease here is short, with margin around each step.
  const TTL = 400;
  const unique = () => `firm-${randomBytes(4).toString('hex')}`;

  it.each(backends)("%s: a claim is one owner's until it expires or its owner releases it; only the owner renews or releases", async (_name, make) => {
    const { store, pass } = await make();
    const key = `${unique()}:claim:a`;
    expect(await store.claim(key, 'A', TTL)).toBe(true);
    expect(await store.claim(key, 'B', TTL)).toBe(false);
    expect(await store.get(key)).toBe('A');
    // Another's value neither renews nor releases it.
    expect(await store.renew(key, 'B', TTL)).toBe(false);
    expect(await store.release(key, 'B')).toBe(false);
    expect(await store.get(key)).toBe('A');
    // Renewed by its owner from now: still held past the first expiry.
    await pass(TTL / 2);
    expect(await store.renew(key, 'A', TTL)).toBe(true);
    await pass((TTL * 3) / 4);
    expect(await store.claim(key, 'B', TTL)).toBe(false);
    // Released by its owner: free at once, and a second release finds nothing of its own.
    expect(await store.release(key, 'A')).toBe(true);
    expect(await store.get(key)).toBeUndefined();
    expect(await store.release(key, 'A')).toBe(false);
    // Expired: taken over by another; its first owner can no longer renew or release it.
    expect(await store.claim(key, 'A', TTL)).toBe(true);
    await pass(TTL + 100);
    expect(await store.get(key)).toBeUndefined();
    expect(await store.renew(key, 'A', TTL)).toBe(false);
    expect(await store.claim(key, 'B', TTL)).toBe(true);
    expect(await store.renew(key, 'A', TTL)).toBe(false);
    expect(await store.release(key, 'A')).toBe(false);
    expect(await store.get(key)).toBe('B');
    await store.close();
  });

  it.each(backends)('%s: a record lives its TTL, is replaced by a write, and is gone once deleted (deleting nothing is fine)', async (_name, make) => {
    const { store, pass } = await make();
    const ns = unique();
    const [a, b] = [`${ns}:send:a`, `${ns}:send:b`];
    await store.set(a, 'one', TTL);
    await store.set(a, 'two', TTL);
    await store.set(b, 'other', TTL * 10);
    expect(await store.get(a)).toBe('two');
    await store.delete(a);
    expect(await store.get(a)).toBeUndefined();
    await store.delete(a);
    await store.delete(`${ns}:send:never-written`);
    await store.set(a, 'three', TTL);
    await pass(TTL + 100);
    expect(await store.get(a)).toBeUndefined();
    expect(await store.get(b)).toBe('other');
    // Another namespace's key of the same name is another entry.
    expect(await store.get(`${unique()}:send:b`)).toBeUndefined();
    await store.close();
  });

  it.each(backends)('%s: a counter counts from its first increment, for its TTL from then, not from the last', async (_name, make) => {
    const { store, pass } = await make();
    const key = `${unique()}:rate:x`;
    expect(await store.incr(key, TTL)).toBe(1);
    expect(await store.incr(key, TTL)).toBe(2);
    expect(await store.incr(key, TTL, 5)).toBe(7);
    await pass(TTL / 2);
    expect(await store.incr(key, TTL)).toBe(8);
    // The window opened at the first increment: it ends TTL after it, whatever came since.
    await pass(TTL / 2 + 100);
    expect(await store.incr(key, TTL, 3)).toBe(3);
    expect(await store.incr(key, TTL)).toBe(4);
    await store.close();
  });

  it.each(backends.slice(0, 2))('%s: an entry is gone at the very millisecond it expires, and a claim is free then', async (_name, make) => {
    const { store, pass } = await make();
    const ns = unique();
    await store.set(`${ns}:send:a`, 'one', 1_000);
    expect(await store.claim(`${ns}:claim:a`, 'A', 1_000)).toBe(true);
    await pass(999);
    expect(await store.get(`${ns}:send:a`)).toBe('one');
    expect(await store.claim(`${ns}:claim:a`, 'B', 1_000)).toBe(false);
    await pass(1);
    expect(await store.get(`${ns}:send:a`)).toBeUndefined();
    expect(await store.claim(`${ns}:claim:a`, 'B', 1_000)).toBe(true);
  });

  it('file: two stores on one folder counting and renewing at once, each under the lock: no count lost, no call refused', async () => {
    const dir = tempDir();
    const [a, b] = [new FileStore(dir), new FileStore(dir)];
    const key = 'firm-busy:rate:x';
    const claims = await Promise.all([a, b].map((s, i) => s.claim(`firm-busy:claim:${i}`, `v${i}`, 60_000)));
    expect(claims).toEqual([true, true]);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const s = i % 2 ? a : b;
        return i % 4 < 2 ? s.incr(key, 60_000) : s.renew(`firm-busy:claim:${i % 2 ? 0 : 1}`, `v${i % 2 ? 0 : 1}`, 60_000);
      }),
    );
    expect(await a.incr(key, 60_000, 0)).toBe(20);
  });

  it('file: folders 0700 and entries 0600, folders left by an older version included', async () => {
    const dir = join(tempDir(), 'state');
    mkdirSync(join(dir, 'v1'), { recursive: true, mode: 0o755 });
    const store = new FileStore(dir);
    await store.set('firm-modes:send:a', 'x', 60_000);
    expect(await store.claim('firm-modes:claim:a', 'x', 60_000)).toBe(true);
    const firm = join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);
    for (const folder of [dir, join(dir, 'v1'), firm]) expect(statSync(folder).mode & 0o777, folder).toBe(0o700);
    const files = readdirSync(firm).filter((f) => !f.startsWith('.'));
    expect(files).toHaveLength(2);
    for (const f of files) expect(statSync(join(firm, f)).mode & 0o777, f).toBe(0o600);
  });

  it('file: works again once its folder can be made (a failure is not remembered)', async () => {
    const dir = tempDir();
    const blocker = join(dir, 'later');
    writeFileSync(blocker, 'x');
    const store = new FileStore(join(blocker, 'state'));
    await expect(store.get('firm-later:send:a')).rejects.toBeInstanceOf(StoreUnavailableError);
    rmSync(blocker);
    mkdirSync(blocker);
    await store.set('firm-later:send:a', 'back', 60_000);
    expect(await store.get('firm-later:send:a')).toBe('back');
  });

  it('file: an entry it cannot read for another reason than absence or a cut-short write fails closed, never reads as absent', async () => {
    const dir = tempDir();
    const store = new FileStore(dir);
    const key = 'firm-dir:send:a';
    await store.get(key); // makes the firm's folder
    const sha = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);
    mkdirSync(join(dir, 'v1', sha('firm-dir', 24), sha(key, 40))); // where the entry's file goes: a folder
    const error = await store.get(key).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain('EISDIR');
  });

  it('file: a claim file in a shape it does not know counts as being written for its first seconds, then as expired', async () => {
    let now = Date.now();
    const dir = tempDir();
    const store = new FileStore(dir, undefined, () => now);
    const key = 'firm-shape:claim:a';
    await store.get(key);
    const sha = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);
    const path = join(dir, 'v1', sha('firm-shape', 24), sha(key, 40));
    writeFileSync(path, '{"v":"someone"}', { mode: 0o600 });
    const written = Math.floor(Date.now() / 1_000) * 1_000 - 1_000; // whole seconds: an mtime the file system keeps exactly
    utimesSync(path, new Date(written), new Date(written));
    expect(statSync(path).mtimeMs).toBe(written);
    now = written + 4_999;
    expect(await store.claim(key, 'B', 60_000)).toBe(false);
    now = written + 5_000; // five seconds to the millisecond: no longer being written
    expect(await store.claim(key, 'B', 60_000)).toBe(true);
  });

  it('file: an unusable folder refuses every operation as the store being unavailable, naming the store and the error code, never the raw error', async () => {
    const dir = tempDir();
    const blocker = join(dir, 'not-a-folder');
    writeFileSync(blocker, 'x');
    const store = new FileStore(join(blocker, 'state'));
    const key = 'firm-x:send:a';
    const attempts: [string, Promise<unknown>][] = [
      ['claim', store.claim(key, 'v', 1_000)],
      ['renew', store.renew(key, 'v', 1_000)],
      ['release', store.release(key, 'v')],
      ['get', store.get(key)],
      ['set', store.set(key, 'v', 1_000)],
      ['delete', store.delete(key)],
      ['incr', store.incr(key, 1_000)],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message, what).toContain(
        `Nothing was sent: the send store (the file store at ${join(blocker, 'state')}) cannot be used (ENOTDIR on mkdir)`,
      );
    }
  });

  it('file: a claim file whose writer died before writing it, and was then removed, is free', async () => {
    let now = Date.now();
    const dir = tempDir();
    const store = new FileStore(dir, undefined, () => now);
    const key = 'firm-gone:claim:a';
    expect(await store.claim(key, 'A', 60_000)).toBe(true);
    const folder = join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);
    for (const f of readdirSync(folder)) if (!f.startsWith('.')) writeFileSync(join(folder, f), ''); // created, not yet written
    expect(await store.claim(key, 'B', 60_000)).toBe(false);
    for (const f of readdirSync(folder)) if (!f.startsWith('.')) rmSync(join(folder, f));
    expect(await store.claim(key, 'B', 60_000)).toBe(true);
    now += 1;
    expect(await store.get(key)).toBe('B');
  });

  it("file: pruning drops expired entries and writers' leftovers, and over the bound the soonest-expiring records, never a live claim", async () => {
    let now = Date.now();
    const dir = tempDir();
    const store = new FileStore(dir, 10, () => now);
    const ns = 'firm-prune';
    // A claim of a send in flight (minutes) and 30 records of a day.
    expect(await store.claim(`${ns}:claim:live`, 'A', 10 * 60_000)).toBe(true);
    for (let i = 0; i < 30; i++) await store.set(`${ns}:send:${i}`, `r${i}`, 24 * 3_600_000 + i * 60_000);
    await store.set(`${ns}:send:short`, 'short', 10_000);
    const folder = join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);
    writeFileSync(join(folder, 'abc.123.tmp'), 'half'); // a writer that died mid-write
    now += 30_000; // "short" has expired; the claim has not; the leftover is 30 s old: kept
    await store.prune(folder);
    expect(readdirSync(folder)).toContain('abc.123.tmp');
    expect(await store.get(`${ns}:send:short`)).toBeUndefined();
    now += 40_000; // the leftover is over a minute old
    await store.prune(folder);
    const left = readdirSync(folder).filter((f) => !f.startsWith('.'));
    expect(left).not.toContain('abc.123.tmp');
    expect(await store.get(`${ns}:claim:live`)).toBe('A');
    expect(await store.get(`${ns}:send:short`)).toBeUndefined();
    // Over the bound of 10: the records expiring soonest went, the latest stayed.
    expect(await store.get(`${ns}:send:0`)).toBeUndefined();
    expect(await store.get(`${ns}:send:29`)).toBe('r29');
    expect(left.filter((f) => !f.endsWith('.tmp')).length).toBe(10);
  });
});

describe('where the store is, and what it holds across', () => {
  it('the state folder: XDG (or ~/.local/state) on Linux, Application Support on macOS, LOCALAPPDATA on Windows', () => {
    expect(defaultStateDir({ XDG_STATE_HOME: '/x/state' }, 'linux')).toBe(join('/x/state', 'docreq-mcp'));
    expect(defaultStateDir({}, 'linux')).toBe(join(homedir(), '.local', 'state', 'docreq-mcp'));
    expect(defaultStateDir({}, 'darwin')).toBe(join(homedir(), 'Library', 'Application Support', 'docreq-mcp'));
    expect(defaultStateDir({ LOCALAPPDATA: 'C:/Users/a/AppData/Local' }, 'win32')).toBe(join('C:/Users/a/AppData/Local', 'docreq-mcp'));
    expect(defaultStateDir({}, 'win32')).toBe(join(homedir(), 'AppData', 'Local', 'docreq-mcp'));
  });

  it('DOCREQ_STORE=redis without a URL is the local redis', async () => {
    const store = openStore({ backend: 'redis', stateDir: undefined, url: undefined });
    expect(store.name).toBe('redis at 127.0.0.1:6379/0');
    await store.close();
  });

  it('says what once-only and the rate limit hold across, for each store, in stdio and team mode', () => {
    const file = new FileStore('/s');
    const memory = new MemoryStore();
    const redis = { scope: 'replicas', name: 'redis at r:6379/0' } as SendStore;
    expect(storeReach(redis, true)).toEqual({ shared: true, note: 'once-only and the rate limit hold across every replica (redis at r:6379/0)' });
    expect(storeReach(file, false)).toEqual({ shared: true, note: 'once-only holds across the processes of this machine only (the file store at /s)' });
    expect(storeReach(memory, false)).toEqual({ shared: false, note: 'once-only holds per process only (memory store)' });
    expect(storeReach(file, true)).toEqual({
      shared: false,
      note: 'no shared store: once-only holds across the processes of this machine only (the file store at /s), and the rate limit holds per process only; replicas need DOCREQ_STORE_URL=redis://… to share them',
    });
  });

  it('memory: over its bound it drops expired entries first, then the oldest', async () => {
    let now = 0;
    const store = new MemoryStore(3, () => now);
    await store.set('f:send:old', 'old', 60_000);
    await store.set('f:send:short', 'short', 10);
    await store.set('f:send:c', 'c', 60_000);
    now = 20;
    await store.set('f:send:d', 'd', 60_000);
    expect(await store.get('f:send:old')).toBe('old');
    expect(await store.get('f:send:d')).toBe('d');
  });
});
