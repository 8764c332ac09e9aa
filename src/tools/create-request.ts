import { z } from 'zod';
import { clientRecord, documentedClient, requestRecord, type Client, type RequestRecord } from '../api/records.js';
import { UserInputError } from '../errors.js';
import { defineTool, type ToolContext, type ToolResult } from './define.js';
import { findClient } from './resolve-client.js';
import { oneLine, quoted } from '../text/render.js';
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
  clientLabel,
  confirmationOut,
  describeDraft,
  draftFromInput,
  withTemplateMeant,
  duplicateOf,
  notActive,
  notActiveUnattended,
  notActiveWarning,
  payloadFor,
  previewNext,
  profileOf,
  requestFields,
  type Draft,
} from './sending.js';
import { ApiError } from '../api/errors.js';
import { tokenJustUsed } from '../send/outcomes.js';
import { newSend, sendOnce, type Send } from '../send/pipeline.js';
import { checkSends, checkText, type PreviewCheck } from './as-previewed.js';

const OUTCOMES = ['previewed', 'declined', 'sent', 'accepted', 'may_have_been_sent', 'already_sent'] as const;

const output = z.object({
  sent: z.boolean().describe('Whether the request was sent (the client e-mailed).'),
  dryRun: z.boolean(),
  confirmation: confirmationOut,
  client: clientRecord,
  payload: z.record(z.string(), z.unknown()).describe("The exact body that was, or would be, POSTed (in the service's own field names)."),
  // Listed loosely (its shape is the request's own fields): what the page sends again when the person presses Send.
  previewed: z.record(z.string(), z.unknown()).describe("The same request in this server's terms: title, dueDate, items, correctnessMode."),
  request: requestRecord.nullable().describe('The created request, or null.'),
  outcome: z
    .enum(OUTCOMES)
    .describe(
      'previewed, declined, sent, accepted (queued by the service, not yet known to be e-mailed), may_have_been_sent (check list_requests), already_sent (this token was used before).',
    ),
  asPreviewed: z
    .boolean()
    .nullable()
    .describe("After a send: true when the service's record matches the preview, false when it differs (differences), null when not checked."),
  differences: z.array(z.string()).describe("How the service's record differs from the preview, each with its likely cause."),
  sentBy: z.string().nullable().describe('After a send with sign-in: the e-mail of the person it was sent in the name of; otherwise null.'),
  warnings: z.array(z.string()),
});
type Output = z.output<typeof output>;
/** What a token's first use did, kept in the send store (no client details: they are read again). */
type Stored = Pick<Output, 'outcome' | 'request' | 'warnings'>;
const stored = ({ outcome, request, warnings }: Output): Stored => ({ outcome, request, warnings });

/** The created request's id and status, as far as the service gave them (never an empty field shown). */
function requestWords(request: RequestRecord | null): string {
  const parts = [request?.id ? `request id ${oneLine(request.id, 40)}` : '', request?.status ? `status ${oneLine(request.status, 20)}` : ''].filter(Boolean);
  return parts.length ? `: ${parts.join(', ')}.` : '.';
}

function summary(client: Client, body: Record<string, unknown>, draft: Draft): string {
  return `To: ${clientLabel(client)}\n${describeDraft(draft)}\nExact body: ${JSON.stringify(body)}`;
}

/** What create_request takes: one client, and the request. */
const inputSchema = z.strictObject({
  client: z.string().min(1).max(320).describe("The client's id (preferred), e-mail, or exact display name."),
  ...requestFields,
});
type Input = z.output<typeof inputSchema>;

