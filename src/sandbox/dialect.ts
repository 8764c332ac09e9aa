/**
 * The sandbox playing another service: where the API document is silent (the create body's field names, value
 * spellings, request statuses, date forms, the create answer, error bodies, paging, rate limits), a dialect says
 * what that service does. Without one the sandbox is our own service; every part of a dialect is optional and
 * defaults to what ours does, except that a dialect's service drops fields it does not know
 * (`unknownFields: 'ignore'`), as most services do.
 */
import { STATUS_CODES } from 'node:http';
import { CORRECTNESS_MODES, ITEM_TYPES, type CorrectnessMode, type ItemType } from '../domain/checklist.js';
import { failure, jsonAnswer, type Answer, type Problem } from './answer.js';
import { CLOSED, listRecord, type Kept } from './requests.js';
import { KNOWN_NAMES, SANDBOX_KEYS, isoDay, type SandboxFirm, type SandboxRequest } from './seed.js';

export type DateForm = 'iso' | 'iso-offset' | 'slash-ymd' | 'dot-dmy' | 'slash-mdy' | 'slash-dmy' | 'epoch-s' | 'epoch-ms' | 'mixed';
export type ErrorShape = 'ours' | 'rfc7807' | 'jsonapi' | 'fastapi' | 'rails';
export type PagingSignal = 'next' | 'has_more' | 'link' | 'total';

/** The create body's field names the service reads. */
interface BodyNames {
  client: string;
  title: string;
  dueDate: string;
  items: string;
  correctnessMode: string;
  item: { name: string; required: string; type: string };
}

export interface SandboxDialect {
  /** The create body's field names (default: clientId, title, dueDate, items, correctnessMode; an item's name, required, type). */
  body?: Partial<Omit<BodyNames, 'item'>> & { item?: Partial<BodyNames['item']> };
  /**
   * A field the service does not know: 'ignore' (default) drops it, so an unknown items field means an empty checklist
   * is created and e-mailed, and a value it does not know falls back to its default; 'refuse' answers 422 naming it.
   */
  unknownFields?: 'ignore' | 'refuse';
  /** How the service spells item types, from ours to theirs, e.g. `{ file: 'document' }` (default: as ours). */
  itemTypes?: Partial<Record<ItemType, string>>;
  /** How the service spells correctness modes, from ours to theirs (default: as ours). */
  correctnessModes?: Partial<Record<CorrectnessMode, string>>;
  /** The due date it reads: a plain date YYYY-MM-DD (default) or an ISO date-time; the other form is dropped under 'ignore'. */
  dueDateIn?: 'date' | 'date-time';
  statuses?: {
    /** The seed's statuses renamed, e.g. `{ completed: 'fulfilled' }` (a new request's `sent` too, when named). */
    rename?: Record<string, string>;
    /** Which of its statuses the service counts as closed for its active-request limit (default: ours, renamed, and overdueAs). */
    closed?: string[];
    /** The status every other open, past-due request of the demo firm has, e.g. 'expired' (the rest stay overdue). */
    overdueAs?: string;
  };
  /** Client statuses beyond ours (e.g. blocked, archived), each given to some clients, never to the well-known ones. */
  clientStatuses?: string[];
  /** How list records (and created records) write dueDate and createdAt (default 'iso': as stored). */
  dateForm?: DateForm;
  createAnswer?: {
    /** Default 201; 202 answers `{ id, status: 'queued' }` (the request is created and e-mailed all the same); 204 has no body. */
    status?: 200 | 201 | 202 | 204;
    /** Where the record sits: bare, or under `data` (default), `request` or `result`. */
    wrap?: 'bare' | 'data' | 'request' | 'result';
    /**
     * 'full' (default): the stored record, with clientId, items and correctnessMode; 'list': the list record; 'body': the
     * service's own body names with what it kept (a dropped due date is null); 'id-only': `{ id }`.
     */
    fields?: 'full' | 'list' | 'body' | 'id-only';
  };
  /** The error body of every answer the service refuses with (default 'ours': `{ error: { code, message, details? } }`). */
  errorShape?: ErrorShape;
  /** List answers give one page of this many records (newest first) and signal the rest; `?page=N` serves later pages. */
  paging?: { pageSize: number; signal: PagingSignal };
  /** After this many calls per key (within windowMs by the sandbox clock; default: ever), 429 with Retry-After: 1 and these words. */
  rateLimit?: { afterCalls: number; words: string; code?: string; windowMs?: number };
}

