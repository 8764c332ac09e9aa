/** One filter-and-count pass of list_requests' query over the list's index: the matches' positions or client groups, and their exact counts. */
import type { RequestRecord } from '../api/records.js';
import { add, type Group } from './orders.js';
import { newCounts } from './name-keys.js';
import type { NameTable } from './tables.js';

/** A client name met among the matches: its first raw spelling and how many requests carry it. */
export interface NameCount {
  name: string | null;
  n: number;
}

/** What one filter pass found. Kept per list, day and filters, and shared by every answer: read it, never change it. */
export interface Matches {
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

/**
 * Everything one pass reads, with the question's fields as plain values: read from the input object inside
 * the loop, every question's own shape would make each read a slow lookup. Each distinct status, title and
 * name is judged once here (a verdict per value), not once per record.
 */
export interface Pass {
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
export function filterAndCount(p: Pass): Matches {
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
