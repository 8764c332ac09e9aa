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
 * The one wording of a POST whose outcome is not known: every error with
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
/** Which limit of the firm's plan stopped a call: the billing period's, the active requests', or the plan's (unnamed). */
export type PlanLimit = 'billing' | 'active-requests' | 'plan';

/** The firm's plan (active requests, monthly billing) does not allow this. */
export class PlanLimitError extends ApiError {
  readonly limit: PlanLimit;

  constructor(message: string, init: ApiErrorInit & { limit?: PlanLimit | undefined } = {}) {
    super(message, init);
    this.limit = init.limit ?? 'plan';
  }
}
/** Any other 4xx: the service refused what we sent. */
export class InputRefusedError extends ApiError {}
/** A 429 that names no plan: the service asks us to slow down (its Retry-After in `retryAfterMs`). */
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

interface ErrorBodyReading {
  message?: string;
  code?: string;
  details: FieldDetail[];
  /** True when `message` only repeats the field details (no sentence of its own came with them). */
  fromDetails?: boolean;
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
/** Where a FastAPI `loc` says the value was (body, query, …): not part of the field's own path. */
const LOCATIONS = new Set(['body', 'query', 'path', 'header', 'cookie']);

/**
 * A refused field's path in one spelling, `items[0].name`, from the forms services use: a JSON pointer
 * (`/data/attributes/items/0/name`, the JSON:API wrapper dropped), a FastAPI `loc` array
 * (`["body", "items", 0, "name"]`), or a plain name (kept as it came). Empty when there is none.
 * Not redacted or capped: the caller does both.
 */
export function fieldPath(raw: unknown): string {
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
  let parts: (string | number)[];
  if (Array.isArray(raw)) {
    parts = raw.slice(0, 20).filter((p): p is string | number => typeof p === 'string' || (typeof p === 'number' && Number.isFinite(p)));
    if (typeof parts[0] === 'string' && LOCATIONS.has(parts[0]) && parts.length > 1) parts = parts.slice(1);
  } else if (typeof raw === 'string' && raw.startsWith('/')) {
    // One prefix taken off, JSON:API's /data/attributes or /data: an attribute itself named `data` is kept.
    const pointer = raw.replace(/^\/data(?:\/attributes)?(?=\/|$)/, '');
    parts = pointer
      .split('/')
      .slice(1)
      .map((p) => (/^(0|[1-9]\d{0,8})$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
  } else {
    return typeof raw === 'string' ? raw : '';
  }
  return parts.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function readDetails(value: unknown, text: (value: unknown, max?: number) => string | undefined, redact: Redact): FieldDetail[] {
  if (Array.isArray(value)) {
    return value.slice(0, MAX_DETAILS).flatMap((entry): FieldDetail[] => {
      if (typeof entry === 'string') return [{ field: '', message: text(entry) ?? '' }];
      if (entry && typeof entry === 'object') {
        const e = entry as Record<string, unknown>;
        const source = e.source && typeof e.source === 'object' ? (e.source as Record<string, unknown>) : {};
        // field, path, pointer, param: common JSON; name: RFC 7807 invalid-params; loc: FastAPI; source: JSON:API.
        const where = [e.field, e.path, e.pointer, e.param, e.name, e.loc, source.pointer, source.parameter].find(
          (w) => (typeof w === 'string' && w !== '') || (typeof w === 'number' && Number.isFinite(w)) || (Array.isArray(w) && w.length > 0),
        );
        const field = text(fieldPath(where), 80) ?? '';
        // JSON:API's `detail` says more than its `title`; FastAPI says `msg`.
        const message = text(e.message) ?? text(e.msg) ?? text(e.detail) ?? text(e.reason) ?? text(e.title) ?? text(e.code, 80) ?? '';
        return message || field ? [{ field, message }] : [];
      }
      return [];
    });
  }
  if (value && typeof value === 'object') {
    // Rails: { field: "message" } or { field: ["message", ...] }.
    // Bounded: a hostile body's deeply nested or huge `details` is summarised, never walked (shortValue).
    return Object.entries(value as Record<string, unknown>)
      .slice(0, MAX_DETAILS)
      .flatMap(([field, v]) =>
        (Array.isArray(v) ? v.slice(0, 10) : [v]).map((m) => ({ field: text(fieldPath(field), 80) ?? '', message: text(m) ?? shortValue(m, 300, 3, redact) })),
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

/**
 * Reads the error body shapes services commonly answer with: `{"error": "..."}` (with Rails'
 * `errors` object beside it), `{"error": {"message", "code", "details"}}`, RFC 7807 / 9457 problem
 * details (`title`, `detail`, `invalid-params`), JSON:API and other `{"errors": [...]}`, Rails
 * `{"errors": {field: [messages]}}`, FastAPI `{"detail": [{loc, msg}]}` or `{"detail": "..."}`, and
 * `{"message"}`. Anything else yields no message.
 */
export function readErrorBody(body: unknown, redact: Redact = same): ErrorBodyReading {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { details: [] };
  const { text, readDetails } = bodyReader(redact);
  const b = body as Record<string, unknown>;
  /** The details as one sentence, for a body that gave no message of its own. */
  const summary = (details: FieldDetail[]) => text(details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; '));
  const fromList = (list: unknown, code: unknown): ErrorBodyReading => {
    const details = readDetails(list);
    const own = text(b.message);
    // JSON:API puts the code on each error; the first one given speaks for the answer.
    const codeOf = (e: unknown) => (e && typeof e === 'object' ? text((e as Record<string, unknown>).code, 80) : undefined);
    const codes = Array.isArray(list) ? (list as unknown[]).slice(0, MAX_DETAILS).map(codeOf) : [];
    return {
      message: own ?? summary(details),
      code: text(code, 80) ?? codes.find(Boolean),
      details,
      fromDetails: !own && details.length > 0,
    };
  };

  if (typeof b.error === 'string') return { message: text(b.error), code: text(b.code, 80), details: readDetails(b.details ?? b.errors) };
  if (b.error && typeof b.error === 'object') {
    const e = b.error as Record<string, unknown>;
    return { message: text(e.message), code: text(e.code, 80), details: readDetails(e.details ?? e.fields ?? b.details) };
  }
  if (text(b.title) || text(b.detail)) {
    const message = [text(b.title), text(b.detail)].filter(Boolean).join(': ');
    return { message, code: text(b.code, 80) ?? text(b.type, 80), details: readDetails(b['invalid-params'] ?? b.invalid_params ?? b.errors) };
  }
  if (Array.isArray(b.errors)) return fromList(b.errors, b.code);
  if (b.errors && typeof b.errors === 'object') return fromList(b.errors, b.code);
  if (Array.isArray(b.detail)) return fromList(b.detail, b.code);
  if (text(b.message)) return { message: text(b.message), code: text(b.code, 80), details: readDetails(b.details) };
  return { details: [] };
}

/**
 * The refused fields, at most ten. `nameField` names a field as the person knows it; its answer is
 * shown as given (it quotes any service words it repeats), and when it answers the field unchanged
 * the field is quoted as without it.
 */
function describeDetails(details: FieldDetail[], nameField?: (serviceField: string) => string): string {
  if (details.length === 0) return '';
  const name = (field: string) => {
    const named = nameField ? oneLine(nameField(field), 200) : field;
    return named && named !== field ? named : quoted(field, 80);
  };
  const shown = details.slice(0, 10).map((d) => (d.field ? `${name(d.field)}: ${quoted(d.message, 200)}` : quoted(d.message, 200)));
  return ` Fields: ${shown.join('; ')}${details.length > 10 ? `; …${details.length - 10} more` : ''}.`;
}

/** Words split at non-letters and camelCase humps, lower case: `activeRequestLimit` → active, request, limit. */
function words(value: string): string[] {
  return value
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean);
}

const PLAN_WORDS = new Set(['plan', 'plans', 'billing', 'subscription', 'subscriptions']);
const QUOTA_WORDS = new Set(['quota', 'quotas']);

/** "active request(s)", or "active" with "limit" close after it: not "the client is not active, so this request…". */
function speaksOfActiveRequests(said: string[]): boolean {
  return said.some((w, i) => w === 'active' && (/^requests?$/.test(said[i + 1] ?? '') || said.slice(i + 1, i + 4).includes('limit')));
}

/** Which of the firm's limits a refusal names; `plan` when the service did not say more. */
function limitOf(status: number, reading: ErrorBodyReading): PlanLimit | undefined {
  const said = words(`${reading.message ?? ''} ${reading.code ?? ''}`);
  const names = (set: Set<string>) => said.some((w) => set.has(w));
  if (status === 402) return 'billing';
  if (status === 409 && speaksOfActiveRequests(said)) return 'active-requests';
  if (status === 403 && (names(PLAN_WORDS) || names(QUOTA_WORDS))) return 'plan';
  // A 429 is the service asking us to slow down; "rate limit" or "quota" alone does not make it the plan's.
  if (status === 429 && names(PLAN_WORDS)) return 'plan';
  return undefined;
}

const LIMIT_NAMES: Record<PlanLimit, string> = { billing: 'billing limit', 'active-requests': 'active-request limit', plan: 'plan limit' };

/**
 * Turns a non-2xx answer into its typed error. `parsed` is the body read as JSON, or undefined when it
 * was not JSON (its text is never pasted into the message). `nameField`, when given, names each
 * refused field as the person knows it (e.g. by the tool argument it came from); `details` keep the
 * service's own paths.
 */
export function errorFromStatus(
  status: number,
  parsed: unknown,
  bodyWasJson: boolean,
  contentType: string | undefined,
  retryAfterMs: number | undefined,
  redact: Redact = same,
  nameField?: (serviceField: string) => string,
): ApiError {
  const reading = readErrorBody(parsed, redact);
  const serviceSaid = reading.message
    ? ` The service said: ${quoted(reading.message, 300)}${reading.code ? ` (${quoted(reading.code, 60)})` : ''}.`
    : bodyWasJson
      ? ''
      : ` The body was not JSON${contentType ? ` (${oneLine(redact(contentType).split(';')[0], 60)})` : ''}.`;
  const init: ApiErrorInit = { status, code: reading.code, details: reading.details, retryAfterMs };

  if (status === 401) {
    return new KeyRejectedError(`The service rejected the API key (401: missing, malformed, unknown or revoked).${serviceSaid}`, init);
  }
  const limit = limitOf(status, reading);
  if (limit) return new PlanLimitError(`The firm's ${LIMIT_NAMES[limit]} stops this (${status}).${serviceSaid}`, { ...init, limit });
  if (status === 429) {
    return new RateLimitedError(`The service is rate limiting calls (429).${serviceSaid}`, init);
  }
  if (status >= 400 && status < 500) {
    // A message that only repeats the fields is left out: the fields follow, named as the person knows them.
    const said = reading.fromDetails ? (reading.code ? ` The service's code: ${quoted(reading.code, 60)}.` : '') : serviceSaid;
    return new InputRefusedError(`The service refused the input (${status}).${said}${describeDetails(reading.details, nameField)}`, init);
  }
  if (status >= 500) {
    return new ServiceFailedError(`The service failed (${status}).${serviceSaid}`, init);
  }
  return new BadResponseError(`The service answered with an unexpected status ${status}.${serviceSaid}`, init);
}
