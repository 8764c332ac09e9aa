/** What the index of one request list is made of: each fact worked out from the records (kept by facts.ts, never here). */
import type { RequestRecord } from '../api/records.js';
import { addDays } from '../clock.js';
import { daysBetween, isCalendarIso, readDay } from '../domain/dates.js';
import type { ServiceProfile } from '../domain/service-profile.js';
import { fold } from '../text/render.js';
import { bump, nameKey, newCounts } from './name-keys.js';

/** Due dates of one list that could not be read as a day: how many, and the forms met (each with a count and its first text). */
export interface UnreadDates {
  /** Per record: 1 when its due date is there but could not be read (so it is neither dated nor "no due date"). */
  flags: Uint8Array;
  count: number;
  /** How many of them could be read either way (day-first or month-first): the profile's dates.ambiguous decides. */
  ambiguous: number;
  examples: string[];
}

/** The distinct statuses of one list: `ids[i]` is record i's; `lower` is what a status filter compares, `key` what byStatus counts under. */
export interface StatusTable {
  ids: Int32Array;
  lower: string[];
  key: string[];
  /** Statuses over the whole list, counted as byStatus counts them (read it, never change it). */
  occurring: Record<string, number>;
}

/** The distinct titles of one list: `ids[i]` is record i's, `folded` each title folded once. */
export interface TitleTable {
  ids: Int32Array;
  folded: string[];
}

/** The client names of one list: `ids[i]` is record i's name as an index into `names` (raw) and `keys` (its nameKey). */
export interface NameTable {
  ids: Int32Array;
  names: (string | null)[];
  keys: string[];
}

/** A request as list_requests shows it on one day: the record, and whether (and how many days) it is overdue. */
export type RequestRow = RequestRecord & { overdue: boolean; daysOverdue: number | null };

/** Per record, as of one day: overdue (open, due before it), days late (NaN when no calendar reads the due day), due within 7 days of it (open). */
export interface DayFacts {
  asOf: string;
  overdue: Uint8Array;
  /** Made on first need: the positions of the overdue records, ascending (read it, never change it). */
  overdueAt?: Int32Array;
  /** Filled as pages show them: each record's row as list_requests answers it on this day, and its line of text. */
  rows?: { out: RequestRow[]; lines: string[] };
  late: Float64Array;
  soon: Uint8Array;
}

/** Each record's checklist counts (null as 0) and completed share (1 without items); whether some share is not a number. */
export interface ItemCounts {
  totals: Float64Array;
  dones: Float64Array;
  ratios: Float64Array;
  someRatioNaN: boolean;
}

/** The positions holding each id of a table: `order[start[id] .. start[id + 1])`, ascending. */
export interface Members {
  start: Int32Array;
  order: Int32Array;
}

/** Open and overdue requests under one client name key. */
export interface JoinCount {
  readonly open: number;
  readonly overdue: number;
}

/** The start of an ISO date or date-time. */
const ISO_DAY = /^\d{4}-\d{2}-\d{2}/;

/**
 * An ISO date or date-time's day: its first ten characters, exactly the day the domain's readDay
 * (src/domain/dates.ts) reads in it, taken without a reading made per record; null for any other form and for a day
 * no calendar has (2026-02-30), which readDay then reports as unread.
 */
function isoDay(value: string | null): string | null {
  return value !== null && value.length >= 10 && ISO_DAY.test(value) && isCalendarIso(value) ? value.slice(0, 10) : null;
}

/** Each record's due day as YYYY-MM-DD, null when absent or unread; the unread ones counted apart. */
export function dueDays(all: readonly RequestRecord[], profile: ServiceProfile): { due: (string | null)[]; unread: UnreadDates | undefined } {
  const due = new Array<string | null>(all.length);
  let unread: UnreadDates | undefined;
  for (let i = 0; i < all.length; i++) {
    const d = all[i]!.dueDate;
    const iso = isoDay(d);
    if (iso !== null) {
      due[i] = iso;
      continue;
    }
    const reading = readDay(d, profile.ambiguousDates);
    due[i] = reading?.day ?? null;
    if (reading && reading.day === null) {
      unread ??= { flags: new Uint8Array(all.length), count: 0, ambiguous: 0, examples: [] };
      unread.flags[i] = 1;
      unread.count++;
      if ('ambiguous' in reading && reading.ambiguous) unread.ambiguous++;
      if (unread.examples.length < 3 && !unread.examples.includes(d!)) unread.examples.push(d!);
    }
  }
  return { due, unread };
}

/** Each record's creation day, null when absent or unreadable. */
export function computeCreatedDays(all: readonly RequestRecord[], profile: ServiceProfile): (string | null)[] {
  return all.map((r) => isoDay(r.createdAt) ?? readDay(r.createdAt, profile.ambiguousDates)?.day ?? null);
}

