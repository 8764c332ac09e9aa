import { describe, expect, it } from 'vitest';
import { sandboxAndClient, structured } from './helpers.js';

const { firm, mcp } = await sandboxAndClient();

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
