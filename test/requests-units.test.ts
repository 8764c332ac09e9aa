import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Client, RequestRecord } from '../src/api/records.js';
import { requestAt } from './fixtures/records.js';
import { DEFAULT_PROFILE, ServiceProfile, serviceProfileSchema } from '../src/domain/service-profile.js';
import { select, needsClients, type RequestQuestion } from '../src/requests/query.js';
import { matchedPerName, namesMatched, sharedOnPage } from '../src/requests/names.js';
import { groupPage, requestPage } from '../src/requests/page.js';
import type { RequestSort, Sort } from '../src/requests/orders.js';
import { computeCreatedDays, dueDays } from '../src/requests/tables.js';
import { readDay } from '../src/domain/dates.js';

// list_requests' query engine called directly (src/requests/*.ts), without a server: random lists and questions
// answered by select() and the page functions, compared with a straightforward recomputation written here
// (filter, Array.sort, count), read by three service profiles (statuses named differently, ambiguous dates).

const ASOF = '2026-03-10';
const day = (k: number) => new Date(Date.parse(`${ASOF}T00:00:00Z`) + k * 86_400_000).toISOString().slice(0, 10);
const UNREAD = '?';
type Order = 'unread' | 'day-first' | 'month-first';
/** Each due or created text, and the day it reads as under each profile order (UNREAD: there but not read). */
const DATES: [string | null, string | null, string | null, string | null][] = [
  ...[-40, -8, -1, 0, 1, 6, 7, 8, 30].map((k): [string, string, string, string] => [day(k), day(k), day(k), day(k)]),
  [`${day(-3)}T17:00:00.000Z`, day(-3), day(-3), day(-3)],
  ['2026/03/12', '2026-03-12', '2026-03-12', '2026-03-12'],
  ['20260301', '2026-03-01', '2026-03-01', '2026-03-01'],
  ['25.03.2026', '2026-03-25', '2026-03-25', '2026-03-25'],
  ['03/14/2026', '2026-03-14', '2026-03-14', '2026-03-14'],
  ['03/04/2026', UNREAD, '2026-04-03', '2026-03-04'],
  ['1772409600', '2026-03-02', '2026-03-02', '2026-03-02'],
  ['Mar 9, 2026', '2026-03-09', '2026-03-09', '2026-03-09'],
  // ISO-shaped but no calendar day: unread, as readDay says, never a day compared as text.
  ...['2025-13-01', '2026-00-15', '2026-02-30T17:00:00Z', '2026-04-31', '0999-01-05', '2026-03-00'].map((t): [string, string, string, string] => [
    t,
    UNREAD,
    UNREAD,
    UNREAD,
  ]),
  ['2024-02-29', '2024-02-29', '2024-02-29', '2024-02-29'],
  ['2026-03-31T09:00:00+02:00', '2026-03-31', '2026-03-31', '2026-03-31'],
  ['soon', UNREAD, UNREAD, UNREAD],
  ...['x2026-03-01', '1-12-12 later', '2026-3-01xxxx', '2026-03-1xyzw'].map((t): [string, string, string, string] => [t, UNREAD, UNREAD, UNREAD]),
  ['31/02/2026', UNREAD, UNREAD, UNREAD],
  ['', null, null, null],
  [null, null, null, null],
];
const ORDERS: Order[] = ['unread', 'day-first', 'month-first'];
const readAs = (text: string | null, order: Order) => DATES.find(([t]) => t === text)![1 + ORDERS.indexOf(order)]!;

const DEFAULT_CLOSED = ['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived'];
const profileOf = (closed: string[] | undefined, ambiguous: Order) =>
  new ServiceProfile(serviceProfileSchema.parse({ ...(closed ? { statuses: { closed } } : {}), dates: { ambiguous } }));
const PROFILES = [
  { profile: DEFAULT_PROFILE, closed: DEFAULT_CLOSED, order: 'unread' as Order },
  { profile: profileOf(['withdrawn', 'Signed off'], 'day-first'), closed: ['withdrawn', 'signed_off'], order: 'day-first' as Order },
  { profile: profileOf(undefined, 'month-first'), closed: DEFAULT_CLOSED, order: 'month-first' as Order },
];
type Read = (typeof PROFILES)[number];

