import { z } from 'zod';
import { requestRecord } from '../api/records.js';
import { CHECK_FIRST } from '../send/outcomes.js';
import { newSend, sendOnce, type Send, type SendReport } from '../send/pipeline.js';
import { defineTool, type ToolContext, type ToolResult } from './define.js';
import { oneLine, quoted } from '../text/render.js';
import { checkSends } from './as-previewed.js';
import { OUTCOMES, resolveAll, type Outcome, type Recipient } from './batch-recipients.js';
import {
  assertSendingAllowed,
  cannotConfirm,
  confirmedBy,
  GO_AHEAD,
  PAGE_TOKEN_META,
  pageBinding,
  pageNext,
  sendWay,
  type SendWay,
  takeConfirmation,
  requirePress,
  type Confirmation,
  clientLabel,
  confirmationOut,
  describeDraft,
  draftFromInput,
  withTemplateMeant,
  payloadFor,
  previewNext,
  profileOf,
  requestFields,
} from './sending.js';

/**
 * create_request_batch (docs/sending.md, "Batches"): one request for several clients (RECIPIENTS). Every recipient
 * is resolved and checked up front from one read of each list; one preview; then the one send
 * pipeline (src/send/pipeline.ts) as create_request uses it, per recipient: every claim taken before
 * the one confirmation for the batch, then one POST at a time, each with an Idempotency-Key derived
 * from the confirmation and the recipient. The batch stops at the first plan limit or key rejection,
 * at a cancel, or when too little of the time limit is left.
 */

/** How many clients one batch sends to. */
const RECIPIENTS = { min: 2, max: 100 };

const recipientOut = z.object({
  client: z.string().describe('As given.'),
  clientId: z.string().nullable(),
  // Who it resolved to, beside what was given; null when it did not resolve.
  displayName: z.string().nullable().describe('The resolved client.'),
  email: z.string().nullable(),
  outcome: z.enum(OUTCOMES),
  request: requestRecord.nullable(),
  reason: z.string().nullable(),
  asPreviewed: z.boolean().nullable().describe("After a send: whether the service's record matches the preview (null: not checked)."),
  differences: z.array(z.string()),
});

const output = z.object({
  sent: z.number().int().describe('How many requests were sent.'),
  dryRun: z.boolean(),
  confirmation: confirmationOut,
  payload: z.record(z.string(), z.unknown()).describe("The body POSTed to each recipient (the service's field names), without its client field."),
  // Listed loosely (its shape is the request's own fields): what the page sends again when the person presses Send.
  previewed: z.record(z.string(), z.unknown()).describe("The same request in this server's terms: title, dueDate, items, correctnessMode."),
  recipients: z.array(recipientOut),
  stoppedBy: z.string().nullable().describe('Why the batch stopped early, or null.'),
  sentBy: z.string().nullable().describe('After a send with sign-in: the e-mail of the person the requests were sent in the name of; otherwise null.'),
  warnings: z.array(z.string()),
});
type Output = z.output<typeof output>;

const label = (r: Recipient) => (r.client ? clientLabel(r.client) : quoted(r.given, 60));

/** The client a recipient resolved to, as its structured row names it. */
const resolvedAs = (r: Recipient) => ({ displayName: r.client?.displayName ?? null, email: r.client?.email ?? null });

const COUNTED: [Outcome, string][] = [
  ['sent', 'sent'],
  ['may_have_been_sent', 'may have been sent'],
  ['not_sent', 'not sent'],
  ['skipped', 'skipped'],
];

