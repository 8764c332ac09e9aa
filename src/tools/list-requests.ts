import { z } from 'zod';
import { unreadableNotes } from '../api/list-stream.js';
import { requestRecord, type Client, type RequestRecord } from '../api/records.js';
import { UserInputError } from '../errors.js';
import { defineTool, type ToolResult } from './define.js';
import { answerCache } from '../cache.js';
import { dayText, oneLine, quoted } from '../text/render.js';
import { DEFAULT_PROFILE, type ServiceProfile } from '../domain/service-profile.js';
import { requestFitNotes } from './fit-notes.js';
import { clientKeys } from '../requests/facts.js';
import { matchedPerName, namesMatched, sharedOnPage } from '../requests/names.js';
import { groupPage, requestPage } from '../requests/page.js';
import type { NameCount } from '../requests/pass.js';
import { needsClients, select, type RequestQuestion, type Selection } from '../requests/query.js';
import { daysBetween } from '../domain/dates.js';
import { CANNOT_DO, count, num, pageText, revalidatedLine, sharedNameNotes, statusText, summarizeList } from './list-text.js';
import { statusCounts } from './schemas.js';
import { compactPage, day, pageInput } from './list-text.js';
import { byText, GROUP_ONLY, GROUP_SORT_TEXT, groupOut, SORT_TEXT, SORTS, type GroupOut, type RequestSort, type Sort } from '../requests/orders.js';

const DEFAULT_LIMIT = 25;

const requestOut = requestRecord.extend({ overdue: z.boolean(), daysOverdue: z.number().int().nullable() });
type RequestOut = z.output<typeof requestOut>;

function requestLine(r: RequestOut): string {
  const items = r.totalItems === null ? 'items ?' : `${r.completedItems ?? '?'}/${count(r.totalItems, 'item')}`;
  const due = r.dueDate ? `due ${dayText(r.dueDate)}${r.overdue ? ` OVERDUE ${count(r.daysOverdue ?? 0, 'day')}` : ''}` : 'no due date';
  return `- ${quoted(r.title, 70)} · ${quoted(r.clientName, 40)} · ${oneLine(r.status, 20) || 'no status'} · ${items} · ${due} · created ${dayText(r.createdAt)} · id ${oneLine(r.id, 40)}`;
}

function groupLine(g: GroupOut): string {
  const overdue = g.overdue ? `${g.overdue} overdue (oldest due ${g.oldestOverdue})` : '0 overdue';
  return `- ${quoted(g.clientName, 48)} · ${count(g.requests, 'request')}: ${g.open} open, ${overdue} · ${g.completedItems}/${count(g.totalItems, 'item')} complete, ${num(g.outstandingItems)} outstanding on open ones · ${g.nextDue ? `next due ${g.nextDue}` : 'nothing open with a due date'}`;
}

const MAX_NAMES = 6;
const MAX_NAME_IDS = 3;

/** The note for part of a name that several client names contain: each name, its clients' ids, its matched requests. */
function partialNameNote(given: string, perName: Map<string, NameCount>, clients: readonly Client[], keys: readonly string[]): string {
  const names = [...perName.entries()].sort((a, b) => b[1].n - a[1].n || byText(a[0], b[0]));
  const shown = new Map(names.slice(0, MAX_NAMES));
  const ids = new Map<string, Client[]>();
  for (const [i, c] of clients.entries()) {
    const key = keys[i]!;
    if (!shown.has(key)) continue;
    const list = ids.get(key);
    if (list) list.push(c);
    else ids.set(key, [c]);
  }
  const parts = [...shown].map(([key, { name, n }]) => {
    const who = ids.get(key) ?? [];
    const idText =
      who.length === 0
        ? 'no client has this name now'
        : `${who.length > 1 ? `${who.length} clients, ids` : 'id'} ${who
            .slice(0, MAX_NAME_IDS)
            .map((c) => oneLine(c.id, 40))
            .join(', ')}${who.length > MAX_NAME_IDS ? ', …' : ''}`;
    return `${quoted(name, 48)} (${idText}; ${count(n, 'request')})`;
  });
  const more = names.length > MAX_NAMES ? `, and ${count(names.length - MAX_NAMES, 'other name')}` : '';
  return (
    `${quoted(given, 60)} is part of ${num(names.length)} different client names, so these counts cover all of them: ${parts.join(', ')}${more}. ` +
    'They are different clients; pass a whole name for one of them.'
  );
}

