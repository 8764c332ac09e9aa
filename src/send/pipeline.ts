import { randomUUID } from 'node:crypto';
import type { CreateOptions, CreateOutcome } from '../api/client.js';
import { ApiError, CancelledError, KeyRejectedError, PlanLimitError, TimedOutError } from '../api/errors.js';
import type { CreatePayload, RequestRecord } from '../api/records.js';
import type { Kept } from '../domain/service-profile.js';
import { UserInputError } from '../errors.js';
import { StoreUnavailableError } from '../store/store.js';
import { titleKey } from '../text/invisible.js';
import type { LedgerEntry, SendLedger } from './ledger.js';
import { answeredTooLate, cancelledAfterWrite, inProgressReason, ledgerReason, mayHaveBeenSent, outcomeNotRecorded, unexpectedFailure } from './outcomes.js';

/**
 * The one send pipeline (docs/sending.md), for create_request and create_request_batch alike:
 * claim each recipient and title (an identical call anywhere sharing the store is refused while this
 * one is confirmed and sent) → read the send store's record again under the claim → ask the person
 * once, within the call's time limit → for each recipient, in order: record "may have been sent"
 * BEFORE the POST (a store that cannot take it sends nothing) → POST once → settle the record →
 * keep what the confirmation did → release the claim. It decides; the tools only frame the words
 * (src/send/outcomes.ts) in their results.
 */

/** What the pipeline needs of a tool call's context (src/tools/define.ts ToolContext has it all). */
export interface SendContext {
  api: { createRequest(body: Record<string, unknown>, options: CreateOptions): Promise<CreateOutcome> };
  sending: {
    firm: string;
    ledger: SendLedger;
    tokens: { idempotencyKey(confirmationId: string, recipient: string): string };
    actor?: { email: string; sub: string } | undefined;
    audit?: ((line: string) => void) | undefined;
  };
  config: { timeoutMs: number };
  signal: AbortSignal;
  deadline: number;
  confirm(message: string): Promise<'accepted' | 'declined' | 'unsupported'>;
  log(message: string, level?: 'info' | 'error'): void;
  warn?(message: string): void;
  redact(text: string): string;
}

/**
 * One recipient's send, filled in as the pipeline goes: `ready` until it is settled one way or another.
 * `held`: another call holds its claim. `recorded`: this server's own record blocks it (`record`).
 */
export interface Send {
  clientId: string;
  /** The request in our own terms: its recipient and title key the claim and the 24-hour record. */
  payload: CreatePayload;
  /** The exact body POSTed, as the preview showed it (the service profile's field names and spellings). */
  body: Record<string, unknown>;
  /** Its place among the recipients as given (1-based), for "stopped … at recipient n". */
  position: number;
  /** Who it goes to, in the "already in progress" words. */
  to: string;
  outcome: 'ready' | 'held' | 'recorded' | 'declined' | 'sent' | 'may_have_been_sent' | 'not_sent';
  reason: string | null;
  request: RequestRecord | null;
  warnings: string[];
  record?: LedgerEntry;
  /** What stopped or failed it, for a caller that answers with the failure itself (create_request). */
  error?: unknown;
  /** Sent with 202: the service queued it and has not said the client was e-mailed. */
  accepted?: boolean;
  /** What the answer's record says the service kept (for the as-previewed check), null without one. */
  kept?: Kept | null;
}

export function newSend(clientId: string, payload: CreatePayload, body: Record<string, unknown>, position: number, to = 'this client'): Send {
  return { clientId, payload, body, position, to, outcome: 'ready', reason: null, request: null, warnings: [] };
}

export interface SendPlan {
  tool: string;
  sends: Send[];
  /** false: this server's own record of the send does not block it (create_request with allowDuplicate). */
  ownRecordBlocks: boolean;
  /** The one question for the person about the sends still ready; undefined: nobody is asked. */
  question?: ((ready: Send[]) => string) | undefined;
  /** The token that confirmed it, if one did: every Idempotency-Key derives from it (else from a fresh id). */
  tokenId?: string | undefined;
  /**
   * create_request: what the token did, kept for a second use anywhere (before the claim is released);
   * a token already used when the claim is taken sends nothing. Returns undefined to keep nothing.
   */
  remember?: ((sends: Send[]) => unknown) | undefined;
  /** Before the first POST, with the sends about to be made. */
  starting?: ((sends: Send[]) => Promise<void>) | undefined;
  /** After each send is settled (sent, may have been sent, not sent). */
  settled?: ((send: Send, done: number, total: number) => Promise<void>) | undefined;
}

export interface SendReport {
  /** Why the sends stopped early, and what stopped them (its words), or null. */
  stoppedBy: string | null;
  stopDetail: string;
  declined: boolean;
  /** What the token did the first time, when it was used while this call waited for the claim. */
  tokenUsed?: unknown;
}

type Claim = () => Promise<void>;
/** sendOnce's stop: `send` keeps its own outcome, every later one still ready is not sent. */
type Stop = (why: string, send: Send, detail?: string) => void;

