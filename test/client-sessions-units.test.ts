import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/store/memory.js';
import { ClientSessions, worthASession } from '../src/transport/client-sessions.js';

/**
 * Team mode's 2025 sessions (src/transport/client-sessions.ts) on their own: what an initialize declared,
 * kept for its owner only, renewed once half its idle time has passed, ended once.
 */
const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

describe('client sessions', () => {
  it('keeps what the initialize declared, for its owner only; another owner, a malformed or unknown id is an ended session', async () => {
    const sessions = new ClientSessions(new MemoryStore());
    const id = await sessions.open('firm-a:person-1', APPS);
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await sessions.find(id, 'firm-a:person-1')).toEqual({ ok: true, capabilities: APPS });
    expect(await sessions.find(id, 'firm-a:person-2')).toEqual({ ok: false });
    expect(await sessions.find(id, 'firm-b')).toEqual({ ok: false });
    expect(await sessions.find('short', 'firm-a:person-1')).toEqual({ ok: false });
    expect(await sessions.find(`${id}!`, 'firm-a:person-1')).toEqual({ ok: false });
    expect(await sessions.find('A'.repeat(32), 'firm-a:person-1')).toEqual({ ok: false });
  });

  it('is worth opening for a client that declares any capability, never for one that declares none', () => {
    for (const declared of [APPS, { elicitation: {} }, { sampling: {}, roots: {} }, { extensions: {} }]) expect(worthASession(declared)).toBe(true);
    for (const declared of [{}, undefined, null, [], ['elicitation'], 'elicitation', 1]) expect(worthASession(declared)).toBe(false);
  });

  it('is kept a day unused unless told otherwise (docs/sending.md: "24 hours unused")', async () => {
    const ttls: number[] = [];
    const store = new MemoryStore();
    const counted = {
      get: (k: string) => store.get(k),
      delete: (k: string) => store.delete(k),
      set: (k: string, v: string, ttl: number) => (ttls.push(ttl), store.set(k, v, ttl)),
    };
    await new ClientSessions(counted).open('firm', {});
    expect(ttls).toEqual([24 * 60 * 60_000]);
  });

  it('ends once, for its owner; after that it is not found', async () => {
    const sessions = new ClientSessions(new MemoryStore());
    const id = await sessions.open('firm-a', {});
    expect(await sessions.end(id, 'firm-b')).toBe(false);
    expect(await sessions.end(id, 'firm-a')).toBe(true);
    expect(await sessions.end(id, 'firm-a')).toBe(false);
    expect(await sessions.find(id, 'firm-a')).toEqual({ ok: false });
  });

  it('renews its expiry once half of it has passed (one write a half-life), and a session unused for its idle time ends', async () => {
    let now = 1_000_000;
    const writes: number[] = [];
    const store = new MemoryStore();
    const counted = {
      get: (k: string) => store.get(k),
      delete: (k: string) => store.delete(k),
      set: (k: string, v: string, ttl: number) => (writes.push(ttl), store.set(k, v, ttl)),
    };
    const sessions = new ClientSessions(counted, 10_000, () => now);
    const id = await sessions.open('firm', {});
    expect(writes).toEqual([10_000]);
    now += 4_000;
    await sessions.find(id, 'firm');
    expect(writes).toHaveLength(1);
    now += 2_000;
    await sessions.find(id, 'firm');
    expect(writes).toHaveLength(2);
    await sessions.find(id, 'firm');
    expect(writes).toHaveLength(2);
  });

  it('a kept entry that is not JSON is an ended session', async () => {
    const store = new MemoryStore();
    const sessions = new ClientSessions(store);
    const id = await sessions.open('firm', {});
    await store.set(`mcp-session:${id}`, '{not json', 60_000);
    expect(await sessions.find(id, 'firm')).toEqual({ ok: false });
  });
});
