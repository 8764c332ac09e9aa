import type { Client } from '../api/records.js';
import { UserInputError } from '../errors.js';
import type { ToolContext } from './define.js';
import { clientLine } from './list-clients.js';
import { fold, oneLine, quoted } from '../text/render.js';

/**
 * Which client a caller means: by id, then e-mail, then exact display name (case-insensitive);
 * never a guess. Shared by the send tools.
 */
export function resolveClient(clients: Client[], query: string): { client?: Client; candidates: Client[] } {
  const q = query.trim().toLowerCase();
  const name = q.replace(/\s+/g, ' ');
  for (const same of [
    (c: Client) => c.id?.toLowerCase() === q,
    (c: Client) => c.email?.trim().toLowerCase() === q,
    (c: Client) => c.displayName?.trim().replace(/\s+/g, ' ').toLowerCase() === name,
  ]) {
    const found = clients.filter(same);
    if (found.length === 1) return { client: found[0], candidates: found };
    if (found.length > 1) return { candidates: found };
  }
  return { candidates: [] };
}

/**
 * resolveClient over many queries against one list (a batch): the same matching, with the list
 * indexed once by id, e-mail and display name instead of scanned for each query.
 */
export function clientResolver(clients: Client[]): (query: string) => { client?: Client; candidates: Client[] } {
  const index = [new Map<string, Client[]>(), new Map<string, Client[]>(), new Map<string, Client[]>()] as const;
  const add = (map: Map<string, Client[]>, key: string | undefined, c: Client) => {
    if (key === undefined) return;
    const list = map.get(key);
    if (list) list.push(c);
    else map.set(key, [c]);
  };
  for (const c of clients) {
    add(index[0], c.id?.toLowerCase(), c);
    add(index[1], c.email?.trim().toLowerCase(), c);
    add(index[2], c.displayName?.trim().replace(/\s+/g, ' ').toLowerCase(), c);
  }
  return (query) => {
    const q = query.trim().toLowerCase();
    for (const [map, key] of [
      [index[0], q],
      [index[1], q],
      [index[2], q.replace(/\s+/g, ' ')],
    ] as const) {
      const found = map.get(key) ?? [];
      if (found.length === 1) return { client: found[0], candidates: found };
      if (found.length > 1) return { candidates: found };
    }
    return { candidates: [] };
  };
}

function bigrams(s: string): Set<string> {
  const set = new Set<string>();
  for (let i = 0; i < s.length - 1; i++) set.add(s.slice(i, i + 2));
  return set;
}

/**
 * The items whose texts look most like `query` (folded by the caller), closest first, each at least
 * `floor` alike: 1 when a text holds the query (or a query of more than three letters holds the text),
 * else the Dice similarity of their letter pairs. The one likeness rule for clients and templates.
 */
export function likeliest<T>(items: readonly T[], query: string, textsOf: (item: T) => string[], floor: number): { item: T; score: number }[] {
  const qb = bigrams(query);
  const score = (text: string) => {
    if (!text) return 0;
    if (text.includes(query) || (query.length > 3 && query.includes(text))) return 1;
    const tb = bigrams(text);
    let shared = 0;
    for (const b of qb) if (tb.has(b)) shared++;
    return (2 * shared) / (qb.size + tb.size || 1);
  };
  return items
    .map((item) => ({ item, score: Math.max(...textsOf(item).map(score)) }))
    .filter((x) => x.score >= floor)
    .sort((a, b) => b.score - a.score);
}

/** The clients whose name or e-mail looks most like `query` (./likeliest). */
export function closestClients(clients: Client[], query: string, count = 3): { shown: Client[]; tied: number } {
  const ranked = likeliest(clients, fold(query.trim()), (c) => [fold(c.displayName), fold(c.email)], 0.35);
  const best = ranked[0]?.score;
  return { shown: ranked.slice(0, count).map((x) => x.item), tied: ranked.filter((x) => x.score === best).length };
}

export async function findClient(ctx: ToolContext, query: string): Promise<Client> {
  let listed = await ctx.api.fetchClients({ reuse: true, signal: ctx.signal, deadline: ctx.deadline });
  let { client, candidates } = resolveClient(listed.records, query);
  if (!client && candidates.length === 0) {
    // The cached list may predate the client: look once more, fresh.
    listed = await ctx.api.fetchClients({ signal: ctx.signal, deadline: ctx.deadline });
    ({ client, candidates } = resolveClient(listed.records, query));
  }
  if (client) return client;
  if (candidates.length > 1) {
    const picked = await pickClient(ctx, query, candidates);
    if (picked) return picked;
    // On a host that shows pages, the page asks "which one?" (the candidates ride in the refusal's _meta).
    throw new UserInputError(ambiguity(query, candidates), ctx.showsPages && pickable(candidates) ? choiceOnPage(query, candidates) : undefined);
  }
  throw new UserInputError(notFound(listed.records, query) + onLaterPage(listed.paging));
}

