/** Where a filter pass starts: the positions its narrowest filter allows, from the list's index. */
import type { RequestRecord } from '../api/records.js';
import { dueOrder, listFacts, membersOf, overduePositions } from './facts.js';
import type { DayFacts } from './tables.js';

/** What a filter pass may start from: the positions some of its filters allow, each once, ascending. */
export interface Narrowing {
  /** Per table (its ids, its number of values), the values a filter keeps (1) or must still see (2). */
  tables: { ids: Int32Array; keep: Uint8Array }[];
  /** A due range, when asked: records with a due day within it (YYYY-MM-DD; '' for an open end). */
  due?: { after: string; before: string };
  /** Overdue only, when asked: the records overdue on this day (dayFacts). */
  overdue?: DayFacts;
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

type Best = { size: number; take: () => Int32Array } | undefined;

/** The narrowest of the tables' filters: the positions of every value one of them keeps or must still see. */
function narrowestTable(all: readonly RequestRecord[], tables: Narrowing['tables']): Best {
  let best: Best;
  for (const { ids, keep } of tables) {
    const m = membersOf(all, ids, keep.length);
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
  return best;
}

/**
 * The positions a pass needs to look at, ascending, or undefined for the whole list: the fewest of
 * what each narrowing filter allows (every position it keeps or must still see). The pass still checks
 * every filter on each position, so its answer is exactly the answer of a pass over the whole list, as
 * long as a narrowing names every position that changes the answer (a name it only counts is a 2).
 */
export function candidates(all: readonly RequestRecord[], narrowing: Narrowing): Int32Array | undefined {
  let best = narrowestTable(all, narrowing.tables);
  if (narrowing.due) {
    const order = dueOrder(all);
    const due = listFacts(all).due;
    const from = narrowing.due.after ? dueBound(due, order, narrowing.due.after, true) : 0;
    const to = narrowing.due.before ? dueBound(due, order, narrowing.due.before, false) : order.length;
    const size = Math.max(0, to - from);
    if (!best || size < best.size) best = { size, take: () => order.slice(from, Math.max(from, to)).sort() };
  }
  if (narrowing.overdue) {
    const at = overduePositions(narrowing.overdue);
    if (!best || at.length < best.size) best = { size: at.length, take: () => at };
  }
  // Narrowing to most of the list saves nothing and costs a sort.
  return best && best.size < all.length / 2 ? best.take() : undefined;
}
