import type { Logger } from '../log.js';
import type { Redact } from '../text/redact.js';
import {
  ApiError,
  BadResponseError,
  CancelledError,
  CertificateError,
  RedirectedError,
  ServiceFailedError,
  TimedOutError,
  UnreachableError,
  errorFromStatus,
  isErrorBody,
} from './errors.js';
import { REQUESTS, type CallOptions, type RawAnswer, type ServiceExchange } from './exchange.js';
import type { ApiState } from './lists.js';
import { createdRecord, toRequest, type CreatePayload, type RequestRecord } from './records.js';

/** Sending: the one POST, never retried, and what its outcome was (sent, refused, not sent, or not known). */

export interface CreateOptions extends CallOptions {
  /** Derived by the caller from the confirmation: the same confirmed request always carries the same key. */
  idempotencyKey: string;
}

export interface CreateOutcome {
  /** The created request, reduced to the documented request fields, or null when none could be read. */
  record: RequestRecord | null;
  status: number;
  warnings: string[];
}

// Errors where the connection never opened, so a POST cannot have reached the service.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** How long a call may take, and how much of it a POST needs left to start. */
export interface SendSettings {
  timeoutMs: number;
  minPostBudgetMs: number;
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
   * POSTs `JSON.stringify(payload)` once, with the caller's Idempotency-Key. Never retried. Once
   * written it is not aborted by `signal`, only by the deadline; an unclear outcome is an error with
   * `outcomeUnknown` set, a definite one (refused, not written) has it unset.
   */
  async create(payload: CreatePayload, options: CreateOptions): Promise<CreateOutcome> {
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
      answer = await this.http.exchange({ method: 'POST', path: REQUESTS, deadline, signal, body: JSON.stringify(payload), headers: { 'idempotency-key': idempotencyKey } });
    } catch (error) {
      if (error instanceof BadResponseError && error.status !== undefined && error.status >= 200 && error.status <= 299) {
        return { record: null, status: error.status, warnings: [`Sent, but the service's answer was unreadable (${error.message})`] };
      }
      throw this.postFailure(error);
    } finally {
      this.state.forget();
    }
    this.logger.debug(`POST ${REQUESTS} → ${answer.status} in ${Date.now() - started} ms`);
    const { status } = answer;
    if (status < 200 || status > 299) {
      const error = this.http.statusError(answer, 'POST', REQUESTS);
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
    if (answer.bytes.length === 0) {
      return { record: null, status, warnings: [`The service answered ${status} with an empty body, so the new request's id is not known yet.`] };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.bytes.toString('utf8'));
    } catch {
      return { record: null, status, warnings: [`The service answered ${status} (sent) with a body that is not JSON.`] };
    }
    if (isErrorBody(parsed)) {
      const said = errorFromStatus(status, parsed, true, undefined, undefined, this.redact).message.replace(/^[^.]*\.\s*/, '');
      throw new BadResponseError(`The service answered ${status} (success) with an error body.${said ? ` ${said}` : ''}`, { status, outcomeUnknown: true });
    }
    const raw = createdRecord(parsed);
    const record = raw ? toRequest(raw, this.redact) : null;
    return { record, status, warnings: record ? [] : ['The service answered without a record of the created request.'] };
  }

  /** Says whether a failed POST can have reached the service (`outcomeUnknown`). */
  private postFailure(error: unknown): ApiError {
    if (error instanceof ApiError && !error.outcomeUnknown && (error instanceof CertificateError || error instanceof RedirectedError || error instanceof CancelledError)) return error;
    if (error instanceof TimedOutError) return new TimedOutError(error.detail, { outcomeUnknown: true });
    if (error instanceof UnreachableError) {
      if (error.code && NOT_SENT_CODES.has(error.code)) return new UnreachableError(`${error.message} Nothing was sent.`, { code: error.code });
      return new UnreachableError(`The connection to ${this.http.origin} failed (${error.code ?? 'network error'}) while sending.`, {
        code: error.code,
        outcomeUnknown: true,
      });
    }
    if (error instanceof ApiError) return error;
    return new UnreachableError('Sending failed unexpectedly.', { outcomeUnknown: true });
  }
}