export const createRequest = defineTool({
  name: 'create_request',
  title: 'Create and send a document request',
  description:
    'Creates a checklist request for one client and SENDS IT (the service e-mails the client). ' +
    'Unconfirmed, it previews and returns a confirmationToken: show the preview; only once the person agrees, call again adding the token. ' +
    'Refuses a duplicate (same title open, or sent in 24 h) unless allowDuplicate. ' +
    'It cannot remind, change, re-date, cancel or delete requests, or change client details.',
  inputSchema,
  outputSchema: output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    assertSendingAllowed(ctx);
    const resolved = await resolveRequest(ctx, input);
    const { way, tokenId, tokenNote, used } = await takeToken(ctx, resolved);
    if (used) return used;
    await refuseDuplicate(ctx, resolved);
    const preview = previewOne(ctx, resolved, way, tokenId, tokenNote);
    if (preview) return preview;
    const send = await sendOne(ctx, resolved, way, tokenId);
    return answerSend(ctx, resolved, send);
  },
});

/** The draft and the client it is for, resolved, with the body, the binding and the answer's fixed fields they give. */
async function resolveRequest(ctx: ToolContext, input: Input) {
  const { actor } = ctx.sending;
  const draft = draftFromInput(await withTemplateMeant(ctx, input), ctx);
  await ctx.progress(0, 3, 'Resolving the client');
  // The duplicate guard's GET runs while the client is resolved (both are reads).
  const requests = ctx.api.listRequests({ signal: ctx.signal, deadline: ctx.deadline });
  requests.catch(() => undefined);
  const client = await findClient(ctx, input.client);
  if (!client.id)
    throw new UserInputError(`The client ${quoted(client.displayName, 60)} has no id in the service's answer, so no request can be created for it.`);
  const warnings = [...draft.warnings];
  const inactive = notActive(client);
  if (inactive) warnings.push(notActiveWarning(inactive));
  const payload = payloadFor(client.id, draft);
  // The exact body the service gets, in its own field names: what the preview shows and the POST sends.
  const body = profileOf(ctx).body(payload);
  const allowDuplicate = input.allowDuplicate ?? false;
  const binding = { tool: 'create_request', payload, allowDuplicate };
  const { clientId: _, ...previewed } = payload;
  const base = {
    client: documentedClient(client),
    payload: body,
    previewed,
    dryRun: input.dryRun ?? false,
    asPreviewed: null,
    differences: [] as string[],
    sentBy: null,
  };
  const result = (
    text: string,
    structured: Omit<Output, 'client' | 'payload' | 'previewed' | 'dryRun' | 'asPreviewed' | 'differences' | 'sentBy'> & Partial<Pick<Output, 'sentBy'>>,
    isError = false,
  ) => ({
    text,
    structured: { ...base, ...structured },
    isError,
  });
  const noToken = { needed: false, by: confirmedBy(sendWay(ctx)), token: null, expiresAt: null };
  // The client's id was checked above: the later steps send with it.
  return {
    input,
    actor,
    draft,
    requests,
    client: client as Client & { id: string },
    warnings,
    inactive,
    payload,
    body,
    allowDuplicate,
    binding,
    base,
    result,
    noToken,
  };
}

/** One request as resolved: what every later step reads (the warnings grow as the checks find more). */
type Resolved = Awaited<ReturnType<typeof resolveRequest>>;

/**
 * How this call confirms a send (way), and the confirmationToken given: taken (tokenId), refused with why
 * (tokenNote), or already used (used: the answer, what its first use did; nothing more is sent).
 */
async function takeToken(ctx: ToolContext, { input, binding, result, noToken }: Resolved) {
  const taken = takeConfirmation(ctx, input.confirmationToken, binding, 'request (client, title, due date, items, mode, allowDuplicate)');
  // A token already used answers with what its first use did.
  const first = taken.tokenId ? await ctx.sending.ledger.tokenResult<Stored>(ctx.sending.firm, taken.tokenId) : undefined;
  if (first) {
    const used = result(
      `ALREADY USED: this confirmationToken was used before (outcome: ${first.outcome}); nothing more was sent.` +
        (first.request ? ` Request id ${oneLine(first.request.id, 40)}.` : ' Check with list_requests.'),
      { request: first.request, outcome: 'already_sent', sent: false, confirmation: noToken, warnings: [...first.warnings] },
    );
    return { ...taken, tokenId: undefined, used };
  }
  requirePress(taken);
  return { ...taken, used: undefined };
}

