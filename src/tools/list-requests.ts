import { z } from 'zod';
import { unreadableNotes } from '../api/list-stream.js';
import { requestRecord, type Client, type RequestRecord } from '../api/records.js';
import { UserInputError } from '../errors.js';
import { defineTool, type ToolResult } from './define.js';
import { answerTable, deepFreeze, remember } from '../freeze.js';
import { dayText, fold, oneLine, quoted } from '../text/render.js';
import { DEFAULT_PROFILE } from '../domain/service-profile.js';
import { requestFitNotes } from './fit-notes.js';
import { candidates, clientKeys, createdDays, dayFacts, daysBetween, itemCounts, listFacts, rememberPass, nameTable, sharedClientNames, statusTable, titleTable } from './request-facts.js';
import { CANNOT_DO, count, num, nameKey, nameKeys, newCounts, pageText, revalidatedLine, sharedNameNotes, statusText, summarizeList } from './list-text.js';
import { statusCounts } from './schemas.js';
import { compactPage, day, pageInput } from './list-text.js';
import { add, byText, firstSorted, GROUP_COMPARE, GROUP_ONLY, GROUP_SORT_TEXT, groupOut, pageRows, SORT_TEXT, SORTS, type Group, type GroupOut, type RequestSort } from './list-orders.js';

const DEFAULT_LIMIT = 25;

const requestOut = requestRecord.extend({ overdue: z.boolean(), daysOverdue: z.number().int().nullable() });
type RequestOut = z.output<typeof requestOut>;

interface Row {
  record: RequestRecord;
  overdue: boolean;
  daysOverdue: number | null;
}

function requestLine(r: RequestOut): string {
  const items = r.totalItems === null ? 'items ?' : `${r.completedItems ?? '?'}/${count(r.totalItems, 'item')}`;
  const due = r.dueDate ? `due ${dayText(r.dueDate)}${r.overdue ? ` OVERDUE ${count(r.daysOverdue ?? 0, 'day')}` : ''}` : 'no due date';
  return `- ${quoted(r.title, 70)} · ${quoted(r.clientName, 40)} · ${oneLine(r.status, 20) || 'no status'} · ${items} · ${due} · created ${dayText(r.createdAt)} · id ${oneLine(r.id, 40)}`;
}

function groupLine(g: GroupOut): string {
  const overdue = g.overdue ? `${g.overdue} overdue (oldest due ${g.oldestOverdue})` : '0 overdue';
  return `- ${quoted(g.clientName, 48)} · ${count(g.requests, 'request')}: ${g.open} open, ${overdue} · ${g.completedItems}/${count(g.totalItems, 'item')} complete, ${num(g.outstandingItems)} outstanding on open ones · ${g.nextDue ? `next due ${g.nextDue}` : 'nothing open with a due date'}`;
}

const CANNOT = CANNOT_DO;

const MAX_NAMES = 6;
const MAX_NAME_IDS = 3;

/** The note for part of a name that several client names contain: each name, its clients' ids, its matched requests. */
function partialNameNote(given: string, perName: Map<string, { name: string | null; n: number }>, clients: readonly Client[], keys: readonly string[]): string {
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
    const idText = who.length === 0 ? 'no client has this name now' : `${who.length > 1 ? `${who.length} clients, ids` : 'id'} ${who.slice(0, MAX_NAME_IDS).map((c) => oneLine(c.id, 40)).join(', ')}${who.length > MAX_NAME_IDS ? ', …' : ''}`;
    return `${quoted(name, 48)} (${idText}; ${count(n, 'request')})`;
  });
  const more = names.length > MAX_NAMES ? `, and ${count(names.length - MAX_NAMES, 'other name')}` : '';
  return (
    `${quoted(given, 60)} is part of ${num(names.length)} different client names, so these counts cover all of them: ${parts.join(', ')}${more}. ` +
    'They are different clients; pass a whole name for one of them.'
  );
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

/** Each kept group's row (frozen, shared by every answer showing it) and each row's text line. */
const groupRows = new WeakMap<Group, GroupOut>();
const groupLines = new WeakMap<GroupOut, string>();
function remembered<K extends object, V>(table: WeakMap<K, V>, key: K, make: (key: K) => V): V {
  let found = table.get(key);
  if (found === undefined) table.set(key, (found = make(key)));
  return found;
}

