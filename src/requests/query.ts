/** list_requests' query: a question's filters over the list's index, to exact counts and the matched positions or client groups. */
import type { Client, RequestRecord } from '../api/records.js';
import type { ServiceProfile } from '../domain/service-profile.js';
import { fold } from '../text/render.js';
import { add, type Group } from './orders.js';
import { nameKey, newCounts } from './name-keys.js';
import { clientKeys, createdDays, dayFacts, itemCounts, listFacts, nameTable, rememberPass, sharedClientNames, statusTable, titleTable } from './facts.js';
import { candidates } from './narrow.js';
import type { DayFacts, NameTable, StatusTable } from './tables.js';

/** A list_requests question's filters, as its input schema gives them. */
export interface RequestQuestion {
  state?: 'open' | 'closed' | undefined;
  status?: string[] | undefined;
  client?: string | undefined;
  search?: string | undefined;
  overdue?: boolean | undefined;
  hasDueDate?: boolean | undefined;
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
  createdBefore?: string | undefined;
  createdAfter?: string | undefined;
  groupBy?: 'client' | undefined;
}

/** A client name met among the matches: its first raw spelling and how many requests carry it. */
export interface NameCount {
  name: string | null;
  n: number;
}

/** What one filter pass found. Kept per list, day and filters, and shared by every answer: read it, never change it. */
interface Matches {
  byStatus: Record<string, number>;
  /** With a whole client name asked for: the other names containing it, per name key (their requests are not matched). */
  containing: Map<string, NameCount>;
  /** Matched positions in list order (not grouped). */
  picked: number[];
  /** Client groups by raw name, in order of first appearance (grouped). */
  groups: Group[];
  openCount: number;
  overdueCount: number;
  dueSoon: number;
  totalItems: number;
  completedItems: number;
  outstandingItems: number;
  noDueDate: number;
  openNoDueDate: number;
  lateDays: number;
  lateCounted: number;
  oldestOverdue: string | null;
}

/** A question answered over one list on one day. */
export interface Selection {
  grouped: boolean;
  /** The statuses asked for, trimmed and in lower case (undefined: no status filter). */
  statuses: ReadonlySet<string> | undefined;
  /** The client name asked for, as names compare ('' when none), and whether it matched as a whole name. */
  needle: string;
  exact: boolean;
  /** With a client question or groups: the list's name table, and the names several clients share. */
  names: NameTable | undefined;
  shared: ReadonlyMap<string, Client[]>;
  statusIndex: StatusTable;
  day: DayFacts;
  found: Matches;
  /** How many requests matched (grouped: in all groups). */
  matched: number;
}

/** Whether the question needs the clients list: to tell a whole name from part of one, and to find names several clients share. */
export function needsClients(q: RequestQuestion): boolean {
  return q.groupBy === 'client' || nameKey(q.client) !== '';
}

/**
 * A client filter's verdict per distinct name of the list. The whole name when some client or some request has
 * exactly that name, otherwise any name containing it; per name: 0 skip, 1 keep, 2 skip but count as another
 * name containing the whole name asked for.
 */
function clientVerdict(clients: readonly Client[], needle: string, names: NameTable | undefined): { exact: boolean; verdict: Uint8Array | undefined } {
  if (!needle) return { exact: false, verdict: undefined };
  const exact = clientKeys(clients).includes(needle) || names!.keys.includes(needle);
  const verdict = Uint8Array.from(names!.keys, (key) => (exact ? (key === needle ? 1 : key.includes(needle) ? 2 : 0) : key.includes(needle) ? 1 : 0));
  return { exact, verdict };
}

/**
 * The question over the list as of `asOf`, the list read by `profile`. The filter pass depends only on the
 * filters (and, for a client name, on whether it is a whole name): its result is kept per list and day, so
 * another page, order or limit of the same matches skips it.
 */
