import { MAX_PER_NAMESPACE, namespaceOf, type SendStore } from './store.js';

interface Entry {
  value: string;
  expiresAt: number;
}

/** One process only (DOCREQ_STORE=memory): lost at exit, not shared. Bounded per namespace. */
export class MemoryStore implements SendStore {
  readonly backend = 'memory' as const;
  readonly name = 'the memory store of this process';
  readonly scope = 'process' as const;
  /** Per namespace, in insertion order (Map order), so the oldest of a namespace go first. */
  private readonly spaces = new Map<string, Map<string, Entry>>();

  constructor(
    private readonly maxPerNamespace = MAX_PER_NAMESPACE,
    private readonly now: () => number = Date.now,
  ) {}

  private live(key: string): Entry | undefined {
    const space = this.spaces.get(namespaceOf(key));
    const entry = space?.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      space!.delete(key);
      return undefined;
    }
    return entry;
  }

  private put(key: string, value: string, ttlMs: number): void {
    const ns = namespaceOf(key);
    let space = this.spaces.get(ns);
    if (!space) this.spaces.set(ns, (space = new Map<string, Entry>()));
    space.delete(key);
    space.set(key, { value, expiresAt: this.now() + ttlMs });
    if (space.size > this.maxPerNamespace) {
      const now = this.now();
      for (const [k, e] of space) if (e.expiresAt <= now) space.delete(k);
      for (const k of space.keys()) {
        if (space.size <= this.maxPerNamespace) break;
        space.delete(k);
      }
    }
  }

  claim(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) return Promise.resolve(false);
    this.put(key, value, ttlMs);
    return Promise.resolve(true);
  }

  renew(key: string, value: string, ttlMs: number): Promise<boolean> {
    const entry = this.live(key);
    if (entry?.value !== value) return Promise.resolve(false);
    entry.expiresAt = this.now() + ttlMs;
    return Promise.resolve(true);
  }

  release(key: string, value: string): Promise<boolean> {
    if (this.live(key)?.value !== value) return Promise.resolve(false);
    this.spaces.get(namespaceOf(key))?.delete(key);
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
    this.spaces.get(namespaceOf(key))?.delete(key);
    return Promise.resolve();
  }

  incr(key: string, ttlMs: number, by = 1): Promise<number> {
    const entry = this.live(key);
    if (!entry) {
      this.put(key, String(by), ttlMs);
      return Promise.resolve(by);
    }
    entry.value = String(Number(entry.value) + by);
    return Promise.resolve(Number(entry.value));
  }

  close(): Promise<void> {
    this.spaces.clear();
    return Promise.resolve();
  }
}
