import { z } from 'zod';
import { clientRecord, createPayload, documentedClient, requestRecord, type Client, type CreatePayload } from '../api/records.js';
import { UserInputError } from '../errors.js';
import { defineTool } from './define.js';
import { findClient } from './resolve-client.js';
import { oneLine, quoted } from '../text/render.js';
import {
  askPerson,
  assertSendingAllowed,
  clientLabel,
  confirmationOut,
  describeDraft,
  draftFromInput,
  duplicateOf,
  freshConfirmationId,
  payloadFor,
  postOnce,
  previewNext,
  requestFields,
  titleKey,
  type Draft,
  inProgressReason,
} from './sending.js';

const OUTCOMES = ['previewed', 'declined', 'sent', 'may_have_been_sent', 'already_sent'] as const;

const output = z.object({
  sent: z.boolean().describe('Whether the request was sent (the client e-mailed).'),
  dryRun: z.boolean(),
  confirmation: confirmationOut,
  client: clientRecord,
  payload: createPayload.describe('The exact body that was, or would be, POSTed.'),
  request: requestRecord.nullable().describe('The created request, or null.'),
  outcome: z.enum(OUTCOMES).describe('previewed, declined, sent, may_have_been_sent (check list_requests), already_sent (this token was used before).'),
  warnings: z.array(z.string()),
});
type Output = z.output<typeof output>;
/** What a token's first use did, kept in the send store (no client details: they are read again). */
type Stored = Pick<Output, 'outcome' | 'request' | 'warnings'>;

function summary(client: Client, payload: CreatePayload, draft: Draft): string {
  return `To: ${clientLabel(client)}\n${describeDraft(draft)}\nExact body: ${JSON.stringify(payload)}`;
}