export function select(all: readonly RequestRecord[], clients: readonly Client[], asOf: string, profile: ServiceProfile, q: RequestQuestion): Selection {
  // The list read by the firm's service profile (which statuses are open, how ambiguous dates read), before any other fact of it.
  listFacts(all, profile);
  const grouped = q.groupBy === 'client';
  const needle = nameKey(q.client);
  const withClients = needsClients(q);
  const statuses = q.status?.length ? new Set(q.status.map((s) => s.trim().toLowerCase())) : undefined;
  const shared = withClients ? sharedClientNames(clients) : new Map<string, Client[]>();
  const names = withClients ? nameTable(all) : undefined;
  const { exact, verdict } = clientVerdict(clients, needle, names);
  const day = dayFacts(all, asOf);
  const statusIndex = statusTable(all);
  const passKey = JSON.stringify([
    grouped,
    exact,
    q.state,
    q.status,
    q.client,
    q.search,
    q.overdue,
    q.hasDueDate,
    q.dueBefore,
    q.dueAfter,
    q.createdBefore,
    q.createdAfter,
  ]);
  const found = rememberPass(
    all,
    asOf,
    passKey,
    () => filterAndCount(passOf(all, q, { grouped, statuses, names, verdict, day, statusIndex })),
    (f) => f.picked.length + f.groups.length * 8,
  );
  const matched = grouped ? found.groups.reduce((n, g) => n + g.requests, 0) : found.picked.length;
  return { grouped, statuses, needle, exact, names, shared, statusIndex, day, found, matched };
}

/**
 * Everything one pass reads, with the question's fields as plain values: read from the input object inside
 * the loop, every question's own shape would make each read a slow lookup. Each distinct status, title and
 * name is judged once here (a verdict per value), not once per record.
 */
interface Pass {
  all: readonly RequestRecord[];
  grouped: boolean;
  /** The positions to look at (the narrowest filter's), or undefined for the whole list. */
  among: Int32Array | undefined;
  names: NameTable | undefined;
  verdict: Uint8Array | undefined;
  statusIds: Int32Array;
  statusKeys: string[];
  statusOk: Uint8Array | undefined;
  titleIds: Int32Array | undefined;
  titleOk: Uint8Array | undefined;
  due: (string | null)[];
  /** Per record: 1 when its due date is there but not read (undefined when every one was read). */
  unreadDue: Uint8Array | undefined;
  open: boolean[];
  overdue: Uint8Array;
  late: Float64Array;
  soon: Uint8Array;
  created: (string | null)[] | undefined;
  totals: Float64Array;
  dones: Float64Array;
  /** -1: not asked; 1: wanted; 0: wanted not. */
  wantOpen: number;
  wantOverdue: number;
  wantDue: number;
  /** YYYY-MM-DD bounds, '' when not asked. */
  dueBefore: string;
  dueAfter: string;
  createdBefore: string;
  createdAfter: string;
}

type Judged = Pick<Selection, 'grouped' | 'statuses' | 'names' | 'day' | 'statusIndex'> & { verdict: Uint8Array | undefined };