/** The list's distinct values of one field: each record's value id, and each distinct value once, in order of first appearance. */
function distinct(all: readonly RequestRecord[], field: 'status' | 'title' | 'clientName'): { ids: Int32Array; values: (string | null)[] } {
  const ids = new Int32Array(all.length);
  const index = new Map<string | null, number>();
  const values: (string | null)[] = [];
  for (let i = 0; i < all.length; i++) {
    const value = all[i]![field];
    let id = index.get(value);
    if (id === undefined) {
      id = values.length;
      index.set(value, id);
      values.push(value);
    }
    ids[i] = id;
  }
  return { ids, values };
}

/** The list's statuses: a status filter then looks at each distinct status once. */
export function computeStatusTable(all: readonly RequestRecord[]): StatusTable {
  const { ids, values } = distinct(all, 'status');
  const lower = values.map((status) => (status ?? '').toLowerCase());
  const key = values.map((status) => status ?? '(none)');
  const occurring = newCounts();
  for (let i = 0; i < ids.length; i++) bump(occurring, key[ids[i]!]!);
  return { ids, lower, key, occurring };
}

/** The list's titles, each distinct title folded once (a title search then folds nothing). */
export function computeTitleTable(all: readonly RequestRecord[]): TitleTable {
  const { ids, values } = distinct(all, 'title');
  return { ids, folded: values.map((title) => fold(title)) };
}

/** The list's client names, each distinct name keyed once (nameKey). */
export function computeNameTable(all: readonly RequestRecord[]): NameTable {
  const { ids, values } = distinct(all, 'clientName');
  return { ids, names: values, keys: values.map(nameKey) };
}

/** Overdue, days late and due soon per record as of `asOf`, from each record's due day and whether it is open. */
export function computeDayFacts(due: readonly (string | null)[], open: readonly boolean[], asOf: string): DayFacts {
  const n = due.length;
  const overdue = new Uint8Array(n);
  const late = new Float64Array(n);
  const soon = new Uint8Array(n);
  const weekEnd = addDays(asOf, 7);
  const memo = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const day = due[i]!;
    late[i] = NaN;
    if (day === null || !open[i]) continue;
    if (day < asOf) {
      overdue[i] = 1;
      let days = memo.get(day);
      if (days === undefined) memo.set(day, (days = daysBetween(day, asOf) ?? NaN));
      late[i] = days;
    } else if (day <= weekEnd) soon[i] = 1;
  }
  return { asOf, overdue, late, soon };
}

/** The positions flagged 1, ascending. */
export function positionsOf(flags: Uint8Array): Int32Array {
  return Int32Array.from(flags.keys()).filter((i) => flags[i] === 1);
}

/** Each record's checklist counts and completed share. */
export function computeItemCounts(all: readonly RequestRecord[]): ItemCounts {
  const totals = Float64Array.from(all, (r) => r.totalItems ?? 0);
  const dones = Float64Array.from(all, (r) => r.completedItems ?? 0);
  const ratios = totals.map((total, i) => (total ? dones[i]! / total : 1));
  return { totals, dones, ratios, someRatioNaN: ratios.some(Number.isNaN) };
}

/** Open and overdue requests per client name key (requests name their client only by name). */
export function computeJoinCounts(names: NameTable, open: readonly boolean[], overdue: Uint8Array): Map<string, JoinCount> {
  const perKey = new Map<string, { open: number; overdue: number }>();
  for (let i = 0; i < open.length; i++) {
    if (!open[i]) continue;
    const key = names.keys[names.ids[i]!]!;
    let n = perKey.get(key);
    if (!n) perKey.set(key, (n = { open: 0, overdue: 0 }));
    n.open++;
    if (overdue[i] === 1) n.overdue++;
  }
  return perKey;
}

/** The positions of each distinct value of a table (`ids[i]` is record i's value id, `count` values). */
export function members(ids: Int32Array, count: number): Members {
  const start = new Int32Array(count + 1);
  for (let i = 0; i < ids.length; i++) start[ids[i]! + 1]!++;
  for (let id = 0; id < count; id++) start[id + 1]! += start[id]!;
  const next = start.slice(0, count);
  const order = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) order[next[ids[i]!]!++] = i;
  return { start, order };
}

/** The positions of records with a due day, ordered by that day (ties by position). */
export function byDue(due: readonly (string | null)[]): Int32Array {
  const dated = Int32Array.from(due.keys()).filter((i) => due[i] !== null);
  return dated.sort((a, b) => (due[a]! < due[b]! ? -1 : due[a]! > due[b]! ? 1 : a - b));
}