const STATUSES = ['sent', 'in_progress', 'Completed', 'DONE', ' done ', 'cancelled', '(none)', 'Sent', null, 'withdrawn', 'Signed-Off', 'on_hold'];
const TITLES = ['2025 tax return', 'Façade TAX review', 'KYC identity', 'Payroll', 'tax', null];
const NAMES = ['Ana Álvarez', 'ana alvarez', 'Ana  Alvarez', 'Bo Li', 'Bo Lin', 'BO LI', 'Café Lumière', 'cafe lumiere', 'Ana\tAlvarez', null, ''];
const COUNTS = [0, 1, 2, 3, 5, null];

const record = fc.record({
  title: fc.constantFrom(...TITLES),
  status: fc.constantFrom(...STATUSES),
  clientName: fc.constantFrom(...NAMES),
  dueDate: fc.constantFrom(...DATES.map((d) => d[0])),
  createdAt: fc.constantFrom(...DATES.map((d) => d[0])),
  totalItems: fc.constantFrom(...COUNTS),
  completedItems: fc.constantFrom(...COUNTS),
});
const list = fc.array(record, { maxLength: 80 }).map((rs) => rs.map((r, i): RequestRecord => ({ id: `r${i}`, ...r })));
const clientList = fc
  .subarray(['Bo Li', 'Bo Li', 'Ana Álvarez', 'ANA ALVAREZ', 'Nobody Else', null, 'Café'])
  .map((ns) => ns.map((displayName, i): Client => ({ id: `c${i}`, displayName, email: null, status: 'active' })));

const everything = fc.record({
  state: fc.constantFrom('open', 'closed'),
  status: fc.subarray(['sent', ' COMPLETED ', 'done', '(none)', 'withdrawn', 'nothing'], { minLength: 1 }),
  client: fc.constantFrom('Ana Alvarez', 'ana', 'Bo Li', '  BO   li ', 'bo', 'café', 'Lin', 'nobody'),
  search: fc.constantFrom('tax', ' TAX ', 'facade', 'FAÇADE', 'kyc', 'x', '   '),
  overdue: fc.boolean(),
  hasDueDate: fc.boolean(),
  dueAfter: fc.constantFrom(day(-10), day(0), day(3)),
  dueBefore: fc.constantFrom(day(-1), day(7), day(40)),
  createdAfter: fc.constantFrom(day(-8), day(0)),
  createdBefore: fc.constantFrom(day(1), day(8)),
});
const FILTERS = ['state', 'status', 'client', 'search', 'overdue', 'hasDueDate', 'dueAfter', 'dueBefore', 'createdAfter', 'createdBefore'] as const;
const SORTS = ['newest', 'oldest', 'due_soonest', 'least_complete', 'most_open', 'most_overdue', 'most_outstanding'] as const;
const question = fc
  .record({
    all: everything,
    filters: fc.subarray([...FILTERS], { maxLength: 3 }),
    grouped: fc.boolean(),
    sort: fc.constantFrom(...SORTS),
    offset: fc.constantFrom(0, 1, 3, 30),
    limit: fc.constantFrom(1, 4, 100),
  })
  .map(({ all, filters, grouped, sort, offset, limit }) => {
    const q: RequestQuestion = Object.fromEntries(filters.map((k) => [k, all[k]]));
    if (grouped) q.groupBy = 'client';
    const s: Sort = grouped || !['most_open', 'most_overdue', 'most_outstanding'].includes(sort) ? sort : 'due_soonest';
    return { q, sort: s, offset, limit };
  });

// ── the straightforward recomputation ──────────────────────────────────────────────────────────────
const fold = (s: string | null | undefined) =>
  (s ?? '')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
const key = (s: string | null | undefined) => fold(s).replace(/\s+/g, ' ').trim();
const lateOf = (due: string) => {
  const start = Date.parse(`${due}T00:00:00Z`);
  return Number.isNaN(start) ? null : Math.round((Date.parse(`${ASOF}T00:00:00Z`) - start) / 86_400_000);
};
const byDay = (a: string | null, b: string | null) => ((a ?? '9999') < (b ?? '9999') ? -1 : (a ?? '9999') > (b ?? '9999') ? 1 : 0);
const byText = (a: string | null, b: string | null) => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);
const ratio = (done: number, total: number) => (total ? done / total : 1);