export async function sendOnce(ctx: SendContext, plan: SendPlan): Promise<SendReport> {
  const { firm, ledger } = ctx.sending;
  const report: SendReport = { stoppedBy: null, stopDetail: '', declined: false };
  /** Stops at `send`: it keeps its own outcome, every later one still ready is not sent. */
  const stop = (why: string, send: Send, detail = '') => {
    report.stoppedBy = `${why} (at recipient ${send.position})`;
    report.stopDetail = detail;
    for (const s of plan.sends) if (s.outcome === 'ready') Object.assign(s, { outcome: 'not_sent', reason: `stopped by ${why} at recipient ${send.position}` });
  };
  const ready = () => plan.sends.filter((s) => s.outcome === 'ready');
  const claims = new Map<Send, Claim>();
  const release = async (send: Send) => {
    const claim = claims.get(send);
    claims.delete(send);
    await claim?.();
  };
  try {
    // 1. Claim each recipient and title.
    if (await claimEach(ctx, plan, claims, stop)) return report;
    if (ready().length === 0) return report;
    // 2. A parallel call with the same token may have finished while this one waited for the claim.
    if (plan.tokenId && plan.remember) {
      const first = await ledger.tokenResult(firm, plan.tokenId);
      if (first !== undefined) return { ...report, tokenUsed: first };
    }
    // Another call may have finished the same send since the lists were read.
    if (plan.ownRecordBlocks) {
      if (await markRecorded(ctx, ready, release, stop)) return report;
      if (ready().length === 0) return report;
    }
    // 3. Ask the person once, within the call's time limit.
    if (plan.question) {
      const answer = await askPerson(ctx, plan.question(ready()), plan.tool);
      if (answer !== 'accepted') {
        for (const s of ready()) Object.assign(s, { outcome: 'declined', reason: 'the person declined' });
        return { ...report, declined: true };
      }
    }
    // 4. One POST at a time; the same confirmation gives each recipient the same Idempotency-Key.
    await postEach(ctx, plan, ready, release, stop, report);
    // 5. What the confirmation did, before the claims go.
    await rememberTokenResult(ctx, plan);
    return report;
  } finally {
    for (const send of [...claims.keys()]) await release(send);
  }
}

/** Runs one send-store step for `send`, failing closed: true when the store failed, and then nothing more is sent. */
async function failed(send: Send, work: () => Promise<void>, stop: Stop): Promise<boolean> {
  try {
    await work();
    return false;
  } catch (error) {
    // The send store failed: nothing is sent (fail closed).
    Object.assign(send, { outcome: 'not_sent', reason: message(error), error });
    stop('the send store failing', send, message(error));
    return true;
  }
}

/** Claims each send's recipient and title (a claim another call holds leaves the send `held`); true when the send store failed. */
async function claimEach(ctx: SendContext, plan: SendPlan, claims: Map<Send, Claim>, stop: Stop): Promise<boolean> {
  const { firm, ledger } = ctx.sending;
  for (const send of plan.sends) {
    const claimed = async () => {
      const claim = await ledger.lock(firm, send.clientId, titleKey(send.payload.title));
      if (claim) claims.set(send, claim);
      else Object.assign(send, { outcome: 'held', reason: inProgressReason(send.payload.title, send.to) });
    };
    if (await failed(send, claimed, stop)) return true;
  }
  return false;
}

/** Marks each ready send this server's own record blocks as `recorded` and releases its claim; true when the send store failed. */
async function markRecorded(ctx: SendContext, ready: () => Send[], release: (send: Send) => Promise<void>, stop: Stop): Promise<boolean> {
  const { firm, ledger } = ctx.sending;
  for (const send of ready()) {
    const recorded = async () => {
      const record = await ledger.recent(firm, send.clientId, titleKey(send.payload.title));
      if (!record) return;
      Object.assign(send, { outcome: 'recorded', record, reason: ledgerReason(record) });
      await release(send);
    };
    if (await failed(send, recorded, stop)) return true;
  }
  return false;
}

/** POSTs each ready send once, in order, releasing its claim after; a failure that stops the rest sends nothing more. */
async function postEach(
  ctx: SendContext,
  plan: SendPlan,
  ready: () => Send[],
  release: (send: Send) => Promise<void>,
  stop: Stop,
  report: SendReport,
): Promise<void> {
  const confirmationId = plan.tokenId ?? randomUUID();
  const sends = ready();
  await plan.starting?.(sends);
  let done = 0;
  for (const send of sends) {
    try {
      await postOnce(ctx, send, ctx.sending.tokens.idempotencyKey(confirmationId, send.clientId));
    } finally {
      await release(send);
    }
    const why = stopsTheRest(send.error);
    if (why) stop(why, send, send.reason ?? '');
    await plan.settled?.(send, ++done, sends.length);
    if (report.stoppedBy) break;
  }
}

