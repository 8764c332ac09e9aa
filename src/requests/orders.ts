import { z } from 'zod';
import type { RequestRecord } from '../api/records.js';
import { itemCounts, listFacts, sortedOrder } from './facts.js';

/**
 * The orders of list_requests (tools/list-requests.ts): requests over list positions, sorted once per
 * list and shared by every filter (facts.ts), and client groups; the words that name each
 * order; and the arithmetic they lean on. Every order is total, as a stable sort leaves it.
 */

export const SORTS = ['newest', 'oldest', 'due_soonest', 'least_complete', 'most_open', 'most_overdue', 'most_outstanding'] as const;
export type Sort = (typeof SORTS)[number];
export const GROUP_ONLY: readonly Sort[] = ['most_open', 'most_overdue', 'most_outstanding'];

export const groupOut = z.object({
  clientName: z.string().nullable(),
  requests: z.number().int(),
  open: z.number().int(),
  overdue: z.number().int(),
  totalItems: z.number(),
  completedItems: z.number(),
  outstandingItems: z.number(),
  nextDue: z.string().nullable(),
  oldestOverdue: z.string().nullable(),
});
export type GroupOut = z.output<typeof groupOut>;

export interface Group extends GroupOut {
  /** Position of the group's newest and oldest request in the API's answer. */
  first: number;
  last: number;
}

/** YYYY-MM-DD days order as plain strings (no locale collation); no day sorts last. */
function byDay(x: string | null, y: string | null): number {
  const a = x ?? '9999';
  const b = y ?? '9999';
  return a < b ? -1 : a > b ? 1 : 0;
}
export const byText = (x: string | null, y: string | null) => ((x ?? '') < (y ?? '') ? -1 : (x ?? '') > (y ?? '') ? 1 : 0);
const ratio = (done: number, total: number) => (total ? done / total : 1);

export type RequestSort = 'newest' | 'oldest' | 'due_soonest' | 'least_complete';

/**
 * Request orders over list positions; the list comes newest first (the API document says so), so its
 * order is the creation order, and every order ends on the position (a total order).
 */
function requestOrder(all: readonly RequestRecord[], sort: 'due_soonest' | 'least_complete'): (a: number, b: number) => number {
  const due = listFacts(all).due;
  if (sort === 'due_soonest') return (a, b) => byDay(due[a]!, due[b]!) || a - b;
  const ratios = itemCounts(all).ratios;
  return (a, b) => ratios[a]! - ratios[b]! || byDay(due[a]!, due[b]!) || a - b;
}

/** Which positions a kept pass matched (pass results are shared and never changed, so neither is this). */
const MASKS = new WeakMap<readonly number[], Uint8Array>();

/**
 * The positions on the page, in `sort` order: newest and oldest read the matches as they are; the other
 * orders filter the list's own order (sorted once per list, facts.ts sortedOrder), or sort the
 * matches when they are few, exactly as a stable sort of the matches would put them.
 */
export function pageRows(all: readonly RequestRecord[], picked: readonly number[], sort: RequestSort, offset: number, limit: number): number[] {
  if (sort === 'newest') return picked.slice(offset, offset + limit);
  if (sort === 'oldest') {
    const out: number[] = [];
    for (let k = offset; k < offset + limit && k < picked.length; k++) out.push(picked[picked.length - 1 - k]!);
    return out;
  }
  if (offset >= picked.length) return [];
  // A ratio that is not a number (counts of Infinity) ties with everything: no order then holds for every subset, so such a list sorts each call's matches.
  const shareable = sort === 'due_soonest' || !itemCounts(all).someRatioNaN;
  const order = picked.length * 16 < all.length || !shareable ? null : sortedOrder(all, sort, () => requestOrder(all, sort));
  if (!order) return [...picked].sort(requestOrder(all, sort)).slice(offset, offset + limit);
  // Every record matched: the page is a slice of the order.
  if (picked.length === all.length) return Array.from(order.subarray(offset, offset + limit));
  let mask = MASKS.get(picked);
  if (!mask) {
    mask = new Uint8Array(all.length);
    for (const i of picked) mask[i] = 1;
    MASKS.set(picked, mask);
  }
  const out: number[] = [];
  let seen = 0;
  for (let k = 0; k < order.length && out.length < limit; k++) {
    const i = order[k]!;
    if (mask[i] === 1 && seen++ >= offset) out.push(i);
  }
  return out;
}

/** Group orders; ties fall back to the name, so pages are stable. */
export const GROUP_COMPARE: Record<Sort, (a: Group, b: Group) => number> = {
  newest: (a, b) => a.first - b.first,
  oldest: (a, b) => b.last - a.last,
  due_soonest: (a, b) => byDay(a.nextDue, b.nextDue) || byText(a.clientName, b.clientName),
  least_complete: (a, b) => ratio(a.completedItems, a.totalItems) - ratio(b.completedItems, b.totalItems) || byText(a.clientName, b.clientName),
  most_open: (a, b) => b.open - a.open || b.overdue - a.overdue || byText(a.clientName, b.clientName),
  most_overdue: (a, b) => b.overdue - a.overdue || byDay(a.oldestOverdue, b.oldestOverdue) || b.open - a.open || byText(a.clientName, b.clientName),
  most_outstanding: (a, b) => b.outstandingItems - a.outstandingItems || b.open - a.open || byText(a.clientName, b.clientName),
};

export const SORT_TEXT: Record<Sort, string> = {
  newest: 'newest first',
  oldest: 'oldest first',
  due_soonest: 'soonest due first',
  least_complete: 'least complete first',
  most_open: 'most open first',
  most_overdue: 'most overdue first',
  most_outstanding: 'most items outstanding first',
};
export const GROUP_SORT_TEXT: Record<Sort, string> = {
  newest: 'by newest request first',
  oldest: 'by oldest request first',
  due_soonest: 'by next due day first',
  least_complete: 'least complete first',
  most_open: 'most open requests first',
  most_overdue: 'most overdue requests first',
  most_outstanding: 'most items outstanding on open requests first',
};

/** A sum that stays a finite number: counts the service gives near 1e308 must never make a result invalid (JSON has no Infinity). */
export function add(a: number, b: number): number {
  const sum = a + b;
  return Number.isFinite(sum) ? sum : sum > 0 ? Number.MAX_VALUE : -Number.MAX_VALUE;
}

/**
 * The first `count` items of `list` in `compare` order, exactly as a stable sort would put them: one
 * pass keeping the best so far (an item ties after those already kept, as a stable sort leaves it).
 */
export function firstSorted<T>(list: readonly T[], compare: (a: T, b: T) => number, count: number): T[] {
  const top: T[] = [];
  if (count <= 0) return top;
  for (const item of list) {
    if (top.length === count && compare(item, top[count - 1]!) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(top[mid]!, item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, item);
    if (top.length > count) top.pop();
  }
  return top;
}
