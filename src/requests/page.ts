/** The page of a list_requests answer in its order: client groups, or requests with their rows as of the day. */
import type { RequestRecord } from '../api/records.js';
import { onceFor } from '../cache.js';
import { deepFreeze } from '../freeze.js';
import { firstSorted, GROUP_COMPARE, pageRows, type Group, type GroupOut, type RequestSort, type Sort } from './orders.js';
import { shownRows } from './facts.js';
import type { Selection } from './query.js';
import type { RequestRow } from './tables.js';

/** Each kept group's row (frozen, shared by every answer showing it) and each row's line of text. */
const groupRows = onceFor<Group, GroupOut>();
const groupLines = onceFor<GroupOut, string>();

/**
 * The groups on the page, in `sort` order, with their lines (`line` words a row). A group of a kept pass is
 * the same on every page and order that shows it: its row and line are made once, frozen, shared.
 */
export function groupPage(
  groups: readonly Group[],
  sort: Sort,
  offset: number,
  limit: number,
  line: (row: GroupOut) => string,
): { rows: GroupOut[]; lines: string[] } {
  // A page near the top of many groups (most_open, limit 3) needs only its first groups in order, not all sorted.
  const compare = GROUP_COMPARE[sort];
  const list = offset + limit < groups.length / 8 ? firstSorted(groups, compare, offset + limit) : [...groups].sort(compare);
  const rows = list.slice(offset, offset + limit).map((g) => groupRows(g, ({ first: _f, last: _l, ...shown }) => deepFreeze(shown)));
  return { rows, lines: rows.map((row) => groupLines(row, line)) };
}

/**
 * The requests on the page, in `sort` order: their positions, rows and lines (`line` words a row). A record's
 * row and line are the same on every page that shows it that day: made once, frozen, shared.
 */
export function requestPage(
  all: readonly RequestRecord[],
  sel: Selection,
  sort: RequestSort,
  offset: number,
  limit: number,
  line: (row: RequestRow) => string,
): { page: number[]; rows: RequestRow[]; lines: string[] } {
  const { day } = sel;
  const page = pageRows(all, sel.found.picked, sort, offset, limit);
  const shown = shownRows(day);
  const rows = page.map((index) => {
    let row = shown.out[index];
    if (!row) {
      const overdue = day.overdue[index] === 1;
      const late = day.late[index]!;
      row = shown.out[index] = deepFreeze({ ...all[index]!, overdue, daysOverdue: overdue && !Number.isNaN(late) ? late : null });
    }
    return row;
  });
  const lines = page.map((index, k) => (shown.lines[index] ??= line(rows[k]!)));
  return { page, rows, lines };
}
