import { z } from 'zod';
import { ApiError, CancelledError, KeyRejectedError, PlanLimitError, TimedOutError } from '../api/errors.js';
import { createPayload, requestRecord, type Client, type RequestRecord } from '../api/records.js';
import { UserInputError } from '../errors.js';
import { StoreUnavailableError } from '../store/store.js';
import { defineTool, type ToolContext } from './define.js';
import { clientResolver, closestClients } from './resolve-client.js';
import { oneLine, quoted } from '../text/render.js';
import { isOpen } from './request-facts.js';
import {
  assertSendingAllowed,
  clientLabel,
  confirmationOut,
  describeDraft,
  draftFromInput,
  duplicateOpen,
  freshConfirmationId,
  ledgerReason,
  payloadFor,
  postOnce,
  auditSend,
  previewNext,
  requestFields,
  titleKey,
  inProgressReason,
} from './sending.js';

/**
 * create_request_batch (contract §3.5): one request for 2–100 clients. Every recipient is resolved
 * and checked up front from one read of each list; one preview; one confirmation for the batch;
 * then one POST at a time, each under create_request's once-only rules (a lock, the ledger re-read
 * under it, an Idempotency-Key derived from the confirmation and the recipient). The batch stops at
 * the first plan limit or key rejection, at a cancel, or when too little of the time limit is left.
 */

const OUTCOMES = ['will_send', 'sent', 'may_have_been_sent', 'not_sent', 'skipped', 'already_sent', 'declined'] as const;
type Outcome = (typeof OUTCOMES)[number];

const recipientOut = z.object({
  client: z.string().describe('As given.'),
  clientId: z.string().nullable(),
  // Who it resolved to (contract §3.7.1), beside what was given; null when it did not resolve.
  displayName: z.string().nullable().describe('The resolved client.'),
  email: z.string().nullable(),
  outcome: z.enum(OUTCOMES),
  request: requestRecord.nullable(),
  reason: z.string().nullable(),
});

const output = z.object({
  sent: z.number().int().describe('How many requests were sent.'),
  dryRun: z.boolean(),
  confirmation: confirmationOut,
  payload: createPayload.omit({ clientId: true }).describe('The body POSTed to each recipient, without clientId.'),
  recipients: z.array(recipientOut),
  stoppedBy: z.string().nullable().describe('Why the batch stopped early, or null.'),
  warnings: z.array(z.string()),
});
type Output = z.output<typeof output>;

interface Recipient {
  given: string;
  client: Client | undefined;
  outcome: Outcome;
  request: RequestRecord | null;
  reason: string | null;
  /** In the token's binding: will send, or already sent (or may have been) by this server. */
  bound: boolean;
}

const label = (r: Recipient) => (r.client ? clientLabel(r.client) : quoted(r.given, 60));
const idList = (cs: Client[]) => cs.slice(0, 5).map((c) => `${quoted(c.displayName, 40)} <${oneLine(c.email, 50)}> (id ${oneLine(c.id, 40)})`).join(', ') + (cs.length > 5 ? `, …${cs.length - 5} more` : '');

/** The client a recipient resolved to, as its structured row names it. */
const resolvedAs = (r: Recipient) => ({ displayName: r.client?.displayName ?? null, email: r.client?.email ?? null });

