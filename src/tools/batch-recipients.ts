/**
 * Who a batch sends to (create_request_batch): each recipient as given, resolved against one read of the client list
 * (a "which one?" asked once for every name several clients share) and checked against one read of the requests list
 * and the send store: the same client twice, this server's own send, a client not active, an open duplicate.
 */
import { UserInputError } from '../errors.js';
import type { Client, RequestRecord } from '../api/records.js';
import { isOpen } from '../requests/facts.js';
import { oneLine, quoted } from '../text/render.js';
import type { PreviewCheck } from './as-previewed.js';
import type { ToolContext } from './define.js';
import { candidateTitle, clientResolver, closestClients, pickable } from './resolve-client.js';
import { clientLabel, duplicateOpen, notActive, notActiveUnattended, notActiveWarning, ownRecord, profileOf, titleKey } from './sending.js';

export const OUTCOMES = ['will_send', 'sent', 'accepted', 'may_have_been_sent', 'not_sent', 'skipped', 'already_sent', 'declined'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface Recipient {
  given: string;
  client: Client | undefined;
  outcome: Outcome;
  request: RequestRecord | null;
  reason: string | null;
  /** In the token's binding: will send, or already sent (or may have been) by this server. */
  bound: boolean;
  /** After a send: the service's record against the preview. */
  check?: PreviewCheck;
}

const idList = (cs: Client[]) =>
  cs
    .slice(0, 5)
    .map((c) => `${quoted(c.displayName, 40)} <${oneLine(c.email, 50)}> (id ${oneLine(c.id, 40)})`)
    .join(', ') + (cs.length > 5 ? `, …${cs.length - 5} more` : '');

/** Each recipient as given, resolved and checked against one read of both lists. */
export async function resolveAll(
  ctx: ToolContext,
  given: string[],
  clients: Client[],
  requests: RequestRecord[],
  title: string,
  allowDuplicate: boolean,
  warnings: string[],
  paging?: string,
): Promise<Recipient[]> {
  const key = titleKey(title);
  const seen = new Map<string, number>();
  const resolve = clientResolver(clients);
  const profile = profileOf(ctx);
  // Only open requests can be duplicates, and only those with this title: found once, not per recipient.
  const sameTitle = requests.filter((r) => titleKey(r.title) === key && isOpen(r, profile));
  const found = given.map((q) => resolve(q));
  const noneChosen = await pickAmbiguous(ctx, given, found);
  // The send store's records for every recipient, read at once (one round trip each, in parallel).
  const ids = new Set(found.map((f) => f.client?.id).filter((id): id is string => Boolean(id)));
  const records = new Map(await Promise.all([...ids].map(async (id) => [id, await ownRecord(ctx, id, key)] as const)));
  return given.map((query, n): Recipient => {
    const base = { given: query, client: undefined, request: null, bound: false };
    const { client, candidates } = found[n]!;
    if (!client) {
      if (noneChosen.has(n)) return { ...base, outcome: 'skipped', reason: `the person chose none of the ${candidates.length} clients it matches` };
      if (candidates.length > 1)
        return { ...base, outcome: 'skipped', reason: `ambiguous: matches ${candidates.length} clients: ${idList(candidates)}; pass the id of the one meant` };
      const { shown } = closestClients(clients, query);
      const later = paging ? `; the service's client list signals more pages (${paging}), so it may be on a page it did not list` : '';
      return { ...base, outcome: 'skipped', reason: `no client has this id, e-mail or exact name${shown.length ? `; closest: ${idList(shown)}` : ''}${later}` };
    }
    const at = { ...base, client };
    if (!client.id) return { ...at, outcome: 'skipped', reason: "the service's record of this client has no id" };
    const first = seen.get(client.id);
    if (first !== undefined) return { ...at, outcome: 'skipped', reason: `the same client as recipient ${first + 1}` };
    seen.set(client.id, n);
    const record = records.get(client.id);
    if (record) {
      // This server's own sends are never repeated by a batch, allowDuplicate or not: the same
      // batch sent again sends only to the clients not yet sent.
      return { ...at, outcome: record.recent.outcome === 'sent' ? 'already_sent' : 'skipped', reason: record.reason, bound: true };
    }
    // One rule with create_request: a client who is not active is sent to only with the person's go-ahead.
    const inactive = notActive(client);
    if (inactive && ctx.config.confirmSend === 'never') return { ...at, outcome: 'skipped', reason: `not sent: ${notActiveUnattended(inactive)}` };
    if (inactive) warnings.push(`${clientLabel(client)}: ${notActiveWarning(inactive)}`);
    const duplicate = duplicateOpen(client, title, sameTitle, profile);
    if (duplicate && !allowDuplicate) return { ...at, outcome: 'skipped', reason: `duplicate: ${duplicate} (allowDuplicate: true sends a NEW one)` };
    if (duplicate) warnings.push(`${clientLabel(client)}: sending although ${duplicate}.`);
    return { ...at, outcome: 'will_send', reason: null, bound: true };
  });
}

/**
 * "Which one?" for a batch: every recipient whose name several clients share is asked in one form (one
 * choice each: name, e-mail and id; "none of these" skips it). Each pick replaces its recipient's
 * candidates in `found`; returns the recipients the person chose none for. A host that cannot ask leaves
 * them ambiguous (skipped with the list, as before); declining the form sends nothing at all.
 */
async function pickAmbiguous(ctx: ToolContext, given: string[], found: { client?: Client; candidates: Client[] }[]): Promise<Set<number>> {
  const none = new Set<number>();
  const asked = found.map((f, n) => (!f.client && f.candidates.length > 1 && pickable(f.candidates) ? n : -1)).filter((n) => n >= 0);
  if (asked.length === 0) return none;
  const keyOf = (n: number) => `recipient${n + 1}`;
  const picks = await ctx.choose(
    `${asked.length === 1 ? 'One recipient matches' : `${asked.length} recipients match`} several clients. Which client is meant for each? Nothing is sent until the batch is confirmed.`,
    asked.map((n) => ({
      key: keyOf(n),
      title: `Recipient ${n + 1}: ${quoted(given[n], 60)}`,
      options: found[n]!.candidates.map((c) => ({ value: c.id!, title: candidateTitle(c) })),
    })),
  );
  if (picks === 'unsupported') return none;
  if (picks === 'declined') throw new UserInputError('Nothing was sent: the person declined to say which clients were meant.');
  for (const n of asked) {
    const id = picks[keyOf(n)];
    const client = id ? found[n]!.candidates.find((c) => c.id === id) : undefined;
    if (client) found[n] = { client, candidates: [client] };
    else none.add(n);
  }
  return none;
}
