import { z } from 'zod';
import { unreadableNotes } from '../api/list-stream.js';
import { clientRecord, documentedClient, extraValue, type Client, type RequestRecord } from '../api/records.js';
import { fieldsLine } from '../text/render.js';
import { defineTool, type ToolResult } from './define.js';
import { answerCache } from '../cache.js';
import { fold, oneLine, quoted } from '../text/render.js';
import { clientKeys, joinCounts, listFacts, sharedClientNames, statusTable } from '../requests/facts.js';
import type { JoinCount } from '../requests/tables.js';
import { pagingNote, unknownStatusNote, unreadDatesNote } from './fit-notes.js';
import { DEFAULT_PROFILE, type ServiceProfile } from '../domain/service-profile.js';
import type { ListResult } from '../api/lists.js';
import { CANNOT_DO, count, pageText, revalidatedLine, sharedNameNotes, statusText, summarizeList } from './list-text.js';
import { bump, newCounts } from '../requests/name-keys.js';
import { page, statusCounts } from './schemas.js';
import { compactPage, pageInput } from './list-text.js';

const DEFAULT_LIMIT = 50;
const JOINS = ['open', 'none_open', 'overdue'] as const;
type Join = (typeof JOINS)[number];

const clientOut = clientRecord.extend({
  openRequests: z.number().int().optional(),
  overdueRequests: z.number().int().optional(),
  fields: z.record(z.string(), extraValue).optional(),
});
type ClientOut = z.output<typeof clientOut>;

/** One client as a line (create_request uses it too). */
export function clientLine(c: ClientOut): string {
  return joinedLine(c, false);
}

function joinedLine(c: ClientOut, shared: boolean): string {
  const counts = c.openRequests === undefined ? '' : ` · ${c.openRequests} open, ${c.overdueRequests ?? 0} overdue${shared ? ' (name shared, see notes)' : ''}`;
  const line = `- ${quoted(c.displayName, 48)} <${oneLine(c.email, 60)}> · ${oneLine(c.status, 20) || 'no status'}${counts} · id ${oneLine(c.id, 40)}`;
  if (!c.fields) return line;
  return `${line}\n  other fields: ${Object.keys(c.fields).length ? fieldsLine(c.fields) : 'none'}`;
}

/** Values of a client's `tags` field (a list or one text), for search. */
function tagValues(c: Client): string[] {
  const tags = c.extra?.tags;
  if (typeof tags === 'string') return [tags];
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
}

const NONE = { open: 0, overdue: 0 } as const;

/**
 * The clients that match, with the status counts over all of them; with a join, beside each match its
 * name's open and overdue requests and its name key.
 */
function matchClients(
  all: readonly Client[],
  search: string | undefined,
  wanted: string | undefined,
  join: Join | undefined,
  perName: ReadonlyMap<string, JoinCount>,
) {
  const keysOf = join ? clientKeys(all) : [];
  const needle = search ? fold(search.trim()) : '';
  const byStatus = newCounts();
  const matches: Client[] = [];
  const joined: JoinCount[] = [];
  const matchKeys: string[] = [];
  for (let i = 0; i < all.length; i++) {
    const c = all[i]!;
    bump(byStatus, c.status ?? '(none)');
    if (wanted !== undefined && (c.status ?? '').toLowerCase() !== wanted) continue;
    if (needle && !fold(c.displayName).includes(needle) && !fold(c.email).includes(needle) && !tagValues(c).some((t) => fold(t).includes(needle))) continue;
    if (!join) {
      matches.push(c);
      continue;
    }
    const key = keysOf[i]!;
    const n = perName.get(key) ?? NONE;
    if (join === 'open' ? n.open === 0 : join === 'none_open' ? n.open > 0 : n.overdue === 0) continue;
    matches.push(c);
    joined.push(n);
    matchKeys.push(key);
  }
  return { byStatus, matches, joined, matchKeys };
}

const outputSchema = z.object({
  ...compactPage,
  byStatus: statusCounts.describe('Over all clients.'),
  clients: z.array(clientOut),
  notes: z.array(z.string()),
});
type ListClientsResult = ToolResult<z.output<typeof outputSchema>>;

/** Stands for "no requests list" in the answer cache (a call without a join does not fetch it). */
const NO_REQUESTS: readonly RequestRecord[] = Object.freeze([]);
/** Answers already worked out, per clients list and the requests list a join read (src/freeze.ts). */
const answersFor = answerCache<readonly Client[], readonly RequestRecord[], ListClientsResult>();

const JOIN_TEXT: Record<Join, string> = {
  open: 'with an open request',
  none_open: 'with no open request',
  overdue: 'with an overdue request',
};

/**
 * The answer's notes: records not read in full (the joined list's too, and how its statuses and dates read), then, with a
 * join, names several matched clients share. Also the shared names, which mark their rows.
 */
function clientNotes(a: {
  all: readonly Client[];
  paging: ListResult<Client>['paging'];
  join: Join | undefined;
  joined: ListResult<RequestRecord> | undefined;
  profile: ServiceProfile;
  perName: ReadonlyMap<string, JoinCount>;
  matchKeys: readonly string[];
}): { notes: string[]; shared: ReadonlyMap<string, Client[]> } {
  const requests: readonly RequestRecord[] = a.joined?.records ?? [];
  const fit = a.join ? [pagingNote('request', a.joined?.paging), unknownStatusNote(statusTable(requests).occurring, a.profile), unreadDatesNote(requests)] : [];
  const notes: string[] = [
    ...[pagingNote('client', a.paging), ...fit].filter((n): n is string => n !== undefined),
    ...unreadableNotes(a.all, 'client'),
    ...(a.join ? unreadableNotes(requests, 'request') : []),
  ];
  if (!a.join) return { notes, shared: new Map<string, Client[]>() };
  const shared = sharedClientNames(a.all);
  const matchedKeys = new Set(a.matchKeys);
  const met = [...shared.keys()].filter((k) => matchedKeys.has(k));
  notes.push(...sharedNameNotes(shared, met, (k) => `the ${count(a.perName.get(k)?.open ?? 0, 'open request')}`));
  return { notes, shared };
}