/** Each recipient as given, resolved and checked against one read of both lists. */
async function resolveAll(ctx: ToolContext, given: string[], clients: Client[], requests: RequestRecord[], title: string, allowDuplicate: boolean, warnings: string[]): Promise<Recipient[]> {
  const key = titleKey(title);
  const seen = new Map<string, number>();
  const resolve = clientResolver(clients);
  // Only open requests can be duplicates, and only those with this title: found once, not per recipient.
  const sameTitle = requests.filter((r) => titleKey(r.title) === key && isOpen(r));
  // The send store's records for every recipient, read at once (one round trip each, in parallel).
  const ids = new Set(given.map((q) => resolve(q).client?.id).filter((id): id is string => Boolean(id)));
  const records = new Map(await Promise.all([...ids].map(async (id) => [id, await ctx.sending.ledger.recent(ctx.sending.firm, id, key)] as const)));
  return given.map((query, n): Recipient => {
    const base = { given: query, client: undefined, request: null, bound: false };
    const { client, candidates } = resolve(query);
    if (!client) {
      if (candidates.length > 1) return { ...base, outcome: 'skipped', reason: `ambiguous: matches ${candidates.length} clients: ${idList(candidates)}; pass the id of the one meant` };
      const { shown } = closestClients(clients, query);
      return { ...base, outcome: 'skipped', reason: `no client has this id, e-mail or exact name${shown.length ? `; closest: ${idList(shown)}` : ''}` };
    }
    const at = { ...base, client };
    if (!client.id) return { ...at, outcome: 'skipped', reason: "the service's record of this client has no id" };
    const first = seen.get(client.id);
    if (first !== undefined) return { ...at, outcome: 'skipped', reason: `the same client as recipient ${first + 1}` };
    seen.set(client.id, n);
    const recent = records.get(client.id);
    if (recent) {
      // This server's own sends are never repeated by a batch, allowDuplicate or not: the same
      // batch sent again sends only to the clients not yet sent.
      const why = ledgerReason(recent);
      return { ...at, outcome: recent.outcome === 'sent' ? 'already_sent' : 'skipped', reason: why, bound: true };
    }
    if (client.status && client.status.toLowerCase() !== 'active') return { ...at, outcome: 'skipped', reason: `not active (status ${quoted(client.status, 30)})` };
    const duplicate = duplicateOpen(client, title, sameTitle);
    if (duplicate && !allowDuplicate) return { ...at, outcome: 'skipped', reason: `duplicate: ${duplicate} (allowDuplicate: true sends a NEW one)` };
    if (duplicate) warnings.push(`${clientLabel(client)}: sending although ${duplicate}.`);
    return { ...at, outcome: 'will_send', reason: null, bound: true };
  });
}

const COUNTED: [Outcome, string][] = [
  ['sent', 'sent'],
  ['may_have_been_sent', 'may have been sent'],
  ['not_sent', 'not sent'],
  ['skipped', 'skipped'],
];

/** Exact counts: a result's four (and any already sent or declined); a preview's will send and skipped. */
function countsLine(recipients: Recipient[], preview = false): string {
  const count = (o: Outcome) => recipients.filter((r) => r.outcome === o).length;
  const shown: [Outcome, string][] = preview ? [['will_send', 'will send'], ['skipped', 'skipped']] : COUNTED;
  const extra = (['already_sent', 'declined'] as const).filter((o) => count(o) > 0).map((o) => `${count(o)} ${o.replace('_', ' ')}`);
  return [...shown.map(([o, words]) => `${count(o)} ${words}`), ...extra].join(', ') + ` (of ${recipients.length})`;
}

function recipientLines(recipients: Recipient[]): string {
  return recipients
    .map((r, n) => {
      const id = r.request?.id ? `, request id ${oneLine(r.request.id, 40)}` : '';
      return `  ${n + 1}. ${label(r)}: ${r.outcome.replace(/_/g, ' ')}${id}${r.reason ? ` — ${r.reason}` : ''}`;
    })
    .join('\n');
}