function facts(r: RequestRecord, read: Read) {
  const dueRead = readAs(r.dueDate, read.order);
  const createdRead = readAs(r.createdAt, read.order);
  const due = dueRead === UNREAD ? null : dueRead;
  const closed =
    r.status !== null &&
    read.closed.includes(
      r.status
        .trim()
        .toLowerCase()
        .replace(/[\s_-]+/g, '_'),
    );
  const open = !closed && !(r.totalItems !== null && r.completedItems !== null && r.totalItems > 0 && r.completedItems >= r.totalItems);
  const overdue = open && due !== null && due < ASOF;
  const total = r.totalItems ?? 0;
  const done = r.completedItems ?? 0;
  return { due, unread: dueRead === UNREAD, created: createdRead === UNREAD ? null : createdRead, open, overdue, total, done };
}

function recompute(all: RequestRecord[], clients: Client[], read: Read, q: RequestQuestion) {
  const f = all.map((r) => facts(r, read));
  const needle = key(q.client);
  const exact = needle !== '' && (clients.some((c) => key(c.displayName) === needle) || all.some((r) => key(r.clientName) === needle));
  const statuses = q.status?.map((s) => s.trim().toLowerCase());
  const statusOk = (r: RequestRecord) => !statuses || statuses.includes((r.status ?? '').toLowerCase());
  const search = q.search ? fold(q.search.trim()) : '';
  const picked = all
    .map((r, i) => i)
    .filter((i) => {
      const r = all[i]!;
      const { due, created } = f[i]!;
      if (!statusOk(r)) return false;
      if (needle && !(exact ? key(r.clientName) === needle : key(r.clientName).includes(needle))) return false;
      if (search && !fold(r.title).includes(search)) return false;
      if (q.hasDueDate !== undefined && (due !== null || f[i]!.unread) !== q.hasDueDate) return false;
      if ((q.dueBefore || q.dueAfter) && (due === null || (q.dueBefore && due > q.dueBefore) || (q.dueAfter && due < q.dueAfter))) return false;
      if (
        (q.createdBefore || q.createdAfter) &&
        (created === null || (q.createdBefore && created > q.createdBefore) || (q.createdAfter && created < q.createdAfter))
      )
        return false;
      if (q.state && f[i]!.open !== (q.state === 'open')) return false;
      return q.overdue === undefined || f[i]!.overdue === q.overdue;
    });
  const containing = new Map<string, { name: string | null; n: number }>();
  if (exact)
    all.forEach((r, i) => {
      const k = key(r.clientName);
      if (k !== needle && k.includes(needle) && statusOk(r)) {
        const seen = containing.get(k);
        if (seen) seen.n++;
        else containing.set(k, { name: all[i]!.clientName, n: 1 });
      }
    });
  const byStatus: [string, number][] = [];
  for (const i of picked) {
    const k = all[i]!.status ?? '(none)';
    const entry = byStatus.find(([s]) => s === k);
    if (entry) entry[1]++;
    else byStatus.push([k, 1]);
  }
  const m = picked.map((i) => f[i]!);
  const overdue = m.filter((x) => x.overdue);
  const lates = overdue.map((x) => lateOf(x.due!)).filter((d): d is number => d !== null);
  const outstanding = (x: (typeof m)[number]) => (x.open && x.total > x.done ? x.total - x.done : 0);
  const counts = {
    openCount: m.filter((x) => x.open).length,
    overdueCount: overdue.length,
    dueSoon: m.filter((x) => x.open && x.due !== null && x.due >= ASOF && x.due <= day(7)).length,
    totalItems: m.reduce((n, x) => n + x.total, 0),
    completedItems: m.reduce((n, x) => n + x.done, 0),
    outstandingItems: m.reduce((n, x) => n + outstanding(x), 0),
    noDueDate: m.filter((x) => x.due === null && !x.unread).length,
    openNoDueDate: m.filter((x) => x.due === null && !x.unread && x.open).length,
    lateDays: lates.reduce((a, b) => a + b, 0),
    lateCounted: lates.length,
    oldestOverdue: overdue.map((x) => x.due!).sort()[0] ?? null,
  };
  type G = { clientName: string | null; requests: number; open: number; overdue: number; totalItems: number; completedItems: number } & {
    outstandingItems: number;
    nextDue: string | null;
    oldestOverdue: string | null;
    first: number;
    last: number;
  };
  const groups = new Map<string | null, G>();
  for (const i of picked) {
    const r = all[i]!;
    const x = f[i]!;
    let h = groups.get(r.clientName);
    if (!h) {
      h = {
        clientName: r.clientName,
        requests: 0,
        open: 0,
        overdue: 0,
        totalItems: 0,
        completedItems: 0,
        outstandingItems: 0,
        nextDue: null,
        oldestOverdue: null,
        first: i,
        last: i,
      };
      groups.set(r.clientName, h);
    }
    h.requests++;
    h.last = i;
    h.totalItems += x.total;
    h.completedItems += x.done;
    h.outstandingItems += outstanding(x);
    if (x.open) h.open++;
    if (x.open && x.due !== null && (h.nextDue === null || x.due < h.nextDue)) h.nextDue = x.due;
    if (x.overdue) h.overdue++;
    if (x.overdue && (h.oldestOverdue === null || x.due! < h.oldestOverdue)) h.oldestOverdue = x.due;
  }
  const groupCompare: Record<Sort, (a: G, b: G) => number> = {
    newest: (a, b) => a.first - b.first,
    oldest: (a, b) => b.last - a.last,
    due_soonest: (a, b) => byDay(a.nextDue, b.nextDue) || byText(a.clientName, b.clientName),
    least_complete: (a, b) => ratio(a.completedItems, a.totalItems) - ratio(b.completedItems, b.totalItems) || byText(a.clientName, b.clientName),
    most_open: (a, b) => b.open - a.open || b.overdue - a.overdue || byText(a.clientName, b.clientName),
    most_overdue: (a, b) => b.overdue - a.overdue || byDay(a.oldestOverdue, b.oldestOverdue) || b.open - a.open || byText(a.clientName, b.clientName),
    most_outstanding: (a, b) => b.outstandingItems - a.outstandingItems || b.open - a.open || byText(a.clientName, b.clientName),
  };
  const rowCompare: Record<RequestSort, (a: number, b: number) => number> = {
    newest: (a, b) => a - b,
    oldest: (a, b) => b - a,
    due_soonest: (a, b) => byDay(f[a]!.due, f[b]!.due) || a - b,
    least_complete: (a, b) => ratio(f[a]!.done, f[a]!.total) - ratio(f[b]!.done, f[b]!.total) || byDay(f[a]!.due, f[b]!.due) || a - b,
  };
  return { f, needle, exact, picked, containing, byStatus, counts, groups: [...groups.values()], groupCompare, rowCompare };
}