/** Keeps what the confirmation token did, for its second use anywhere; a store that cannot keep it is logged, not thrown. */
async function rememberTokenResult(ctx: SendContext, plan: SendPlan): Promise<void> {
  const { firm, ledger } = ctx.sending;
  if (plan.tokenId && plan.remember) {
    const result = plan.remember(plan.sends);
    if (result !== undefined) {
      // The send's own record already blocks a repeat if this fails.
      await ledger.rememberToken(firm, plan.tokenId, result).catch((error: unknown) => {
        ctx.log(`send store: what a confirmation token did could not be recorded (${ctx.redact(message(error))})`, 'error');
      });
    }
  }
}

/** A failure that stops a batch's later sends, named; undefined when the next recipient may still be sent. */
function stopsTheRest(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (!(error instanceof ApiError)) return error instanceof StoreUnavailableError ? 'the send store failing' : 'an unexpected failure';
  if (error instanceof PlanLimitError) return "the firm's plan limit";
  if (error instanceof KeyRejectedError) return 'the service rejecting the API key';
  if (error instanceof CancelledError) return 'the cancellation of the call';
  if (error instanceof TimedOutError && !error.outcomeUnknown) return 'the time limit of the call (DOCREQ_TIMEOUT_MS)';
  return undefined;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Asks the person (elicitation) within the call's time limit. An answer that comes after it sends
 * nothing: the call has been answered by then, so the send is refused at the deadline, saying so.
 */
async function askPerson(ctx: SendContext, question: string, tool: string): Promise<'accepted' | 'declined' | 'unsupported'> {
  // Promise.race hears a late failure of the question too: it is never an unheard rejection.
  const asked = ctx.confirm(question);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, ctx.deadline - Date.now()));
  });
  try {
    const answer = await Promise.race([asked, late]);
    if (answer !== 'late') return answer;
  } finally {
    clearTimeout(timer);
  }
  throw new UserInputError(answeredTooLate(ctx.config.timeoutMs, tool));
}

/**
 * POSTs once with the given Idempotency-Key. The recovery point comes first: "pending" (may have
 * been sent) is recorded in the send store BEFORE the POST is written, so a process killed mid-POST
 * leaves a record that blocks the same send; if the store cannot take it, nothing is sent (fail
 * closed). After the answer the record is settled: sent, may have been sent, or removed when the
 * service definitely wrote nothing. A store failing after the POST does not hide the outcome from
 * the person: it is logged at error level. The outcome is written into `send`, never thrown.
 */
async function postOnce(ctx: SendContext, send: Send, idempotencyKey: string): Promise<void> {
  const { payload } = send;
  const key = titleKey(payload.title);
  const { ledger, firm, actor } = ctx.sending;
  const record = (outcome: 'sent' | 'may_have_been_sent', requestId: string | null) =>
    ledger.record(firm, payload.clientId, key, { outcome, requestId, title: payload.title, by: actor });
  const settle = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      ctx.log(outcomeNotRecorded(payload.clientId, ctx.redact(message(error))), 'error');
    }
  };
  const finished = (outcome: 'sent' | 'may_have_been_sent', requestId: string | null) => {
    audit(ctx, payload.clientId, outcome, requestId);
    // A host that cancels a call after the POST was written gets no answer, so the person learns the outcome from a warning.
    if (ctx.signal.aborted) (ctx.warn ?? ctx.log)(cancelledAfterWrite(payload.title, payload.clientId, outcome, requestId));
  };
  try {
    await ledger.record(firm, payload.clientId, key, { outcome: 'pending', requestId: null, title: payload.title, by: actor });
  } catch (error) {
    Object.assign(send, { outcome: 'not_sent', reason: message(error), error });
    return;
  }
  try {
    const answer = await ctx.api.createRequest(send.body, { idempotencyKey, signal: ctx.signal, deadline: ctx.deadline });
    const requestId = answer.record?.id ?? null;
    await settle(() => record('sent', requestId));
    finished('sent', requestId);
    Object.assign(send, { outcome: 'sent', request: answer.record, warnings: answer.warnings, reason: null, accepted: answer.accepted, kept: answer.kept });
  } catch (error) {
    if (error instanceof ApiError && !error.outcomeUnknown) {
      // Refused by an answer, or never written: nothing was sent, and nothing blocks sending it again.
      await settle(() => ledger.forget(firm, payload.clientId, key));
      Object.assign(send, { outcome: 'not_sent', reason: error.message, error });
      return;
    }
    await settle(() => record('may_have_been_sent', null));
    finished('may_have_been_sent', null);
    const reason = error instanceof ApiError ? mayHaveBeenSent(error.detail) : unexpectedFailure(ctx.redact(message(error)));
    Object.assign(send, { outcome: 'may_have_been_sent', reason, error });
  }
}

/** Who sent what: one JSON line per send with a signed-in person, ids only (never the key, never the client's name or address). */
function audit(ctx: SendContext, clientId: string, outcome: string, requestId: string | null): void {
  const { actor, audit: write, firm } = ctx.sending;
  if (actor && write)
    write(JSON.stringify({ time: new Date().toISOString(), audit: 'send', outcome, email: actor.email, sub: actor.sub, firm, clientId, requestId }));
}