/** Exact counts: a result's four (and any already sent or declined); a preview's will send and skipped. */
function countsLine(recipients: Recipient[], preview = false): string {
  const count = (o: Outcome) => recipients.filter((r) => r.outcome === o).length;
  const shown: [Outcome, string][] = preview
    ? [
        ['will_send', 'will send'],
        ['skipped', 'skipped'],
      ]
    : COUNTED;
  const extra = (['accepted', 'already_sent', 'declined'] as const)
    .filter((o) => count(o) > 0)
    .map((o) => (o === 'accepted' ? `${count(o)} accepted (queued by the service, not yet known to be e-mailed)` : `${count(o)} ${o.replace('_', ' ')}`));
  return [...shown.map(([o, words]) => `${count(o)} ${words}`), ...extra].join(', ') + ` (of ${recipients.length})`;
}

function recipientLines(recipients: Recipient[]): string {
  return recipients
    .map((r, n) => {
      const id = r.request?.id ? `, request id ${oneLine(r.request.id, 40)}` : '';
      const check =
        !r.check || r.check.asPreviewed === true
          ? ''
          : r.check.asPreviewed === false
            ? ` — NOT AS PREVIEWED: ${r.check.differences.join('; ')}`
            : ` — not checked against the preview: ${r.check.detail}`;
      return `  ${n + 1}. ${label(r)}: ${r.outcome.replace(/_/g, ' ')}${id}${r.reason ? ` — ${r.reason}` : ''}${check}`;
    })
    .join('\n');
}

/** What create_request_batch takes: its recipients, and the request as create_request takes it. */
const inputSchema = z.strictObject({
  clients: z.array(z.string().min(1).max(320)).min(RECIPIENTS.min).max(RECIPIENTS.max).describe('Client ids (preferred), e-mails or exact names.'),
  ...requestFields,
});
type Input = z.output<typeof inputSchema>;

export const createRequestBatch = defineTool({
  name: 'create_request_batch',
  title: 'Send one document request to many clients',
  description:
    `Sends one request to ${RECIPIENTS.min}–${RECIPIENTS.max} clients; the service e-mails each.` +
    ' One preview lists each recipient as will send or why not; ' +
    'one confirmation covers the batch, as in create_request. Sends one at a time and stops at a plan limit; called again, sends only to those not yet sent.',
  inputSchema,
  outputSchema: output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    assertSendingAllowed(ctx);
    const batch = await resolveBatch(ctx, input);
    // Before any send the batch has not stopped.
    const result = resultOf(ctx, batch, null);
    if (willSend(batch.recipients).length === 0) return nothingToSend(batch, result);
    const { way, tokenId, tokenNote } = takeToken(ctx, batch);
    const preview = previewAll(ctx, batch, result, way, tokenId, tokenNote);
    if (preview) return preview;
    const sends = sendsOf(batch);
    const sent = await sendEach(ctx, batch, sends, way, tokenId);
    await checkAsPreviewed(ctx, sends);
    return afterSends(ctx, batch, sent);
  },
});

/** The recipients the batch will (still) send to. */
function willSend(recipients: Recipient[]): Recipient[] {
  return recipients.filter((r) => r.outcome === 'will_send');
}

/** The draft and its recipients, each resolved and checked, with what the preview, the token and the sends share. */
async function resolveBatch(ctx: ToolContext, input: Input) {
  const draft = draftFromInput(await withTemplateMeant(ctx, input), ctx);
  const [listed, requests] = await Promise.all([ctx.api.fetchClients({ signal: ctx.signal }), ctx.api.listRequests({ signal: ctx.signal })]);
  const clients = listed.records;
  const allowDuplicate = input.allowDuplicate ?? false;
  const warnings = [...draft.warnings];
  const recipients = await resolveAll(ctx, input.clients, clients, requests, draft.title, allowDuplicate, warnings, listed.paging);
  // The body each recipient is sent, in the service's own field names; its client field is set per recipient.
  const profile = profileOf(ctx);
  const { [profile.spec.body.client]: _, ...payload } = profile.body(payloadFor('', draft));
  const { clientId: _none, ...previewed } = payloadFor('', draft);
  const binding = {
    tool: 'create_request_batch',
    clientIds: recipients.filter((r) => r.bound).map((r) => r.client!.id),
    title: draft.title,
    dueDate: draft.dueDate ?? null,
    items: draft.items,
    correctnessMode: draft.correctnessMode ?? null,
    allowDuplicate,
  };
  const noToken = { needed: false, by: confirmedBy(sendWay(ctx)), token: null, expiresAt: null };
  return { input, draft, profile, warnings, recipients, payload, previewed, binding, noToken };
}

