import { describe, expect, it } from 'vitest';
import { addDays, CLOSING_STATUSES, isOpen, TODAY } from './support/sandbox.js';
import { sandboxAndClient, structured } from './support/connect.js';
import fc from 'fast-check';
import { firstSorted } from '../src/requests/orders.js';

const { sb, firm, mcp, upstream } = await sandboxAndClient();
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
    const days = firm.requests
      .map((r) => r.dueDate?.slice(0, 10))
      .filter((d): d is string => !!d)
      .sort();
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
    const ratios = least.requests.map((r) => r as unknown as { completedItems: number; totalItems: number }).map((r) => r.completedItems / r.totalItems);
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

// ── v2: state, created range, client names, groupBy, notes (oracle from the contract's definitions) ──
interface GroupRow {
  clientName: string;
  requests: number;
  open: number;
  overdue: number;
  totalItems: number;
  completedItems: number;
  outstandingItems: number;
  nextDue: string | null;
  oldestOverdue: string | null;
}
interface V2Out extends RequestsOut {
  open: number;
  closed: number;
  groups?: GroupRow[];
  groupCount?: number;
  notes: string[];
}
type Seeded = (typeof firm.requests)[number];
const dayOf = (d: string | null) => (d && /^\d{4}-\d{2}-\d{2}/.test(d) ? d.slice(0, 10) : null);
const isOverdue = (r: Seeded) => isOpen(r) && dayOf(r.dueDate) !== null && dayOf(r.dueDate)! < TODAY;
const norm = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');

/** The oracle's groups: one per client name, counted by hand from the seed. */
function oracleGroups(rs: Seeded[]): Map<string, GroupRow> {
  const out = new Map<string, GroupRow>();
  for (const r of rs) {
    const g = out.get(r.clientName) ?? {
      clientName: r.clientName,
      requests: 0,
      open: 0,
      overdue: 0,
      totalItems: 0,
      completedItems: 0,
      outstandingItems: 0,
      nextDue: null,
      oldestOverdue: null,
    };
    g.requests += 1;
    g.totalItems += r.totalItems;
    g.completedItems += r.completedItems;
    const due = dayOf(r.dueDate);
    if (isOpen(r)) {
      g.open += 1;
      // Outstanding (as this server documents it): items not complete on open requests.
      g.outstandingItems += Math.max(0, r.totalItems - r.completedItems);
      if (due && (!g.nextDue || due < g.nextDue)) g.nextDue = due;
    }
    if (isOverdue(r)) {
      g.overdue += 1;
      if (!g.oldestOverdue || due! < g.oldestOverdue) g.oldestOverdue = due;
    }
    out.set(r.clientName, g);
  }
  return out;
}