const line = (row: object) => JSON.stringify(row);

describe('list_requests query against a straightforward recomputation', () => {
  it('answers random questions exactly: counts, statuses, names, matches, groups and the page', () => {
    fc.assert(
      fc.property(list, clientList, fc.constantFrom(0, 1, 2), fc.array(question, { minLength: 1, maxLength: 4 }), (all, clients, p, qs) => {
        const read = PROFILES[p]!;
        for (const { q, sort, offset, limit } of qs) {
          const sel = select(all, clients, ASOF, read.profile, q);
          const want = recompute(all, clients, read, q);
          const label = JSON.stringify({ q, sort, offset, limit, p });
          expect({ needle: sel.needle, exact: sel.exact, grouped: sel.grouped }, label).toEqual({
            needle: want.needle,
            exact: want.exact,
            grouped: !!q.groupBy,
          });
          expect(sel.statuses && [...sel.statuses], label).toEqual(q.status?.map((s) => s.trim().toLowerCase()));
          expect(needsClients(q), label).toBe(!!q.groupBy || want.needle !== '');
          expect(Object.entries(sel.found.byStatus), label).toEqual(want.byStatus);
          const { byStatus: _b, containing, picked, groups, ...counts } = sel.found;
          expect(counts, label).toEqual(want.counts);
          expect([...containing], label).toEqual([...want.containing]);
          expect(sel.matched, label).toBe(want.picked.length);
          const perKey = new Map<string, number>();
          const names = new Map<string, { name: string | null; n: number }>();
          for (const i of want.picked) {
            const k = key(all[i]!.clientName);
            if (q.groupBy || want.needle) perKey.set(k, (perKey.get(k) ?? 0) + 1);
            const seen = names.get(k);
            if (seen) seen.n++;
            else names.set(k, { name: all[i]!.clientName, n: 1 });
          }
          expect([...matchedPerName(sel)].sort(), label).toEqual([...perKey].sort());
          if (q.groupBy) {
            expect(picked, label).toEqual([]);
            expect(groups, label).toEqual(want.groups);
            const sorted = [...want.groups].sort(want.groupCompare[sort]).slice(offset, offset + limit);
            const page = groupPage(groups, sort, offset, limit, line);
            expect(page.rows, label).toEqual(sorted.map(({ first: _f, last: _l, ...g }) => g));
            expect(page.lines, label).toEqual(page.rows.map(line));
            expect([...namesMatched(all, sel)].sort(), label).toEqual([...names].sort());
            continue;
          }
          expect(picked, label).toEqual(want.picked);
          expect(groups, label).toEqual([]);
          expect([...namesMatched(all, sel)], label).toEqual([...names]);
          const order = [...want.picked].sort(want.rowCompare[sort as RequestSort]).slice(offset, offset + limit);
          const page = requestPage(all, sel, sort as RequestSort, offset, limit, line);
          expect(page.page, label).toEqual(order);
          const rows = order.map((i) => {
            const { overdue, due } = want.f[i]!;
            return { ...all[i]!, overdue, daysOverdue: overdue ? lateOf(due!) : null };
          });
          expect(page.rows, label).toEqual(rows);
          expect(page.lines, label).toEqual(rows.map(line));
          const onPage = new Map<string, number>();
          const sharedKeys = new Set(clients.map((c) => key(c.displayName)).filter((k, i, ks) => k && ks.indexOf(k) !== i));
          for (const i of order)
            if (sharedKeys.has(key(all[i]!.clientName))) onPage.set(key(all[i]!.clientName), (onPage.get(key(all[i]!.clientName)) ?? 0) + 1);
          const shown = sharedOnPage(all, clients, page.page);
          expect(shown && { shared: [...shown.shared.keys()].sort(), onPage: [...shown.onPage] }, label).toEqual(
            sharedKeys.size ? { shared: [...sharedKeys].sort(), onPage: [...onPage] } : undefined,
          );
        }
      }),
      { numRuns: 250 },
    );
  });
});