/** One batch as resolved: what every later step reads. The sends update its recipients' outcomes in place. */
type Batch = Awaited<ReturnType<typeof resolveBatch>>;

/** The batch's answer, built from its recipients as they stand when it is called; stoppedBy: why the batch stopped early. */
function resultOf(ctx: ToolContext, { input, recipients, payload, previewed, warnings }: Batch, stoppedBy: string | null) {
  return (head: string, confirmation: Output['confirmation'], tail = '', isError = false) => {
    const sent = recipients.filter((r) => r.outcome === 'sent' || r.outcome === 'accepted').length;
    // Who it was sent as is a fact of the sends, said once, not a warning on each recipient.
    const sentBy = sent && ctx.sending.actor ? ctx.sending.actor.email : null;
    const structured: Output = {
      sent: recipients.filter((r) => r.outcome === 'sent').length,
      dryRun: input.dryRun ?? false,
      confirmation,
      payload,
      previewed,
      recipients: recipients.map((r) => ({
        client: r.given,
        clientId: r.client?.id ?? null,
        ...resolvedAs(r),
        outcome: r.outcome,
        request: r.request,
        reason: r.reason,
        asPreviewed: r.check?.asPreviewed ?? null,
        differences: r.check?.differences ?? [],
      })),
      stoppedBy,
      sentBy,
      warnings,
    };
    const by = sentBy ? `\nSent in the name of ${sentBy} (signed in).` : '';
    const text = `${head}${by}\n${recipientLines(recipients)}${warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''}${tail ? `\n${tail}` : ''}`;
    return { text, structured, isError };
  };
}
/** Makes one answer of the batch: a head line, the confirmation, then every recipient, the warnings and a tail. */
type Result = ReturnType<typeof resultOf>;

/** No recipient can be sent: the answer says why for each, and nothing is sent. */
function nothingToSend({ recipients, noToken }: Batch, result: Result): ToolResult<Output> {
  return result(
    `NOTHING TO SEND — nothing was sent: ${countsLine(recipients, true)}.`,
    noToken,
    'No recipient can be sent this request; see the reasons above.',
  );
}

/** How this call confirms a send (way), and the confirmationToken given: taken (tokenId) or refused with why (tokenNote). */
function takeToken(ctx: ToolContext, { input, binding }: Batch): Confirmation {
  const taken = takeConfirmation(ctx, input.confirmationToken, binding, 'batch (recipients that will send, title, due date, items, mode, allowDuplicate)');
  requirePress(taken);
  return taken;
}

/**
 * The preview (or dry run) of the whole batch, with the token the way of confirming needs, when this call
 * sends nothing; undefined when it goes on to send.
 */
