import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_PER_NAMESPACE, namespaceOf, StoreUnavailableError, type SendStore } from './store.js';

/**
 * proper-lockfile (with graceful-fs, which patches fs as it loads), imported at the first lock: a
 * server's start never waits for it (cold start, docs/performance.md), a send does once.
 */
let lockModule: Promise<typeof import('proper-lockfile')> | undefined;
const lockfiles = () => (lockModule ??= import('proper-lockfile').then((m) => (m as { default?: typeof import('proper-lockfile') }).default ?? m));

/**
 * The file store (default for stdio): one directory shared by every process of this user on this
 * machine. One file per entry, named by a hash of its key, in a folder per namespace (firm):
 * a claim is an exclusive create (`wx`), a record a write-then-rename, so a reader never sees half
 * a record and two processes never both take a claim (a claim file created and not yet written
 * counts as held). Each file's mtime is its expiry, so pruning needs no reads. Everything that
 * rewrites or removes a claim (renewal, release, taking over an expired one, pruning) does so under
 * the namespace's lock (proper-lockfile: a lock directory with a stale timeout, no native code), after
 * checking it again; the pre-POST record a dead process left is a plain record and keeps blocking
 * for 24 hours. Folder 0700, files 0600.
 */
const PRUNE_EVERY = 500;
/** How long an unreadable claim file (created, not yet written) counts as held, from its mtime. */
const BEING_WRITTEN_MS = 5_000;
const hash = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);

interface Stored {
  v: string;
  e: number;
}

export class FileStore implements SendStore {
  readonly backend = 'file' as const;
  readonly scope = 'machine' as const;
  readonly name: string;
  private readonly ready = new Map<string, Promise<string>>();
  private readonly writes = new Map<string, number>();

  constructor(
    readonly dir: string,
    private readonly maxPerNamespace = MAX_PER_NAMESPACE,
    private readonly now: () => number = Date.now,
  ) {
    this.name = `the file store at ${dir}`;
  }

  private fail(error: unknown): never {
    if (error instanceof StoreUnavailableError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new StoreUnavailableError(this.name, code ? `${code} on ${(error as NodeJS.ErrnoException).syscall ?? 'a file'}` : (error as Error).message);
  }

  /** The namespace's folder, made (0700) on first use; a prune of expired entries starts then. */
  private folder(key: string): Promise<string> {
    const ns = namespaceOf(key);
    let ready = this.ready.get(ns);
    if (!ready) {
      const path = join(this.dir, 'v1', hash(ns, 24));
      ready = (async () => {
        await mkdir(path, { recursive: true, mode: 0o700 });
        await chmod(this.dir, 0o700);
        await chmod(join(this.dir, 'v1'), 0o700);
        await chmod(path, 0o700);
        void this.prune(path).catch(() => undefined);
        return path;
      })();
      ready.catch(() => this.ready.delete(ns));
      this.ready.set(ns, ready);
    }
    return ready;
  }

  private async path(key: string): Promise<string> {
    return join(await this.folder(key), hash(key, 40));
  }

  private async read(path: string): Promise<Stored | undefined> {
    try {
      const stored = JSON.parse(await readFile(path, 'utf8')) as Stored;
      return typeof stored.v === 'string' && typeof stored.e === 'number' ? stored : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      if (error instanceof SyntaxError) return undefined; // not ours, or cut short by a full disk: treated as absent
      throw error;
    }
  }

  private alive(stored: Stored | undefined): stored is Stored {
    return stored !== undefined && stored.e > this.now();
  }

  /**
   * Whether a claim file is held: true while it is live, false once expired, undefined when it is
   * gone. A file another process has just created and not yet written (empty or cut short) is held
   * for a few seconds by its mtime: taking it over then would give the claim to two processes.
   */
  private async held(path: string): Promise<boolean | undefined> {
    const stored = await this.read(path);
    if (stored) return stored.e > this.now();
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!info) return undefined;
    return info.mtimeMs > this.now() - BEING_WRITTEN_MS;
  }

  private async locked<T>(path: string, work: () => Promise<T>): Promise<T> {
    const unlock = await (
      await lockfiles()
    ).lock(join(path, '..', '.lock'), { realpath: false, stale: 5_000, update: 1_000, retries: { retries: 200, minTimeout: 2, maxTimeout: 25, factor: 1.3 } });
    try {
      return await work();
    } finally {
      await unlock().catch(() => undefined);
    }
  }