const r = requestAt;
const ids = (all: RequestRecord[], picked: number[]) => picked.map((i) => all[i]!.id);
const client = (displayName: string): Client => ({ id: displayName, displayName, email: null, status: null });

describe('list_requests query rules a person would notice', () => {
  const all = [
    r(0, { title: 'Façade TAX', dueDate: '2026-03-01', createdAt: '2026-01-01T09:00:00Z' }),
    r(1, { status: 'withdrawn', clientName: 'Bo Lin', dueDate: '03/04/2026', createdAt: '2026-03-01' }),
    r(2, { status: 'Done', clientName: 'Ana Álvarez', dueDate: '2026-03-10', createdAt: '2026/02/01' }),
    r(3, { clientName: 'ANA  alvarez', dueDate: '2026-03-20', totalItems: 3, completedItems: 3 }),
    r(4, { title: null, clientName: null, dueDate: 'soon' }),
  ];
  const withdrawn = new ServiceProfile(serviceProfileSchema.parse({ statuses: { closed: ['Withdrawn'] }, dates: { ambiguous: 'month-first' } }));
  const ask = (q: RequestQuestion, profile = DEFAULT_PROFILE, asOf = ASOF, clients: Client[] = []) => select(all, clients, asOf, profile, q);

  it('counts a status the profile names closed as closed, and reads the list again by that profile', () => {
    expect(ids(all, ask({ state: 'open' }).found.picked)).toEqual(['r0', 'r1', 'r4']);
    // The profile's closed list replaces the defaults: Done is then open, withdrawn closed.
    expect(ids(all, ask({ state: 'closed' }, withdrawn).found.picked)).toEqual(['r1', 'r3']);
    expect(ids(all, ask({ state: 'open' }).found.picked)).toEqual(['r0', 'r1', 'r4']);
  });

  it('judges overdue on the day asked: open and due before it, not on it', () => {
    expect(ids(all, ask({ overdue: true }).found.picked)).toEqual(['r0']);
    expect(ids(all, ask({ overdue: true }, DEFAULT_PROFILE, '2026-03-21').found.picked)).toEqual(['r0']);
    expect(ids(all, ask({ overdue: true }, withdrawn, '2026-03-05').found.picked)).toEqual(['r0']);
    expect(ids(all, ask({ overdue: false }, DEFAULT_PROFILE, '2026-02-01').found.picked)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    const late = ask({}, DEFAULT_PROFILE, '2026-03-04').found;
    expect([late.overdueCount, late.lateDays, late.lateCounted, late.oldestOverdue, late.dueSoon]).toEqual([1, 3, 1, '2026-03-01', 0]);
  });

  it('keeps due and created days on either bound, whatever way the date is written', () => {
    expect(ids(all, ask({ dueBefore: '2026-03-10', dueAfter: '2026-03-01' }).found.picked)).toEqual(['r0', 'r2']);
    expect(ids(all, ask({ dueBefore: '2026-03-04', dueAfter: '2026-03-04' }, withdrawn).found.picked)).toEqual(['r1']);
    expect(ids(all, ask({ createdAfter: '2026-01-01', createdBefore: '2026-02-01' }).found.picked)).toEqual(['r0', 'r2']);
    expect(ids(all, ask({ createdAfter: '2026-02-02' }).found.picked)).toEqual(['r1']);
    const found = ask({ hasDueDate: false }).found;
    expect([ids(all, found.picked), found.noDueDate]).toEqual([[], 0]);
    expect(ask({}).found).toMatchObject({ noDueDate: 0, dueSoon: 0, openCount: 3 });
  });

  it('finds titles and names folding accents, case and spaces, and a whole name only when one has it', () => {
    expect(ids(all, ask({ search: ' façade tax ' }).found.picked)).toEqual(['r0']);
    expect(ids(all, ask({ search: '  ' }).found.picked)).toHaveLength(5);
    const whole = ask({ client: 'ana alvarez' });
    expect([whole.exact, ids(all, whole.found.picked), whole.found.containing.size]).toEqual([true, ['r2', 'r3'], 0]);
    const bo = ask({ client: ' BO  LI ' });
    expect([bo.exact, bo.needle, ids(all, bo.found.picked), [...bo.found.containing]]).toEqual([true, 'bo li', ['r0'], [['bo lin', { name: 'Bo Lin', n: 1 }]]]);
    expect(ids(all, ask({ client: 'bo' }).found.picked)).toEqual(['r0', 'r1']);
    const lin = [r(0, { clientName: 'Bo Lin' })];
    expect(select(lin, [], ASOF, DEFAULT_PROFILE, { client: 'Bo Li' }).matched).toBe(1);
    expect(select(lin, [client('Bo Li')], ASOF, DEFAULT_PROFILE, { client: 'Bo Li' }).matched).toBe(0);
    expect(ask({ status: [] }).statuses).toBeUndefined();
  });

  it('counts other names containing a whole name, whatever title, due range or overdue narrows to', () => {
    const some = (n: number, over: Partial<RequestRecord>) => Array.from({ length: n }, () => over);
    const many = [...some(10, { clientName: 'Bo Lin' }), ...some(10, {}), ...some(2, { title: 'tax', dueDate: day(-3) }), ...some(30, { clientName: 'Ana' })];
    const list = many.map((over, i) => r(i, over));
    for (const q of [{ search: 'tax' }, { dueAfter: day(-5) }, { overdue: true }]) {
      const { found } = select(list, [], ASOF, DEFAULT_PROFILE, { client: 'Bo Li', ...q });
      expect([found.picked, [...found.containing]], JSON.stringify(q)).toEqual([[20, 21], [['bo lin', { name: 'Bo Lin', n: 10 }]]]);
    }
  });

  it("keeps a group's next due and oldest overdue day, whatever order its requests come in", () => {
    const list = [-2, -9, -5, 3, 1].map((k, i) => r(i, { clientName: 'Cy', dueDate: day(k) }));
    const [group] = select(list, [], ASOF, DEFAULT_PROFILE, { groupBy: 'client' }).found.groups;
    expect(group).toMatchObject({ requests: 5, open: 5, overdue: 3, nextDue: day(-9), oldestOverdue: day(-9), first: 0, last: 4 });
  });

  it('groups by the client name as written, counting every request in its group', () => {
    const sel = ask({ groupBy: 'client', state: 'open' }, withdrawn);
    expect([sel.matched, sel.found.groups.map((g) => [g.clientName, g.requests, g.first, g.last])]).toEqual([
      3,
      [
        ['Bo Li', 1, 0, 0],
        ['Ana Álvarez', 1, 2, 2],
        [null, 1, 4, 4],
      ],
    ]);
    expect([sel.names?.names, [...sel.shared]]).toEqual([['Bo Li', 'Bo Lin', 'Ana Álvarez', 'ANA  alvarez', null], []]);
    expect([ask({}).names, ask({}).shared.size]).toEqual([undefined, 0]);
  });

  it('answers the same question from the kept pass, and a question differing in any filter afresh', () => {
    const base = ask({});
    expect(ask({}).found).toBe(base.found);
    const each: RequestQuestion[] = [
      { state: 'closed' },
      { status: ['done'] },
      { client: 'bo' },
      { search: 'tax' },
      { overdue: true },
      { hasDueDate: false },
      { dueBefore: '2026-03-05' },
      { dueAfter: '2026-03-05' },
      { createdBefore: '2026-01-15' },
      { createdAfter: '2026-02-15' },
      { groupBy: 'client' },
    ];
    for (const q of each) expect(ask(q).found, JSON.stringify(q)).not.toEqual(base.found);
  });

  it('keeps about four lists of matches and drops the least recently used pass first', () => {
    const many = Array.from({ length: 100 }, (_, i) => r(i, { clientName: `C${i % 20}` }));
    const pass = (q: RequestQuestion) => select(many, [], ASOF, DEFAULT_PROFILE, q).found;
    const [p1, p2, , , p5] = ['a', 'ay', 'pay', 'payr', 'payroll'].map((search, k) => (k === 4 && pass({ search: 'a' }), pass({ search })));
    expect([pass({ search: 'a' }) === p1, pass({ search: 'payroll' }) === p5, pass({ search: 'ay' }) === p2]).toEqual([true, true, false]);
    const [g1, , g3] = ['a', 'ay', 'pay'].map((search) => pass({ groupBy: 'client', search }));
    expect([pass({ groupBy: 'client', search: 'pay' }) === g3, pass({ groupBy: 'client', search: 'a' }) === g1]).toEqual([true, false]);
  });
});

describe("the tables' day shortcut reads exactly what readDay reads", () => {
  // dueDays and computeCreatedDays take an ISO day without a reading per record; whatever the text, the day is readDay's.
  const piece = fc.constantFrom(
    '2026-01-15',
    '2026-02-30',
    '1999-12-31',
    '0999-01-01',
    'T10:00:00Z',
    '01',
    '15',
    '2026',
    '-',
    ' ',
    'Note ',
    ', ',
    'x',
    '/',
    '.',
    '9',
  );
  const text = fc.oneof(
    fc.array(piece, { maxLength: 6 }).map((p) => p.join('')),
    fc.string({ maxLength: 24 }),
  );
  /** Each value as a record's due and created date: the tables read the days readDay reads. */
  function readAlike(values: string[], profile: ServiceProfile, ambiguous: 'unread' | 'day-first' | 'month-first'): void {
    const records = values.map((v, i) => ({ ...requestAt(i), dueDate: v, createdAt: v }));
    const expected = values.map((v) => readDay(v, ambiguous)?.day ?? null);
    expect(dueDays(records, profile).due).toEqual(expected);
    expect(computeCreatedDays(records, profile)).toEqual(expected);
  }
  it.each([['unread'], ['day-first'], ['month-first']] as const)('ambiguous dates %s: due and created days alike', (ambiguous) => {
    const profile = new ServiceProfile(serviceProfileSchema.parse({ dates: { ambiguous } }));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 5 }), (values) => readAlike(values, profile, ambiguous)),
      { numRuns: 400 },
    );
  });
  // '/' and ';' sit just below and above the digits: read as if they were digits, "/;" would be month or day 1.
  it.each([
    'Note 01 15, 2026-01-15',
    'abcd-01-15',
    '2x26-01-15',
    '2026-x1-15',
    '2026-01-x5',
    '2026-/;-15',
    '2026-01-/;',
    '20261-01-15',
    '2026-011-15',
    '2026-01-155',
  ])('text shaped nearly like an ISO day (%s) is read as readDay reads it, not taken for its first ten characters', (value) =>
    readAlike([value], DEFAULT_PROFILE, 'unread'),
  );
});
