import type { Client, RequestRecord } from '../api/records.js';
import { addDays } from '../clock.js';
import { readDay } from '../domain/dates.js';
import { DEFAULT_PROFILE, type ServiceProfile } from '../domain/service-profile.js';
import { fold } from '../text/render.js';
import { bump, nameKey, newCounts, sharedNames } from './list-text.js';

/** Open: the service profile's rule (src/domain/request-status.ts); the defaults when no profile is given. */
export function isOpen(r: RequestRecord, profile: ServiceProfile = DEFAULT_PROFILE): boolean {
  return profile.statuses.isOpen(r);
}

/** Due dates of one list that could not be read as a day: how many, and the forms met (each with a count and its first text). */
interface UnreadDates {
  /** Per record: 1 when its due date is there but could not be read (so it is neither dated nor "no due date"). */
  flags: Uint8Array;
  count: number;
  /** How many of them could be read either way (day-first or month-first): the profile's dates.ambiguous decides. */
  ambiguous: number;
  examples: string[];
}

/** Each record's due day as YYYY-MM-DD (src/domain/dates.ts), null when absent or unread; the unread ones counted apart. */
function dueDays(all: readonly RequestRecord[], profile: ServiceProfile): { due: (string | null)[]; unread: UnreadDates | undefined } {
  const due = new Array<string | null>(all.length);
  let unread: UnreadDates | undefined;
  for (let i = 0; i < all.length; i++) {
    const d = all[i]!.dueDate;
    // The common case first, as the list has always read it: an ISO date or date-time.
    if (d !== null && d.length >= 10 && ISO_DAY.test(d)) {
      due[i] = d.length === 10 ? d : d.slice(0, 10);
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

const ISO_DAY = /^\d{4}-\d{2}-\d{2}/;

/** Per record of one list: its due day and whether it is open (what every list_requests pass needs). */
export interface ListFacts {
  /** The profile the facts were read by (statuses, ambiguous dates). */
  profile: ServiceProfile;
  due: (string | null)[];
  /** Due dates there but not read (undefined when every one was read). */
  unreadDue: UnreadDates | undefined;
  open: boolean[];
  /** Made on first need: each record's client name as an index into a table of the distinct names. */
  names?: NameTable;
  /** Made on first need: open and overdue requests per name key, as of the day they were counted on. */
  join?: { asOf: string; perKey: ReadonlyMap<string, { readonly open: number; readonly overdue: number }> };
  /** Made on first need: each record's status as an index into the list's distinct statuses. */
  statuses?: StatusTable;
  /** Made on first need: each record's title as an index into the list's distinct titles, folded once. */
  titles?: { ids: Int32Array; folded: string[] };
  /** Made on first need: each record's creation day (YYYY-MM-DD), null when absent or unreadable. */
  created?: (string | null)[];
  /** Made on first need: what depends on the day overdue is judged on, for the last day asked. */
  day?: DayFacts;
  /** Made on first need: the list's positions in a sort order (an order shared by every filter), per order. */
  orders?: Map<string, Int32Array>;
  /** What filter passes found, per day and filters (a few kept, the oldest dropped first): shared, read only. */
  passes?: { asOf: string; byKey: Map<string, { found: unknown; weight: number }>; weight: number };
  /** Made on first need: checklist counts per record. */
  items?: { totals: Float64Array; dones: Float64Array; ratios: Float64Array; someRatioNaN: boolean };
  /** Made on first need: the positions of each distinct value of a table (names, statuses, titles), per table. */
  members?: Map<Int32Array, Members>;
  /** Made on first need: the positions of records with a due day, in order of that day (ties by position). */
  byDue?: Int32Array;
}

/** The positions holding each id of a table: `order[start[id] .. start[id + 1])`, ascending. */
interface Members {
  start: Int32Array;
  order: Int32Array;
}

/** The distinct statuses of one list: `ids[i]` is record i's; `lower` is what a status filter compares, `key` what byStatus counts under. */
export interface StatusTable {
  ids: Int32Array;
  lower: string[];
  key: string[];
  /** Statuses over the whole list, counted as byStatus counts them (read it, never change it). */
  occurring: Record<string, number>;
}

/** Per record, as of one day: overdue (open, due before it), days late (NaN when no calendar reads the due day), due within 7 days of it (open). */
export interface DayFacts {
  asOf: string;
  overdue: Uint8Array;
  /** Made on first need: the positions of the overdue records, ascending (read it, never change it). */
  overdueAt?: Int32Array;
  /** Filled as pages show them: each record's row as list_requests answers it on this day, and its line of text. */
  rows?: { out: unknown[]; lines: string[] };
  late: Float64Array;
  soon: Uint8Array;
}

/** The client names of one list: `ids[i]` is record i's name as an index into `names` (raw) and `keys` (its nameKey). */
export interface NameTable {
  ids: Int32Array;
  names: (string | null)[];
  keys: string[];
}
/**
 * Keyed by the list itself: a revalidated list (304) is the very array the API client kept, so the
 * facts of an unchanged list are worked out once, not on every call; a changed list is a new array.
 */
const FACTS = new WeakMap<readonly RequestRecord[], ListFacts>();

/**
 * The facts of one list, read by `profile` (the server's service profile; given by every tool that starts a pass,
 * left out by the helpers below, which read the facts already made). A list read by another profile is read again.
 */
export function listFacts(all: readonly RequestRecord[], profile?: ServiceProfile): ListFacts {
  let facts = FACTS.get(all);
  if (!facts || (profile !== undefined && facts.profile !== profile)) {
    const by = profile ?? DEFAULT_PROFILE;
    const { due, unread } = dueDays(all, by);
    facts = { profile: by, due, unreadDue: unread, open: all.map((r) => by.statuses.isOpen(r)) };
    FACTS.set(all, facts);
  }
  return facts;
}

/** The list's statuses, worked out once per list (a status filter then looks at each distinct status once). */
export function statusTable(all: readonly RequestRecord[]): StatusTable {
  const facts = listFacts(all);
  if (!facts.statuses) {
    const ids = new Int32Array(all.length);
    const index = new Map<string | null, number>();
    const lower: string[] = [];
    const key: string[] = [];
    const occurring = newCounts();
    for (let i = 0; i < all.length; i++) {
      const status = all[i]!.status;
      let id = index.get(status);
      if (id === undefined) {
        id = lower.length;
        index.set(status, id);
        lower.push((status ?? '').toLowerCase());
        key.push(status ?? '(none)');
      }
      ids[i] = id;
      bump(occurring, key[id]!);
    }
    facts.statuses = { ids, lower, key, occurring };
  }
  return facts.statuses;
}

/** The list's titles, each distinct title folded once per list (a title search then folds nothing). */
export function titleTable(all: readonly RequestRecord[]): { ids: Int32Array; folded: string[] } {
  const facts = listFacts(all);
  if (!facts.titles) {
    const ids = new Int32Array(all.length);
    const index = new Map<string | null, number>();
    const folded: string[] = [];
    for (let i = 0; i < all.length; i++) {
      const title = all[i]!.title;
      let id = index.get(title);
      if (id === undefined) {
        id = folded.length;
        index.set(title, id);
        folded.push(fold(title));
      }
      ids[i] = id;
    }
    facts.titles = { ids, folded };
  }
  return facts.titles;
}

/** Each record's creation day, worked out once per list. */
export function createdDays(all: readonly RequestRecord[]): (string | null)[] {
  const facts = listFacts(all);
  facts.created ??= all.map((r) => (r.createdAt && ISO_DAY.test(r.createdAt) ? r.createdAt.slice(0, 10) : (readDay(r.createdAt, facts.profile.ambiguousDates)?.day ?? null)));
  return facts.created;
}

const DAY_MS = 86_400_000;

/** Whole days from `due` to `asOf` (both YYYY-MM-DD, UTC calendar days); null for a due day no calendar reads (month 13). */
export function daysBetween(due: string, asOf: string): number | null {
  const start = Date.parse(`${due}T00:00:00Z`);
  return Number.isNaN(start) ? null : Math.round((Date.parse(`${asOf}T00:00:00Z`) - start) / DAY_MS);
}

/** Overdue, days late and due soon per record as of `asOf`: worked out once per list and day. */
export function dayFacts(all: readonly RequestRecord[], asOf: string): DayFacts {
  const facts = listFacts(all);
  if (facts.day?.asOf !== asOf) {
    const n = all.length;
    const overdue = new Uint8Array(n);
    const late = new Float64Array(n);
    const soon = new Uint8Array(n);
    const weekEnd = addDays(asOf, 7);
    const memo = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const due = facts.due[i]!;
      late[i] = NaN;
      if (due === null || !facts.open[i]) continue;
      if (due < asOf) {
        overdue[i] = 1;
        let days = memo.get(due);
        if (days === undefined) memo.set(due, (days = daysBetween(due, asOf) ?? NaN));
        late[i] = days;
      } else if (due <= weekEnd) soon[i] = 1;
    }
    facts.day = { asOf, overdue, late, soon };
  }
  return facts.day;
}

/**
 * The list's positions in the order `compare()` gives, sorted once per list and order name. Filtering
 * this order keeps exactly the order a stable sort of the matches gives, because the order compares any
 * two records the same way whatever else matched (a total order: ties end on the position).
 */
export function sortedOrder(all: readonly RequestRecord[], name: string, compare: () => (a: number, b: number) => number): Int32Array {
  const facts = listFacts(all);
  facts.orders ??= new Map();
  let order = facts.orders.get(name);
  if (!order) facts.orders.set(name, (order = Int32Array.from(all.keys()).sort(compare())));
  return order;
}

/** At most this many filter passes are kept per list, and together at most four lists' worth of matches (weight). */
const MAX_PASSES = 256;

/**
 * What `pass()` found for these filters (`key`) over this list on this day, worked out once: another page,
 * order or limit of the same matches reads it again. Kept within MAX_PASSES and a weight of four times
 * the list's length (`weight` says what one pass holds, e.g. its matches), the least recently used dropped
 * first, so a million-request list keeps four full passes, not hundreds. Shared by every caller: read it, never change it.
 */
export function rememberPass<T>(all: readonly RequestRecord[], asOf: string, key: string, pass: () => T, weight: (found: T) => number): T {
  const facts = listFacts(all);
  if (facts.passes?.asOf !== asOf) facts.passes = { asOf, byKey: new Map(), weight: 0 };
  const kept = facts.passes;
  const seen = kept.byKey.get(key);
  if (seen) {
    // Used again: now the last to be dropped.
    kept.byKey.delete(key);
    kept.byKey.set(key, seen);
    return seen.found as T;
  }
  const found = pass();
  const w = weight(found) + 1;
  while (kept.byKey.size > 0 && (kept.byKey.size >= MAX_PASSES || kept.weight + w > 4 * all.length + 64)) {
    const [oldest, entry] = kept.byKey.entries().next().value!;
    kept.byKey.delete(oldest);
    kept.weight -= entry.weight;
  }
  kept.byKey.set(key, { found, weight: w });
  kept.weight += w;
  return found;
}

/** Each record's checklist counts (null as 0) and completed share (1 without items), worked out once per list. */
export function itemCounts(all: readonly RequestRecord[]): { totals: Float64Array; dones: Float64Array; ratios: Float64Array; someRatioNaN: boolean } {
  const facts = listFacts(all);
  if (!facts.items) {
    const totals = Float64Array.from(all, (r) => r.totalItems ?? 0);
    const dones = Float64Array.from(all, (r) => r.completedItems ?? 0);
    const ratios = totals.map((total, i) => (total ? dones[i]! / total : 1));
    facts.items = { totals, dones, ratios, someRatioNaN: ratios.some(Number.isNaN) };
  }
  return facts.items;
}

/** The list's client names, worked out once per list (a name is folded once, not once per record and call). */
export function nameTable(all: readonly RequestRecord[]): NameTable {
  const facts = listFacts(all);
  if (!facts.names) {
    const ids = new Int32Array(all.length);
    const index = new Map<string | null, number>();
    const names: (string | null)[] = [];
    for (let i = 0; i < all.length; i++) {
      const name = all[i]!.clientName;
      let id = index.get(name);
      if (id === undefined) {
        id = names.length;
        index.set(name, id);
        names.push(name);
      }
      ids[i] = id;
    }
    facts.names = { ids, names, keys: names.map(nameKey) };
  }
  return facts.names;
}

/**
 * Open and overdue requests per client name key (requests name their client only by name), as of
 * `asOf`: worked out once per list and day. The map is shared: read it, never change it.
 */
export function joinCounts(all: readonly RequestRecord[], asOf: string): ReadonlyMap<string, { readonly open: number; readonly overdue: number }> {
  const facts = listFacts(all);
  if (facts.join?.asOf !== asOf) {
    const { ids, keys } = nameTable(all);
    const perKey = new Map<string, { open: number; overdue: number }>();
    for (let i = 0; i < all.length; i++) {
      if (!facts.open[i]) continue;
      const key = keys[ids[i]!]!;
      let n = perKey.get(key);
      if (!n) perKey.set(key, (n = { open: 0, overdue: 0 }));
      n.open++;
      const due = facts.due[i]!;
      if (due !== null && due < asOf) n.overdue++;
    }
    facts.join = { asOf, perKey };
  }
  return facts.join.perKey;
}

/** Per client list (a revalidated list is the same array): each client's name key, and the names several clients share. */
const CLIENT_FACTS = new WeakMap<readonly Client[], { keys: string[]; shared: Map<string, Client[]> | undefined }>();

function clientFacts(clients: readonly Client[]): { keys: string[]; shared: Map<string, Client[]> | undefined } {
  let facts = CLIENT_FACTS.get(clients);
  if (!facts) {
    facts = { keys: clients.map((c) => nameKey(c.displayName)), shared: undefined };
    CLIENT_FACTS.set(clients, facts);
  }
  return facts;
}

/** Each client's name key (nameKey of its display name), by position; worked out once per list. */
export function clientKeys(clients: readonly Client[]): readonly string[] {
  return clientFacts(clients).keys;
}

/** sharedNames of the list, worked out once per list. Shared: read it, never change it. */
export function sharedClientNames(clients: readonly Client[]): ReadonlyMap<string, Client[]> {
  const facts = clientFacts(clients);
  if (!facts.shared) {
    const keyOfName = new Map<string | null, string>(clients.map((c, i) => [c.displayName, facts.keys[i]!]));
    facts.shared = sharedNames(clients, (name) => keyOfName.get(name) ?? nameKey(name));
  }
  return facts.shared;
}

/** The positions of each distinct value of a table (`ids[i]` is record i's value id, `count` values), worked out once per list. */
function members(all: readonly RequestRecord[], ids: Int32Array, count: number): Members {
  const facts = listFacts(all);
  facts.members ??= new Map();
  let found = facts.members.get(ids);
  if (!found) {
    const start = new Int32Array(count + 1);
    for (let i = 0; i < ids.length; i++) start[ids[i]! + 1]!++;
    for (let id = 0; id < count; id++) start[id + 1]! += start[id]!;
    const next = start.slice(0, count);
    const order = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) order[next[ids[i]!]!++] = i;
    facts.members.set(ids, (found = { start, order }));
  }
  return found;
}

/** The positions of records with a due day, ordered by that day, worked out once per list. */
function byDue(all: readonly RequestRecord[]): Int32Array {
  const facts = listFacts(all);
  if (!facts.byDue) {
    const due = facts.due;
    const dated = Int32Array.from(all.keys()).filter((i) => due[i] !== null);
    facts.byDue = dated.sort((a, b) => (due[a]! < due[b]! ? -1 : due[a]! > due[b]! ? 1 : a - b));
  }
  return facts.byDue;
}

/** The first position in `order` (by due day) whose due day is not below `day` (`after`) or is above it (not `after`). */
function dueBound(due: readonly (string | null)[], order: Int32Array, day: string, after: boolean): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const d = due[order[mid]!]!;
    if (after ? d < day : d <= day) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What a filter pass may start from: the positions some of its filters allow, each once, ascending. */
export interface Narrowing {
  /** Per table (its ids, its number of values), the values a filter keeps (1) or must still see (2). */
  tables: { ids: Int32Array; keep: Uint8Array }[];
  /** A due range, when asked: records with a due day within it (YYYY-MM-DD; '' for an open end). */
  due?: { after: string; before: string };
  /** Overdue only, when asked: the records overdue on this day (dayFacts). */
  overdue?: DayFacts;
}

/**
 * The positions a pass needs to look at, ascending, or undefined for the whole list: the fewest of
 * what each narrowing filter allows (every position it keeps or must still see). The pass still checks
 * every filter on each position, so its answer is exactly the answer of a pass over the whole list, as
 * long as a narrowing names every position that changes the answer (a name it only counts is a 2).
 */
export function candidates(all: readonly RequestRecord[], narrowing: Narrowing): Int32Array | undefined {
  let best: { size: number; take: () => Int32Array } | undefined;
  for (const { ids, keep } of narrowing.tables) {
    const m = members(all, ids, keep.length);
    let size = 0;
    for (let id = 0; id < keep.length; id++) if (keep[id]) size += m.start[id + 1]! - m.start[id]!;
    if (best && best.size <= size) continue;
    best = {
      size,
      take: () => {
        const out = new Int32Array(size);
        let n = 0;
        for (let id = 0; id < keep.length; id++) if (keep[id]) for (let k = m.start[id]!; k < m.start[id + 1]!; k++) out[n++] = m.order[k]!;
        return out.sort();
      },
    };
  }
  if (narrowing.due) {
    const order = byDue(all);
    const due = listFacts(all).due;
    const from = narrowing.due.after ? dueBound(due, order, narrowing.due.after, true) : 0;
    const to = narrowing.due.before ? dueBound(due, order, narrowing.due.before, false) : order.length;
    const size = Math.max(0, to - from);
    if (!best || size < best.size) best = { size, take: () => order.slice(from, Math.max(from, to)).sort() };
  }
  if (narrowing.overdue) {
    const day = narrowing.overdue;
    day.overdueAt ??= Int32Array.from(all.keys()).filter((i) => day.overdue[i] === 1);
    const at = day.overdueAt;
    if (!best || at.length < best.size) best = { size: at.length, take: () => at };
  }
  // Narrowing to most of the list saves nothing and costs a sort.
  return best && best.size < all.length / 2 ? best.take() : undefined;
}