/** A duplicate (the same title open for this client, or sent by this server in the last 24 hours) is refused unless allowDuplicate; allowed, it is warned of. */
async function refuseDuplicate(ctx: ToolContext, { client, payload, allowDuplicate, warnings, requests }: Resolved): Promise<void> {
  await ctx.progress(1, 3, "Checking the client's open requests");
  const duplicate = await duplicateOf(ctx, client, payload.title, await requests);
  if (duplicate && !allowDuplicate) {
    throw new UserInputError(
      `Not sent: ${duplicate}. Nothing was sent. If the person really wants a second, NEW request (this is not a reminder), call again with allowDuplicate: true.`,
    );
  }
  if (duplicate) warnings.push(`Sending although ${duplicate}.`);
}

/**
 * The preview (or dry run) of the request, with the token the way of confirming needs, when this call sends
 * nothing; undefined when it goes on to send.
 */
function previewOne(ctx: ToolContext, resolved: Resolved, way: SendWay, tokenId: string | undefined, tokenNote: string): ToolResult<Output> | undefined {
  const { input, client, body, draft, binding, warnings, inactive, result } = resolved;
  const mode = ctx.config.confirmSend;
  const preview = (why: string) => {
    const page = way === 'page' || way === 'pressed';
    const issued = way === 'none' ? undefined : ctx.sending.tokens.issue(page ? pageBinding(binding) : binding);
    const expiresAt = issued ? new Date(issued.expiresAt).toISOString() : null;
    // The page's token goes only where the page gets it: the model's text and structuredContent never hold it.
    const shown = page ? null : (issued?.token ?? null);
    const needed = way === 'token' || page;
    const next = !issued
      ? `Next: ${cannotConfirm(mode).message}`
      : page
        ? pageNext(issued.expiresAt, 'create_request')
        : previewNext(needed, issued.token, issued.expiresAt, 'create_request');
    return {
      ...result(
        `${tokenNote}${input.dryRun ? 'DRY RUN' : 'PREVIEW'} — nothing was sent.${why ? ` ${why}` : ''}\n${summary(client, body, draft)}` +
          (warnings.length ? `\nWarnings: ${warnings.join(' ')}` : '') +
          `\n${next}`,
        { sent: false, outcome: 'previewed', request: null, confirmation: { needed, by: confirmedBy(way), token: shown, expiresAt }, warnings },
      ),
      ...(page && issued ? { meta: { [PAGE_TOKEN_META]: { token: issued.token, expiresAt } } } : {}),
    };
  };
  if (input.dryRun) return preview('');
  if (inactive && way === 'unattended') throw new UserInputError(`Not sent: ${notActiveUnattended(inactive)}. Nothing was sent.`);
  if (way === 'none') throw cannotConfirm(mode);
  if (way === 'page') return preview('');
  if (way === 'token' && !tokenId) return preview(GO_AHEAD);
  return undefined;
}

/** The answer's fields for a send made (or that may have been), with its check against the preview once there is one. */
function outcome({ base, noToken, actor, warnings }: Resolved, send: Send, check?: PreviewCheck): Output {
  if (send.outcome === 'sent') {
    const checked = check ? { asPreviewed: check.asPreviewed, differences: check.differences } : {};
    const sent = !send.accepted;
    return {
      ...base,
      ...checked,
      sent,
      outcome: sent ? 'sent' : 'accepted',
      request: send.request,
      confirmation: noToken,
      sentBy: actor?.email ?? null,
      warnings: [...warnings, ...send.warnings],
    };
  }
  return { ...base, sent: false, outcome: 'may_have_been_sent', request: null, confirmation: noToken, warnings: [...warnings, (send.error as Error).message] };
}