/** Named services the sandbox can play. */
export const DIALECTS = {
  /** A plausible different service: snake_case names, its own spellings, statuses and dates, RFC 7807 refusals. */
  other: {
    body: {
      client: 'client_id',
      title: 'title',
      dueDate: 'due_date',
      items: 'checklist',
      correctnessMode: 'correctness_mode',
      item: { name: 'label', required: 'mandatory', type: 'kind' },
    },
    unknownFields: 'ignore',
    itemTypes: { file: 'document', boolean: 'yes_no' },
    correctnessModes: { hard: 'strict' },
    statuses: { rename: { completed: 'fulfilled', cancelled: 'withdrawn' }, closed: ['fulfilled', 'withdrawn', 'archived', 'expired'], overdueAs: 'expired' },
    clientStatuses: ['blocked', 'archived'],
    dateForm: 'dot-dmy',
    createAnswer: { status: 201, wrap: 'request', fields: 'body' },
    errorShape: 'rfc7807',
  },
  /**
   * Reads `due_date` and `checklist` like `other` and otherwise answers as ours: a body with our `dueDate` and `items`
   * creates a request with no due date and an empty checklist, and e-mails it, with a 201.
   */
  ignoring: {
    body: { dueDate: 'due_date', items: 'checklist' },
    unknownFields: 'ignore',
  },
  /** A strict service: refuses what it does not know (FastAPI bodies), wants date-times, answers 202, pages its lists. */
  strict: {
    body: { client: 'client_id', dueDate: 'due_at', correctnessMode: 'correctness' },
    unknownFields: 'refuse',
    dueDateIn: 'date-time',
    dateForm: 'epoch-s',
    createAnswer: { status: 202, wrap: 'bare' },
    errorShape: 'fastapi',
    paging: { pageSize: 25, signal: 'has_more' },
  },
} as const satisfies Record<string, SandboxDialect>;

/** A dialect with every default filled in; `reads: 'ours'` when none was given (the create body is read as it always was). */
export interface ResolvedDialect {
  reads: 'ours' | 'ignore' | 'refuse';
  body: BodyNames;
  itemTypes: Record<ItemType, string>;
  correctnessModes: Record<CorrectnessMode, string>;
  dueDateIn: 'date' | 'date-time';
  statuses: { rename: Record<string, string>; closed: ReadonlySet<string>; overdueAs: string | undefined };
  clientStatuses: string[];
  dateForm: DateForm;
  createAnswer: Required<NonNullable<SandboxDialect['createAnswer']>>;
  errorShape: ErrorShape;
  paging: SandboxDialect['paging'];
  rateLimit: SandboxDialect['rateLimit'];
}

