import type { Client, RequestRecord } from '../api/records.js';
import { nameKey, sharedNames } from './list-text.js';

/** Statuses that end a request (case-insensitive); any other status is open. */
const CLOSED_STATUSES = new Set(['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived']);

/** Open: not in a closing status and not every checklist item complete. */
export function isOpen(r: RequestRecord): boolean {
  if (r.status && CLOSED_STATUSES.has(r.status.toLowerCase())) return false;
  const allDone = r.totalItems !== null && r.completedItems !== null && r.totalItems > 0 && r.completedItems >= r.totalItems;
  return !allDone;
}

/** The due day as YYYY-MM-DD from a date or an ISO date-time; null when absent or unreadable. */
function dueDay(r: RequestRecord): string | null {
  const d = r.dueDate;
  if (!d || !/^\d{4}-\d{2}-\d{2}/.test(d)) return null;
  return d.slice(0, 10);
}

/** Per record of one list: its due day and whether it is open (what every list_requests pass needs). */
export interface ListFacts {
  due: (string | null)[];
  open: boolean[];
  /** Made on first need: each record's client name as an index into a table of the distinct names. */
  names?: NameTable;
  /** Made on first need: open and overdue requests per name key, as of the day they were counted on. */
  join?: { asOf: string; perKey: ReadonlyMap<string, { readonly open: number; readonly overdue: number }> };
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

export function listFacts(all: readonly RequestRecord[]): ListFacts {
  let facts = FACTS.get(all);
  if (!facts) {
    facts = { due: all.map(dueDay), open: all.map(isOpen) };
    FACTS.set(all, facts);
  }
  return facts;
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