/** The one send pipeline: claim → read the record again → ask → record → POST once → settle → what the token did. */
async function sendOne(ctx: ToolContext, resolved: Resolved, way: SendWay, tokenId: string | undefined): Promise<Send> {
  const { client, payload, body, draft, warnings, allowDuplicate } = resolved;
  const send = newSend(client.id, payload, body, 1, clientLabel(client));
  const question = `Send this document request? The service will e-mail the client.\n${summary(client, body, draft)}${warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''}`;
  const report = await sendOnce(ctx, {
    tool: 'create_request',
    sends: [send],
    ownRecordBlocks: !allowDuplicate,
    question: way === 'asked' ? () => question : undefined,
    tokenId,
    // What this token did, for a second use anywhere (not a failure nobody knows: that is answered as one).
    remember: () =>
      send.outcome === 'sent' || (send.outcome === 'may_have_been_sent' && send.error instanceof ApiError) ? stored(outcome(resolved, send)) : undefined,
    starting: () => ctx.progress(2, 3, 'Sending'),
  });
  if (report.tokenUsed) throw new UserInputError(tokenJustUsed((report.tokenUsed as Stored).outcome));
  return send;
}

/** The answer once the send is settled: sent (checked against the preview), declined, may have been sent, or why not. */
async function answerSend(ctx: ToolContext, resolved: Resolved, send: Send) {
  const { client, payload, result, noToken, warnings } = resolved;
  let check: PreviewCheck | undefined;
  switch (send.outcome) {
    case 'held':
    case 'recorded':
      throw new UserInputError(`Not sent: ${send.reason}. Nothing more was sent.`);
    case 'declined':
      return result(`NOT SENT: the person declined to send ${quoted(payload.title, 80)} to ${clientLabel(client)}. Nothing was sent.`, {
        sent: false,
        outcome: 'declined',
        request: null,
        confirmation: noToken,
        warnings: [...warnings, 'The person declined; nothing was sent.'],
      });
    case 'sent': {
      // As previewed, checked: the service's record (the answer's, else the list's, read once) against the preview.
      [check] = await checkSends(ctx, [{ payload, client, request: send.request, kept: send.kept }]);
      // An answer that named only the request's id (or nothing): the request as the list shows it.
      if (check!.listed && (!send.request || send.request.title === null)) send.request = check!.listed;
      const out = outcome(resolved, send, check);
      const head = send.accepted
        ? `ACCEPTED, NOT YET KNOWN TO BE E-MAILED: the service queued ${quoted(payload.title, 80)} for ${clientLabel(client)} (202 Accepted) and has not said the client was e-mailed; check with list_requests later. This server will not send it again for 24 hours`
        : `SENT${check!.asPreviewed === false ? ', BUT NOT AS PREVIEWED' : ''}: ${quoted(payload.title, 80)} to ${clientLabel(client)}`;
      return result(
        head +
          requestWords(send.request) +
          checkText(check!) +
          // Who it was sent as is a fact of the send, not a warning.
          (out.sentBy ? `\nSent in the name of ${out.sentBy} (signed in).` : '') +
          (out.warnings.length ? `\nWarnings: ${out.warnings.join(' ')}` : ''),
        out,
      );
    }
    case 'may_have_been_sent':
      // A failure the API client does not know is answered as one (src/mcp/call-tool.ts), after it was recorded as "may have been sent".
      if (!(send.error instanceof ApiError)) throw send.error as Error;
      return result(
        `MAY HAVE BEEN SENT — ${send.reason}; this server refuses to send it again for 24 hours unless allowDuplicate is given.`,
        outcome(resolved, send),
        true,
      );
    default:
      // Not sent: the store or the service's answer says why (its guidance is added where errors become results).
      throw (send.error as Error | undefined) ?? new UserInputError(`Nothing was sent: ${send.reason}.`);
  }
}
