import { z } from 'zod';
import type { Redact } from '../text/redact.js';
import { BadResponseError } from './errors.js';

/**
 * Records as the server hands them on, each shape defined once as a zod schema (tools reuse them in
 * their output schemas) with its type inferred. Parsing is lenient: unknown fields are dropped, a
 * field of an unexpected type is kept in a readable form (numbers and booleans as text, objects as
 * compact JSON), a missing field becomes null, and no record is ever dropped.
 */
export const clientRecord = z.object({
  id: z.string().nullable(),
  displayName: z.string().nullable(),
  email: z.string().nullable(),
  status: z.string().nullable(),
});
/** A scalar of a client's other fields, or a short list of them. */
export const extraValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.union([z.string(), z.number(), z.boolean(), z.null()]))]);
type ExtraValue = z.infer<typeof extraValue>;
/**
 * A client as the tools see it. `extra` holds the fields the service adds beyond the documented four
 * (phone, tags, notes…), kept only as scalars and short lists of scalars and bounded in number and
 * size (see clientExtras); nothing depends on them, and they are shown only as data.
 */
export type Client = z.infer<typeof clientRecord> & { extra?: Record<string, ExtraValue> };

export const requestRecord = z.object({
  id: z.string().nullable(),
  title: z.string().nullable(),
  status: z.string().nullable(),
  clientName: z.string().nullable(),
  dueDate: z.string().nullable(),
  createdAt: z.string().nullable(),
  totalItems: z.number().nullable(),
  completedItems: z.number().nullable(),
});
export type RequestRecord = z.infer<typeof requestRecord>;

/**
 * A request to create, in this server's own terms (the tools' argument names). The body the service is given is built
 * from it by the service profile (src/domain/service-profile.ts), which maps these names to the service's own.
 */
export type CreatePayload = {
  clientId: string;
  title: string;
  dueDate?: string;
  items: { name: string; required: boolean; type: string }[];
  correctnessMode?: string;
};

const MAX_FIELD = 2_000;

const same: Redact = (text) => text;

/** The first `max` UTF-16 units of `text`, less a lone high surrogate at the cut: a character is kept whole or left out. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** A field as text, redacted before it is capped (a secret cut by the cap would survive as its prefix). */
function asText(value: unknown, redact: Redact): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') {
    const clean = redact(value);
    return cut(clean, MAX_FIELD);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return cut(redact(JSON.stringify(value)), MAX_FIELD);
  } catch {
    return null;
  }
}

/** The record itself when redaction changes none of its text fields, else a copy with them redacted. */
function redacted<R extends Record<string, unknown>>(record: R, keys: readonly string[], redact: Redact): R {
  if (redact === same) return record;
  let copy: R | undefined;
  for (const key of keys) {
    const v = record[key];
    if (typeof v !== 'string') continue;
    const clean = redact(v);
    if (clean !== v) (copy ??= { ...record })[key as keyof R] = cut(clean, MAX_FIELD) as R[keyof R];
  }
  return copy ?? record;
}

function asCount(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

function fields(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}

const CLIENT_KEYS = ['id', 'displayName', 'email', 'status'] as const;
const REQUEST_TEXT_KEYS = ['id', 'title', 'status', 'dueDate', 'createdAt', 'clientName'] as const;
/** The fields a list element is read for: the list parser skips everything else unread, whatever its depth. */
export const CLIENT_FIELDS: readonly string[] = CLIENT_KEYS;
export const REQUEST_FIELDS: readonly string[] = [...REQUEST_TEXT_KEYS, 'totalItems', 'completedItems'];
const textOrNull = (v: unknown) => v === null || (typeof v === 'string' && v.length <= MAX_FIELD);
const countOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));

/** True when `raw` already is exactly the record (the documented fields, of the right types, nothing else). */
function isExactly(raw: unknown, textKeys: readonly string[], countKeys: readonly string[]): boolean {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return false;
  let n = 0;
  for (const key in raw) {
    const v = (raw as Record<string, unknown>)[key];
    if (textKeys.includes(key) ? !textOrNull(v) : !countKeys.includes(key) || !countOrNull(v)) return false;
    n++;
  }
  return n === textKeys.length + countKeys.length;
}