function passOf(all: readonly RequestRecord[], q: RequestQuestion, j: Judged): Pass {
  const facts = listFacts(all);
  const { statuses, names, verdict, day, statusIndex } = j;
  const statusOk = statuses ? Uint8Array.from(statusIndex.lower, (s) => (statuses.has(s) ? 1 : 0)) : undefined;
  const titleNeedle = q.search ? fold(q.search.trim()) : '';
  const titles = titleNeedle ? titleTable(all) : undefined;
  const titleOk = titles ? Uint8Array.from(titles.folded, (t) => (t.includes(titleNeedle) ? 1 : 0)) : undefined;
  const dueBefore = q.dueBefore ?? '';
  const dueAfter = q.dueAfter ?? '';
  const wantOverdue = q.overdue === undefined ? -1 : q.overdue ? 1 : 0;
  // A name counted as another name containing the needle (2) is seen before the title, due and state
  // checks, so with such names only the name and status filters narrow.
  const counting = verdict !== undefined && verdict.includes(2);
  const tables = [
    ...(verdict ? [{ ids: names!.ids, keep: verdict }] : []),
    ...(statusOk ? [{ ids: statusIndex.ids, keep: statusOk }] : []),
    ...(titleOk && !counting ? [{ ids: titles!.ids, keep: titleOk }] : []),
  ];
  const among = candidates(all, {
    tables,
    ...((dueBefore || dueAfter) && !counting ? { due: { after: dueAfter, before: dueBefore } } : {}),
    ...(wantOverdue === 1 && !counting ? { overdue: day } : {}),
  });
  const { totals, dones } = itemCounts(all);
  return {
    all,
    grouped: j.grouped,
    among,
    names,
    verdict,
    statusIds: statusIndex.ids,
    statusKeys: statusIndex.key,
    statusOk,
    titleIds: titles?.ids,
    titleOk,
    due: facts.due,
    unreadDue: facts.unreadDue?.flags,
    open: facts.open,
    overdue: day.overdue,
    late: day.late,
    soon: day.soon,
    created: q.createdBefore || q.createdAfter ? createdDays(all) : undefined,
    totals,
    dones,
    wantOpen: q.state === undefined ? -1 : q.state === 'open' ? 1 : 0,
    wantOverdue,
    wantDue: q.hasDueDate === undefined ? -1 : q.hasDueDate ? 1 : 0,
    dueBefore,
    dueAfter,
    createdBefore: q.createdBefore ?? '',
    createdAfter: q.createdAfter ?? '',
  };
}

/** The counts of a pass as it goes: the matches' own, and per status and per name what is needed to finish them. */
interface Tally extends Omit<Matches, 'byStatus'> {
  statusTally: Int32Array;
  /** Statuses in order of first appearance among the matches, as byStatus lists them. */
  statusOrder: number[];
  /** Each name's group, found by the name's index in the list's name table. */
  groupOf: (Group | undefined)[];
}

/**
 * One pass: filter and count together, over the positions the narrowest filter allows, in list order.
 * Row objects are made only for the page, later; a match is only its position here.
 */
function filterAndCount(p: Pass): Matches {
  const t: Tally = {
    containing: new Map(),
    picked: [],
    groups: [],
    openCount: 0,
    overdueCount: 0,
    dueSoon: 0,
    totalItems: 0,
    completedItems: 0,
    outstandingItems: 0,
    noDueDate: 0,
    openNoDueDate: 0,
    lateDays: 0,
    lateCounted: 0,
    oldestOverdue: null,
    statusTally: new Int32Array(p.statusKeys.length),
    statusOrder: [],
    groupOf: p.grouped ? new Array<Group | undefined>(p.names!.names.length) : [],
  };
  const among = p.among;
  const seen = among ? among.length : p.all.length;
  for (let at = 0; at < seen; at++) {
    const index = among ? among[at]! : at;
    const statusId = p.statusIds[index]!;
    if (p.statusOk && p.statusOk[statusId] === 0) continue;
    if (p.verdict && !nameKept(p, t, index)) continue;
    if (p.titleOk && p.titleOk[p.titleIds![index]!] === 0) continue;
    const dueDay = p.due[index]!;
    if (p.wantDue !== -1 && (dueDay !== null || (p.unreadDue !== undefined && p.unreadDue[index] === 1)) !== (p.wantDue === 1)) continue;
    if (p.dueBefore || p.dueAfter) {
      if (dueDay === null) continue;
      if (p.dueBefore && dueDay > p.dueBefore) continue;
      if (p.dueAfter && dueDay < p.dueAfter) continue;
    }
    if (p.created) {
      const createdDay = p.created[index]!;
      if (createdDay === null) continue;
      if (p.createdBefore && createdDay > p.createdBefore) continue;
      if (p.createdAfter && createdDay < p.createdAfter) continue;
    }
    const open = p.open[index]!;
    if (p.wantOpen !== -1 && open !== (p.wantOpen === 1)) continue;
    const overdue = p.overdue[index] === 1;
    if (p.wantOverdue !== -1 && overdue !== (p.wantOverdue === 1)) continue;
    count(p, t, index, statusId, open, overdue);
  }
  return finish(p, t);
}

