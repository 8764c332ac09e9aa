/** Typed failures of the Document Request Service client. Nothing here knows about MCP. */
import { quoted, shortValue } from '../text/render.js';

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

export abstract class ApiError extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly details: FieldDetail[];
  readonly outcomeUnknown: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, init: ApiErrorInit = {}) {
    super(message);
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

const LIMIT_WORDS = /limit|plan|billing|quota|subscription|upgrade/i;

interface ErrorBodyReading {
  message?: string;
  code?: string;
  details: FieldDetail[];
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim()) return value.trim();
  if (typeof value === 'number') return String(value);
  return undefined;
}

function readDetails(value: unknown): FieldDetail[] {
  if (Array.isArray(value)) {
    return value.slice(0, 50).flatMap((entry): FieldDetail[] => {
      if (typeof entry === 'string') return [{ field: '', message: entry }];
      if (entry && typeof entry === 'object') {
        const e = entry as Record<string, unknown>;
        const field = text(e.field) ?? text(e.path) ?? text(e.pointer) ?? text(e.param) ?? '';
        const message = text(e.message) ?? text(e.detail) ?? text(e.reason) ?? text(e.code) ?? '';
        return message || field ? [{ field, message }] : [];
      }
      return [];
    });
  }
  if (value && typeof value === 'object') {
    // { field: "message" } or { field: ["message", ...] }
    return Object.entries(value as Record<string, unknown>).flatMap(([field, v]) =>
      Array.isArray(v) ? v.slice(0, 20).map((m) => ({ field, message: shortValue(m) })) : [{ field, message: text(v) ?? shortValue(v) }],
    );
  }
  return [];
}

/** Reads the error body shapes the contract names; anything else yields no message. */
export function readErrorBody(body: unknown): ErrorBodyReading {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { details: [] };
  const b = body as Record<string, unknown>;
  if (typeof b.error === 'string') return { message: b.error, code: text(b.code), details: readDetails(b.details) };
  if (b.error && typeof b.error === 'object') {
    const e = b.error as Record<string, unknown>;
    return { message: text(e.message), code: text(e.code), details: readDetails(e.details ?? e.fields ?? b.details) };
  }
  if (Array.isArray(b.errors)) {
    const details = readDetails(b.errors);
    return { message: text(b.message) ?? details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; '), code: text(b.code), details };
  }
  if (text(b.title) || text(b.detail)) {
    const message = [text(b.title), text(b.detail)].filter(Boolean).join(': ');
    return { message, code: text(b.code) ?? text(b.type), details: readDetails(b.errors ?? b.invalid_params) };
  }
  if (text(b.message)) return { message: text(b.message), code: text(b.code), details: readDetails(b.details) };
  return { details: [] };
}

function describeDetails(details: FieldDetail[]): string {
  if (details.length === 0) return '';
  // Field names and messages are the service's words: each one quoted, one line, capped.
  const shown = details.slice(0, 10).map((d) => (d.field ? `${quoted(d.field, 60)}: ${quoted(d.message, 200)}` : quoted(d.message, 200)));
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
): ApiError {
  const reading = readErrorBody(parsed);
  const words = reading.message ? quoted(reading.message, 500) : undefined;
  const serviceSaid = words
    ? ` The service said: ${words}${reading.code ? ` (${quoted(reading.code, 60)})` : ''}.`
    : bodyWasJson
      ? ''
      : ` The body was not JSON${contentType ? ` (${contentType.split(';')[0]})` : ''}.`;
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