export function resolveDialect(given: SandboxDialect | keyof typeof DIALECTS | undefined): ResolvedDialect {
  if (typeof given === 'string' && !Object.hasOwn(DIALECTS, given)) {
    throw new Error(`no sandbox dialect named "${given}" (${Object.keys(DIALECTS).join(', ')})`);
  }
  const d: SandboxDialect = typeof given === 'string' ? DIALECTS[given] : (given ?? {});
  const rename = { ...d.statuses?.rename };
  const overdueAs = d.statuses?.overdueAs;
  const closed = d.statuses?.closed ?? [...CLOSED, ...[...CLOSED].map((s) => rename[s] ?? s), ...(overdueAs ? [overdueAs] : [])];
  return {
    reads: given === undefined ? 'ours' : (d.unknownFields ?? 'ignore'),
    body: {
      client: d.body?.client ?? 'clientId',
      title: d.body?.title ?? 'title',
      dueDate: d.body?.dueDate ?? 'dueDate',
      items: d.body?.items ?? 'items',
      correctnessMode: d.body?.correctnessMode ?? 'correctnessMode',
      item: { name: d.body?.item?.name ?? 'name', required: d.body?.item?.required ?? 'required', type: d.body?.item?.type ?? 'type' },
    },
    itemTypes: Object.fromEntries(ITEM_TYPES.map((t) => [t, d.itemTypes?.[t] ?? t])) as Record<ItemType, string>,
    correctnessModes: Object.fromEntries(CORRECTNESS_MODES.map((m) => [m, d.correctnessModes?.[m] ?? m])) as Record<CorrectnessMode, string>,
    dueDateIn: d.dueDateIn ?? 'date',
    statuses: { rename, closed: new Set(closed.map((s) => s.toLowerCase())), overdueAs },
    clientStatuses: [...(d.clientStatuses ?? [])],
    dateForm: d.dateForm ?? 'iso',
    createAnswer: { status: d.createAnswer?.status ?? 201, wrap: d.createAnswer?.wrap ?? 'data', fields: d.createAnswer?.fields ?? 'full' },
    errorShape: d.errorShape ?? 'ours',
    paging: d.paging && { pageSize: Math.max(1, Math.floor(d.paging.pageSize)), signal: d.paging.signal },
    rateLimit: d.rateLimit,
  };
}

const DAY_MS = 86_400_000;

/**
 * The seed as the dialect's service holds it: statuses renamed, every other open past-due request of the demo
 * firm in `overdueAs`, and the extra client statuses given in turn to every eighth active client (from the second)
 * that is not one of the well-known ones.
 */
