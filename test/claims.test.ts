import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SendLedger } from '../src/send/ledger.js';
import { FileStore } from '../src/store/file.js';
import { MemoryStore } from '../src/store/memory.js';
import { suiteFolder } from './support/folders.js';

/**
 * The claim a send holds while it runs (one caller per recipient and title): renewed while held, never after,
 * and never taken by two callers, even when a takeover of an expired claim keeps losing to another process.
 */

/** A real memory store that counts the renewals it is asked for. */
class CountingStore extends MemoryStore {
  renewals = 0;
  override renew(key: string, value: string, ttlMs: number): Promise<boolean> {
    this.renewals++;
    return super.renew(key, value, ttlMs);
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

describe('a claim is renewed while it is held, and never after its release', () => {
  it('released: the store is asked for no renewal any more (none every few seconds per send, forever)', async () => {
    const store = new CountingStore();
    const ledger = new SendLedger(store, Date.now, { ttlMs: 1_000, renewMs: 10 });
    const release = await ledger.lock('firm', 'client-1', 'title');
    expect(release).toBeDefined();
    await until(() => store.renewals >= 2);
    await release!();
    const after = store.renewals;
    // Twenty renewal periods: a timer left running would have asked again many times.
    await sleep(200);
    expect(store.renewals).toBe(after);
    expect(await ledger.claimed('firm', 'client-1', 'title')).toBe(false);
  });
});

/** Every file under a folder, recursively (the store's own lock folders left out). */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name.endsWith('.lock') ? [] : files(join(dir, e.name))) : [join(dir, e.name)],
  );
}

describe('the file store: an expired claim taken over by one caller only', () => {
  it('a takeover that loses twice to another process (the expired claim written again each time) is not taken', async () => {
    const dir = mkdtempSync(join(suiteFolder(), 'claims-'));
    let now = 1_000_000;
    let racing: string | undefined;
    // The store reads its clock just before each exclusive create: that is where another process's write lands.
    const clock = () => {
      if (racing && !existsSync(racing)) writeFileSync(racing, JSON.stringify({ v: 'another process', e: 1 }));
      return now;
    };
    const store = new FileStore(dir, 100, clock);
    expect(await store.claim('firm:claim:x', 'first', 1_000)).toBe(true);
    const [path] = files(dir);
    expect(statSync(path!).isFile()).toBe(true);
    now += 60_000; // the first owner's claim expired long ago
    racing = path;
    // Two takeovers, each lost: the claim stays another's, and this caller is told it is held.
    expect(await store.claim('firm:claim:x', 'second', 1_000)).toBe(false);
    racing = undefined;
    // Without the race, the expired claim is taken over as it should be.
    expect(await store.claim('firm:claim:x', 'third', 1_000)).toBe(true);
    expect(await store.get('firm:claim:x')).toBe('third');
  });
});
