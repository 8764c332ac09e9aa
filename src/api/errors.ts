import type { Redact } from '../text/redact.js';
import { oneLine, quoted, shortValue } from '../text/render.js';

/**
 * Typed failures of the Document Request Service client. Nothing here knows about MCP. Every string
 * that came from the service reaches a message through src/text/render.ts (one line, quoted, capped).
 */

export interface FieldDetail {
  field: string;
  message: string;
}

export interface ApiErrorInit {
  status?: number | undefined;
  code?: string | undefined;
  details?: FieldDetail[] | undefined;
  /** True when a POST may have reached the service although no answer came back. */
  outcomeUnknown?: boolean | undefined;
  retryAfterMs?: number | undefined;
}

/**
 * The one wording of a POST whose outcome is not known (contract §3.4): every error with
 * `outcomeUnknown` set ends with it; `detail` is what happened, without it.
 */
const MAY_HAVE_BEEN_SENT = 'The request may have been sent.';

export abstract class ApiError extends Error {
  /** What happened, without the outcome sentence a POST whose outcome is unknown ends with. */
  readonly detail: string;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly details: FieldDetail[];
  readonly outcomeUnknown: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, init: ApiErrorInit = {}) {
    super(init.outcomeUnknown ? `${message} ${MAY_HAVE_BEEN_SENT}` : message);
    this.detail = message;
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? [];
    this.outcomeUnknown = init.outcomeUnknown ?? false;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 401: the key is missing, malformed, unknown or revoked. */
export class KeyRejectedError extends ApiError {}
/** The firm's plan (active requests, monthly billing) does not allow this. */
export class PlanLimitError extends ApiError {}
/** Any other 4xx: the service refused what we sent. */
export class InputRefusedError extends ApiError {}
export class RateLimitedError extends ApiError {}
/** 5xx. */
export class ServiceFailedError extends ApiError {}
/** No answer: refused, reset, DNS. */
export class UnreachableError extends ApiError {}
export class TimedOutError extends ApiError {}
/** An answer we cannot use: not JSON, the wrong shape, or over the size cap. */
export class BadResponseError extends ApiError {}
/** The caller (e.g. the MCP client) cancelled the call. */
export class CancelledError extends ApiError {}
/** An answer over the size cap (counted after decompression): refused without reading the rest. */
export class TooLargeError extends BadResponseError {}
/** A 404 on a list path: there is no Document Request Service at the configured base URL. */
export class NotFoundServiceError extends ApiError {
  constructor(
    message: string,
    readonly baseUrl: string,
    init: ApiErrorInit = {},
  ) {
    super(message, init);
  }
}
/** A 3xx: never followed (the key never goes to another origin). `location` is origin and path only. */
export class RedirectedError extends ApiError {
  constructor(
    message: string,
    readonly location: string | undefined,
    init: ApiErrorInit = {},
  ) {
    super(message, init);
  }
}
/** The service's TLS certificate was not trusted (private CA, proxy interception, expired, wrong name). Never retried. */
export class CertificateError extends ApiError {}

const LIMIT_WORDS = /limit|plan|billing|quota|subscription|upgrade/i;

interface ErrorBodyReading {
  message?: string;
  code?: string;
  details: FieldDetail[];
}

const same: Redact = (s) => s;

/** What the service's error body says, every string redacted before it is capped. */
function bodyReader(redact: Redact) {
  /** A service string as one safe line (redacted, invisible characters removed, capped), or undefined when blank or not text. */
  const text = (value: unknown, max = 300): string | undefined => {
    if (typeof value === 'string') return oneLine(redact(value), max) || undefined;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    return undefined;
  };
  return { text, readDetails: (value: unknown) => readDetails(value, text, redact) };
}

const MAX_DETAILS = 50;

function readDetails(value: unknown, text: (value: unknown, max?: number) => string | undefined, redact: Redact): FieldDetail[] {
  if (Array.isArray(value)) {
    return value.slice(0, MAX_DETAILS).flatMap((entry): FieldDetail[] => {
      if (typeof entry === 'string') return [{ field: '', message: entry }];
      if (entry && typeof entry === 'object') {
        const e = entry as Record<string, unknown>;
        const field = text(e.field, 80) ?? text(e.path, 80) ?? text(e.pointer, 80) ?? text(e.param, 80) ?? '';
        const message = text(e.message) ?? text(e.detail) ?? text(e.reason) ?? text(e.code, 80) ?? '';
        return message || field ? [{ field, message }] : [];
      }
      return [];
    });
  }
  if (value && typeof value === 'object') {
    // { field: "message" } or { field: ["message", ...] }
    // Bounded: a hostile body's deeply nested or huge `details` is summarised, never walked (shortValue).
    return Object.entries(value as Record<string, unknown>)
      .slice(0, MAX_DETAILS)
      .flatMap(([field, v]) =>
        (Array.isArray(v) ? v.slice(0, 10) : [v]).map((m) => ({ field: oneLine(redact(field), 80), message: text(m) ?? shortValue(m, 300, 3, redact) })),
      );
  }
  return [];
}

/** True when a body is an error body (`{"error": ...}` or `{"errors": [...]}`), e.g. a 2xx that is really a failure. */
export function isErrorBody(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  if (b.error !== undefined && b.error !== null && b.error !== false && b.error !== '') return true;
  return Array.isArray(b.errors) && b.errors.length > 0;
}

/** Reads the error body shapes the contract names; anything else yields no message. */
export function readErrorBody(body: unknown, redact: Redact = same): ErrorBodyReading {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { details: [] };
  const { text, readDetails } = bodyReader(redact);
  const b = body as Record<string, unknown>;
  if (typeof b.error === 'string') return { message: text(b.error), code: text(b.code, 80), details: readDetails(b.details) };
  if (b.error && typeof b.error === 'object') {
    const e = b.error as Record<string, unknown>;
    return { message: text(e.message), code: text(e.code, 80), details: readDetails(e.details ?? e.fields ?? b.details) };
  }
  if (Array.isArray(b.errors)) {
    const details = readDetails(b.errors);
    return { message: text(b.message) ?? text(details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ')), code: text(b.code, 80), details };
  }
  if (text(b.title) || text(b.detail)) {
    const message = [text(b.title), text(b.detail)].filter(Boolean).join(': ');
    return { message, code: text(b.code, 80) ?? text(b.type, 80), details: readDetails(b.errors ?? b.invalid_params) };
  }
  if (text(b.message)) return { message: text(b.message), code: text(b.code, 80), details: readDetails(b.details) };
  return { details: [] };
}

function describeDetails(details: FieldDetail[]): string {
  if (details.length === 0) return '';
  const shown = details.slice(0, 10).map((d) => (d.field ? `${quoted(d.field, 80)}: ${quoted(d.message, 200)}` : quoted(d.message, 200)));
  return ` Fields: ${shown.join('; ')}${details.length > 10 ? `; …${details.length - 10} more` : ''}.`;
}

/**
 * Turns a non-2xx answer into the typed error the contract prescribes. `parsed` is the body read
 * as JSON, or undefined when it was not JSON (its text is never pasted into the message).
 */
export function errorFromStatus(
  status: number,
  parsed: unknown,
  bodyWasJson: boolean,
  contentType: string | undefined,
  retryAfterMs: number | undefined,
  redact: Redact = same,
): ApiError {
  const reading = readErrorBody(parsed, redact);
  const serviceSaid = reading.message
    ? ` The service said: ${quoted(reading.message, 300)}${reading.code ? ` (${quoted(reading.code, 60)})` : ''}.`
    : bodyWasJson
      ? ''
      : ` The body was not JSON${contentType ? ` (${oneLine(redact(contentType).split(';')[0], 60)})` : ''}.`;
  const init: ApiErrorInit = { status, code: reading.code, details: reading.details, retryAfterMs };

  if (status === 401) {
    return new KeyRejectedError(
      `The service rejected the API key (401: missing, malformed, unknown or revoked).${serviceSaid}`,
      init,
    );
  }
  if ([402, 403, 409, 429].includes(status) && LIMIT_WORDS.test(`${reading.message ?? ''} ${reading.code ?? ''}`)) {
    return new PlanLimitError(
      `The firm's plan limit stops this (${status}).${serviceSaid}`,
      init,
    );
  }
  if (status === 429) {
    return new RateLimitedError(`The service is rate limiting calls (429).${serviceSaid}`, init);
  }
  if (status >= 400 && status < 500) {
    return new InputRefusedError(`The service refused the input (${status}).${serviceSaid}${describeDetails(reading.details)}`, init);
  }
  if (status >= 500) {
    return new ServiceFailedError(`The service failed (${status}).${serviceSaid}`, init);
  }
  return new BadResponseError(`The service answered with an unexpected status ${status}.${serviceSaid}`, init);
}
