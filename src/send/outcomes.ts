import { oneLine, quoted } from '../text/render.js';
import type { LedgerEntry } from './ledger.js';

/**
 * The words for each outcome of a send (docs/sending.md), in one place for create_request and
 * create_request_batch: a send in progress elsewhere, this server's own record of a send, a send
 * that may have been sent, an answer that came too late, a token just used, a failure nobody knows.
 */

/** What the person does about an unclear outcome. */
export const CHECK_FIRST = 'check with list_requests before sending again';

const minute = (at: number) => new Date(at).toISOString().slice(0, 16).replace('T', ' ');

/**
 * Another call holds the claim for this recipient and title: what that means and when
 * it clears. A claim is a lease its owner renews; one whose server stopped clears within about a
 * minute (CLAIM_TTL_MS), and the send's pre-POST record answers from then on.
 */
export function inProgressReason(title: string, to = 'this client', since?: number): string {
  const when = since === undefined ? '' : ` at ${minute(since)} UTC`;
  return (
    `a send of ${quoted(title, 80)} to ${to} is already in progress (started${when} by another call, in this or another process sharing the send store), so it may have been sent. ` +
    'Check with list_requests in a minute: if that call\'s server stopped mid-send, this hold clears within about a minute, and the send\'s record then answers "may have been sent" for 24 hours'
  );
}

/** Why the send store's record of this recipient and title blocks sending it again; `inFlight`: its claim is still held. */
export function ledgerReason(recent: LedgerEntry, inFlight = false): string {
  const when = minute(recent.at);
  if (recent.outcome === 'sent') {
    return `this server sent ${quoted(recent.title, 80)} to this client at ${when} UTC${recent.requestId ? ` (request id ${oneLine(recent.requestId, 40)})` : ''}`;
  }
  if (recent.outcome === 'pending' && inFlight) return inProgressReason(recent.title, 'this client', recent.at);
  if (recent.outcome === 'pending') {
    return `this server may have sent ${quoted(recent.title, 80)} to this client: a send started at ${when} UTC and its outcome was never recorded (the server stopped mid-send), so it may have been sent; check with list_requests`;
  }
  return `this server may have sent ${quoted(recent.title, 80)} to this client at ${when} UTC (the outcome was unclear: it may have been sent); check with list_requests`;
}

/** A POST whose outcome is unknown: what happened (the API error's detail), then the one "may have been sent" sentence. */
export function mayHaveBeenSent(detail: string): string {
  return `${detail} The request may have been sent: ${CHECK_FIRST}`;
}

/** A failure the API client does not know: whether the POST was written is unknown. */
export function unexpectedFailure(detail: string): string {
  return `sending failed unexpectedly (${oneLine(detail, 200)}); check with list_requests`;
}

/** The person's answer came after the call's time limit: nothing was sent, and what to do. */
export function answeredTooLate(timeoutMs: number, tool: string): string {
  return (
    `Nothing was sent: the person did not answer within the call's time limit (DOCREQ_TIMEOUT_MS, ${timeoutMs / 1000} s), and an answer given after it sends nothing. ` +
    `Call ${tool} again to ask them again (whoever runs the server can give more time with DOCREQ_TIMEOUT_MS).`
  );
}

/** A parallel call with the same token finished while this one waited for the claim. */
export function tokenJustUsed(outcome: string): string {
  return `Not sent again: this confirmationToken was just used (outcome: ${outcome}). Nothing more was sent.`;
}

/** A send the host cancelled after it was written: the outcome, for the person running the server. */
export function cancelledAfterWrite(title: string, clientId: string, outcome: 'sent' | 'may_have_been_sent', requestId: string | null): string {
  const what =
    outcome === 'sent' ? `was sent${requestId ? ` (request id ${oneLine(requestId, 40)})` : ''}` : `may have been sent (no clear answer came): ${CHECK_FIRST}`;
  return `a send the host cancelled after it was written ${what}: ${quoted(title, 80)} to client ${oneLine(clientId, 40)}`;
}

/** The store failed after the POST: the pre-send record stays, so the send counts as "may have been sent". */
export function outcomeNotRecorded(clientId: string, why: string): string {
  return `send store: the outcome of a send to client ${oneLine(clientId, 40)} could not be recorded (${oneLine(why, 300)}); its pre-send record stays, so it is treated as "may have been sent" for 24 hours`;
}