function previewAll(
  ctx: ToolContext,
  batch: Batch,
  result: Result,
  way: SendWay,
  tokenId: string | undefined,
  tokenNote: string,
): ToolResult<Output> | undefined {
  const { input, draft, profile, recipients, payload, binding } = batch;
  const draftText = `${describeDraft(draft)}\nExact body for each (${profile.spec.body.client} set per recipient): ${JSON.stringify(payload)}`;
  const mode = ctx.config.confirmSend;
  const preview = (why: string) => {
    const page = way === 'page' || way === 'pressed';
    const issued = way === 'none' ? undefined : ctx.sending.tokens.issue(page ? pageBinding(binding) : binding);
    const expiresAt = issued ? new Date(issued.expiresAt).toISOString() : null;
    // The page's token goes only where the page gets it: the model's text and structuredContent never hold it.
    const needed = way === 'token' || page;
    const next = !issued
      ? `Next: ${cannotConfirm(mode).message}`
      : page
        ? pageNext(issued.expiresAt, 'create_request_batch')
        : previewNext(needed, issued.token, issued.expiresAt, 'create_request_batch');
    return {
      ...result(
        `${tokenNote}${input.dryRun ? 'DRY RUN' : 'PREVIEW'} — nothing was sent. ${countsLine(recipients, true)}.${why ? ` ${why}` : ''}`,
        { needed, by: confirmedBy(way), token: page ? null : (issued?.token ?? null), expiresAt },
        `${draftText}\n${next}`,
      ),
      ...(page && issued ? { meta: { [PAGE_TOKEN_META]: { token: issued.token, expiresAt } } } : {}),
    };
  };
  if (input.dryRun) return preview('');
  if (way === 'none') throw cannotConfirm(mode);
  if (way === 'page') return preview('');
  if (way === 'token' && !tokenId) return preview(GO_AHEAD);
  return undefined;
}

/** The answer after the sends: the counts, why the batch stopped, and what calling again does. */
function report({ recipients, noToken }: Batch, result: Result, stoppedBy: string | null, stopDetail: string) {
  const sent = recipients.filter((r) => r.outcome === 'sent').length;
  const unclear = recipients.some((r) => r.outcome === 'may_have_been_sent');
  const differ = recipients.filter((r) => r.check?.asPreviewed === false).length;
  const queued = recipients.some((r) => r.outcome === 'accepted');
  const head = `${sent ? 'SENT' : queued ? 'ACCEPTED' : 'NOT SENT'}${differ ? `, BUT ${differ} NOT AS PREVIEWED` : ''}: ${countsLine(recipients)}.${stoppedBy ? ` STOPPED by ${stoppedBy}${stopDetail ? `: ${stopDetail}` : '.'}` : ''}`;
  const again = recipients.some((r) => r.outcome === 'not_sent')
    ? 'Calling create_request_batch again with the same arguments sends only to the clients not yet sent (none is sent twice)' +
      (stoppedBy?.startsWith("the firm's plan") ? ', once the firm has room: complete or archive requests, or upgrade the plan.' : '.')
    : '';
  const check = unclear ? `For "may have been sent": ${CHECK_FIRST}; this server will not send those again for 24 hours.` : '';
  // Nothing sent and something failed (not only skips): an error result, still with every recipient.
  const failed = recipients.some((r) => r.outcome === 'not_sent' || r.outcome === 'may_have_been_sent');
  return result(head, noToken, [again, check].filter(Boolean).join('\n'), sent === 0 && failed);
}

/** Each send of the batch, with the recipient it is for. */
type Sends = Map<Send, Recipient>;

/**
 * One send per recipient that will send (its position: its place in the batch). The one send pipeline, per
 * recipient: claim → read the record again → ask once for the batch → record → POST once → settle.
 * This server's own sends are never repeated by a batch, allowDuplicate or not.
 */
function sendsOf({ draft, profile, recipients }: Batch): Sends {
  return new Map(
    willSend(recipients).map((r) => {
      const request = payloadFor(r.client!.id!, draft);
      return [newSend(r.client!.id!, request, profile.body(request), recipients.indexOf(r) + 1), r] as const;
    }),
  );
}

/** Each send's outcome, as the recipient's. */
function copy(sends: Sends, send: Send): void {
  const r = sends.get(send)!;
  const outcome: Outcome =
    send.outcome === 'held'
      ? 'skipped'
      : send.outcome === 'recorded'
        ? send.record?.outcome === 'sent'
          ? 'already_sent'
          : 'skipped'
        : send.outcome === 'ready'
          ? 'will_send'
          : send.outcome === 'sent' && send.accepted
            ? 'accepted'
            : send.outcome;
  const reason = send.outcome === 'sent' ? (send.warnings.length ? send.warnings.join(' ') : null) : send.reason;
  Object.assign(r, { outcome, reason, request: send.request });
}

