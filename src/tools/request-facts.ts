import type { RequestRecord } from '../api/records.js';

/** Statuses that end a request (case-insensitive); any other status is open. */
const CLOSED_STATUSES = new Set(['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived']);

/** Open: not in a closing status and not every checklist item complete. */
export function isOpen(r: RequestRecord): boolean {
  if (r.status && CLOSED_STATUSES.has(r.status.toLowerCase())) return false;
  const allDone = r.totalItems !== null && r.completedItems !== null && r.totalItems > 0 && r.completedItems >= r.totalItems;
  return !allDone;
}

/** The due day as YYYY-MM-DD from a date or an ISO date-time; null when absent or unreadable. */
export function dueDay(r: RequestRecord): string | null {
  const d = r.dueDate;
  if (!d || !/^\d{4}-\d{2}-\d{2}/.test(d)) return null;
  return d.slice(0, 10);
}

/** Per record of one list: its due day and whether it is open (what every list_requests pass needs). */
export interface ListFacts {
  due: (string | null)[];
  open: boolean[];
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