/** Stands for "no clients list" in the answer cache (a call that matches no names does not fetch it). */
const NO_CLIENTS: readonly Client[] = Object.freeze([]);
/** Answers already worked out, per list and the clients list names were matched against (src/freeze.ts). */
const answersFor = answerTable<readonly RequestRecord[], readonly Client[], ListRequestsResult>();

export const listRequests = defineTool({
  name: 'list_requests',
  title: 'List document requests',
  description:
    "The firm's requests: exact counts over all matches (open, closed, overdue and days late, no due date, due in 7 days, by status, items outstanding) and a page with ids. " +
    'groupBy client: a row per client name (sort most_open, limit 3: top 3). Open: not in a status the service closes, items not all complete (notes name any status not known); overdue: open, due before asOf. ' +
    CANNOT,
  inputSchema: z.strictObject({
    state: z.enum(['open', 'closed']).optional().describe('open or closed.'),
    status: z.array(z.string().max(50)).max(20).optional().describe('Any of these statuses.'),
    client: z
      .string()
      .max(200)
      .optional()
      .describe('Whole client name if one matches exactly, else part of one.'),
    search: z.string().max(200).optional().describe('Part of the title.'),
    overdue: z.boolean().optional().describe('Only overdue, or only not.'),
    hasDueDate: z.boolean().optional().describe('With a due date, or without.'),
    dueBefore: day.optional().describe('Due on/before, YYYY-MM-DD.'),
    dueAfter: day.optional().describe('Due on/after.'),
    createdBefore: day.optional().describe('Created on/before.'),
    createdAfter: day.optional().describe('Created on/after.'),
    groupBy: z.enum(['client']).optional().describe('Rows per client name, not requests.'),
    sort: z
      .enum(SORTS)
      .optional()
      .describe('Default newest. most_*: groupBy only.'),
    ...pageInput(DEFAULT_LIMIT),
  }),
  outputSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(input, ctx) {
    const limit = input.limit ?? DEFAULT_LIMIT;
    const offset = input.offset ?? 0;
    const sort = input.sort ?? 'newest';
    const grouped = input.groupBy === 'client';
    if (input.dueAfter && input.dueBefore && input.dueAfter > input.dueBefore) {
      throw new UserInputError(`dueAfter (${input.dueAfter}) is later than dueBefore (${input.dueBefore}), so nothing can match. Swap them.`);
    }
    if (input.createdAfter && input.createdBefore && input.createdAfter > input.createdBefore) {
      throw new UserInputError(`createdAfter (${input.createdAfter}) is later than createdBefore (${input.createdBefore}), so nothing can match. Swap them.`);
    }
    if (!grouped && GROUP_ONLY.includes(sort)) {
      throw new UserInputError(`sort ${sort} orders client groups: add groupBy: "client", or sort requests by newest, oldest, due_soonest or least_complete.`);
    }
    const clientNeedle = input.client ? nameKey(input.client) : '';
    // Clients are needed to tell an exact name from a part of one and to find names several clients share.
    const needClients = grouped || clientNeedle !== '';
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
    // The list read by the firm's service profile (which statuses are open, how ambiguous dates read), before any helper reads it.
    const profile = ctx.config.serviceProfile ?? DEFAULT_PROFILE;
    listFacts(all, profile);
    const statuses = input.status?.length ? new Set(input.status.map((s) => s.trim().toLowerCase())) : undefined;
    const titleNeedle = input.search ? fold(input.search.trim()) : '';
    const keyOf = nameKeys();
    // Worked out once per list (a revalidated list is the same array): client name keys, shared names.
    const shared = needClients ? sharedClientNames(clients) : new Map<string, Client[]>();
    const names = needClients ? nameTable(all) : undefined;

    // The whole name when some client or some request has exactly that name; otherwise any name containing it.
    let exact = false;
    let clientsNamed = 0;
    if (clientNeedle) {
      for (const key of clientKeys(clients)) if (key === clientNeedle) clientsNamed++;
      exact = clientsNamed > 0 || names!.keys.includes(clientNeedle);
    }
    // Per distinct name, what the client filter does with its records: 0 skip, 1 keep, 2 skip but count as another name containing an exact needle.
    const verdict = clientNeedle ? Uint8Array.from(names!.keys, (key) => (exact ? (key === clientNeedle ? 1 : key.includes(clientNeedle) ? 2 : 0) : key.includes(clientNeedle) ? 1 : 0)) : undefined;

    // What the list's index (request-facts.ts, built once per list and day) answers for every question:
    // each distinct status and title is judged once here, not once per record.
    const facts0 = listFacts(all, profile);
    const due = facts0.due;
    // Due dates there but not read: neither dated nor "no due date" (undefined when every one was read).
    const unreadDue = facts0.unreadDue?.flags;
    const openOf = facts0.open;
    const day = dayFacts(all, asOf);
    const statusIndex = statusTable(all);
    const statusIds = statusIndex.ids;
    const statusOk = statuses ? Uint8Array.from(statusIndex.lower, (s) => (statuses.has(s) ? 1 : 0)) : undefined;
    const titles = titleNeedle ? titleTable(all) : undefined;
    const titleOk = titles ? Uint8Array.from(titles.folded, (t) => (t.includes(titleNeedle) ? 1 : 0)) : undefined;
    const created = input.createdBefore || input.createdAfter ? createdDays(all) : undefined;
    const { totals, dones } = itemCounts(all);
    // The question's fields as locals: read from the input object inside the loop, every question's
    // own shape would make each read a slow lookup.
    const wantOpen = input.state === undefined ? -1 : input.state === 'open' ? 1 : 0;
    const wantOverdue = input.overdue === undefined ? -1 : input.overdue ? 1 : 0;
    const wantDue = input.hasDueDate === undefined ? -1 : input.hasDueDate ? 1 : 0;
    const dueBefore = input.dueBefore ?? '';
    const dueAfter = input.dueAfter ?? '';
    const createdBefore = input.createdBefore ?? '';
    const createdAfter = input.createdAfter ?? '';
    const overdueOf = day.overdue;
    const soonOf = day.soon;
    const lateOf = day.late;
    // The pass depends only on the filters (and, for a client name, on whether it is a whole name): its
    // result is kept per list and day, so another page, order or limit of the same matches skips it.
    const passKey = JSON.stringify([grouped, exact, input.state, input.status, input.client, input.search, input.overdue, input.hasDueDate, input.dueBefore, input.dueAfter, input.createdBefore, input.createdAfter]);
    const selection = rememberPass(all, asOf, passKey, () => {
      const byStatus = newCounts();
      const containing = new Map<string, { name: string | null; n: number }>(); // other names containing an exact needle
      const statusTally = new Int32Array(statusIndex.key.length);
      const statusOrder: number[] = []; // statuses in order of first appearance among the matches, as byStatus lists them
      // Matched records by position; Row objects are made only for the page.
      const picked: number[] = [];
      // Groups by raw client name, in order of first appearance; found by the name's index in the list's name table.
      const groups: Group[] = [];
      const groupOf: (Group | undefined)[] = grouped ? new Array<Group | undefined>(names!.names.length) : [];
      let openCount = 0;
      let overdueCount = 0;
      let dueSoon = 0;
      let totalItems = 0;
      let completedItems = 0;
      let outstandingItems = 0;
      let noDueDate = 0;
      let openNoDueDate = 0;
      let lateDays = 0;
      let lateCounted = 0;
      let oldestOverdue: string | null = null;

      // One pass: filter and count together, over the positions the narrowest filter allows (in list
      // order; request-facts.ts candidates). A name counted as another name containing the needle (2) is
      // seen before the title, due and state checks, so with such names only the name and status
      // filters narrow.
      const counting = verdict !== undefined && verdict.includes(2);
      const tables = [
        ...(verdict ? [{ ids: names!.ids, keep: verdict }] : []),
        ...(statusOk ? [{ ids: statusIds, keep: statusOk }] : []),
        ...(titleOk && !counting ? [{ ids: titles!.ids, keep: titleOk }] : []),
      ];
      const among = candidates(all, { tables, ...((dueBefore || dueAfter) && !counting ? { due: { after: dueAfter, before: dueBefore } } : {}), ...(wantOverdue === 1 && !counting ? { overdue: day } : {}) });
      const seen = among ? among.length : all.length;
      for (let at = 0; at < seen; at++) {
        const index = among ? among[at]! : at;
        const statusId = statusIds[index]!;
        if (statusOk && statusOk[statusId] === 0) continue;
        if (verdict) {
          const id = names!.ids[index]!;
          const v = verdict[id]!;
          if (v !== 1) {
            if (v === 2) {
              const key = names!.keys[id]!;
              const seen = containing.get(key);
              if (seen) seen.n++;
              else containing.set(key, { name: all[index]!.clientName, n: 1 });
            }
            continue;
          }
        }
        if (titleOk && titleOk[titles!.ids[index]!] === 0) continue;
        const dueDay = due[index]!;
        if (wantDue !== -1 && (dueDay !== null || (unreadDue !== undefined && unreadDue[index] === 1)) !== (wantDue === 1)) continue;
        if (dueBefore || dueAfter) {
          if (dueDay === null) continue;
          if (dueBefore && dueDay > dueBefore) continue;
          if (dueAfter && dueDay < dueAfter) continue;
        }
        if (created) {
          const createdDay = created[index]!;
          if (createdDay === null) continue;
          if (createdBefore && createdDay > createdBefore) continue;
          if (createdAfter && createdDay < createdAfter) continue;
        }
        const open = openOf[index]!;
        if (wantOpen !== -1 && open !== (wantOpen === 1)) continue;
        const overdue = overdueOf[index] === 1;
        if (wantOverdue !== -1 && overdue !== (wantOverdue === 1)) continue;

        const tally = statusTally[statusId]!;
        if (tally === 0) statusOrder.push(statusId);
        statusTally[statusId] = tally + 1;
        if (open) openCount++;
        if (overdue) {
          overdueCount++;
          const late = lateOf[index]!;
          if (!Number.isNaN(late)) {
            lateDays += late;
            lateCounted++;
          }
          if (oldestOverdue === null || dueDay < oldestOverdue) oldestOverdue = dueDay;
        }
        if (dueDay === null && (unreadDue === undefined || unreadDue[index] === 0)) {
          noDueDate++;
          if (open) openNoDueDate++;
        }
        if (soonOf[index] === 1) dueSoon++;
        const total = totals[index]!;
        const done = dones[index]!;
        // Outstanding: items not complete on open requests (a closed request awaits nothing).
        const outstanding = open && total > done ? total - done : 0;
        totalItems = add(totalItems, total);
        completedItems = add(completedItems, done);
        outstandingItems = add(outstandingItems, outstanding);
        if (grouped) {
          const id = names!.ids[index]!;
          let g = groupOf[id];
          if (!g) {
            g = { clientName: all[index]!.clientName, requests: 0, open: 0, overdue: 0, totalItems: 0, completedItems: 0, outstandingItems: 0, nextDue: null, oldestOverdue: null, first: index, last: index };
            groupOf[id] = g;
            groups.push(g);
          }
          g.requests++;
          g.last = index;
          g.totalItems = add(g.totalItems, total);
          g.completedItems = add(g.completedItems, done);
          g.outstandingItems = add(g.outstandingItems, outstanding);
          if (open) {
            g.open++;
            if (dueDay !== null && (g.nextDue === null || dueDay < g.nextDue)) g.nextDue = dueDay;
          }
          if (overdue) {
            g.overdue++;
            if (g.oldestOverdue === null || dueDay < g.oldestOverdue) g.oldestOverdue = dueDay;
          }
        } else {
          picked.push(index);
        }
      }
      // byStatus counts under `status ?? '(none)'`: a missing status and the text "(none)" share a key, first met first.
      for (const id of statusOrder) {
        const key = statusIndex.key[id]!;
        byStatus[key] = (byStatus[key] ?? 0) + statusTally[id]!;
      }
      return { byStatus, containing, picked, groups, openCount, overdueCount, dueSoon, totalItems, completedItems, outstandingItems, noDueDate, openNoDueDate, lateDays, lateCounted, oldestOverdue };
    }, (found) => found.picked.length + found.groups.length * 8);
    const { byStatus, containing, picked, groups, openCount, overdueCount, dueSoon, totalItems, completedItems, outstandingItems, noDueDate, openNoDueDate, lateDays, lateCounted, oldestOverdue } = selection;
    const matched = grouped ? groups.reduce((n, g) => n + g.requests, 0) : picked.length;
    const rowAt = (index: number): Row => {
      const record = all[index]!;
      const overdue = day.overdue[index] === 1;
      const late = day.late[index]!;
      return { record, overdue, daysOverdue: overdue && !Number.isNaN(late) ? late : null };
    };

    const filters = [
      input.state ? input.state : '',
      statuses ? `status ${[...statuses].map((s) => oneLine(s, 30)).join('|')}` : '',
      clientNeedle ? (exact ? `client is exactly ${quoted(input.client, 60)}` : `client name contains ${quoted(input.client, 60)}`) : '',
      input.search ? `title contains ${quoted(input.search, 60)}` : '',
      input.overdue !== undefined ? (input.overdue ? 'overdue' : 'not overdue') : '',
      input.hasDueDate !== undefined ? (input.hasDueDate ? 'with a due date' : 'no due date') : '',
      input.dueAfter ? `due ≥ ${input.dueAfter}` : '',
      input.dueBefore ? `due ≤ ${input.dueBefore}` : '',
      input.createdAfter ? `created ≥ ${input.createdAfter}` : '',
      input.createdBefore ? `created ≤ ${input.createdBefore}` : '',
    ].filter(Boolean);

    // Notes: records not read in full, names shared by several clients among what matched, and other names an exact client name is part of.
    const notes: string[] = [...requestFitNotes(all, byStatus, profile, paging), ...unreadableNotes(all, 'request')];
    if (shared.size) {
      const perName = new Map<string, number>();
      if (grouped) {
        // A group's name key is its first record's, from the list's name table (folded once per list).
        for (const g of groups) {
          const key = names!.keys[names!.ids[g.first]!]!;
          perName.set(key, (perName.get(key) ?? 0) + g.requests);
        }
      } else if (clientNeedle) {
        for (const i of picked) {
          const key = names!.keys[names!.ids[i]!]!;
          perName.set(key, (perName.get(key) ?? 0) + 1);
        }
      }
      const keys = [...shared.keys()].filter((k) => perName.has(k));
      notes.push(...sharedNameNotes(shared, keys, (k) => `the ${count(perName.get(k)!, 'matched request')}`));
    }
    if (containing.size) {
      const names = [...containing.values()].sort((a, b) => b.n - a.n);
      const shown = names.slice(0, 5).map((x) => `${quoted(x.name, 48)} (${count(x.n, 'request')})`);
      notes.push(
        `Matched the whole name only; ${names.length === 1 ? 'another name contains' : `${names.length} other names contain`} it: ${shown.join(', ')}${names.length > 5 ? ', …' : ''}. Pass that whole name to see those.`,
      );
    }

    // Part of a name met several names: say so, and name the clients behind each (with ids).
    if (clientNeedle && !exact) {
      const perName = new Map<string, { name: string | null; n: number }>();
      const met = (name: string | null, n: number) => {
        const key = keyOf(name);
        const seen = perName.get(key);
        if (seen) seen.n += n;
        else perName.set(key, { name, n });
      };
      if (grouped) for (const g of groups) met(g.clientName, g.requests);
      else for (const i of picked) met(all[i]!.clientName, 1);
      if (perName.size > 1) notes.unshift(partialNameNote(input.client!, perName, clients, clientKeys(clients)));
    }

    const averageDaysOverdue = lateCounted ? Math.round((lateDays / lateCounted) * 10) / 10 : null;
    const lateText = oldestOverdue === null ? '' : ` (on average ${averageDaysOverdue ?? '?'} days late; oldest due ${oldestOverdue}, ${count(daysBetween(oldestOverdue, asOf) ?? 0, 'day')} late)`;
    const facts = [
      `Of ${filters.length ? 'these' : 'them'}: ${num(openCount)} open, ${num(matched - openCount)} closed, ${num(overdueCount)} overdue${lateText}, ` +
        `${count(dueSoon, 'open request')} due within 7 days; ${num(noDueDate)} with no due date (${num(openNoDueDate)} open); ` +
        `checklist items ${num(completedItems)}/${num(totalItems)} complete, ${num(outstandingItems)} outstanding on open requests.`,
      `By status: ${statusText(byStatus)}.`,
    ];
    let hint = filters.length ? 'No request matched. Try fewer filters, a shorter client or title search, or a wider date range.' : 'The firm has no requests.';
    if (matched === 0 && statuses && all.length > 0) {
      const occurring = statusIndex.occurring;
      if (![...statuses].some((s) => Object.keys(occurring).some((o) => o.toLowerCase() === s))) {
        hint = `No request has status ${[...statuses].map((s) => quoted(s, 30)).join(' or ')}. Statuses that occur: ${statusText(occurring, 20)}.`;
      }
    }
    const noteText = () => notes.map((n) => `Note: ${n}`);
    const base = {
      asOf,
      total: all.length,
      matched,
      byStatus: { ...byStatus },
      open: openCount,
      closed: matched - openCount,
      overdue: overdueCount,
      dueWithin7Days: dueSoon,
      averageDaysOverdue,
      oldestOverdue,
      noDueDate,
      openNoDueDate,
      checklist: { totalItems, completedItems, outstandingItems },
      notes,
    };
    const prefix = `As of ${asOf}: `;

    if (grouped) {
      // A page near the top of many groups (most_open, limit 3) needs only its first groups in order, not all sorted.
      const compare = GROUP_COMPARE[sort];
      const list = offset + limit < groups.length / 8 ? firstSorted(groups, compare, offset + limit) : [...groups].sort(compare);
      const slice = list.slice(offset, offset + limit);
      const nextOffset = offset + slice.length < groups.length ? offset + slice.length : null;
      // A group of a kept pass is the same on every page and order that shows it: its row and line are made once, frozen, shared.
      const out: GroupOut[] = slice.map((g) => remembered(groupRows, g, ({ first: _f, last: _l, ...shown }) => deepFreeze(shown)));
      const header = summarizeList({
        prefix, total: all.length, noun: 'request', matched, filters, facts, offset, returned: out.length,
        rows: { noun: 'client name', count: groups.length }, order: GROUP_SORT_TEXT[sort],
      });
      return remember(memo, memoKey, {
        text: pageText([header, ...noteText(), ...revalidatedLine(revalidated)].join('\n'), out.map((row) => remembered(groupLines, row, groupLine)), offset, groups.length, hint),
        structured: { ...base, offset, returned: out.length, nextOffset, requests: [], groups: out, groupCount: groups.length },
      });
    }

    const page = pageRows(all, picked, sort as RequestSort, offset, limit);
    const nextOffset = offset + page.length < picked.length ? offset + page.length : null;
    // A record's row and line are the same on every page that shows it this day: made once, frozen, shared.
    day.rows ??= { out: [], lines: [] };
    const shown = day.rows as { out: RequestOut[]; lines: string[] };
    const requests: RequestOut[] = page.map((index) => {
      let row = shown.out[index];
      if (!row) {
        const { record, overdue, daysOverdue } = rowAt(index);
        row = shown.out[index] = deepFreeze({ ...record, overdue, daysOverdue });
      }
      return row;
    });
    const lines = page.map((index, k) => (shown.lines[index] ??= requestLine(requests[k]!)));
    // A plain list names no client question, yet its rows may carry a name several clients share: say so for this page.
    if (!clientNeedle && clients.length) {
      const sharedAll = sharedClientNames(clients);
      if (sharedAll.size) {
        const onPage = new Map<string, number>();
        for (const index of page) {
          const key = keyOf(all[index]!.clientName);
          if (sharedAll.has(key)) onPage.set(key, (onPage.get(key) ?? 0) + 1);
        }
        notes.push(...sharedNameNotes(sharedAll, onPage.keys(), (k) => `the ${count(onPage.get(k)!, 'request')} shown on this page`));
      }
    }
    const header = summarizeList({ prefix, total: all.length, noun: 'request', matched, filters, facts, offset, returned: requests.length, order: SORT_TEXT[sort] });
    return remember(memo, memoKey, {
      text: pageText([header, ...noteText(), ...revalidatedLine(revalidated)].join('\n'), lines, offset, picked.length, hint),
      structured: { ...base, offset, returned: requests.length, nextOffset, requests },
    });
  },
});
