/** The index of one request list (and of one client list): every fact the list tools read, made once and kept here only. */
import { BoundedCache } from '../cache.js';
import type { Client, RequestRecord } from '../api/records.js';
import { DEFAULT_PROFILE, type ServiceProfile } from '../domain/service-profile.js';
import { nameKey, sharedNames } from './name-keys.js';
import * as make from './tables.js';
import type { DayFacts, ItemCounts, JoinCount, Members, NameTable, RequestRow, StatusTable, TitleTable, UnreadDates } from './tables.js';

/**
 * Per record of one list, read by the service profile: its due day and whether it is open (what every
 * question needs), and beside them every other fact, made on first need. This module is the only one that
 * fills or replaces them; everything it hands out is shared by every caller: read it, never change it.
 */
interface ListFacts {
  /** The profile the facts were read by (statuses, ambiguous dates). */
  profile: ServiceProfile;
  due: (string | null)[];
  /** Due dates there but not read (undefined when every one was read). */
  unreadDue: UnreadDates | undefined;
  open: boolean[];
  names?: NameTable;
  statuses?: StatusTable;
  titles?: TitleTable;
  created?: (string | null)[];
  items?: ItemCounts;
  byDue?: Int32Array;
  /** The list's positions in each sort order (an order shared by every filter), per order name. */
  orders?: Map<string, Int32Array>;
  /** The positions of each distinct value of a table (names, statuses, titles), per table. */
  members?: Map<Int32Array, Members>;
  /** What depends on the day overdue is judged on, for the last day asked. */
  day?: DayFacts;
  /** Open and overdue requests per name key, as of the day they were counted on. */
  join?: { asOf: string; perKey: ReadonlyMap<string, JoinCount> };
  /** What filter passes found, per day and filters (a few kept, the least recently used dropped first). */
  passes?: { asOf: string; byKey: BoundedCache<string, unknown> };
}

/**
 * Keyed by the list itself: a revalidated list (304) is the very array the API client kept, so the
 * facts of an unchanged list are worked out once, not on every call; a changed list is a new array.
 */
const FACTS = new WeakMap<readonly RequestRecord[], ListFacts>();

/**
 * The facts of one list, read by `profile` (the server's service profile; given by every tool that starts a pass,
 * left out by the readers below, which read the facts already made). A list read by another profile is read again.
 */
export function listFacts(all: readonly RequestRecord[], profile?: ServiceProfile): ListFacts {
  let facts = FACTS.get(all);
  if (!facts || (profile !== undefined && facts.profile !== profile)) {
    const by = profile ?? DEFAULT_PROFILE;
    const { due, unread } = make.dueDays(all, by);
    facts = { profile: by, due, unreadDue: unread, open: all.map((r) => by.statuses.isOpen(r)) };
    FACTS.set(all, facts);
  }
  return facts;
}

type Lazy = 'names' | 'statuses' | 'titles' | 'created' | 'items' | 'byDue';

/** The one way a fact of the list that does not depend on the day is filled: made on first need, then kept. */
function kept<K extends Lazy>(all: readonly RequestRecord[], field: K, build: (facts: ListFacts) => NonNullable<ListFacts[K]>): NonNullable<ListFacts[K]> {
  const facts = listFacts(all);
  let found = facts[field];
  if (found === undefined) facts[field] = found = build(facts);
  return found as NonNullable<ListFacts[K]>;
}

/** The list's statuses (a status filter then looks at each distinct status once). */
export function statusTable(all: readonly RequestRecord[]): StatusTable {
  return kept(all, 'statuses', () => make.computeStatusTable(all));
}

/** The list's titles, each distinct title folded once (a title search then folds nothing). */
export function titleTable(all: readonly RequestRecord[]): TitleTable {
  return kept(all, 'titles', () => make.computeTitleTable(all));
}

/** The list's client names (a name is keyed once, not once per record and call). */
export function nameTable(all: readonly RequestRecord[]): NameTable {
  return kept(all, 'names', () => make.computeNameTable(all));
}