/** Whether the client filter keeps the record at `index`; one of another name containing a whole name asked for is counted apart. */
function nameKept(p: Pass, t: Tally, index: number): boolean {
  const id = p.names!.ids[index]!;
  const v = p.verdict![id]!;
  if (v === 1) return true;
  if (v === 2) {
    const key = p.names!.keys[id]!;
    const seen = t.containing.get(key);
    if (seen) seen.n++;
    else t.containing.set(key, { name: p.all[index]!.clientName, n: 1 });
  }
  return false;
}

/** Counts the match at `index`. */
function count(p: Pass, t: Tally, index: number, statusId: number, open: boolean, overdue: boolean): void {
  const dueDay = p.due[index]!;
  const tally = t.statusTally[statusId]!;
  if (tally === 0) t.statusOrder.push(statusId);
  t.statusTally[statusId] = tally + 1;
  if (open) t.openCount++;
  if (overdue) {
    t.overdueCount++;
    const late = p.late[index]!;
    if (!Number.isNaN(late)) {
      t.lateDays += late;
      t.lateCounted++;
    }
    if (t.oldestOverdue === null || dueDay < t.oldestOverdue) t.oldestOverdue = dueDay;
  }
  if (dueDay === null && (p.unreadDue === undefined || p.unreadDue[index] === 0)) {
    t.noDueDate++;
    if (open) t.openNoDueDate++;
  }
  if (p.soon[index] === 1) t.dueSoon++;
  const total = p.totals[index]!;
  const done = p.dones[index]!;
  // Outstanding: items not complete on open requests (a closed request awaits nothing).
  const outstanding = open && total > done ? total - done : 0;
  t.totalItems = add(t.totalItems, total);
  t.completedItems = add(t.completedItems, done);
  t.outstandingItems = add(t.outstandingItems, outstanding);
  if (p.grouped) countInGroup(p, t, index, open, overdue, outstanding);
  else t.picked.push(index);
}

/** Counts the match at `index` in its client name's group (made at the name's first match). */
function countInGroup(p: Pass, t: Tally, index: number, open: boolean, overdue: boolean, outstanding: number): void {
  const id = p.names!.ids[index]!;
  let g = t.groupOf[id];
  if (!g) {
    g = {
      clientName: p.all[index]!.clientName,
      requests: 0,
      open: 0,
      overdue: 0,
      totalItems: 0,
      completedItems: 0,
      outstandingItems: 0,
      nextDue: null,
      oldestOverdue: null,
      first: index,
      last: index,
    };
    t.groupOf[id] = g;
    t.groups.push(g);
  }
  const dueDay = p.due[index]!;
  g.requests++;
  g.last = index;
  g.totalItems = add(g.totalItems, p.totals[index]!);
  g.completedItems = add(g.completedItems, p.dones[index]!);
  g.outstandingItems = add(g.outstandingItems, outstanding);
  if (open) {
    g.open++;
    if (dueDay !== null && (g.nextDue === null || dueDay < g.nextDue)) g.nextDue = dueDay;
  }
  if (overdue) {
    g.overdue++;
    if (g.oldestOverdue === null || dueDay < g.oldestOverdue) g.oldestOverdue = dueDay;
  }
}

/** The pass's result: byStatus counts under `status ?? '(none)'` (a missing status and the text "(none)" share a key, first met first). */
function finish(p: Pass, t: Tally): Matches {
  const byStatus = newCounts();
  for (const id of t.statusOrder) {
    const key = p.statusKeys[id]!;
    byStatus[key] = (byStatus[key] ?? 0) + t.statusTally[id]!;
  }
  const {
    containing,
    picked,
    groups,
    openCount,
    overdueCount,
    dueSoon,
    totalItems,
    completedItems,
    outstandingItems,
    noDueDate,
    openNoDueDate,
    lateDays,
    lateCounted,
    oldestOverdue,
  } = t;
  return {
    byStatus,
    containing,
    picked,
    groups,
    openCount,
    overdueCount,
    dueSoon,
    totalItems,
    completedItems,
    outstandingItems,
    noDueDate,
    openNoDueDate,
    lateDays,
    lateCounted,
    oldestOverdue,
  };
}