describe('list_requests v2', () => {
  it('counts open and closed in every result, and filters by state', async () => {
    const open = firm.requests.filter(isOpen);
    const all = structured<V2Out>(await mcp.call('list_requests'));
    expect(all.open).toBe(open.length);
    expect(all.closed).toBe(firm.requests.length - open.length);
    // Nothing to note but a name several clients share on the page (the demo firm's two Sam Taylors).
    expect(all.notes.filter((n) => !/ is the name of \d+ clients /.test(n))).toEqual([]);
    const onlyOpen = structured<V2Out>(await mcp.call('list_requests', { state: 'open', limit: 500 }));
    expect(onlyOpen.matched).toBe(open.length);
    expect(onlyOpen.closed).toBe(0);
    expect(onlyOpen.requests.map((r) => r.id)).toEqual(open.map((r) => r.id));
    const onlyClosed = structured<V2Out>(await mcp.call('list_requests', { state: 'closed', limit: 500 }));
    expect(onlyClosed.matched).toBe(firm.requests.length - open.length);
    expect(onlyClosed.open).toBe(0);
    expect(onlyClosed.overdue).toBe(0);
    // "in_progress" with every item complete is closed too: the oracle counts items, not only statuses.
    expect(onlyClosed.requests.every((r) => !isOpen(firm.requests.find((s) => s.id === r.id)!))).toBe(true);
  });

  it('filters by created day, inclusive at both ends', async () => {
    const days = firm.requests.map((r) => r.createdAt.slice(0, 10)).sort();
    const from = days[20]!;
    const to = days[50]!;
    const out = structured<V2Out>(await mcp.call('list_requests', { createdAfter: from, createdBefore: to, limit: 500 }));
    const want = firm.requests.filter((r) => r.createdAt.slice(0, 10) >= from && r.createdAt.slice(0, 10) <= to);
    expect(out.matched).toBe(want.length);
    expect(out.requests.map((r) => r.id)).toEqual(want.map((r) => r.id));
    const one = structured<V2Out>(await mcp.call('list_requests', { createdAfter: from, createdBefore: from }));
    expect(one.matched).toBe(firm.requests.filter((r) => r.createdAt.slice(0, 10) === from).length);
    const swapped = await mcp.call('list_requests', { createdAfter: to, createdBefore: from });
    expect(swapped.isError).toBe(true);
    expect(swapped.text).toContain('Swap them');
  });

  it('matches a whole client name exactly when a client has it, and says so', async () => {
    const exact = firm.requests.filter((r) => r.clientName === 'Tomasz Haddad');
    const longer = firm.requests.filter((r) => r.clientName === 'Tomasz Haddad B.');
    expect(exact.length).toBeGreaterThan(0);
    expect(longer.length).toBeGreaterThan(0);
    const result = await mcp.call('list_requests', { client: '  tomasz   HADDAD ', limit: 500 });
    const out = structured<V2Out>(result);
    expect(out.matched).toBe(exact.length);
    expect(out.requests.map((r) => r.id)).toEqual(exact.map((r) => r.id));
    expect(result.text.split('\n')[0]).toContain('client is exactly "tomasz HADDAD"');
    expect(out.notes.join(' ')).toContain('"Tomasz Haddad B."');
    const full = structured<V2Out>(await mcp.call('list_requests', { client: 'Tomasz Haddad B.', limit: 500 }));
    expect(full.requests.map((r) => r.id)).toEqual(longer.map((r) => r.id));
  });

  it('matches part of a name when no client has exactly that name, and says so', async () => {
    const result = await mcp.call('list_requests', { client: 'haddad', limit: 500 });
    const out = structured<V2Out>(result);
    const want = firm.requests.filter((r) => norm(r.clientName).includes('haddad'));
    expect(out.matched).toBe(want.length);
    expect(want.some((r) => r.clientName === 'Tomasz Haddad') && want.some((r) => r.clientName === 'Tomasz Haddad B.')).toBe(true);
    expect(result.text.split('\n')[0]).toContain('client name contains "haddad"');
  });

  it('never merges clients who share a name: notes name each with its id', async () => {
    const sams = firm.clients.filter((c) => c.displayName === 'Sam Taylor');
    expect(sams).toHaveLength(2);
    const result = await mcp.call('list_requests', { client: 'sam taylor' });
    const out = structured<V2Out>(result);
    expect(out.matched).toBe(firm.requests.filter((r) => r.clientName === 'Sam Taylor').length);
    expect(out.notes).toHaveLength(1);
    for (const c of sams) {
      expect(out.notes[0]).toContain(c.id);
      expect(result.text).toContain(c.id);
    }
    expect(out.notes[0]).toContain('2 clients');
  });

  it('groups by client name with exact per-name counts, paged like records', async () => {
    const oracle = oracleGroups(firm.requests);
    const result = await mcp.call('list_requests', { groupBy: 'client', limit: 500 });
    const out = structured<V2Out>(result);
    expect(out.groupCount).toBe(oracle.size);
    expect(out.matched).toBe(firm.requests.length);
    expect(out.requests).toEqual([]);
    expect(out.groups).toHaveLength(oracle.size);
    for (const g of out.groups!) expect(g).toEqual(oracle.get(g.clientName));
    // Newest: by each name's newest request.
    const firstSeen = [...new Set(firm.requests.map((r) => r.clientName))];
    expect(out.groups!.map((g) => g.clientName)).toEqual(firstSeen);
    // The shared name is flagged, never merged into one client.
    expect(out.notes.some((n) => n.includes('"Sam Taylor"'))).toBe(true);
    const page = structured<V2Out>(await mcp.call('list_requests', { groupBy: 'client', limit: 5, offset: 5 }));
    expect(page.groups!.map((g) => g.clientName)).toEqual(firstSeen.slice(5, 10));
    expect(page.nextOffset).toBe(10);
    expect(page.returned).toBe(5);
    // Each text line is its own group's, on every page and in every order that shows the group (lines are kept per group).
    for (const args of [{ limit: 500 }, { limit: 5, offset: 5 }, { sort: 'most_open', limit: 7 }, { sort: 'most_open', limit: 500 }]) {
      const shown = await mcp.call('list_requests', { groupBy: 'client', ...args });
      const lines = shown.text.split('\n').filter((l) => l.startsWith('- '));
      const groups = structured<V2Out>(shown).groups!;
      expect(lines).toHaveLength(groups.length);
      for (const [i, g] of groups.entries())
        expect(lines[i]).toMatch(
          new RegExp(`^- ${JSON.stringify(g.clientName).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · ${g.requests} requests?: ${g.open} open, `),
        );
    }
  });

  it('answers "which 3 clients have the most open requests" and "the most overdue" in one call', async () => {
    const oracle = [...oracleGroups(firm.requests).values()];
    const top = structured<V2Out>(await mcp.call('list_requests', { groupBy: 'client', sort: 'most_open', limit: 3 }));
    const opens = oracle.map((g) => g.open).sort((a, b) => b - a);
    expect(top.groups!.map((g) => g.open)).toEqual(opens.slice(0, 3));
    expect(top.groupCount).toBe(oracle.length);
    expect(top.open).toBe(firm.requests.filter(isOpen).length);
    const overdue = structured<V2Out>(await mcp.call('list_requests', { groupBy: 'client', sort: 'most_overdue', limit: 500 }));
    const counts = overdue.groups!.map((g) => g.overdue);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(counts[0]).toBe(Math.max(...oracle.map((g) => g.overdue)));
    const soon = structured<V2Out>(await mcp.call('list_requests', { groupBy: 'client', sort: 'due_soonest', limit: 500 }));
    const next = soon.groups!.map((g) => g.nextDue ?? '9999');
    expect(next).toEqual([...next].sort());
  });

  it('groups only what matched, with filters applied first', async () => {
    const want = firm.requests.filter((r) => isOpen(r) && norm(r.clientName).includes('haddad'));
    const out = structured<V2Out>(await mcp.call('list_requests', { groupBy: 'client', state: 'open', client: 'haddad', limit: 500 }));
    const oracle = oracleGroups(want);
    expect(out.groups!.map((g) => g.clientName).sort()).toEqual([...oracle.keys()].sort());
    for (const g of out.groups!) expect(g).toEqual(oracle.get(g.clientName));
  });

  it('refuses most_open without groupBy, and names the statuses that occur when a status matches nothing', async () => {
    const bad = await mcp.call('list_requests', { sort: 'most_open' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('groupBy');
    const none = await mcp.call('list_requests', { status: ['pending_review'] });
    expect(structured<V2Out>(none).matched).toBe(0);
    for (const s of new Set(firm.requests.map((r) => r.status))) expect(none.text).toContain(s);
  });

  it('words counts right: open requests due soon, and plurals', async () => {
    const result = await mcp.call('list_requests');
    expect(result.text).toMatch(/\d+ open requests? due within 7 days/);
    const one = firm.requests.find((r) => firm.requests.filter((s) => s.clientName === r.clientName).length === 1);
    if (one) {
      const single = await mcp.call('list_requests', { client: one.clientName, groupBy: 'client' });
      expect(single.text).toContain('· 1 request:');
      expect(single.text).not.toMatch(/\b1 (requests|items)\b/);
    }
    expect(result.text).not.toMatch(/\b1 items\b/);
  });

  it('says what the server cannot do in its description', async () => {
    const { tools } = await mcp.client.listTools();
    const text = tools.find((t) => t.name === 'list_requests')!.description!;
    expect(text).toMatch(/cannot remind clients, change, re-date, cancel or delete requests, change client details, or see answers and files/);
  });
});

describe('hostile counts', () => {
  it('keeps the result valid when item counts overflow a number (two records with 1e308 items)', async () => {
    const body = JSON.stringify({
      data: [1, 2].map((i) => ({
        id: `r${i}`,
        title: `T${i}`,
        status: 'sent',
        dueDate: null,
        createdAt: '2026-01-01T00:00:00Z',
        clientName: 'X',
        totalItems: 1e308,
        completedItems: 1e308,
      })),
    });
    sb.inject('GET /api/v1/requests', { kind: 'raw', status: 200, body });
    const result = await mcp.call('list_requests', {});
    expect(result.isError).toBeFalsy();
    const out = structured<{ checklist: { totalItems: number } }>(result);
    expect(Number.isFinite(out.checklist.totalItems)).toBe(true);
  });
});

describe('firstSorted (the top of a grouped page without sorting every group)', () => {
  it('gives what a stable sort and a slice give, ties included', () => {
    const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 60 }), fc.integer({ min: 0, max: 70 }), (keys, count) => {
        const list = keys.map((key, at) => ({ key, at }));
        expect(firstSorted(list, byKey, count)).toEqual([...list].sort(byKey).slice(0, count));
      }),
      { numRuns: 300 },
    );
  });
});