/** Each record's creation day (YYYY-MM-DD), null when absent or unreadable. */
export function createdDays(all: readonly RequestRecord[]): (string | null)[] {
  return kept(all, 'created', (facts) => make.computeCreatedDays(all, facts.profile));
}

/** Each record's checklist counts (null as 0) and completed share (1 without items). */
export function itemCounts(all: readonly RequestRecord[]): ItemCounts {
  return kept(all, 'items', () => make.computeItemCounts(all));
}

/** The positions of records with a due day, ordered by that day. */
export function dueOrder(all: readonly RequestRecord[]): Int32Array {
  return kept(all, 'byDue', (facts) => make.byDue(facts.due));
}

/** The positions of each distinct value of a table (`ids[i]` is record i's value id, `count` values). */
export function membersOf(all: readonly RequestRecord[], ids: Int32Array, count: number): Members {
  const facts = listFacts(all);
  facts.members ??= new Map();
  let found = facts.members.get(ids);
  if (!found) facts.members.set(ids, (found = make.members(ids, count)));
  return found;
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

/** Overdue, days late and due soon per record as of `asOf`: worked out once per list and day. */
export function dayFacts(all: readonly RequestRecord[], asOf: string): DayFacts {
  const facts = listFacts(all);
  if (facts.day?.asOf !== asOf) facts.day = make.computeDayFacts(facts.due, facts.open, asOf);
  return facts.day;
}

/** The positions of the records overdue on that day, ascending. */
export function overduePositions(day: DayFacts): Int32Array {
  return (day.overdueAt ??= make.positionsOf(day.overdue));
}

/** The rows and lines list_requests has shown on that day, by position: each made once, then shared. */
export function shownRows(day: DayFacts): { out: RequestRow[]; lines: string[] } {
  return (day.rows ??= { out: [], lines: [] });
}

/**
 * Open and overdue requests per client name key (requests name their client only by name), as of
 * `asOf`: worked out once per list and day.
 */
export function joinCounts(all: readonly RequestRecord[], asOf: string): ReadonlyMap<string, JoinCount> {
  const facts = listFacts(all);
  if (facts.join?.asOf !== asOf) facts.join = { asOf, perKey: make.computeJoinCounts(nameTable(all), facts.open, dayFacts(all, asOf).overdue) };
  return facts.join.perKey;
}

/** At most this many filter passes are kept per list, and together at most four lists' worth of matches (weight). */
const MAX_PASSES = 256;

/**
 * What `pass()` found for these filters (`key`) over this list on this day, worked out once: another page,
 * order or limit of the same matches reads it again. Kept within MAX_PASSES and a weight of four times
 * the list's length (`weight` says what one pass holds, e.g. its matches), the least recently used dropped
 * first, so a million-request list keeps four full passes, not hundreds.
 */
export function rememberPass<T>(all: readonly RequestRecord[], asOf: string, key: string, pass: () => T, weight: (found: T) => number): T {
  const facts = listFacts(all);
  if (facts.passes?.asOf !== asOf) facts.passes = { asOf, byKey: new BoundedCache({ maxEntries: MAX_PASSES, maxWeight: 4 * all.length + 64 }) };
  return facts.passes.byKey.getOrMake(key, pass, (found) => weight(found as T) + 1) as T;
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

/** Each client's name key (nameKey of its display name), by position; worked out once per client list. */
export function clientKeys(clients: readonly Client[]): readonly string[] {
  return clientFacts(clients).keys;
}

/** The names several clients share (sharedNames), worked out once per client list. */
export function sharedClientNames(clients: readonly Client[]): ReadonlyMap<string, Client[]> {
  const facts = clientFacts(clients);
  if (!facts.shared) {
    const keyOfName = new Map<string | null, string>(clients.map((c, i) => [c.displayName, facts.keys[i]!]));
    facts.shared = sharedNames(clients, (name) => keyOfName.get(name) ?? nameKey(name));
  }
  return facts.shared;
}

/** Open: the service profile's rule (src/domain/request-status.ts); the defaults when no profile is given. */
export function isOpen(r: RequestRecord, profile: ServiceProfile = DEFAULT_PROFILE): boolean {
  return profile.statuses.isOpen(r);
}
