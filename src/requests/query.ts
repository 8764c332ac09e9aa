/** list_requests' query: a question's filters over the list's index, to exact counts and the matched positions or client groups. */
import type { Client, RequestRecord } from '../api/records.js';
import type { ServiceProfile } from '../domain/service-profile.js';
import { fold } from '../text/render.js';
import { nameKey } from './name-keys.js';
import { filterAndCount, type Matches, type Pass } from './pass.js';
import { clientKeys, createdDays, dayFacts, itemCounts, listFacts, nameTable, rememberPass, sharedClientNames, statusTable, titleTable } from './facts.js';
import { candidates } from './narrow.js';
import type { DayFacts, NameTable, StatusTable } from './tables.js';

/** A list_requests question's filters, as its input schema gives them. */
export interface RequestQuestion {
  state?: 'open' | 'closed' | undefined;
  status?: string[] | undefined;
  client?: string | undefined;
  search?: string | undefined;
  overdue?: boolean | undefined;
  hasDueDate?: boolean | undefined;
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
  createdBefore?: string | undefined;
  createdAfter?: string | undefined;
  groupBy?: 'client' | undefined;
}

/** A question answered over one list on one day. */
export interface Selection {
  grouped: boolean;
  /** The statuses asked for, trimmed and in lower case (undefined: no status filter). */
  statuses: ReadonlySet<string> | undefined;
  /** The client name asked for, as names compare ('' when none), and whether it matched as a whole name. */
  needle: string;
  exact: boolean;
  /** With a client question or groups: the list's name table, and the names several clients share. */
  names: NameTable | undefined;
  shared: ReadonlyMap<string, Client[]>;
  statusIndex: StatusTable;
  day: DayFacts;
  found: Matches;
  /** How many requests matched (grouped: in all groups). */
  matched: number;
}

/** Whether the question needs the clients list: to tell a whole name from part of one, and to find names several clients share. */
export function needsClients(q: RequestQuestion): boolean {
  return q.groupBy === 'client' || nameKey(q.client) !== '';
}

/**
 * A client filter's verdict per distinct name of the list. The whole name when some client or some request has
 * exactly that name, otherwise any name containing it; per name: 0 skip, 1 keep, 2 skip but count as another
 * name containing the whole name asked for.
 */
function clientVerdict(clients: readonly Client[], needle: string, names: NameTable | undefined): { exact: boolean; verdict: Uint8Array | undefined } {
  if (!needle) return { exact: false, verdict: undefined };
  const exact = clientKeys(clients).includes(needle) || names!.keys.includes(needle);
  const verdict = Uint8Array.from(names!.keys, (key) => (exact ? (key === needle ? 1 : key.includes(needle) ? 2 : 0) : key.includes(needle) ? 1 : 0));
  return { exact, verdict };
}

/**
 * The question over the list as of `asOf`, the list read by `profile`. The filter pass depends only on the
 * filters (and, for a client name, on whether it is a whole name): its result is kept per list and day, so
 * another page, order or limit of the same matches skips it.
 */
export function select(all: readonly RequestRecord[], clients: readonly Client[], asOf: string, profile: ServiceProfile, q: RequestQuestion): Selection {
  // The list read by the firm's service profile (which statuses are open, how ambiguous dates read), before any other fact of it.
  listFacts(all, profile);
  const grouped = q.groupBy === 'client';
  const needle = nameKey(q.client);
  const withClients = needsClients(q);
  const statuses = q.status?.length ? new Set(q.status.map((s) => s.trim().toLowerCase())) : undefined;
  const shared = withClients ? sharedClientNames(clients) : new Map<string, Client[]>();
  const names = withClients ? nameTable(all) : undefined;
  const { exact, verdict } = clientVerdict(clients, needle, names);
  const day = dayFacts(all, asOf);
  const statusIndex = statusTable(all);
  const passKey = JSON.stringify([
    grouped,
    exact,
    q.state,
    q.status,
    q.client,
    q.search,
    q.overdue,
    q.hasDueDate,
    q.dueBefore,
    q.dueAfter,
    q.createdBefore,
    q.createdAfter,
  ]);
  const found = rememberPass(
    all,
    asOf,
    passKey,
    () => filterAndCount(passOf(all, q, { grouped, statuses, names, verdict, day, statusIndex })),
    (f) => f.picked.length + f.groups.length * 8,
  );
  const matched = grouped ? found.groups.reduce((n, g) => n + g.requests, 0) : found.picked.length;
  return { grouped, statuses, needle, exact, names, shared, statusIndex, day, found, matched };
}

type Judged = Pick<Selection, 'grouped' | 'statuses' | 'names' | 'day' | 'statusIndex'> & { verdict: Uint8Array | undefined };

function passOf(all: readonly RequestRecord[], q: RequestQuestion, j: Judged): Pass {
  const facts = listFacts(all);
  const { statuses, names, verdict, day, statusIndex } = j;
  const statusOk = statuses ? Uint8Array.from(statusIndex.lower, (s) => (statuses.has(s) ? 1 : 0)) : undefined;
  const titleNeedle = q.search ? fold(q.search.trim()) : '';
  const titles = titleNeedle ? titleTable(all) : undefined;
  const titleOk = titles ? Uint8Array.from(titles.folded, (t) => (t.includes(titleNeedle) ? 1 : 0)) : undefined;
  const dueBefore = q.dueBefore ?? '';
  const dueAfter = q.dueAfter ?? '';
  const wantOverdue = q.overdue === undefined ? -1 : q.overdue ? 1 : 0;
  // A name counted as another name containing the needle (2) is seen before the title, due and state
  // checks, so with such names only the name and status filters narrow.
  const counting = verdict !== undefined && verdict.includes(2);
  const tables = [
    ...(verdict ? [{ ids: names!.ids, keep: verdict }] : []),
    ...(statusOk ? [{ ids: statusIndex.ids, keep: statusOk }] : []),
    ...(titleOk && !counting ? [{ ids: titles!.ids, keep: titleOk }] : []),
  ];
  const among = candidates(all, {
    tables,
    ...((dueBefore || dueAfter) && !counting ? { due: { after: dueAfter, before: dueBefore } } : {}),
    ...(wantOverdue === 1 && !counting ? { overdue: day } : {}),
  });
  const { totals, dones } = itemCounts(all);
  return {
    all,
    grouped: j.grouped,
    among,
    names,
    verdict,
    statusIds: statusIndex.ids,
    statusKeys: statusIndex.key,
    statusOk,
    titleIds: titles?.ids,
    titleOk,
    due: facts.due,
    unreadDue: facts.unreadDue?.flags,
    open: facts.open,
    overdue: day.overdue,
    late: day.late,
    soon: day.soon,
    created: q.createdBefore || q.createdAfter ? createdDays(all) : undefined,
    totals,
    dones,
    wantOpen: q.state === undefined ? -1 : q.state === 'open' ? 1 : 0,
    wantOverdue,
    wantDue: q.hasDueDate === undefined ? -1 : q.hasDueDate ? 1 : 0,
    dueBefore,
    dueAfter,
    createdBefore: q.createdBefore ?? '',
    createdAfter: q.createdAfter ?? '',
  };
}