/** The filters as the answer names them. */
function filterWords(q: RequestQuestion, sel: Selection): string[] {
  return [
    q.state ? q.state : '',
    sel.statuses ? `status ${[...sel.statuses].map((s) => oneLine(s, 30)).join('|')}` : '',
    sel.needle ? (sel.exact ? `client is exactly ${quoted(q.client, 60)}` : `client name contains ${quoted(q.client, 60)}`) : '',
    q.search ? `title contains ${quoted(q.search, 60)}` : '',
    q.overdue !== undefined ? (q.overdue ? 'overdue' : 'not overdue') : '',
    q.hasDueDate !== undefined ? (q.hasDueDate ? 'with a due date' : 'no due date') : '',
    q.dueAfter ? `due ≥ ${q.dueAfter}` : '',
    q.dueBefore ? `due ≤ ${q.dueBefore}` : '',
    q.createdAfter ? `created ≥ ${q.createdAfter}` : '',
    q.createdBefore ? `created ≤ ${q.createdBefore}` : '',
  ].filter(Boolean);
}

/** Notes: the list's fit, records not read in full, names shared by several clients among what matched, other names a whole name is part of, and part of a name met in several names (first). */
function matchNotes(
  all: readonly RequestRecord[],
  clients: readonly Client[],
  sel: Selection,
  q: RequestQuestion,
  profile: ServiceProfile,
  paging: string | undefined,
): string[] {
  const notes: string[] = [...requestFitNotes(all, sel.found.byStatus, profile, paging), ...unreadableNotes(all, 'request')];
  if (sel.shared.size) {
    const perName = matchedPerName(sel);
    const keys = [...sel.shared.keys()].filter((k) => perName.has(k));
    notes.push(...sharedNameNotes(sel.shared, keys, (k) => `the ${count(perName.get(k)!, 'matched request')}`));
  }
  const { containing } = sel.found;
  if (containing.size) {
    const names = [...containing.values()].sort((a, b) => b.n - a.n);
    const shown = names.slice(0, 5).map((x) => `${quoted(x.name, 48)} (${count(x.n, 'request')})`);
    notes.push(
      `Matched the whole name only; ${names.length === 1 ? 'another name contains' : `${names.length} other names contain`} it: ${shown.join(', ')}${names.length > 5 ? ', …' : ''}. Pass that whole name to see those.`,
    );
  }
  if (sel.needle && !sel.exact) {
    const perName = namesMatched(all, sel);
    if (perName.size > 1) notes.unshift(partialNameNote(q.client!, perName, clients, clientKeys(clients)));
  }
  return notes;
}

/** The counts' sentences, and what to say when nothing matched. */
function factWords(
  all: readonly RequestRecord[],
  sel: Selection,
  asOf: string,
  filters: string[],
): { facts: string[]; hint: string; averageDaysOverdue: number | null } {
  const {
    byStatus,
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
  } = sel.found;
  const averageDaysOverdue = lateCounted ? Math.round((lateDays / lateCounted) * 10) / 10 : null;
  const lateText =
    oldestOverdue === null
      ? ''
      : ` (on average ${averageDaysOverdue ?? '?'} days late; oldest due ${oldestOverdue}, ${count(daysBetween(oldestOverdue, asOf) ?? 0, 'day')} late)`;
  const facts = [
    `Of ${filters.length ? 'these' : 'them'}: ${num(openCount)} open, ${num(sel.matched - openCount)} closed, ${num(overdueCount)} overdue${lateText}, ` +
      `${count(dueSoon, 'open request')} due within 7 days; ${num(noDueDate)} with no due date (${num(openNoDueDate)} open); ` +
      `checklist items ${num(completedItems)}/${num(totalItems)} complete, ${num(outstandingItems)} outstanding on open requests.`,
    `By status: ${statusText(byStatus)}.`,
  ];
  let hint = filters.length ? 'No request matched. Try fewer filters, a shorter client or title search, or a wider date range.' : 'The firm has no requests.';
  if (sel.matched === 0 && sel.statuses && all.length > 0) {
    const occurring = sel.statusIndex.occurring;
    if (![...sel.statuses].some((s) => Object.keys(occurring).some((o) => o.toLowerCase() === s))) {
      hint = `No request has status ${[...sel.statuses].map((s) => quoted(s, 30)).join(' or ')}. Statuses that occur: ${statusText(occurring, 20)}.`;
    }
  }
  return { facts, hint, averageDaysOverdue };
}