/** Bounds on a client's other fields: how many, how long a name, a text, a list. */
const EXTRA_LIMITS = { fields: 16, key: 64, text: 500, list: 20 } as const;

const isScalar = (v: unknown): v is string | number | boolean | null =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
// Redacted before the cap, like every text from the service.
const cappedWith =
  (redact: Redact) =>
  <T>(v: T): T => {
    if (typeof v !== 'string') return v;
    const clean = redact(v);
    return cut(clean, EXTRA_LIMITS.text) as T;
  };

/**
 * The fields beyond the documented ones, shallowly: scalars and lists of at most EXTRA_LIMITS.list
 * scalars are kept (texts capped); objects, longer lists and lists holding anything else are left out
 * unread, as are fields past the first EXTRA_LIMITS.fields. Undefined when there are none.
 */
function clientExtras(r: Record<string, unknown>, redact: Redact = same): Record<string, ExtraValue> | undefined {
  const capped = cappedWith(redact);
  let extra: Record<string, ExtraValue> | undefined;
  let n = 0;
  for (const key in r) {
    if ((CLIENT_KEYS as readonly string[]).includes(key) || key.length > EXTRA_LIMITS.key || key === '__proto__') continue;
    const v = r[key];
    let kept: ExtraValue | undefined;
    if (isScalar(v)) kept = capped(v);
    else if (Array.isArray(v) && v.length <= EXTRA_LIMITS.list && v.every(isScalar)) kept = v.map(capped);
    if (kept === undefined) continue;
    extra ??= {};
    extra[key] = kept;
    if (++n >= EXTRA_LIMITS.fields) break;
  }
  return extra;
}

// A conforming record is kept as parsed rather than copied: at 100,000 records that is half the garbage.
// `redact` is the API client's redaction of its own key, applied to every text field before any cap.
export function toClient(raw: unknown, redact: Redact = same): Client {
  if (isExactly(raw, CLIENT_KEYS, [])) return redacted(raw as Client, CLIENT_KEYS, redact);
  const r = fields(raw);
  const client: Client = {
    id: asText(r.id, redact),
    displayName: asText(r.displayName, redact),
    email: asText(r.email, redact),
    status: asText(r.status, redact),
  };
  const extra = clientExtras(r, redact);
  if (extra) client.extra = extra;
  return client;
}

/** The documented fields only (what a send reports about its recipient). */
export function documentedClient(c: Client): z.infer<typeof clientRecord> {
  return { id: c.id, displayName: c.displayName, email: c.email, status: c.status };
}

export function toRequest(raw: unknown, redact: Redact = same): RequestRecord {
  if (isExactly(raw, REQUEST_TEXT_KEYS, ['totalItems', 'completedItems'])) return redacted(raw as RequestRecord, REQUEST_TEXT_KEYS, redact);
  const r = fields(raw);
  return {
    id: asText(r.id, redact),
    title: asText(r.title, redact),
    status: asText(r.status, redact),
    dueDate: asText(r.dueDate, redact),
    createdAt: asText(r.createdAt, redact),
    clientName: asText(r.clientName, redact),
    totalItems: asCount(r.totalItems),
    completedItems: asCount(r.completedItems),
  };
}

/** `{ "data": [...] }` is the only list shape the API document gives. */
export function listData(body: unknown, what: string): unknown[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadResponseError(`The service's ${what} list is not a JSON object with a "data" array (got ${Array.isArray(body) ? 'an array' : typeof body}).`);
  }
  const data = (body as Record<string, unknown>).data;
  if (!Array.isArray(data)) {
    throw new BadResponseError(`The service's ${what} list has no "data" array (data is ${data === undefined ? 'missing' : typeof data}).`);
  }
  return data;
}