/** Where the page finds the clients to choose among: each by name and e-mail (through the renderer) and id (exact). */
const PAGE_CHOICE_META = 'docreq-mcp/choose';
function choiceOnPage(query: string, candidates: Client[]): Record<string, unknown> {
  return {
    [PAGE_CHOICE_META]: {
      given: oneLine(query, 200),
      candidates: candidates.map((c) => ({ id: c.id, displayName: oneLine(c.displayName, 200), email: oneLine(c.email, 200) })),
    },
  };
}

/** Up to this many candidates are offered in the host's form; more are listed as before. */
const MOST_OFFERED = 20;

/** A candidate as the form shows it: name, e-mail and id, each through the renderer. */
export const candidateTitle = (c: Client): string => `${oneLine(c.displayName, 48)} <${oneLine(c.email, 60)}> (id ${oneLine(c.id, 40)})`;

/** Whether the person can tell `candidates` apart by a pick: each has its own id, and not too many to list. */
export function pickable(candidates: Client[]): boolean {
  const ids = new Set(candidates.map((c) => c.id));
  return candidates.length <= MOST_OFFERED && ids.size === candidates.length && !ids.has(null);
}

/**
 * "Which one?" inside the call: a name several clients share is asked of the person in the host's form
 * (each candidate by name, e-mail and id; "none of these" sends nothing). undefined when the host cannot
 * ask or no pick can tell them apart: the caller answers with the list, as before.
 */
async function pickClient(ctx: ToolContext, query: string, candidates: Client[]): Promise<Client | undefined> {
  if (!pickable(candidates)) return undefined;
  const picks = await ctx.choose(
    `${quoted(query, 60)} matches ${candidates.length} clients. Which one should get this request? Nothing is sent until the request is confirmed.`,
    [{ key: 'client', title: 'Client', options: candidates.map((c) => ({ value: c.id!, title: candidateTitle(c) })) }],
  );
  if (picks === 'unsupported') return undefined;
  const id = picks === 'declined' ? null : picks.client;
  if (!id) throw new UserInputError(`Nothing was sent: the person chose none of the ${candidates.length} clients ${quoted(query, 60)} matches.`);
  return candidates.find((c) => c.id === id)!;
}

/** A list that signals more pages may hold the client on a page this server is not given: said, never "not found" alone. */
function onLaterPage(paging: string | undefined): string {
  return paging ? `\nThe service's client list signals more pages (${paging}): the client may be on a page it did not list.` : '';
}

/** Why `query` names no single client, with the candidates listed (and counted when many). */
function ambiguity(query: string, candidates: Client[]): string {
  const ids = new Set(candidates.map((c) => c.id));
  const shown = candidates.slice(0, 20).map(clientLine).join('\n');
  const more = candidates.length > 20 ? `\n…and ${candidates.length - 20} more` : '';
  if (ids.size === 1) {
    // The service lists several clients under one id: no id can tell them apart, so none is chosen.
    return `${quoted(query, 60)} matches ${candidates.length} clients that share the same id in the service's answer; nothing was sent. No argument can tell them apart: the firm should fix these records in the dashboard.\n${shown}${more}`;
  }
  return `${quoted(query, 60)} matches ${candidates.length} clients; nothing was sent. Pass the id of the one you mean as client:\n${shown}${more}`;
}

/** The message for a query that matches no client, naming the closest ones and how many tie. */
function notFound(clients: Client[], query: string): string {
  const { shown, tied } = closestClients(clients, query);
  const count = tied > shown.length ? ` (${tied} clients look equally close; ${shown.length} shown — use list_clients with a search to narrow them)` : '';
  return (
    `No client has the id, e-mail or exact name ${quoted(query, 60)}; nothing was sent.` +
    (shown.length
      ? ` Closest${count}:\n${shown.map(clientLine).join('\n')}\nPass the id of the right one as client.`
      : ' Use list_clients with a search to find the client, then pass its id.')
  );
}