  private async write(path: string, value: string, ttlMs: number): Promise<void> {
    const expiresAt = this.now() + ttlMs;
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify({ v: value, e: expiresAt } satisfies Stored), { mode: 0o600 });
    await utimes(tmp, new Date(), new Date(expiresAt));
    await rename(tmp, path);
  }

  async claim(key: string, value: string, ttlMs: number): Promise<boolean> {
    try {
      const path = await this.path(key);
      for (let attempt = 0; attempt < 2; attempt++) {
        const expiresAt = this.now() + ttlMs;
        try {
          const handle = await open(path, 'wx', 0o600);
          try {
            await handle.writeFile(JSON.stringify({ v: value, e: expiresAt } satisfies Stored));
            await handle.utimes(new Date(), new Date(expiresAt));
          } finally {
            await handle.close();
          }
          return true;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        if (await this.held(path)) return false;
        // Expired (its owner died or forgot): removed under the lock, only if it is still there and
        // still not held (every removal of an expired entry, here and in prune, is under that lock).
        await this.locked(path, async () => {
          if ((await this.held(path)) === false) await unlink(path).catch(() => undefined);
        });
      }
      return false;
    } catch (error) {
      this.fail(error);
    }
  }

  async renew(key: string, value: string, ttlMs: number): Promise<boolean> {
    try {
      // Under the lock, as a takeover is: a claim that expired meanwhile and was taken is never overwritten.
      const path = await this.path(key);
      return await this.locked(path, async () => {
        const held = await this.read(path);
        if (held?.v !== value || !this.alive(held)) return false;
        await this.write(path, value, ttlMs);
        return true;
      });
    } catch (error) {
      this.fail(error);
    }
  }

  async release(key: string, value: string): Promise<boolean> {
    try {
      // Under the lock: a claim of ours that expired meanwhile and was taken over is never removed.
      const path = await this.path(key);
      return await this.locked(path, async () => {
        const held = await this.read(path);
        if (held?.v !== value || !this.alive(held)) return false;
        await unlink(path).catch(() => undefined);
        return true;
      });
    } catch (error) {
      this.fail(error);
    }
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const stored = await this.read(await this.path(key));
      return this.alive(stored) ? stored.v : undefined;
    } catch (error) {
      this.fail(error);
    }
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    try {
      const path = await this.path(key);
      await this.write(path, value, ttlMs);
      const folder = join(path, '..');
      const n = (this.writes.get(folder) ?? 0) + 1;
      this.writes.set(folder, n);
      if (n % PRUNE_EVERY === 0) await this.prune(folder);
    } catch (error) {
      this.fail(error);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(await this.path(key)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    } catch (error) {
      this.fail(error);
    }
  }

  async incr(key: string, ttlMs: number, by = 1): Promise<number> {
    try {
      const path = await this.path(key);
      return await this.locked(path, async () => {
        const held = await this.read(path);
        if (!this.alive(held)) {
          await this.write(path, String(by), ttlMs);
          return by;
        }
        const next = Number(held.v) + by;
        await this.write(path, String(next), held.e - this.now());
        return next;
      });
    } catch (error) {
      this.fail(error);
    }
  }

  /**
   * Drops a namespace's expired entries (mtime = expiry) and, over the cap, its soonest-expiring:
   * never another namespace's. The folder is read without the lock; the removals happen under it,
   * each entry checked again first, so a claim taken over meanwhile is never removed.
   */
  async prune(folder: string): Promise<void> {
    const now = this.now();
    const names = await readdir(folder);
    const expired: string[] = [];
    const live: { path: string; expires: number }[] = [];
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const path = join(folder, name);
      const info = await stat(path).catch(() => undefined);
      if (!info) continue;
      if (name.endsWith('.tmp')) {
        if (now - info.ctimeMs > 60_000) await unlink(path).catch(() => undefined); // a writer that died mid-write
      } else if (info.mtimeMs <= now - BEING_WRITTEN_MS) expired.push(path);
      else live.push({ path, expires: info.mtimeMs });
    }
    // Over the cap: soonest-expiring first (the oldest records), but never a claim of a send in flight (minutes).
    const over = live.length - this.maxPerNamespace;
    const evict =
      over > 0
        ? live
            .filter((e) => e.expires > now + 60 * 60_000)
            .sort((a, b) => a.expires - b.expires)
            .slice(0, over)
        : [];
    if (!expired.length && !evict.length) return;
    await this.locked(join(folder, 'x'), async () => {
      for (const path of expired) {
        const info = await stat(path).catch(() => undefined);
        if (info && info.mtimeMs <= this.now() - BEING_WRITTEN_MS) await unlink(path).catch(() => undefined);
      }
      for (const entry of evict) await unlink(entry.path).catch(() => undefined);
    });
  }

  async close(): Promise<void> {}
}
