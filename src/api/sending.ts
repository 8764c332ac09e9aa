import type { Logger } from '../log.js';
import type { Redact } from '../text/redact.js';
import { ApiError, BadResponseError, CancelledError, ServiceFailedError, TimedOutError, UnreachableError, errorFromStatus, isErrorBody } from './errors.js';
import { REQUESTS, type CallOptions, type RawAnswer, type ServiceExchange } from './exchange.js';
import { neverConnected } from './no-answer.js';
import type { ApiState } from './lists.js';
import { cut, toRequest, type RequestRecord } from './records.js';
import { DEFAULT_PROFILE, type Kept, type ServiceProfile } from '../domain/service-profile.js';

/** Sending: the one POST, never retried, and what its outcome was (sent, refused, not sent, or not known). */

export interface CreateOptions extends CallOptions {
  /** Derived by the caller from the confirmation: the same confirmed request always carries the same key. */
  idempotencyKey: string;
}

export interface CreateOutcome {
  /** The created request, reduced to the documented request fields, or null when none could be read. */
  record: RequestRecord | null;
  status: number;
  /** 202: the service queued the request; it has not said the client was e-mailed. */
  accepted: boolean;
  /** What the answer's record says the service kept (texts redacted), for the as-previewed check; null without a record. */
  kept: Kept | null;
  warnings: string[];
}

const MAX_KEPT = 2_000;

/** How long a call may take, and how much of it a POST needs left to start. */
export interface SendSettings {
  timeoutMs: number;
  minPostBudgetMs: number;
  /** Where the created record sits in an answer, and the body's field names (refusals name fields by the tool argument). */
  profile?: ServiceProfile;
}

/** Creates requests through one key's exchange; every send forgets what the key kept, before and after. */
export class RequestSender {
  constructor(
    private readonly http: ServiceExchange,
    private readonly options: SendSettings,
    private readonly state: ApiState,
    private readonly logger: Logger,
    private readonly redact: Redact,
  ) {}

  /**
   * POSTs `JSON.stringify(body)` once (the body exactly as previewed: src/domain/service-profile.ts builds it), with the
   * caller's Idempotency-Key. Never retried. Once written it is not aborted by `signal`, only by the deadline; an unclear
   * outcome is an error with `outcomeUnknown` set, a definite one (refused, not written) has it unset.
   */
  async create(body: Record<string, unknown>, options: CreateOptions): Promise<CreateOutcome> {
    const { idempotencyKey, signal } = options;
    if (typeof idempotencyKey !== 'string' || !idempotencyKey) throw new TypeError('createRequest needs an idempotencyKey derived from the confirmation');
    const deadline = options.deadline ?? Date.now() + this.options.timeoutMs;
    if (signal?.aborted) throw new CancelledError('The call was cancelled before sending. Nothing was sent.');
    const left = deadline - Date.now();
    if (left < this.options.minPostBudgetMs) {
      throw new TimedOutError(`Only ${Math.max(0, Math.round(left))} ms of the call's time were left, too little to send and hear back. Nothing was sent.`);
    }
    const started = Date.now();
    let answer: RawAnswer;
    this.state.forget();
    try {
      answer = await this.http.exchange({
        method: 'POST',
        path: REQUESTS,
        deadline,
        signal,
        body: JSON.stringify(body),
        headers: { 'idempotency-key': idempotencyKey },
      });
    } catch (error) {
      if (error instanceof BadResponseError && error.status !== undefined && error.status >= 200 && error.status <= 299) {
        return {
          record: null,
          status: error.status,
          accepted: error.status === 202,
          kept: null,
          warnings: [`Sent, but the service's answer was unreadable (${error.message})`],
        };
      }
      throw this.postFailure(error);
    } finally {
      this.state.forget();
    }
    this.logger.debug(`POST ${REQUESTS} → ${answer.status} in ${Date.now() - started} ms`);
    const { status } = answer;
    if (status < 200 || status > 299) {
      // A refused field is named by the tool argument it came from (and its service name, when the profile renames it).
      const profile = this.options.profile ?? DEFAULT_PROFILE;
      const error = this.http.statusError(answer, 'POST', REQUESTS, (field) => profile.nameField(field));
      if (status >= 500) {
        throw new ServiceFailedError(error.message, {
          status,
          code: error.code,
          details: error.details,
          retryAfterMs: error.retryAfterMs,
          outcomeUnknown: true,
        });
      }
      throw error;
    }
    const accepted = status === 202;
    if (answer.bytes.length === 0) {
      return { record: null, status, accepted, kept: null, warnings: [`The service answered ${status} with an empty body (no record of the new request).`] };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.bytes.toString('utf8'));
    } catch {
      return {
        record: null,
        status,
        accepted,
        kept: null,
        warnings: [`The service answered ${status} (${accepted ? 'accepted' : 'sent'}) with a body that is not JSON.`],
      };
    }
    if (isErrorBody(parsed)) {
      const said = errorFromStatus(status, parsed, true, undefined, undefined, this.redact).message.replace(/^[^.]*\.\s*/, '');
      throw new BadResponseError(`The service answered ${status} (success) with an error body.${said ? ` ${said}` : ''}`, { status, outcomeUnknown: true });
    }
    const raw = (this.options.profile ?? DEFAULT_PROFILE).createdRecord(parsed);
    const record = raw ? toRequest(raw, this.redact) : null;
    const kept = raw ? this.keptOf((this.options.profile ?? DEFAULT_PROFILE).kept(raw)) : null;
    return { record, status, accepted, kept, warnings: record ? [] : ['The service answered without a record of the created request.'] };
  }

  /** What the record kept, its texts redacted before any cap (they are shown in the as-previewed words). */
  private keptOf(kept: Kept): Kept {
    const text = (v: unknown): unknown => {
      if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') return v;
      const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
      return cut(this.redact(s), MAX_KEPT);
    };
    const out: Kept = {};
    for (const [k, v] of Object.entries(kept)) (out as Record<string, unknown>)[k] = k === 'items' ? v : text(v);
    return out;
  }

  /** Says whether a failed POST can have reached the service (`outcomeUnknown`). */
  private postFailure(error: unknown): ApiError {
    // Every timed-out POST counts as "may have been sent", whatever the exchange knew of it: the safe side of "once".
    if (error instanceof TimedOutError) return new TimedOutError(error.detail, { outcomeUnknown: true });
    if (error instanceof UnreachableError) {
      if (neverConnected(error.code)) return new UnreachableError(`${error.message} Nothing was sent.`, { code: error.code });
      return new UnreachableError(`The connection to ${this.http.origin} failed (${error.code ?? 'network error'}) while sending.`, {
        code: error.code,
        outcomeUnknown: true,
      });
    }
    // Any other answer (a refusal, a certificate not trusted, a redirect, a cancel) says itself whether it was sent.
    if (error instanceof ApiError) return error;
    // The exchange throws only ApiErrors; anything else would be a bug of ours, answered on the safe side.
    return new UnreachableError('Sending failed unexpectedly.', { outcomeUnknown: true });
  }
}
