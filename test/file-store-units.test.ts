import { existsSync, mkdtempSync, readdirSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/store/file.js';
import { suiteFolder } from './support/folders.js';

/**
 * The file store's own rules (src/store/file.ts) on a clock it is given: a record not of its shape is
 * absent, a claim file being written is held for 5 s and then taken over, and a prune drops what
 * expired (not what is still being written), dead writers' temporary files, and over its cap the
 * soonest-expiring records, never its own lock or a claim of a send in flight.
 */
function fileStore(max = 50_000) {
  const dir = mkdtempSync(join(suiteFolder(), 'file-units-'));
  let offset = 0;
  const store = new FileStore(dir, max, () => Date.now() + offset);
  return { store, dir, later: (ms: number) => (offset = ms) };
}
/** The namespace folder's record files (not the lock, not temporary files). */
function records(dir: string): string[] {
  const v1 = join(dir, 'v1');
  const [ns] = readdirSync(v1);
  return readdirSync(join(v1, ns!))
    .filter((n) => !n.startsWith('.') && !n.endsWith('.tmp'))
    .map((n) => join(v1, ns!, n));
}
const folderOf = (dir: string) => join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);

describe('FileStore', () => {
  it('a record not of its shape (valid JSON) is absent', async () => {
    const { store, dir } = fileStore();
    await store.set('f:a', 'v', 60_000);
    const [path] = records(dir);
    writeFileSync(path!, JSON.stringify({ v: 5, e: 9e15 }));
    expect(await store.get('f:a')).toBeUndefined();
    writeFileSync(path!, JSON.stringify({ v: 'x', e: '9e15' }));
    expect(await store.get('f:a')).toBeUndefined();
    writeFileSync(path!, JSON.stringify({ v: 'x', e: 9e15 }));
    expect(await store.get('f:a')).toBe('x');
  });

  it('a claim file just created and not yet written is held for 5 s, then taken over', async () => {
    const { store, dir } = fileStore();
    expect(await store.claim('f:c', 'first', 60_000)).toBe(true);
    const [path] = records(dir);
    truncateSync(path!, 0);
    const now = Date.now() / 1000;
    utimesSync(path!, now, now - 1);
    expect(await store.claim('f:c', 'second', 60_000)).toBe(false);
    utimesSync(path!, now, now - 10);
    expect(await store.claim('f:c', 'second', 60_000)).toBe(true);
    expect(await store.get('f:c')).toBe('second');
  });

  it('a prune drops records expired more than 5 s ago, keeps the rest and its own dot files', async () => {
    const { store, dir, later } = fileStore();
    await store.set('f:old', 'o', 1_000);
    await store.set('f:new', 'n', 600_000);
    const folder = folderOf(dir);
    writeFileSync(join(folder, '.keep'), '');
    utimesSync(join(folder, '.keep'), 0, 0);
    later(1_000 + 4_000);
    await store.prune(folder);
    expect(records(dir)).toHaveLength(2);
    later(1_000 + 6_000);
    await store.prune(folder);
    expect(records(dir)).toHaveLength(1);
    expect(await store.get('f:new')).toBe('n');
    expect(existsSync(join(folder, '.keep'))).toBe(true);
  });

  it("a prune drops a dead writer's temporary file after a minute, not before", async () => {
    const { store, dir, later } = fileStore();
    await store.set('f:a', 'a', 600_000);
    const folder = folderOf(dir);
    const tmp = join(folder, 'x.123.abcd.tmp');
    writeFileSync(tmp, '{');
    later(59_000);
    await store.prune(folder);
    expect(existsSync(tmp)).toBe(true);
    later(61_000);
    await store.prune(folder);
    expect(existsSync(tmp)).toBe(false);
  });

  it('over the cap, the soonest-expiring records go, never one expiring within the hour (a claim in flight)', async () => {
    const { store, dir } = fileStore(2);
    await store.set('f:claim', 'c', 30 * 60_000);
    await store.set('f:soon', 's', 2 * 3_600_000);
    await store.set('f:later', 'l', 5 * 3_600_000);
    await store.set('f:latest', 'x', 9 * 3_600_000);
    await store.prune(folderOf(dir));
    expect(await store.get('f:claim')).toBe('c');
    // Four live, cap two: the two soonest-expiring that are not claims go.
    expect(await store.get('f:soon')).toBeUndefined();
    expect(await store.get('f:later')).toBeUndefined();
    expect(await store.get('f:latest')).toBe('x');
    // Under the cap, nothing goes.
    const { store: four, dir: dir4 } = fileStore(4);
    await four.set('f:a', 'a', 2 * 3_600_000);
    await four.set('f:b', 'b', 3 * 3_600_000);
    await four.set('f:c', 'c', 4 * 3_600_000);
    await four.prune(folderOf(dir4));
    expect([await four.get('f:a'), await four.get('f:b'), await four.get('f:c')]).toEqual(['a', 'b', 'c']);
    // At the cap exactly, nothing goes.
    const { store: two, dir: dir2 } = fileStore(2);
    await two.set('f:a', 'a', 2 * 3_600_000);
    await two.set('f:b', 'b', 3 * 3_600_000);
    await two.prune(folderOf(dir2));
    expect([await two.get('f:a'), await two.get('f:b')]).toEqual(['a', 'b']);
  });

  it('renew and release of a key never claimed: false, not an error', async () => {
    const { store } = fileStore();
    expect(await store.renew('f:never', 'v', 1_000)).toBe(false);
    expect(await store.release('f:never', 'v')).toBe(false);
  });

  it('delete of what is not there is fine; a folder it cannot use makes it unavailable, naming the store', async () => {
    const { store } = fileStore();
    await expect(store.delete('f:none')).resolves.toBeUndefined();
    const blocked = mkdtempSync(join(suiteFolder(), 'file-blocked-'));
    writeFileSync(join(blocked, 'v1'), 'a file where the folder goes');
    const bad = new FileStore(blocked);
    await expect(bad.set('f:a', 'a', 1_000)).rejects.toThrow(`the send store (the file store at ${blocked}) cannot be used`);
  });
});
