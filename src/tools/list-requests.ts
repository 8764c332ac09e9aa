import { z } from 'zod';
import { requestRecord, type RequestRecord } from '../api/records.js';
import { UserInputError } from '../errors.js';
import { defineTool } from './define.js';
import { bump, countsText, dayText, fold, newCounts, oneLine, pageText, quoted, range } from './render.js';
import { addDays } from '../clock.js';
import { dueDay, isOpen } from './request-facts.js';
import { isoDate, limitField, offsetField, page, pageFields, statusCounts } from './schemas.js';

const DEFAULT_LIMIT = 25;
const SORTS = ['newest', 'oldest', 'due_soonest', 'least_complete'] as const;

const requestOut = requestRecord.extend({ overdue: z.boolean() });
type RequestOut = z.output<typeof requestOut>;

interface Row {
  record: RequestRecord;
  /** Position in the API's answer, which is newest first. */
  index: number;
  due: string | null;
  overdue: boolean;
  ratio: number;
}

function requestLine(r: RequestOut): string {
  const items = r.totalItems === null ? 'items ?' : `${r.completedItems ?? '?'}/${r.totalItems} items`;
  const due = r.dueDate ? `due ${dayText(r.dueDate)}${r.overdue ? ' OVERDUE' : ''}` : 'no due date';
  return `- ${quoted(r.title, 70)} · ${quoted(r.clientName, 40)} · ${oneLine(r.status, 20) || 'no status'} · ${items} · ${due} · created ${dayText(r.createdAt)} · id ${oneLine(r.id, 40)}`;
}

/** YYYY-MM-DD days order as plain strings (no locale collation); no due date sorts last. */
function byDue(a: Row, b: Row): number {
  const x = a.due ?? '9999';
  const y = b.due ?? '9999';
  return x < y ? -1 : x > y ? 1 : 0;
}

const COMPARE: Record<(typeof SORTS)[number], (a: Row, b: Row) => number> = {
  // The API document says the list comes newest first: its order is the creation order.
  newest: (a, b) => a.index - b.index,
  oldest: (a, b) => b.index - a.index,
  due_soonest: (a, b) => byDue(a, b) || a.index - b.index,
  least_complete: (a, b) => a.ratio - b.ratio || byDue(a, b) || a.index - b.index,
};