describe('answers worked out once per list', () => {
  it('answers the same question about an unchanged list alike, and a changed list afresh', async () => {
    const args = { state: 'open' as const, sort: 'due_soonest' as const, limit: 5 };
    const first = await mcp.call('list_requests', args);
    const again = await mcp.call('list_requests', { limit: 5, sort: 'due_soonest', state: 'open' }); // same question, other key order
    expect(again.text).toContain('(Revalidated');
    expect(again.structuredContent).toEqual(first.structuredContent);
    const before = structured<RequestsOut>(again);
    // The list changes at the service: a new open request, due before every other.
    const client = firm.clients[0]!;
    const posted = await fetch(`${sb.url}/api/v1/requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sb.keys.demo}`, 'content-type': 'application/json', 'idempotency-key': 'answers-once-1' },
      body: JSON.stringify({ clientId: client.id, title: 'Answered afresh', dueDate: '2000-01-01', items: [{ name: 'W-2', required: true, type: 'file' }] }),
    });
    expect(posted.status).toBe(201);
    const changed = await mcp.call('list_requests', args);
    expect(changed.text).not.toContain('(Revalidated');
    const after = structured<RequestsOut>(changed);
    expect(after.total).toBe(before.total + 1);
    expect(after.matched).toBe(before.matched + 1);
    expect(after.requests[0]!.clientName).toBe(client.displayName);
    expect(after.requests[0]!.dueDate!.slice(0, 10)).toBe('2000-01-01');
    // The new list, asked again, is revalidated and answers the same.
    const unchanged = await mcp.call('list_requests', args);
    expect(unchanged.text).toContain('(Revalidated');
    expect(unchanged.structuredContent).toEqual(after);
  });
});