/** A question that cannot match anything, or an order of groups asked without groups: refused before any call. */
function refuseImpossible(q: RequestQuestion, sort: Sort): void {
  if (q.dueAfter && q.dueBefore && q.dueAfter > q.dueBefore) {
    throw new UserInputError(`dueAfter (${q.dueAfter}) is later than dueBefore (${q.dueBefore}), so nothing can match. Swap them.`);
  }
  if (q.createdAfter && q.createdBefore && q.createdAfter > q.createdBefore) {
    throw new UserInputError(`createdAfter (${q.createdAfter}) is later than createdBefore (${q.createdBefore}), so nothing can match. Swap them.`);
  }
  if (q.groupBy !== 'client' && GROUP_ONLY.includes(sort)) {
    throw new UserInputError(`sort ${sort} orders client groups: add groupBy: "client", or sort requests by newest, oldest, due_soonest or least_complete.`);
  }
}

/** The counts as structuredContent gives them (after asOf and total, before notes). */
function countsOut(sel: Selection, averageDaysOverdue: number | null) {
  const { found, matched } = sel;
  const { openCount, totalItems, completedItems, outstandingItems } = found;
  return {
    matched,
    byStatus: { ...found.byStatus },
    open: openCount,
    closed: matched - openCount,
    overdue: found.overdueCount,
    dueWithin7Days: found.dueSoon,
    averageDaysOverdue,
    oldestOverdue: found.oldestOverdue,
    noDueDate: found.noDueDate,
    openNoDueDate: found.openNoDueDate,
    checklist: { totalItems, completedItems, outstandingItems },
  };
}

const outputSchema = z.object({
  asOf: z.string(),
  ...compactPage,
  byStatus: statusCounts,
  open: z.number().int(),
  closed: z.number().int(),
  overdue: z.number().int(),
  dueWithin7Days: z.number().int(),
  averageDaysOverdue: z.number().nullable(),
  oldestOverdue: z.string().nullable(),
  noDueDate: z.number().int(),
  openNoDueDate: z.number().int(),
  checklist: z.object({ totalItems: z.number(), completedItems: z.number(), outstandingItems: z.number() }),
  requests: z.array(requestOut),
  groups: z.array(groupOut).optional().describe('With groupBy; paging counts groups.'),
  groupCount: z.number().int().optional(),
  notes: z.array(z.string()),
});
type ListRequestsResult = ToolResult<z.output<typeof outputSchema>>;

/** Stands for "no clients list" in the answer cache (a call that matches no names does not fetch it). */
const NO_CLIENTS: readonly Client[] = Object.freeze([]);
/** Answers already worked out, per list and the clients list names were matched against (src/cache.ts). */
const answersFor = answerCache<readonly RequestRecord[], readonly Client[], ListRequestsResult>();