/** The one question for the whole batch: who will be sent to, who is not and why, and the request. */
function askToSend({ draft, recipients, warnings }: Batch, sends: Sends): string {
  for (const send of sends.keys()) copy(sends, send);
  const asked = willSend(recipients);
  const skipped = recipients.filter((r) => r.outcome !== 'will_send');
  return (
    `Send this document request to ${asked.length} client${asked.length === 1 ? '' : 's'}? The service will e-mail each one.\n` +
    `${asked.map((r) => `- ${label(r)}`).join('\n')}\n` +
    (skipped.length ? `Not sent (${skipped.length}):\n${skipped.map((r) => `- ${label(r)}: ${r.reason}`).join('\n')}\n` : '') +
    `${describeDraft(draft)}${warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''}`
  );
}

/** The sends, one at a time through the one pipeline, each recipient's outcome copied as it settles and at the end. */
async function sendEach(ctx: ToolContext, batch: Batch, sends: Sends, way: SendWay, tokenId: string | undefined): Promise<SendReport> {
  const sent = await sendOnce(ctx, {
    tool: 'create_request_batch',
    sends: [...sends.keys()],
    ownRecordBlocks: true,
    question: way === 'asked' ? () => askToSend(batch, sends) : undefined,
    tokenId,
    starting: (going) => ctx.progress(0, going.length, `Sending to ${going.length} client${going.length === 1 ? '' : 's'}`),
    settled: async (send, done, total) => {
      copy(sends, send);
      const r = sends.get(send)!;
      const request = r.request?.id ? ` (request id ${oneLine(r.request.id, 40)})` : '';
      ctx.log(`create_request_batch: ${done}/${total} ${r.outcome.replace(/_/g, ' ')}: client ${oneLine(send.clientId, 40)}${request}`);
      await ctx.progress(done, total, `${done} of ${total}: ${r.outcome.replace(/_/g, ' ')}`);
    },
  });
  for (const send of sends.keys()) copy(sends, send);
  return sent;
}

/** Each send made, checked against the preview; a request the answer named only by id, as the list shows it. */
async function checkAsPreviewed(ctx: ToolContext, sends: Sends): Promise<void> {
  // As previewed, checked: every send against its preview, the service's list read at most once for all of them.
  const done = [...sends].filter(([send]) => send.outcome === 'sent');
  if (done.length) {
    const checks = await checkSends(
      ctx,
      done.map(([send, r]) => ({ payload: send.payload, client: r.client!, request: send.request, kept: send.kept })),
    );
    done.forEach(([send, r], i) => {
      r.check = checks[i];
      // An answer that named only the request's id (or nothing): the request as the list shows it.
      if (checks[i]!.listed && (!send.request || send.request.title === null)) r.request = checks[i]!.listed!;
    });
  }
}

/** The answer once the sends are done: declined, nothing left to send, or what each send did. */
function afterSends(ctx: ToolContext, batch: Batch, sent: SendReport) {
  const { recipients, noToken } = batch;
  const result = resultOf(ctx, batch, sent.stoppedBy);
  const stoppedBy = sent.stoppedBy;
  if (sent.declined) return result(`NOT SENT: the person declined the batch; nothing was sent. ${countsLine(recipients)}.`, noToken);
  if (!stoppedBy && willSend(recipients).length === 0 && !recipients.some((r) => ['sent', 'accepted', 'may_have_been_sent', 'not_sent'].includes(r.outcome))) {
    return nothingToSend(batch, result);
  }
  if (stoppedBy) ctx.log(`create_request_batch: stopped by ${oneLine(stoppedBy, 200)}`);
  return report(batch, result, stoppedBy, sent.stopDetail);
}
