import { describe, expect, it } from 'vitest';
import { isOpen, TODAY } from './support/sandbox.js';
import { sandboxAndClient, structured } from './support/connect.js';

const { sb, firm, mcp, upstream } = await sandboxAndClient();

interface ClientsOut {
  total: number;
  matched: number;
  returned: number;
  nextOffset: number | null;
  byStatus: Record<string, number>;
  clients: { id: string; displayName: string }[];
}

describe('list_clients', () => {
  it('gives exact counts over all clients and a page of the default size', async () => {
    const result = await mcp.call('list_clients');
    const out = structured<ClientsOut>(result);
    expect(out.total).toBe(firm.clients.length);
    expect(out.matched).toBe(firm.clients.length);
    expect(out.returned).toBe(Math.min(50, firm.clients.length));
    const expected: Record<string, number> = {};
    for (const c of firm.clients) expected[c.status] = (expected[c.status] ?? 0) + 1;
    expect(out.byStatus).toEqual(expected);
    expect(result.text.split('\n')[0]).toContain(`${firm.clients.length} clients`);
    for (const c of out.clients) expect(result.text).toContain(`id ${c.id}`);
  });

  it('searches names case- and accent-insensitively', async () => {
    const accented = firm.clients.find((c) => /[À-ž]/.test(c.displayName))!;
    const plain = accented.displayName.normalize('NFD').replace(/\p{M}/gu, '').toUpperCase();
    const out = structured<ClientsOut>(await mcp.call('list_clients', { search: plain }));
    expect(out.clients.map((c) => c.id)).toContain(accented.id);
  });

  it('filters by status, keeping byStatus over all clients', async () => {
    const out = structured<ClientsOut>(await mcp.call('list_clients', { status: 'INACTIVE' }));
    expect(out.matched).toBe(firm.clients.filter((c) => c.status === 'inactive').length);
    expect(out.matched).toBeGreaterThan(0);
    expect(Object.values(out.byStatus).reduce((a, b) => a + b, 0)).toBe(firm.clients.length);
  });

  it('pages with limit and offset, saying where the next page starts', async () => {
    const first = await mcp.call('list_clients', { limit: 10 });
    expect(structured<ClientsOut>(first).nextOffset).toBe(10);
    expect(first.text).toContain(`…${firm.clients.length - 10} more; use offset=10`);
    const second = structured<ClientsOut>(await mcp.call('list_clients', { limit: 10, offset: 10 }));
    expect(second.clients[0]!.id).toBe(firm.clients[10]!.id);
    const last = structured<ClientsOut>(await mcp.call('list_clients', { offset: firm.clients.length - 1 }));
    expect(last.nextOffset).toBeNull();
  });

  it('hints at a broader search when nothing matched', async () => {
    const result = await mcp.call('list_clients', { search: 'zzzz-no-such' });
    expect(structured<ClientsOut>(result).matched).toBe(0);
    expect(result.text).toMatch(/Try a shorter or different search/);
  });
});

// ── v2: the requests join (oracle from the contract's definitions, joined by name as requests carry only names) ──

interface JoinedOut extends ClientsOut {
  clients: { id: string; displayName: string; status: string; openRequests?: number; overdueRequests?: number }[];
  notes: string[];
}
const joinKey = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
function oracleCounts(name: string): { open: number; overdue: number } {
  const mine = firm.requests.filter((r) => joinKey(r.clientName) === joinKey(name) && isOpen(r));
  return { open: mine.length, overdue: mine.filter((r) => r.dueDate !== null && r.dueDate.slice(0, 10) < TODAY).length };
}