export const listRequests = defineTool({
  name: 'list_requests',
  title: 'List document requests',
  description:
    "The firm's requests: exact counts over all matches (open, closed, overdue and days late, no due date, due in 7 days, by status, items outstanding) and a page with ids. " +
    'groupBy client: a row per client name (sort most_open, limit 3: top 3). Open: not in a status the service closes, items not all complete (notes name any status not known); overdue: open, due before asOf. ' +
    CANNOT_DO,
  inputSchema: z.strictObject({
    state: z.enum(['open', 'closed']).optional().describe('open or closed.'),
    status: z.array(z.string().max(50)).max(20).optional().describe('Any of these statuses.'),
    client: z.string().max(200).optional().describe('Whole client name if one matches exactly, else part of one.'),
    search: z.string().max(200).optional().describe('Part of the title.'),
    overdue: z.boolean().optional().describe('Only overdue, or only not.'),
    hasDueDate: z.boolean().optional().describe('With a due date, or without.'),
    dueBefore: day.optional().describe('Due on/before, YYYY-MM-DD.'),
    dueAfter: day.optional().describe('Due on/after.'),
    createdBefore: day.optional().describe('Created on/before.'),
    createdAfter: day.optional().describe('Created on/after.'),
    groupBy: z.enum(['client']).optional().describe('Rows per client name, not requests.'),
    sort: z.enum(SORTS).optional().describe('Default newest. most_*: groupBy only.'),
    ...pageInput(DEFAULT_LIMIT),
  }),
  outputSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(input, ctx) {
    const limit = input.limit ?? DEFAULT_LIMIT;
    const offset = input.offset ?? 0;
    const sort = input.sort ?? 'newest';
    refuseImpossible(input, sort);
    const needClients = needsClients(input);
    await ctx.progress(0, 2, needClients ? 'Fetching requests and clients' : 'Fetching requests');
    const call = { signal: ctx.signal, deadline: ctx.deadline };
    const [{ records: all, revalidated, paging }, clients] = await Promise.all([
      ctx.api.fetchRequests(call),
      // Without a client question, the client list serves only to flag names several clients share on the page:
      // a recent copy will do, and a list that cannot be read leaves that note out rather than failing the answer.
      needClients ? ctx.api.listClients(call) : ctx.api.listClients({ ...call, reuse: true }).catch(() => NO_CLIENTS as Client[]),
    ]);
    await ctx.progress(1, 2, `Filtering ${all.length} requests`);
    // The same question about the very same list, on the same day, has the same answer (worked out once).
    const memo = answersFor(all, clients);
    const memoKey = JSON.stringify([ctx.today, revalidated, Object.entries(input).sort(([a], [b]) => (a < b ? -1 : 1))]);
    const known = memo.get(memoKey);
    if (known) return known;

    const asOf = ctx.today;
    const profile = ctx.config.serviceProfile ?? DEFAULT_PROFILE;
    const sel = select(all, clients, asOf, profile, input);
    const { found, matched } = sel;
    const filters = filterWords(input, sel);
    const notes = matchNotes(all, clients, sel, input, profile, paging);
    const { facts, hint, averageDaysOverdue } = factWords(all, sel, asOf, filters);
    const base = { asOf, total: all.length, ...countsOut(sel, averageDaysOverdue), notes };
    const summary = { prefix: `As of ${asOf}: `, total: all.length, noun: 'request', matched, filters, facts, offset };
    const text = (header: string, lines: string[], rows: number) =>
      pageText([header, ...notes.map((n) => `Note: ${n}`), ...revalidatedLine(revalidated)].join('\n'), lines, offset, rows, hint);

    if (sel.grouped) {
      const { groups } = found;
      const { rows, lines } = groupPage(groups, sort, offset, limit, groupLine);
      const nextOffset = offset + rows.length < groups.length ? offset + rows.length : null;
      const header = summarizeList({ ...summary, returned: rows.length, rows: { noun: 'client name', count: groups.length }, order: GROUP_SORT_TEXT[sort] });
      return memo.keep(memoKey, {
        text: text(header, lines, groups.length),
        structured: { ...base, offset, returned: rows.length, nextOffset, requests: [], groups: rows, groupCount: groups.length },
      });
    }

    const { page, rows: requests, lines } = requestPage(all, sel, sort as RequestSort, offset, limit, requestLine);
    const nextOffset = offset + page.length < found.picked.length ? offset + page.length : null;
    // A plain list names no client question, yet its rows may carry a name several clients share: say so for this page.
    const onPage = !sel.needle && clients.length ? sharedOnPage(all, clients, page) : undefined;
    if (onPage) notes.push(...sharedNameNotes(onPage.shared, onPage.onPage.keys(), (k) => `the ${count(onPage.onPage.get(k)!, 'request')} shown on this page`));
    const header = summarizeList({ ...summary, returned: requests.length, order: SORT_TEXT[sort] });
    return memo.keep(memoKey, {
      text: text(header, lines, found.picked.length),
      structured: { ...base, offset, returned: requests.length, nextOffset, requests },
    });
  },
});