export const listRequests = defineTool({
  name: 'list_requests',
  title: 'List document requests',
  description:
    "Lists the firm's document requests with exact counts over everything that matches (by status, overdue, due within 7 days, checklist items) " +
    'and a page of requests, each with its id. Filter by status, client name, title, overdue, or due-date range; sort by newest, oldest, ' +
    'due_soonest or least_complete. Overdue means due before asOf and still open. Use it to answer "what is outstanding" questions ' +
    'and, before creating a request, to see what a client already has.',
  inputSchema: z.strictObject({
    status: z.array(z.string().max(50)).max(20).optional().describe('Only requests with any of these statuses (case-insensitive), e.g. ["sent","in_progress"].'),
    client: z.string().max(200).optional().describe("Part of the client's name; case- and accent-insensitive."),
    search: z.string().max(200).optional().describe('Part of the title; case- and accent-insensitive.'),
    overdue: z.boolean().optional().describe('true: only overdue requests; false: only those not overdue.'),
    dueBefore: isoDate.optional().describe('Only requests due on or before this day (YYYY-MM-DD).'),
    dueAfter: isoDate.optional().describe('Only requests due on or after this day (YYYY-MM-DD).'),
    sort: z.enum(SORTS).optional().describe('Order: newest (default), oldest, due_soonest, least_complete.'),
    limit: limitField(DEFAULT_LIMIT),
    offset: offsetField,
  }),
  outputSchema: z.object({
    asOf: z.string().describe('The day overdue is judged on (YYYY-MM-DD).'),
    ...pageFields,
    byStatus: statusCounts.describe('Matched requests per status.'),
    overdue: z.number().int().describe('Matched requests that are overdue.'),
    dueWithin7Days: z.number().int().describe('Matched open requests due from asOf to 7 days after.'),
    checklist: z.object({ totalItems: z.number(), completedItems: z.number() }).describe('Checklist items over the matched requests.'),
    requests: z.array(requestOut),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(input, ctx) {
    const limit = input.limit ?? DEFAULT_LIMIT;
    const offset = input.offset ?? 0;
    const sort = input.sort ?? 'newest';
    if (input.dueAfter && input.dueBefore && input.dueAfter > input.dueBefore) {
      throw new UserInputError(`dueAfter (${input.dueAfter}) is later than dueBefore (${input.dueBefore}), so nothing can match. Swap them.`);
    }
    await ctx.progress(0, 2, 'Fetching requests');
    const all = await ctx.api.listRequests({ signal: ctx.signal, deadline: ctx.deadline });
    await ctx.progress(1, 2, `Filtering ${all.length} requests`);

    const asOf = ctx.today;
    const weekEnd = addDays(asOf, 7);
    const statuses = input.status?.length ? new Set(input.status.map((s) => s.trim().toLowerCase())) : undefined;
    const clientNeedle = input.client ? fold(input.client.trim()) : '';
    const titleNeedle = input.search ? fold(input.search.trim()) : '';
    const byStatus = newCounts();
    const rows: Row[] = [];
    let overdueCount = 0;
    let dueSoon = 0;
    let totalItems = 0;
    let completedItems = 0;

    // One pass: filter and count together.
    all.forEach((record, index) => {
      if (statuses && !statuses.has((record.status ?? '').toLowerCase())) return;
      if (clientNeedle && !fold(record.clientName).includes(clientNeedle)) return;
      if (titleNeedle && !fold(record.title).includes(titleNeedle)) return;
      const due = dueDay(record);
      if ((input.dueBefore || input.dueAfter) && due === null) return;
      if (input.dueBefore && due! > input.dueBefore) return;
      if (input.dueAfter && due! < input.dueAfter) return;
      const open = isOpen(record);
      const overdue = open && due !== null && due < asOf;
      if (input.overdue !== undefined && overdue !== input.overdue) return;

      bump(byStatus, record.status ?? '(none)');
      if (overdue) overdueCount++;
      if (open && due !== null && due >= asOf && due <= weekEnd) dueSoon++;
      totalItems += record.totalItems ?? 0;
      completedItems += record.completedItems ?? 0;
      rows.push({ record, index, due, overdue, ratio: record.totalItems ? (record.completedItems ?? 0) / record.totalItems : 1 });
    });
    if (sort !== 'newest') rows.sort(COMPARE[sort]);
    const { slice, nextOffset } = page(rows, offset, limit);
    const requests: RequestOut[] = slice.map(({ record, overdue }) => ({ ...record, overdue }));

    const filters = [
      statuses ? `status ${[...statuses].map((s) => oneLine(s, 30)).join('|')}` : '',
      input.client ? `client ${quoted(input.client, 60)}` : '',
      input.search ? `title ${quoted(input.search, 60)}` : '',
      input.overdue !== undefined ? (input.overdue ? 'overdue' : 'not overdue') : '',
      input.dueAfter ? `due ≥ ${input.dueAfter}` : '',
      input.dueBefore ? `due ≤ ${input.dueBefore}` : '',
    ].filter(Boolean);
    const header =
      `As of ${asOf}: ${all.length} requests` +
      (filters.length ? `, ${rows.length} match ${filters.join(', ')}` : '') +
      `. Of ${filters.length ? 'these' : 'them'}: ${overdueCount} overdue, ${dueSoon} due within 7 days; ` +
      `checklist items ${completedItems}/${totalItems} complete. By status: ${countsText(byStatus) || 'none'}. ` +
      `Showing ${range(offset, slice.length)} of ${rows.length}, ${sort.replace('_', ' ')} first.`;
    const hint = filters.length ? 'No request matched. Try fewer filters, a shorter client or title search, or a wider date range.' : 'The firm has no requests.';
    return {
      text: pageText(header, requests.map(requestLine), offset, rows.length, hint),
      structured: {
        asOf,
        total: all.length,
        matched: rows.length,
        offset,
        returned: requests.length,
        nextOffset,
        byStatus: { ...byStatus },
        overdue: overdueCount,
        dueWithin7Days: dueSoon,
        checklist: { totalItems, completedItems },
        requests,
      },
    };
  },
});
