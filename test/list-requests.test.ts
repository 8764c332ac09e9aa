import { describe, expect, it } from 'vitest';
import { addDays, CLOSING_STATUSES, isOpen, sandboxAndClient, structured, TODAY } from './helpers.js';

const { firm, mcp, upstream } = await sandboxAndClient();
interface RequestsOut {
  asOf: string;
  total: number;
  matched: number;
  returned: number;
  offset: number;
  nextOffset: number | null;
  byStatus: Record<string, number>;
  overdue: number;
  dueWithin7Days: number;
  checklist: { totalItems: number; completedItems: number };
  requests: { id: string; status: string; dueDate: string | null; overdue: boolean; createdAt: string; clientName: string }[];
}

describe('list_requests', () => {
  const today = TODAY;

  it('counts overdue, due soon, statuses and checklist items exactly over all requests', async () => {
    const out = structured<RequestsOut>(await mcp.call('list_requests'));
    expect(out.asOf).toBe(today);
    expect(out.total).toBe(firm.requests.length);
    const due = (d: string | null) => (d ? d.slice(0, 10) : null);
    const overdue = firm.requests.filter((r) => isOpen(r) && due(r.dueDate) !== null && due(r.dueDate)! < today);
    expect(out.overdue).toBe(overdue.length);
    expect(out.overdue).toBeGreaterThan(0);
    const weekEnd = addDays(today, 7);
    expect(out.dueWithin7Days).toBe(firm.requests.filter((r) => isOpen(r) && due(r.dueDate) && due(r.dueDate)! >= today && due(r.dueDate)! <= weekEnd).length);
    expect(out.checklist.totalItems).toBe(firm.requests.reduce((n, r) => n + r.totalItems, 0));
    expect(Object.values(out.byStatus).reduce((a, b) => a + b, 0)).toBe(firm.requests.length);
    expect(out.returned).toBe(25);
    expect(out.requests.map((r) => r.id)).toEqual(firm.requests.slice(0, 25).map((r) => r.id));
  });

  it('filters overdue only, and every one shown is overdue and open', async () => {
    const result = await mcp.call('list_requests', { overdue: true, limit: 500 });
    const out = structured<RequestsOut>(result);
    expect(out.matched).toBe(out.overdue);
    for (const r of out.requests) {
      expect(r.overdue).toBe(true);
      expect(r.dueDate!.slice(0, 10) < today).toBe(true);
      expect(CLOSING_STATUSES).not.toContain(r.status.toLowerCase());
    }
    expect(result.text).toContain('OVERDUE');
  });

  it('filters by any of several statuses, case-insensitively, also when sent as JSON text', async () => {
    const want = firm.requests.filter((r) => r.status === 'sent' || r.status === 'completed').length;
    const direct = structured<RequestsOut>(await mcp.call('list_requests', { status: ['SENT', 'Completed'] }));
    const encoded = structured<RequestsOut>(await mcp.call('list_requests', { status: '["sent","completed"]' }));
    expect(direct.matched).toBe(want);
    expect(encoded.matched).toBe(want);
    expect(Object.keys(direct.byStatus).sort()).toEqual(['completed', 'sent']);
  });

  it('filters by client name and by title substring', async () => {
    const target = firm.requests[0]!;
    const part = target.title.slice(3, 11).toUpperCase();
    const out = structured<RequestsOut>(await mcp.call('list_requests', { client: target.clientName.toLowerCase(), search: part }));
    expect(out.matched).toBe(firm.requests.filter((r) => r.clientName === target.clientName && r.title.toUpperCase().includes(part)).length);
    expect(out.matched).toBeGreaterThan(0);
    expect(out.requests.every((r) => r.clientName === target.clientName)).toBe(true);
  });

  it('filters a due-date range inclusively and sorts by due date', async () => {
    const days = firm.requests.map((r) => r.dueDate?.slice(0, 10)).filter((d): d is string => !!d).sort();
    const from = days[10]!;
    const to = days[30]!;
    const out = structured<RequestsOut>(await mcp.call('list_requests', { dueAfter: from, dueBefore: to, sort: 'due_soonest', limit: 500 }));
    expect(out.matched).toBe(days.filter((d) => d >= from && d <= to).length);
    const shown = out.requests.map((r) => r.dueDate!.slice(0, 10));
    expect(shown).toEqual([...shown].sort());
    expect(shown[0]).toBe(from);
  });

  it('sorts oldest first and least complete first', async () => {
    const oldest = structured<RequestsOut>(await mcp.call('list_requests', { sort: 'oldest', limit: 3 }));
    expect(oldest.requests[0]!.id).toBe(firm.requests.at(-1)!.id);
    const least = structured<RequestsOut>(await mcp.call('list_requests', { sort: 'least_complete', limit: 500 }));
    const ratios = least.requests.map((r) => (r as unknown as { completedItems: number; totalItems: number })).map((r) => r.completedItems / r.totalItems);
    expect(ratios).toEqual([...ratios].sort((a, b) => a - b));
  });

  it('refuses an impossible date range and bad dates before any HTTP call', async () => {
    const swapped = await mcp.call('list_requests', { dueAfter: '2026-12-01', dueBefore: '2026-01-01' });
    expect(swapped.isError).toBe(true);
    expect(swapped.text).toContain('Swap them');
    const bad = await mcp.call('list_requests', { dueAfter: '2026-02-30' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('dueAfter: is not a real calendar date');
    expect(upstream()).toBe(0);
  });
});