/** What an empty page says: no clients at all, nothing matched, or a status that no client has (and those that occur). */
function noMatchHint(filtered: boolean, status: string | undefined, wanted: string | undefined, total: number, byStatus: Record<string, number>): string {
  if (wanted !== undefined && total > 0 && !Object.keys(byStatus).some((s) => s.toLowerCase() === wanted)) {
    return `No client has status ${quoted(status, 30)}. Statuses that occur: ${statusText(byStatus, 20)}.`;
  }
  return filtered ? 'No client matched. Try a shorter or different search, or drop the status filter.' : 'The firm has no clients.';
}

export const listClients = defineTool({
  name: 'list_clients',
  title: 'List clients',
  description:
    "The firm's clients: exact counts (total, matched, by status), a page with ids, other fields (phone, tags…) when one matches or with details. " +
    'Search: part of a name, e-mail or tag. requests: open / none_open / overdue joins requests by name with open and overdue counts; shared names in notes. ' +
    CANNOT_DO,
  inputSchema: z.strictObject({
    search: z.string().max(200).optional().describe('Part of the name, e-mail or a tag.'),
    status: z.string().max(50).optional().describe('Exact status, e.g. "active".'),
    requests: z.enum(JOINS).optional().describe('With an open request, none open, or an overdue one.'),
    details: z.boolean().optional().describe('true: other fields (phone, tags…).'),
    ...pageInput(DEFAULT_LIMIT),
  }),
  outputSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(input, ctx) {
    const { search, status, requests: join, details } = input;
    const limit = input.limit ?? DEFAULT_LIMIT;
    const offset = input.offset ?? 0;
    await ctx.progress(0, 2, join ? 'Fetching clients and requests' : 'Fetching clients');
    const call = { signal: ctx.signal, deadline: ctx.deadline };
    const [{ records: all, revalidated, paging }, joinedList] = await Promise.all([
      ctx.api.fetchClients(call),
      join ? ctx.api.fetchRequests(call) : Promise.resolve(undefined),
    ]);
    const requests: readonly RequestRecord[] = joinedList?.records ?? [];
    // The joined requests read by the firm's service profile (which statuses are open, how ambiguous dates read).
    const profile = ctx.config.serviceProfile ?? DEFAULT_PROFILE;
    if (join) listFacts(requests, profile);
    await ctx.progress(1, 2, `Filtering ${all.length} clients`);
    // The same question about the very same lists, on the same day, has the same answer (worked out once).
    const memo = answersFor(all, join ? requests : NO_REQUESTS);
    const memoKey = JSON.stringify([ctx.today, revalidated, Object.entries(input).sort(([a], [b]) => (a < b ? -1 : 1))]);
    const known = memo.get(memoKey);
    if (known) return known;

    // Requests name their client only by name: open and overdue counts per name (worked out once per list and day).
    const perName = join ? joinCounts(requests, ctx.today) : new Map<string, JoinCount>();
    const wanted = status?.trim().toLowerCase();
    const { byStatus, matches, joined, matchKeys } = matchClients(all, search, wanted, join, perName);
    // A client's other fields, as data: when one client matched, or when asked for.
    const showFields = details === true || matches.length === 1;
    const shown = page(matches, offset, limit);
    const slice = shown.slice.map((c, j) => {
      const out: ClientOut = { ...documentedClient(c) };
      if (join) Object.assign(out, { openRequests: joined[offset + j]!.open, overdueRequests: joined[offset + j]!.overdue });
      if (showFields) out.fields = { ...c.extra };
      return out;
    });
    const sliceKeys = matchKeys.slice(offset, offset + slice.length);
    const { notes, shared } = clientNotes({ all, paging, join, joined: joinedList, profile, perName, matchKeys });

    const filters = [
      search ? `search ${quoted(search, 60)} (name, e-mail or tag)` : '',
      wanted !== undefined ? `status ${quoted(status, 30)}` : '',
      join ? `${JOIN_TEXT[join]} (requests joined by client name)` : '',
    ].filter(Boolean);
    const header = summarizeList({
      total: all.length,
      noun: 'client',
      matched: matches.length,
      filters,
      facts: [`By status: ${statusText(byStatus)}.`],
      offset,
      returned: slice.length,
    });
    const result: ListClientsResult = {
      text: pageText(
        [header, ...notes.map((n) => `Note: ${n}`), ...revalidatedLine(revalidated)].join('\n'),
        slice.map((c, j) => joinedLine(c, shared.has(sliceKeys[j] ?? ''))),
        offset,
        matches.length,
        noMatchHint(filters.length > 0, status, wanted, all.length, byStatus),
      ),
      structured: {
        total: all.length,
        matched: matches.length,
        offset,
        returned: slice.length,
        nextOffset: shown.nextOffset,
        byStatus: { ...byStatus },
        clients: slice,
        notes,
      },
    };
    return memo.keep(memoKey, result);
  },
});