export function applyToSeed(firms: Map<string, SandboxFirm>, d: ResolvedDialect, now: number): void {
  const demo = firms.get(SANDBOX_KEYS.demo);
  if (demo && d.statuses.overdueAs) {
    let overdue = 0;
    for (const r of demo.requests) {
      const open = !CLOSED.has(r.status) && r.completedItems < r.totalItems;
      const dueMs = r.dueDate === null ? Number.NaN : Date.parse(r.dueDate) + (r.dueDate.length === 10 ? DAY_MS : 0);
      if (open && dueMs <= now && overdue++ % 2 === 0) r.status = d.statuses.overdueAs;
    }
  }
  for (const firm of firms.values()) {
    for (const r of firm.requests) r.status = d.statuses.rename[r.status] ?? r.status;
    if (d.clientStatuses.length === 0) continue;
    const eligible = firm.clients.filter((c) => c.status === 'active' && !KNOWN_NAMES.includes(c.displayName));
    eligible.forEach((c, i) => {
      if (i % 8 === 1) c.status = d.clientStatuses[Math.floor(i / 8) % d.clientStatuses.length]!;
    });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const isDate = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && isoDay(Date.parse(s)) === s;
const isDateTime = (s: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s));
const ourValue = <T extends string>(spelled: Record<T, string>, value: unknown): T | undefined =>
  (Object.keys(spelled) as T[]).find((k) => spelled[k] === value);

/** Reads a create body by the dialect's names, as its service would: what it kept, or what it refuses. */
export function readCreate(input: unknown, firm: SandboxFirm, d: ResolvedDialect): { kept: Kept; problems: Problem[] } {
  const problems: Problem[] = [];
  const kept: Kept = { clientId: '', title: '', dueDate: null, items: [], correctnessMode: null };
  if (!isObject(input)) return { kept, problems: [{ path: [], message: 'the body must be a JSON object' }] };
  const refuse = d.reads === 'refuse';
  const n = d.body;
  const absent = (key: string) => !Object.hasOwn(input, key) || input[key] === undefined || input[key] === null;
  const client = input[n.client];
  if (typeof client !== 'string' || !client) problems.push({ path: [n.client], message: 'is required', kind: absent(n.client) ? 'missing' : 'invalid' });
  else if (!firm.clients.some((c) => c.id === client)) problems.push({ path: [n.client], message: 'no such client in this firm' });
  else kept.clientId = client;
  const title = input[n.title];
  if (typeof title !== 'string' || !title.trim()) problems.push({ path: [n.title], message: 'is required', kind: absent(n.title) ? 'missing' : 'invalid' });
  else kept.title = title.trim();

  if (!absent(n.dueDate)) {
    const due = input[n.dueDate];
    const form = typeof due === 'string' ? (isDate(due) ? 'date' : isDateTime(due) ? 'date-time' : undefined) : undefined;
    if (form === d.dueDateIn) kept.dueDate = due as string;
    else if (!form || refuse) problems.push({ path: [n.dueDate], message: d.dueDateIn === 'date' ? 'must be a date YYYY-MM-DD' : 'must be an ISO date-time' });
  }
  if (!absent(n.correctnessMode)) {
    const mode = ourValue(d.correctnessModes, input[n.correctnessMode]);
    if (mode) kept.correctnessMode = mode;
    else if (refuse) problems.push({ path: [n.correctnessMode], message: `must be one of ${Object.values(d.correctnessModes).join(', ')}` });
  }

  const items = input[n.items];
  if (absent(n.items) || (Array.isArray(items) && items.length === 0)) {
    if (refuse) problems.push({ path: [n.items], message: 'must be a non-empty array', kind: absent(n.items) ? 'missing' : 'invalid' });
  } else if (!Array.isArray(items)) {
    problems.push({ path: [n.items], message: refuse ? 'must be a non-empty array' : 'must be an array' });
  } else {
    items.forEach((raw: unknown, i) => {
      const at = (field?: string): (string | number)[] => (field === undefined ? [n.items, i] : [n.items, i, field]);
      if (!isObject(raw)) return problems.push({ path: at(), message: 'must be an object' });
      const name = raw[n.item.name];
      const required = raw[n.item.required] ?? true;
      const type = raw[n.item.type] ?? d.itemTypes.file;
      const ours = ourValue(d.itemTypes, type);
      if (typeof name !== 'string' || !name.trim()) {
        problems.push({ path: at(n.item.name), message: 'must be a non-empty string', kind: raw[n.item.name] == null ? 'missing' : 'invalid' });
      }
      if (typeof required !== 'boolean') problems.push({ path: at(n.item.required), message: 'must be a boolean' });
      if (!ours && refuse) problems.push({ path: at(n.item.type), message: `must be one of ${Object.values(d.itemTypes).join(', ')}` });
      const unknown = refuse ? Object.keys(raw).filter((key) => !Object.values(n.item).includes(key)) : [];
      for (const key of unknown) problems.push({ path: at(key), message: 'is not a known field', kind: 'extra' });
      kept.items.push({ name: String(name).trim(), required: required === true, type: ours ?? 'file' });
    });
  }
  if (refuse) {
    const known = new Set([n.client, n.title, n.dueDate, n.items, n.correctnessMode]);
    for (const key of Object.keys(input)) if (!known.has(key)) problems.push({ path: [key], message: 'is not a known field', kind: 'extra' });
  }
  return { kept, problems };
}

const FORMS = ['iso', 'iso-offset', 'slash-ymd', 'dot-dmy', 'slash-mdy', 'slash-dmy', 'epoch-s', 'epoch-ms'] as const;

/** The form a record's dates take: the dialect's, or for 'mixed' one of the others picked by the record's id. */
function formOf(form: DateForm, id: string): Exclude<DateForm, 'mixed'> {
  if (form !== 'mixed') return form;
  let h = 0;
  for (const ch of id) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return FORMS[h % FORMS.length]!;
}

/** A stored date (YYYY-MM-DD or an ISO date-time) as the service writes it; date forms keep the UTC day. */
function writeDate(value: string | null, form: Exclude<DateForm, 'mixed'>): string | number | null {
  if (value === null || form === 'iso') return value;
  const plain = value.length === 10;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return value;
  const [y, m, d] = (plain ? value : isoDay(ms)).split('-');
  switch (form) {
    case 'iso-offset':
      return plain ? value : new Date(ms + 7_200_000).toISOString().replace(/Z$/, '+02:00');
    case 'slash-ymd':
      return `${y}/${m}/${d}`;
    case 'dot-dmy':
      return `${d}.${m}.${y}`;
    case 'slash-mdy':
      return `${m}/${d}/${y}`;
    case 'slash-dmy':
      return `${d}/${m}/${y}`;
    case 'epoch-s':
      return Math.floor(ms / 1000);
    case 'epoch-ms':
      return ms;
  }
}

/** A request's list record as the service writes it. */
export function listedRecord(r: SandboxRequest, d: ResolvedDialect) {
  const form = formOf(d.dateForm, r.id);
  return { ...listRecord(r), dueDate: writeDate(r.dueDate, form), createdAt: writeDate(r.createdAt, form) };
}

/** The answer to a create that went through: the request created and e-mailed, said the dialect's way. */
export function createdAnswer(r: SandboxRequest, d: ResolvedDialect): Answer {
  const { status, wrap, fields } = d.createAnswer;
  if (status === 204) return { status, body: '' };
  const form = formOf(d.dateForm, r.id);
  const n = d.body;
  let shown: Record<string, unknown>;
  if (status === 202) shown = { id: r.id, status: 'queued' };
  else if (fields === 'id-only') shown = { id: r.id };
  else if (fields === 'list') shown = listedRecord(r, d);
  else if (fields === 'full') shown = { ...r, dueDate: writeDate(r.dueDate, form), createdAt: writeDate(r.createdAt, form) };
  else {
    shown = {
      id: r.id,
      status: r.status,
      [n.client]: r.clientId,
      [n.title]: r.title,
      [n.dueDate]: writeDate(r.dueDate, form),
      [n.items]: r.items.map((i) => ({ [n.item.name]: i.name, [n.item.required]: i.required, [n.item.type]: d.itemTypes[i.type] })),
      [n.correctnessMode]: d.correctnessModes[r.correctnessMode as CorrectnessMode] ?? r.correctnessMode,
    };
  }
  return jsonAnswer(status, wrap === 'bare' ? shown : { [wrap]: shown });
}

/** A problem's field as one name: `checklist[0].label`. */
const fieldOf = (p: Problem) => p.path.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${k}` : k), '');

/** A refusal in the dialect's error shape; `problem` keeps what it says, for answers that echo. */
export function refusal(shape: ErrorShape, status: number, code: string, message: string, problems?: Problem[], headers?: Record<string, string>): Answer {
  const title = STATUS_CODES[status] ?? 'Error';
  const details = problems?.length ? problems : undefined;
  let answer: Answer;
  switch (shape) {
    case 'ours':
      answer = failure(
        status,
        code,
        message,
        details?.map((p) => ({ field: fieldOf(p), message: p.message })),
      );
      break;
    case 'rfc7807': {
      const body: Record<string, unknown> = { type: `https://problems.docreq.example/${code}`, title, status, detail: message, code };
      if (details) body['invalid-params'] = details.map((p) => ({ name: fieldOf(p), reason: p.message }));
      answer = jsonAnswer(status, body, { 'content-type': 'application/problem+json' });
      break;
    }
    case 'jsonapi': {
      const base = { status: String(status), code, title };
      const errors = details
        ? details.map((p) => ({
            ...base,
            detail: `${fieldOf(p)} ${p.message}`,
            source: p.in === 'header' ? { header: fieldOf(p) } : { pointer: `/data/attributes/${p.path.join('/')}` },
          }))
        : [{ ...base, detail: message }];
      answer = jsonAnswer(status, { errors }, { 'content-type': 'application/vnd.api+json' });
      break;
    }
    case 'fastapi': {
      const type = (p: Problem) => (p.kind === 'missing' ? 'missing' : p.kind === 'extra' ? 'extra_forbidden' : 'value_error');
      answer = jsonAnswer(status, { detail: details ? details.map((p) => ({ type: type(p), loc: [p.in ?? 'body', ...p.path], msg: p.message })) : message });
      break;
    }
    case 'rails': {
      const errors: Record<string, string[]> = {};
      for (const p of details ?? [{ path: ['base'], message }]) (errors[fieldOf(p) || 'base'] ??= []).push(p.message);
      answer = jsonAnswer(status, { errors });
      break;
    }
  }
  return { ...answer, headers: { ...answer.headers, ...headers }, problem: { code, message, details } };
}