export const createRequest = defineTool({
  name: 'create_request',
  title: 'Create and send a document request',
  description:
    'Creates a checklist request for one client and SENDS IT (the service e-mails the client). ' +
    'Unconfirmed, it previews and returns a confirmationToken: show the preview; only once the person agrees, call again adding the token. ' +
    'Refuses a duplicate (same title open, or sent in 24 h) unless allowDuplicate. ' +
    'It cannot remind, change, re-date, cancel or delete requests, or change client details.',
  inputSchema: z.strictObject({
    client: z.string().min(1).max(320).describe("The client's id (preferred), e-mail, or exact display name."),
    ...requestFields,
  }),
  outputSchema: output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    assertSendingAllowed(ctx);
    const draft = draftFromInput(input, ctx);
    await ctx.progress(0, 3, 'Resolving the client');
    // The duplicate guard's GET runs while the client is resolved (both are reads).
    const requests = ctx.api.listRequests({ signal: ctx.signal, deadline: ctx.deadline });
    requests.catch(() => undefined);
    const client = await findClient(ctx, input.client);
    if (!client.id) throw new UserInputError(`The client ${quoted(client.displayName, 60)} has no id in the service's answer, so no request can be created for it.`);
    const warnings = [...draft.warnings];
    if (client.status && client.status.toLowerCase() !== 'active') warnings.push(`The client's status is ${quoted(client.status, 30)}, not active.`);
    const payload = payloadFor(client.id, draft);
    const allowDuplicate = input.allowDuplicate ?? false;
    const binding = { tool: 'create_request', payload, allowDuplicate };
    const base = { client: documentedClient(client), payload, dryRun: input.dryRun ?? false };
    const result = (text: string, structured: Omit<Output, 'client' | 'payload' | 'dryRun'>, isError = false) => ({ text, structured: { ...base, ...structured }, isError });
    const noToken = { needed: false, token: null, expiresAt: null };

    // A token already used answers with what its first use did.
    let tokenId: string | undefined;
    let tokenNote = '';
    if (input.confirmationToken) {
      const check = ctx.sending.tokens.verify(input.confirmationToken, binding);
      if (check.ok) {
        const first = await ctx.sending.ledger.tokenResult<Stored>(ctx.sending.firm, check.id);
        if (first) {
          return result(
            `ALREADY USED: this confirmationToken was used before (outcome: ${first.outcome}); nothing more was sent.` +
              (first.request ? ` Request id ${oneLine(first.request.id, 40)}.` : ' Check with list_requests.'),
            { request: first.request, outcome: 'already_sent', sent: false, confirmation: noToken, warnings: [...first.warnings] },
          );
        }
        tokenId = check.id;
      } else {
        tokenNote =
          check.reason === 'expired'
            ? 'The confirmationToken given has expired (tokens last 15 minutes); nothing was sent. '
            : 'The confirmationToken given does not belong to this exact request (client, title, due date, items, mode, allowDuplicate) and key (and person, when signed in); nothing was sent. ';
      }
    }

    await ctx.progress(1, 3, "Checking the client's open requests");
    const duplicate = await duplicateOf(ctx, client, payload.title, await requests);
    if (duplicate && !allowDuplicate) {
      throw new UserInputError(
        `Not sent: ${duplicate}. Nothing was sent. If the person really wants a second, NEW request (this is not a reminder), call again with allowDuplicate: true.`,
      );
    }
    if (duplicate) warnings.push(`Sending although ${duplicate}.`);

    const mode = ctx.config.confirmSend;
    const preview = (why: string) => {
      const { token, expiresAt } = ctx.sending.tokens.issue(binding);
      const needed = mode === 'auto' && !ctx.canAsk;
      return result(
        `${tokenNote}${input.dryRun ? 'DRY RUN' : 'PREVIEW'} — nothing was sent.${why ? ` ${why}` : ''}\n${summary(client, payload, draft)}` +
          (warnings.length ? `\nWarnings: ${warnings.join(' ')}` : '') +
          `\n${previewNext(needed, token, expiresAt, 'create_request')}`,
        { sent: false, outcome: 'previewed', request: null, confirmation: { needed, token, expiresAt: new Date(expiresAt).toISOString() }, warnings },
      );
    };
    if (input.dryRun) return preview('');
    if (mode === 'always' && !ctx.canAsk) {
      throw new UserInputError(
        'Nothing was sent: DOCREQ_CONFIRM_SEND is "always", which needs the person to confirm through MCP elicitation, and this host does not support it. ' +
          'Use a host with elicitation, or ask whoever runs the server to set DOCREQ_CONFIRM_SEND=auto (confirmation by token).',
      );
    }
    if (mode === 'auto' && !ctx.canAsk && !tokenId) return preview('Sending needs the person\'s go-ahead, given as the confirmationToken below.');

    // Once only: one call at a time per recipient and title (in any process sharing the store), while it is confirmed and sent.
    const release = await ctx.sending.ledger.lock(ctx.sending.firm, client.id, titleKey(payload.title));
    if (!release) {
      throw new UserInputError(
        `Not sent: ${inProgressReason(payload.title, clientLabel(client))}. Nothing more was sent.`,
      );
    }
    try {
      // A parallel call with the same token may have finished while this one waited for the lock.
      const first = tokenId ? await ctx.sending.ledger.tokenResult<Stored>(ctx.sending.firm, tokenId) : undefined;
      if (first) throw new UserInputError(`Not sent again: this confirmationToken was just used (outcome: ${first.outcome}). Nothing more was sent.`);
      // Another call may have finished this send since the list above was read.
      const sentMeanwhile = await duplicateOf(ctx, client, payload.title, []);
      if (sentMeanwhile && !allowDuplicate) throw new UserInputError(`Not sent: ${sentMeanwhile}. Nothing more was sent.`);
      if (mode !== 'never' && ctx.canAsk) {
        const answer = await askPerson(
          ctx,
          `Send this document request? The service will e-mail the client.\n${summary(client, payload, draft)}${warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''}`,
          'create_request',
        );
        if (answer !== 'accepted') {
          return result(`NOT SENT: the person declined to send ${quoted(payload.title, 80)} to ${clientLabel(client)}. Nothing was sent.`, {
            sent: false,
            outcome: 'declined',
            request: null,
            confirmation: noToken,
            warnings: [...warnings, 'The person declined; nothing was sent.'],
          });
        }
      }
      await ctx.progress(2, 3, 'Sending');
      const confirmationId = tokenId ?? freshConfirmationId();
      const posted = await postOnce(ctx, client, payload, ctx.sending.tokens.idempotencyKey(confirmationId, client.id));
      const out =
        posted.outcome === 'sent'
          ? result(
              `SENT: ${quoted(payload.title, 80)} to ${clientLabel(client)}` +
                (posted.request ? `: request id ${oneLine(posted.request.id, 40)}, status ${oneLine(posted.request.status, 20)}.` : '.') +
                ([...warnings, ...posted.warnings].length ? `\nWarnings: ${[...warnings, ...posted.warnings].join(' ')}` : ''),
              { sent: true, outcome: 'sent', request: posted.request, confirmation: noToken, warnings: [...warnings, ...posted.warnings] },
            )
          : result(
              `MAY HAVE BEEN SENT — ${posted.message.replace(/ The request may have been sent\.$/, '')} The request may have been sent: check with list_requests before sending again; this server refuses to send it again for 24 hours unless allowDuplicate is given.`,
              { sent: false, outcome: 'may_have_been_sent', request: null, confirmation: noToken, warnings: [...warnings, posted.message] },
              true,
            );
      if (tokenId) {
        // What this token did, for a second use anywhere; the send's own record already blocks a repeat if this fails.
        const stored: Stored = { outcome: out.structured.outcome, request: out.structured.request, warnings: out.structured.warnings };
        await ctx.sending.ledger.rememberToken(ctx.sending.firm, tokenId, stored).catch((error: unknown) => {
          ctx.log(`send store: what a confirmation token did could not be recorded (${error instanceof Error ? error.message : String(error)})`, 'error');
        });
      }
      return out;
    } finally {
      await release();
    }
  },
});

