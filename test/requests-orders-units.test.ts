import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import type { Client, RequestRecord } from '../src/api/records.js';
import { requestAt } from './fixtures/records.js';
import { DEFAULT_PROFILE, ServiceProfile, serviceProfileSchema } from '../src/domain/service-profile.js';
import * as facts from '../src/requests/facts.js';
import { candidates } from '../src/requests/narrow.js';
import { add, byText, firstSorted, GROUP_COMPARE, pageRows, type Group, type RequestSort } from '../src/requests/orders.js';
import { groupPage, requestPage } from '../src/requests/page.js';
import { bump, nameKey, nameKeys, newCounts, sharedNames } from '../src/requests/name-keys.js';
import { select } from '../src/requests/query.js';

// The index of a request list and its orders, called directly (src/requests/*.ts): the facts kept per list and
// day (made once, the same answer on the second ask), the narrowing of a pass, name keys, the request and group
// orders and the page, each against a straightforward recomputation (filter, Array.sort, count).

const ASOF = '2026-03-10';
const rec = (over: Partial<RequestRecord> = {}, i = 0): RequestRecord => requestAt(i, over);
const recs = (overs: Partial<RequestRecord>[]) => overs.map((o, i) => rec(o, i));
const stable = <T>(xs: readonly T[], cmp: (a: T, b: T) => number) => [...xs].sort(cmp);

describe('name keys', () => {
  it('folds case, accents and white space, and counts any key without the prototype', () => {
    for (const [raw, want] of [
      [null, ''],
      [undefined, ''],
      ['', ''],
      ['BO LI', 'bo li'],
      ['  Ana \t Álvarez\n', 'ana alvarez'],
      ['Café  Lumière', 'cafe lumiere'],
      ['Bo-Li_3', 'bo-li_3'],
      ['ＡＢＣ', 'abc'],
      ['Álvarez Ltd', 'alvarez ltd'],
      [' Bo', 'bo'],
      ['Bo ', 'bo'],
      ['Bo  Li', 'bo li'],
      ['Bo\tLi', 'bo li'],
      ['Bo\nLi', 'bo li'],
      ['É', 'e'],
      // A word of letters outside ASCII after a plain one still has its accents folded (the ASCII fast path ends there).
      ['Bo Ü', 'bo u'],
      ['Anne ÉLÈ', 'anne ele'],
    ] as const)
      expect(nameKey(raw), String(raw)).toBe(want);
    const keyed = nameKeys();
    expect([keyed('Ana  Álvarez'), keyed('Ana  Álvarez'), keyed(null), keyed('')]).toEqual(['ana alvarez', 'ana alvarez', '', '']);
    const counts = newCounts();
    expect(Object.getPrototypeOf(counts)).toBeNull();
    for (const k of ['__proto__', 'toString', '__proto__', 'x']) bump(counts, k);
    expect(Object.entries(counts)).toEqual([
      ['__proto__', 2],
      ['toString', 1],
      ['x', 1],
    ]);
  });

  it('finds the names two or more clients share, by any key, ignoring empty names', () => {
    const cs = ['Bo Li', 'bo  li', 'Ana', null, '', '  ', 'Cy', 'ANA', 'ana'].map((displayName) => ({ displayName }));
    expect([...sharedNames(cs)].map(([k, l]) => [k, l.map((c) => c.displayName)])).toEqual([
      ['bo li', ['Bo Li', 'bo  li']],
      ['ana', ['Ana', 'ANA', 'ana']],
    ]);
    expect([...sharedNames(cs, (n) => (n ?? '').slice(0, 1))].map(([k, l]) => [k, l.length])).toEqual([['A', 2]]);
  });
});