export const createRequestBatch = defineTool({
  name: 'create_request_batch',
  title: 'Send one document request to many clients',
  description:
    'Sends one request to 2–100 clients; the service e-mails each. One preview lists each recipient as will send or why not; ' +
    'one confirmation covers the batch, as in create_request. Sends one at a time and stops at a plan limit; called again, sends only to those not yet sent.',
  inputSchema: z.strictObject({
    clients: z.array(z.string().min(1).max(320)).min(2).max(100).describe('Client ids (preferred), e-mails or exact names.'),
    ...requestFields,
  }),
  outputSchema: output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    assertSendingAllowed(ctx);
    const draft = draftFromInput(input, ctx);
    const [clients, requests] = await Promise.all([ctx.api.listClients({ signal: ctx.signal }), ctx.api.listRequests({ signal: ctx.signal })]);
    const allowDuplicate = input.allowDuplicate ?? false;
    const warnings = [...draft.warnings];
    const recipients = await resolveAll(ctx, input.clients, clients, requests, draft.title, allowDuplicate, warnings);
    const { clientId: _, ...payload } = payloadFor('', draft);
    const binding = {
      tool: 'create_request_batch',
      clientIds: recipients.filter((r) => r.bound).map((r) => r.client!.id),
      title: draft.title,
      dueDate: draft.dueDate ?? null,
      items: draft.items,
      correctnessMode: draft.correctnessMode ?? null,
      allowDuplicate,
    };
    const noToken = { needed: false, token: null, expiresAt: null };
    let stoppedBy = null as string | null;
    const result = (head: string, confirmation: Output['confirmation'], tail = '', isError = false) => {
      const structured: Output = {
        sent: recipients.filter((r) => r.outcome === 'sent').length,
        dryRun: input.dryRun ?? false,
        confirmation,
        payload,
        recipients: recipients.map((r) => ({ client: r.given, clientId: r.client?.id ?? null, ...resolvedAs(r), outcome: r.outcome, request: r.request, reason: r.reason })),
        stoppedBy,
        warnings,
      };
      const text = `${head}\n${recipientLines(recipients)}${warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''}${tail ? `\n${tail}` : ''}`;
      return { text, structured, isError };
    };
    const willSend = () => recipients.filter((r) => r.outcome === 'will_send');
    const draftText = `${describeDraft(draft)}\nExact body for each (clientId set per recipient): ${JSON.stringify(payload)}`;

    if (willSend().length === 0) {
      return result(`NOTHING TO SEND — nothing was sent: ${countsLine(recipients, true)}.`, noToken, 'No recipient can be sent this request; see the reasons above.');
    }

    let tokenId: string | undefined;
    let tokenNote = '';
    if (input.confirmationToken) {
      const check = ctx.sending.tokens.verify(input.confirmationToken, binding);
      if (check.ok) tokenId = check.id;
      else
        tokenNote =
          check.reason === 'expired'
            ? 'The confirmationToken given has expired (tokens last 15 minutes); nothing was sent. '
            : 'The confirmationToken given does not belong to this exact batch (recipients that will send, title, due date, items, mode, allowDuplicate) and key (and person, when signed in); nothing was sent. ';
    }
    const mode = ctx.config.confirmSend;
    const preview = (why: string) => {
      const { token, expiresAt } = ctx.sending.tokens.issue(binding);
      const needed = mode === 'auto' && !ctx.canAsk;
      return result(
        `${tokenNote}${input.dryRun ? 'DRY RUN' : 'PREVIEW'} — nothing was sent. ${countsLine(recipients, true)}.${why ? ` ${why}` : ''}`,
        { needed, token, expiresAt: new Date(expiresAt).toISOString() },
        `${draftText}\n${previewNext(needed, token, expiresAt, 'create_request_batch')}`,
      );
    };
    if (input.dryRun) return preview('');
    if (mode === 'always' && !ctx.canAsk) {
      throw new UserInputError(
        'Nothing was sent: DOCREQ_CONFIRM_SEND is "always", which needs the person to confirm through MCP elicitation, and this host does not support it. ' +
          'Use a host with elicitation, or ask whoever runs the server to set DOCREQ_CONFIRM_SEND=auto (confirmation by token).',
      );
    }
    if (mode === 'auto' && !ctx.canAsk && !tokenId) return preview("Sending needs the person's go-ahead, given as the confirmationToken below.");

    if (mode !== 'never' && ctx.canAsk) {
      const skipped = recipients.filter((r) => r.outcome !== 'will_send');
      const answer = await ctx.confirm(
        `Send this document request to ${willSend().length} client${willSend().length === 1 ? '' : 's'}? The service will e-mail each one.\n` +
          `${willSend().map((r) => `- ${label(r)}`).join('\n')}\n` +
          (skipped.length ? `Not sent (${skipped.length}):\n${skipped.map((r) => `- ${label(r)}: ${r.reason}`).join('\n')}\n` : '') +
          `${describeDraft(draft)}${warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''}`,
      );
      if (answer !== 'accepted') {
        for (const r of willSend()) Object.assign(r, { outcome: 'declined', reason: 'the person declined' });
        return result(`NOT SENT: the person declined the batch; nothing was sent. ${countsLine(recipients)}.`, noToken);
      }
    }

    // One POST at a time. The same confirmation gives each recipient the same Idempotency-Key.
    const confirmationId = tokenId ?? freshConfirmationId();
    const queue = willSend();
    const total = queue.length;
    const key = titleKey(draft.title);
    let done = 0;
    let stopDetail = '';
    /** Stops the batch at recipient `at` of the queue: it and every later one not sent. */
    const stop = (why: string, at: number, detail = '') => {
      const where = recipients.indexOf(queue[at]!) + 1;
      stoppedBy = `${why} (at recipient ${where})`;
      stopDetail = detail;
      for (const r of queue.slice(at)) if (r.outcome === 'will_send') Object.assign(r, { outcome: 'not_sent', reason: `stopped by ${why} at recipient ${where}` });
    };
    await ctx.progress(0, total, `Sending to ${total} client${total === 1 ? '' : 's'}`);
    for (const [n, r] of queue.entries()) {
      const client = r.client!;
      if (ctx.signal.aborted) {
        stop('the cancellation of the call', n);
        break;
      }
      const stopHere = (why: string, error: Error) => {
        Object.assign(r, { outcome: 'not_sent', reason: error.message });
        stop(why, n, error.message);
      };
      let release: (() => Promise<void>) | undefined;
      try {
        release = await ctx.sending.ledger.lock(ctx.sending.firm, client.id!, key);
      } catch (error) {
        // The send store failed: nothing more is sent (fail closed).
        const why = error instanceof Error ? error.message : String(error);
        Object.assign(r, { outcome: 'not_sent', reason: why });
        stop('the send store failing', n, why);
        break;
      }
      if (!release) {
        Object.assign(r, { outcome: 'skipped', reason: inProgressReason(draft.title) });
      } else {
        try {
          const meanwhile = await ctx.sending.ledger.recent(ctx.sending.firm, client.id!, key);
          if (meanwhile) {
            Object.assign(r, { outcome: meanwhile.outcome === 'sent' ? 'already_sent' : 'skipped', reason: ledgerReason(meanwhile) });
          } else {
            const posted = await postOnce(ctx, client, payloadFor(client.id!, draft), ctx.sending.tokens.idempotencyKey(confirmationId, client.id!));
            if (posted.outcome === 'sent') {
              Object.assign(r, { outcome: 'sent', request: posted.request, reason: posted.warnings.length ? posted.warnings.join(' ') : null });
            } else {
              Object.assign(r, { outcome: 'may_have_been_sent', reason: `${posted.message.replace(/ The request may have been sent\.$/, '')} May have been sent: check with list_requests` });
            }
          }
        } catch (error) {
          if (error instanceof StoreUnavailableError) {
            // The pre-send record could not be written: this one was not sent, and nothing more is (fail closed).
            Object.assign(r, { outcome: 'not_sent', reason: error.message });
            stop('the send store failing', n, error.message);
          } else if (!(error instanceof ApiError)) {
            // Not a failure the API client knows: whether it was written is unknown (postOnce recorded it so).
            auditSend(ctx, client.id!, 'may_have_been_sent', null);
            const why = `sending failed unexpectedly (${oneLine(ctx.redact(error instanceof Error ? error.message : String(error)), 200)}); check with list_requests`;
            Object.assign(r, { outcome: 'may_have_been_sent', reason: why });
            stop('an unexpected failure', n, why);
          } else if (error instanceof PlanLimitError) stopHere("the firm's plan limit", error);
          else if (error instanceof KeyRejectedError) stopHere('the service rejecting the API key', error);
          else if (error instanceof CancelledError) stopHere('the cancellation of the call', error);
          else if (error instanceof TimedOutError) stopHere('the time limit of the call (DOCREQ_TIMEOUT_MS)', error);
          else Object.assign(r, { outcome: 'not_sent', reason: error.message });
        } finally {
          await release();
        }
      }
      done++;
      const request = r.request?.id ? ` (request id ${oneLine(r.request.id, 40)})` : '';
      ctx.log(`create_request_batch: ${done}/${total} ${r.outcome.replace(/_/g, ' ')}: client ${oneLine(client.id, 40)}${request}`);
      await ctx.progress(done, total, `${done} of ${total}: ${r.outcome.replace(/_/g, ' ')}`);
      if (stoppedBy) break;
    }
    if (stoppedBy) ctx.log(`create_request_batch: stopped by ${oneLine(stoppedBy, 200)}`);

    const sent = recipients.filter((r) => r.outcome === 'sent').length;
    const unclear = recipients.some((r) => r.outcome === 'may_have_been_sent');
    const head = `${sent ? 'SENT' : 'NOT SENT'}: ${countsLine(recipients)}.${stoppedBy ? ` STOPPED by ${stoppedBy}${stopDetail ? `: ${stopDetail}` : '.'}` : ''}`;
    const again = recipients.some((r) => r.outcome === 'not_sent')
      ? 'Calling create_request_batch again with the same arguments sends only to the clients not yet sent (none is sent twice)' +
        (stoppedBy?.startsWith("the firm's plan") ? ', once the firm has room: complete or archive requests, or upgrade the plan.' : '.')
      : '';
    const check = unclear ? 'For "may have been sent": check with list_requests before sending again; this server will not send those again for 24 hours.' : '';
    // Nothing sent and something failed (not only skips): an error result, still with every recipient.
    const failed = recipients.some((r) => r.outcome === 'not_sent' || r.outcome === 'may_have_been_sent');
    return result(head, noToken, [again, check].filter(Boolean).join('\n'), sent === 0 && failed);
  },
});