describe('list_clients requests join', () => {
  it.each([
    ['open', (n: { open: number }) => n.open > 0],
    ['none_open', (n: { open: number }) => n.open === 0],
    ['overdue', (n: { open: number; overdue: number }) => n.overdue > 0],
  ] as const)('requests: %s keeps exactly the clients the oracle keeps, with their counts', async (join, keep) => {
    const want = firm.clients.filter((c) => keep(oracleCounts(c.displayName)));
    expect(want.length).toBeGreaterThan(0);
    const out = structured<JoinedOut>(await mcp.call('list_clients', { requests: join, limit: 500 }));
    expect(out.matched).toBe(want.length);
    expect(out.total).toBe(firm.clients.length);
    expect(out.clients.map((c) => c.id)).toEqual(want.map((c) => c.id));
    for (const c of out.clients) {
      const n = oracleCounts(c.displayName);
      expect([c.openRequests, c.overdueRequests], c.displayName).toEqual([n.open, n.overdue]);
    }
  });

  it('combines the join with status: inactive clients with overdue requests', async () => {
    const want = firm.clients.filter((c) => c.status === 'inactive' && oracleCounts(c.displayName).overdue > 0);
    const out = structured<JoinedOut>(await mcp.call('list_clients', { requests: 'overdue', status: 'inactive', limit: 500 }));
    expect(out.clients.map((c) => c.id)).toEqual(want.map((c) => c.id));
  });

  it('keeps overlapping names apart: "Tomasz Haddad" counts only its own requests', async () => {
    const out = structured<JoinedOut>(await mcp.call('list_clients', { search: 'tomasz haddad', requests: 'open', limit: 500 }));
    const none = structured<JoinedOut>(await mcp.call('list_clients', { search: 'tomasz haddad', requests: 'none_open', limit: 500 }));
    const both = [...out.clients, ...none.clients];
    expect(both.map((c) => c.displayName).sort()).toEqual(['Tomasz Haddad', 'Tomasz Haddad B.']);
    for (const c of both) expect(c.openRequests).toBe(oracleCounts(c.displayName).open);
  });

  it('flags a name shared by several clients in notes, with both ids, instead of guessing', async () => {
    const sams = firm.clients.filter((c) => c.displayName === 'Sam Taylor');
    const open = oracleCounts('Sam Taylor').open;
    const result = await mcp.call('list_clients', { search: 'sam taylor', requests: open > 0 ? 'open' : 'none_open' });
    const out = structured<JoinedOut>(result);
    expect(out.clients.map((c) => c.id).sort()).toEqual(sams.map((c) => c.id).sort());
    expect(out.notes).toHaveLength(1);
    for (const c of sams) expect(out.notes[0]).toContain(c.id);
    expect(result.text).toContain('name shared');
  });

  it('recounts when the requests list changes, and reuses the counts while the service answers 304', async () => {
    const client = firm.clients.find((c) => c.displayName !== 'Sam Taylor' && oracleCounts(c.displayName).open > 1)!;
    const counts = async () =>
      structured<JoinedOut>(await mcp.call('list_clients', { search: client.email, requests: 'open' })).clients.find((c) => c.id === client.id);
    const before = oracleCounts(client.displayName);
    expect(await counts()).toMatchObject({ openRequests: before.open });
    expect(await counts()).toMatchObject({ openRequests: before.open }); // a 304: the same records, the counts kept for them
    const request = firm.requests.find((r) => joinKey(r.clientName) === joinKey(client.displayName) && isOpen(r))!;
    const status = request.status;
    try {
      request.status = 'completed';
      sb.invalidateLists();
      expect(oracleCounts(client.displayName).open).toBe(before.open - 1);
      expect(await counts()).toMatchObject({ openRequests: before.open - 1, overdueRequests: oracleCounts(client.displayName).overdue });
    } finally {
      request.status = status;
      sb.invalidateLists();
    }
    expect(await counts()).toMatchObject({ openRequests: before.open, overdueRequests: before.overdue });
  });

  it('has notes without the join too, and fetches requests only for the join', async () => {
    const out = structured<JoinedOut>(await mcp.call('list_clients', { limit: 1 }));
    expect(upstream()).toBe(1);
    expect(out.notes).toEqual([]);
    expect(out.clients[0]).not.toHaveProperty('openRequests');
  });

  it('names the statuses that occur when a status matches nothing', async () => {
    const result = await mcp.call('list_clients', { status: 'archived' });
    expect(result.text).toMatch(/No client has status "archived"\. Statuses that occur: .*active/);
  });

  it('fetches the two lists in parallel for the join, and for a grouped or by-name list_requests', async () => {
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 400 });
    sb.inject('GET /api/v1/requests', { kind: 'latency', ms: 400 });
    for (const [name, args] of [
      ['list_clients', { requests: 'open' }],
      ['list_requests', { groupBy: 'client' }],
      ['list_requests', { client: 'Sam Taylor' }],
    ] as const) {
      const started = performance.now();
      expect((await mcp.call(name, args)).isError).toBeFalsy();
      expect(performance.now() - started, name).toBeLessThan(750);
    }
    expect(upstream()).toBe(6);
  });
});