describe('orders', () => {
  it('adds within finite numbers, and compares missing text as empty', () => {
    expect([add(1, 2), add(Number.MAX_VALUE, Number.MAX_VALUE), add(-Number.MAX_VALUE, -Number.MAX_VALUE), add(0.5, -2)]).toEqual([
      3,
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
      -1.5,
    ]);
    expect([byText(null, ''), byText('a', 'b'), byText('b', 'a'), byText(null, 'a'), byText('A', null)]).toEqual([0, -1, 1, -1, 1]);
  });

  it('takes the first items exactly as a stable sort puts them, ties kept in order', () => {
    const pairs = fc.array(fc.record({ k: fc.integer({ min: 0, max: 5 }), id: fc.nat() }), { maxLength: 40 });
    fc.assert(
      fc.property(pairs, fc.integer({ min: -1, max: 45 }), (xs, count) => {
        const cmp = (a: { k: number }, b: { k: number }) => a.k - b.k;
        expect(firstSorted(xs, cmp, count)).toEqual(stable(xs, cmp).slice(0, Math.max(0, count)));
      }),
      { numRuns: 300 },
    );
  });

  const itemsAndDue = fc.record({
    totalItems: fc.constantFrom(0, 1, 2, 4, null, Infinity),
    completedItems: fc.constantFrom(0, 1, 2, 4, null, Infinity),
    dueDate: fc.constantFrom(null, '2026-03-01', '2026-03-05', '2026-04-01', 'soon'),
  });
  it('pages the matches in each request order as a stable sort of them, whatever their share', () => {
    fc.assert(
      fc.property(
        fc.array(itemsAndDue, { minLength: 1, maxLength: 60 }),
        fc.constantFrom<RequestSort>('newest', 'oldest', 'due_soonest', 'least_complete'),
        fc.integer({ min: 0, max: 100 }),
        fc.array(fc.tuple(fc.constantFrom(0, 2, 5, 70), fc.constantFrom(1, 3, 80)), { minLength: 1, maxLength: 3 }),
        (overs, sort, share, pages) => {
          const all = recs(overs);
          const picked = all.map((_, i) => i).filter((i) => (i * 37) % 100 < share);
          const due = all.map((r) => (r.dueDate && /^\d{4}/.test(r.dueDate) ? r.dueDate : null));
          const ratio = all.map((r) => ((r.totalItems ?? 0) ? (r.completedItems ?? 0) / r.totalItems! : 1));
          const byDue = (a: number, b: number) => ((due[a] ?? '9999') < (due[b] ?? '9999') ? -1 : (due[a] ?? '9999') > (due[b] ?? '9999') ? 1 : 0);
          const cmp: Record<RequestSort, (a: number, b: number) => number> = {
            newest: (a, b) => a - b,
            oldest: (a, b) => b - a,
            due_soonest: (a, b) => byDue(a, b) || a - b,
            least_complete: (a, b) => ratio[a]! - ratio[b]! || byDue(a, b) || a - b,
          };
          for (const [offset, limit] of pages)
            expect(pageRows(all, picked, sort, offset, limit)).toEqual(stable(picked, cmp[sort]).slice(offset, offset + limit));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('sorts the matches of a list whose shares are not all numbers, not the shared order', () => {
    // Infinity/Infinity ties with everything: a subset's own sort differs from the whole list's order filtered.
    const all = recs([
      { totalItems: 4, completedItems: 3, dueDate: '2026-03-01' },
      { totalItems: 4, completedItems: 0, dueDate: '2026-03-01' },
      { totalItems: 4, completedItems: 0 },
      { totalItems: 4, completedItems: 3, dueDate: '2026-01-01' },
      { totalItems: Infinity, completedItems: Infinity, dueDate: '2026-02-01' },
    ]);
    expect(pageRows(all, [0, 1, 2, 3, 4], 'least_complete', 0, 10)).toEqual([1, 2, 3, 4, 0]);
    expect(pageRows(all, [1, 4], 'least_complete', 0, 10)).toEqual([4, 1]);
  });

  /** Each group order as the keys it compares, in turn (ascending); ties end on the name. */
  const dayOf = (d: string | null) => d ?? '9999';
  const groupKeys: Record<keyof typeof GROUP_COMPARE, (g: Group) => (number | string)[]> = {
    newest: (g) => [g.first],
    oldest: (g) => [-g.last],
    due_soonest: (g) => [dayOf(g.nextDue), g.clientName ?? ''],
    least_complete: (g) => [g.totalItems ? g.completedItems / g.totalItems : 1, g.clientName ?? ''],
    most_open: (g) => [-g.open, -g.overdue, g.clientName ?? ''],
    most_overdue: (g) => [-g.overdue, dayOf(g.oldestOverdue), -g.open, g.clientName ?? ''],
    most_outstanding: (g) => [-g.outstandingItems, -g.open, g.clientName ?? ''],
  };
  const byKeys = (a: (number | string)[], b: (number | string)[]) => {
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k]! < b[k]! ? -1 : 1;
    return 0;
  };
  it('orders groups with ties broken by name, and pages the first few of many as a full sort does', () => {
    const group = fc.record({
      clientName: fc.constantFrom('A', 'B', 'C', 'D', null),
      requests: fc.integer({ min: 1, max: 3 }),
      open: fc.integer({ min: 0, max: 3 }),
      overdue: fc.integer({ min: 0, max: 3 }),
      totalItems: fc.constantFrom(0, 2, 4),
      completedItems: fc.constantFrom(0, 1, 4),
      outstandingItems: fc.integer({ min: 0, max: 3 }),
      nextDue: fc.constantFrom(null, '2026-03-01', '2026-04-01'),
      oldestOverdue: fc.constantFrom(null, '2026-01-01', '2026-02-01'),
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(group, fc.nat(30), fc.nat(3)), { maxLength: 60 }),
        fc.constantFrom(...(Object.keys(GROUP_COMPARE) as (keyof typeof GROUP_COMPARE)[])),
        fc.nat(4),
        fc.integer({ min: 1, max: 4 }),
        (gs, sort, offset, limit) => {
          const groups: Group[] = gs.map(([g, first, span]) => ({ ...g, first, last: first + span }));
          const want = stable(groups, (a, b) => byKeys(groupKeys[sort](a), groupKeys[sort](b))).slice(offset, offset + limit);
          const lines = vi.fn((row: object) => JSON.stringify(row));
          const page = groupPage(groups, sort, offset, limit, lines);
          expect(page.rows).toEqual(want.map(({ first: _f, last: _l, ...g }) => g));
          expect(page.rows.every((r) => Object.isFrozen(r))).toBe(true);
          const again = groupPage(groups, sort, offset, limit, lines);
          expect(again.rows.map((r, i) => r === page.rows[i])).toEqual(page.rows.map(() => true));
          expect(again.lines).toEqual(page.lines);
          expect(lines).toHaveBeenCalledTimes(page.rows.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the index of one list', () => {
  const withdrawn = new ServiceProfile(serviceProfileSchema.parse({ statuses: { closed: ['withdrawn'] }, dates: { ambiguous: 'day-first' } }));

  it('reads a list again under another profile, and keeps it under the same one', () => {
    const all = recs([{ status: 'withdrawn', dueDate: '03/04/2026' }, { status: 'Done' }, { totalItems: 2, completedItems: 2 }, { status: null }]);
    const first = facts.listFacts(all, DEFAULT_PROFILE);
    expect(facts.listFacts(all)).toBe(first);
    expect(facts.listFacts(all, DEFAULT_PROFILE)).toBe(first);
    expect([first.open, first.due, first.unreadDue?.count]).toEqual([[true, false, false, true], [null, null, null, null], 1]);
    const other = facts.listFacts(all, withdrawn);
    expect([other.open, other.due, other.unreadDue, facts.listFacts(all)]).toEqual([
      [false, true, false, true],
      ['2026-04-03', null, null, null],
      undefined,
      other,
    ]);
    expect([facts.isOpen(all[0]!), facts.isOpen(all[0]!, withdrawn), facts.isOpen(all[1]!), facts.isOpen(all[3]!)]).toEqual([true, false, false, true]);
  });

  it('counts the due dates it cannot read apart, with up to three different examples', () => {
    const dues = ['soon', '03/04/2026', 'soon', '31/02/2026', 'later', 'tbd', '2026-03-01', '', '  ', null, '05.06.2026'];
    const unread = facts.listFacts(recs(dues.map((dueDate) => ({ dueDate }))), DEFAULT_PROFILE).unreadDue!;
    expect({ ...unread, flags: [...unread.flags] }).toEqual({
      flags: [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1],
      count: 7,
      ambiguous: 2,
      examples: ['soon', '03/04/2026', '31/02/2026'],
    });
    expect(facts.listFacts(recs([{ dueDate: '2026-03-01T23:00:00-05:00' }, {}]), DEFAULT_PROFILE)).toMatchObject({
      due: ['2026-03-01', null],
      unreadDue: undefined,
    });
  });

  it('makes each table once: statuses, titles, names, created days, items and the due order', () => {
    const all = recs([
      { status: 'Sent', title: 'Façade TAX', clientName: 'Bo  LI', createdAt: '2026/01/05', dueDate: '2026-03-02', totalItems: null, completedItems: 1 },
      { status: null, title: null, clientName: null, createdAt: '2026-02-01T10:00:00Z', dueDate: '2026-03-01', totalItems: 4, completedItems: null },
      {
        status: '(none)',
        title: 'Façade TAX',
        clientName: 'Bo  LI',
        createdAt: '03/04/2026',
        dueDate: '2026-03-01',
        totalItems: Infinity,
        completedItems: Infinity,
      },
      { status: '__proto__', title: 'x', clientName: 'Ana', createdAt: 'soon', dueDate: null, totalItems: 2, completedItems: 1 },
    ]);
    facts.listFacts(all, withdrawn);
    const statuses = facts.statusTable(all);
    expect([[...statuses.ids], statuses.lower, statuses.key, Object.entries(statuses.occurring)]).toEqual([
      [0, 1, 2, 3],
      ['sent', '', '(none)', '__proto__'],
      ['Sent', '(none)', '(none)', '__proto__'],
      [
        ['Sent', 1],
        ['(none)', 2],
        ['__proto__', 1],
      ],
    ]);
    const titles = facts.titleTable(all);
    expect([[...titles.ids], titles.folded]).toEqual([
      [0, 1, 0, 2],
      ['facade tax', '', 'x'],
    ]);
    const names = facts.nameTable(all);
    expect([[...names.ids], names.names, names.keys]).toEqual([
      [0, 1, 0, 2],
      ['Bo  LI', null, 'Ana'],
      ['bo li', '', 'ana'],
    ]);
    expect(facts.createdDays(all)).toEqual(['2026-01-05', '2026-02-01', '2026-04-03', null]);
    const items = facts.itemCounts(all);
    expect([[...items.totals], [...items.dones], [...items.ratios], items.someRatioNaN]).toEqual([
      [0, 4, Infinity, 2],
      [1, 0, Infinity, 1],
      [1, 0, NaN, 0.5],
      true,
    ]);
    expect(facts.itemCounts(recs([{ totalItems: 0, completedItems: 3 }])).someRatioNaN).toBe(false);
    expect([...facts.dueOrder(all)]).toEqual([1, 2, 0]);
    const days = fc.array(fc.constantFrom(null, '2026-03-01', '2026-03-02', '2026-02-28', 'soon'), { maxLength: 30 });
    fc.assert(
      fc.property(days, (dues) => {
        const list = recs(dues.map((dueDate) => ({ dueDate })));
        facts.listFacts(list, DEFAULT_PROFILE);
        const dated = dues.map((d, i) => [d, i] as const).filter(([d]) => d !== null && d !== 'soon');
        expect([...facts.dueOrder(list)]).toEqual(stable(dated, ([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0)).map(([, i]) => i));
      }),
    );
    for (const made of [facts.statusTable, facts.titleTable, facts.nameTable, facts.createdDays, facts.itemCounts, facts.dueOrder])
      expect(made(all)).toBe(made(all));
    const m = facts.membersOf(all, names.ids, names.names.length);
    expect([[...m.start], [...m.order]]).toEqual([
      [0, 2, 3, 4],
      [0, 2, 1, 3],
    ]);
    expect(facts.membersOf(all, names.ids, names.names.length)).toBe(m);
    const compare = vi.fn(() => (a: number, b: number) => b - a);
    expect([...facts.sortedOrder(all, 'back', compare)]).toEqual([3, 2, 1, 0]);
    expect(facts.sortedOrder(all, 'back', compare)).toBe(facts.sortedOrder(all, 'back', compare));
    expect(compare).toHaveBeenCalledTimes(1);
    expect([...facts.sortedOrder(all, 'forth', () => (a, b) => a - b)]).toEqual([0, 1, 2, 3]);
  });

  it('judges overdue, days late and due soon on the day asked, once per day', () => {
    const dues = ['2026-03-09', '2026-03-10', '2026-03-17', '2026-03-18', '2025-13-01', '2026-02-08', null, '2026-03-01'];
    const all = recs(dues.map((dueDate, i) => ({ dueDate, status: i === 7 ? 'done' : 'sent' })));
    facts.listFacts(all, DEFAULT_PROFILE);
    const d = facts.dayFacts(all, ASOF);
    expect([[...d.overdue], [...d.late], [...d.soon]]).toEqual([
      [1, 0, 0, 0, 0, 1, 0, 0],
      [1, NaN, NaN, NaN, NaN, 30, NaN, NaN],
      [0, 1, 1, 0, 0, 0, 0, 0],
    ]);
    expect(facts.dayFacts(all, ASOF)).toBe(d);
    expect([...facts.overduePositions(d)]).toEqual([0, 5]);
    expect(facts.overduePositions(d)).toBe(facts.overduePositions(d));
    expect(facts.shownRows(d)).toBe(facts.shownRows(d));
    const later = facts.dayFacts(all, '2026-03-11');
    expect([[...later.overdue], [...later.late].slice(0, 2), later.asOf]).toEqual([[1, 1, 0, 0, 0, 1, 0, 0], [2, 1], '2026-03-11']);
    expect(facts.shownRows(later)).not.toBe(facts.shownRows(d));
  });

  it('counts open and overdue requests per name key, as of the day asked', () => {
    const all = recs([
      { clientName: 'Bo Li', dueDate: '2026-03-01' },
      { clientName: 'BO  LI', dueDate: '2026-03-10' },
      { clientName: 'bo li', status: 'done', dueDate: '2026-03-01' },
      { clientName: null, dueDate: '2026-03-09' },
    ]);
    facts.listFacts(all, DEFAULT_PROFILE);
    const now = facts.joinCounts(all, ASOF);
    expect([...now]).toEqual([
      ['bo li', { open: 2, overdue: 1 }],
      ['', { open: 1, overdue: 1 }],
    ]);
    expect(facts.joinCounts(all, ASOF)).toBe(now);
    expect(facts.joinCounts(all, '2026-03-11').get('bo li')).toEqual({ open: 2, overdue: 2 });
  });

  it('keys clients once, and finds the names several clients share', () => {
    const clients: Client[] = ['Bo Li', 'BO  LI', null, 'Ana'].map((displayName, i) => ({ id: `c${i}`, displayName, email: null, status: null }));
    expect(facts.clientKeys(clients)).toEqual(['bo li', 'bo li', '', 'ana']);
    expect(facts.clientKeys(clients)).toBe(facts.clientKeys(clients));
    const shared = facts.sharedClientNames(clients);
    expect([...shared].map(([k, cs]) => [k, cs.map((c) => c.id)])).toEqual([['bo li', ['c0', 'c1']]]);
    expect(facts.sharedClientNames(clients)).toBe(shared);
  });
});

describe('filter passes kept per list and day', () => {
  const counter = () => {
    const made: string[] = [];
    return {
      made,
      pass: (all: readonly RequestRecord[], key: string, weight = 0, asOf = ASOF) =>
        facts.rememberPass(
          all,
          asOf,
          key,
          () => (made.push(key), { key }),
          () => weight,
        ),
    };
  };

  it('keeps at most 256 passes, dropping the least recently used first', () => {
    const all = recs(Array.from({ length: 60 }, () => ({})));
    const { made, pass } = counter();
    const first = pass(all, 'k0');
    for (let k = 1; k < 256; k++) pass(all, `k${k}`);
    expect(pass(all, 'k0')).toBe(first);
    pass(all, 'k256');
    expect(made.length).toBe(257);
    pass(all, 'k0');
    pass(all, 'k2');
    expect(made.length).toBe(257);
    pass(all, 'k1');
    expect(made.slice(257)).toEqual(['k1']);
  });

  it('keeps within four times the list length of matches, and a heavy pass alone', () => {
    const { made, pass } = counter();
    const none: RequestRecord[] = [];
    for (const k of ['A', 'B', 'C', 'B', 'C', 'A', 'C', 'B']) pass(none, k, 31);
    expect(made).toEqual(['A', 'B', 'C', 'A', 'B']);
    // Every pass weighs one more than its matches: 64 passes of none fill an empty list's share.
    for (let k = 0; k <= 64; k++) pass(none, `z${k}`);
    pass(none, 'z0');
    expect(made.slice(-2)).toEqual(['z64', 'z0']);
    const heavy = recs([{}]);
    pass(heavy, 'H', 1000);
    pass(heavy, 'H', 1000);
    expect(made.slice(71)).toEqual(['H']);
    pass(heavy, 'I', 0);
    pass(heavy, 'H', 1000);
    pass(heavy, 'H', 1000, '2026-03-11');
    expect(made.slice(71)).toEqual(['H', 'I', 'H', 'H']);
  });
});

describe('narrowing a pass to a few positions', () => {
  const all = recs(
    ['a', 'b', 'a', 'c', 'b', 'b', 'a', 'c', 'c', 'c'].map((status, i) => ({
      status,
      title: 'xyxzywwwww'[i]!,
      dueDate: [null, '2026-03-01', '2026-03-05', '2026-03-05', null, '2026-02-01', '2026-03-09', '2026-04-01', 'soon', '2026-03-05'][i],
    })),
  );
  facts.listFacts(all, DEFAULT_PROFILE);
  const statuses = facts.statusTable(all).ids;
  const titles = facts.titleTable(all).ids;
  const table = (ids: Int32Array, keep: number[]) => ({ ids, keep: Uint8Array.from(keep) });
  const at = (found: Int32Array | undefined) => found && [...found];

  it('takes the narrowest filter, ascending, and nothing when it keeps half the list or more', () => {
    expect(at(candidates(all, { tables: [table(statuses, [1, 0, 0])] }))).toEqual([0, 2, 6]);
    expect(at(candidates(all, { tables: [table(statuses, [0, 0, 2])] }))).toEqual([3, 7, 8, 9]);
    expect(at(candidates(all, { tables: [table(statuses, [1, 2, 0])] }))).toBeUndefined();
    expect(at(candidates(all, { tables: [table(titles, [1, 1, 0, 0])] }))).toEqual([0, 1, 2, 4]);
    expect(at(candidates(all, { tables: [table(titles, [1, 1, 1, 0])] }))).toBeUndefined();
    expect(at(candidates(all, { tables: [table(statuses, [1, 0, 0]), table(titles, [0, 1, 1, 0])] }))).toEqual([0, 2, 6]);
    expect(at(candidates(all, { tables: [table(statuses, [1, 0, 0]), table(titles, [0, 0, 1, 0])] }))).toEqual([3]);
    expect(at(candidates(all, { tables: [] }))).toBeUndefined();
  });

  it('narrows to a due range with both ends inclusive, or to the overdue, when fewer', () => {
    const due = (after: string, before: string, tables = [] as { ids: Int32Array; keep: Uint8Array }[]) =>
      at(candidates(all, { tables, due: { after, before } }));
    expect(due('2026-03-05', '2026-03-05')).toEqual([2, 3, 9]);
    expect(due('2026-03-02', '2026-03-09')).toEqual([2, 3, 6, 9]);
    expect(due('', '2026-03-01')).toEqual([1, 5]);
    expect(due('2026-03-06', '')).toEqual([6, 7]);
    expect(due('2026-03-06', '2026-03-04')).toEqual([]);
    expect(due('', '2026-03-05')).toBeUndefined();
    expect(due('2026-03-05', '2026-03-05', [table(statuses, [1, 0, 0])])).toEqual([0, 2, 6]);
    expect(due('2026-03-05', '2026-03-05', [table(statuses, [0, 0, 1])])).toEqual([2, 3, 9]);
    const day = facts.dayFacts(all, ASOF);
    expect(at(candidates(all, { tables: [], overdue: day }))).toBeUndefined();
    expect(at(candidates(all, { tables: [], overdue: facts.dayFacts(all, '2026-03-05') }))).toEqual([1, 5]);
    expect(at(candidates(all, { tables: [], due: { after: '2026-03-06', before: '' }, overdue: facts.dayFacts(all, '2026-03-05') }))).toEqual([6, 7]);
    expect(at(candidates(all, { tables: [], due: { after: '2026-03-09', before: '' }, overdue: day }))).toEqual([6, 7]);
    expect(at(candidates(all, { tables: [table(titles, [0, 0, 0, 1])], overdue: facts.dayFacts(all, '2026-03-02') }))).toEqual([1, 5]);
    expect(at(candidates(all, { tables: [table(titles, [1, 1, 0, 0])], overdue: facts.dayFacts(all, '2026-03-06') }))).toEqual([0, 1, 2, 4]);
  });
});

describe('the requests on a page', () => {
  it('shows each row once per day, frozen, with days overdue on each overdue row and a day no calendar has never overdue', () => {
    const all = recs([{ dueDate: '2026-03-07' }, { dueDate: '2025-13-01' }, { dueDate: '2026-03-12' }, { dueDate: '2026-03-07', status: 'done' }]);
    const sel = select(all, [], ASOF, DEFAULT_PROFILE, {});
    const line = vi.fn((row: { id: string | null }) => `line ${row.id}`);
    const page = requestPage(all, sel, 'newest', 0, 10, line);
    expect(page.rows.map((r) => [r.id, r.overdue, r.daysOverdue, Object.isFrozen(r)])).toEqual([
      ['r0', true, 3, true],
      ['r1', false, null, true],
      ['r2', false, null, true],
      ['r3', false, null, true],
    ]);
    expect(page.lines).toEqual(['line r0', 'line r1', 'line r2', 'line r3']);
    const again = requestPage(all, sel, 'oldest', 1, 2, line);
    expect([again.page, again.rows[0], again.lines]).toEqual([[2, 1], page.rows[2], ['line r2', 'line r1']]);
    expect(again.rows[1]).toBe(page.rows[1]);
    expect(line).toHaveBeenCalledTimes(4);
    expect(requestPage(all, sel, 'due_soonest', 4, 10, line).page).toEqual([]);
  });
});
