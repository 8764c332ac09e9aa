import { z } from 'zod';
import { CORRECTNESS_MODES, ITEM_TYPES } from './checklist.js';
import type { AmbiguousOrder } from './dates.js';
import { DEFAULT_CLOSED_STATUSES, DEFAULT_OPEN_STATUSES, StatusRules, statusKey } from './request-status.js';

/**
 * The service profile: what the firm's service decides where the API document is silent. The create body's field
 * names and spellings, which request statuses are open or closed, which of day and month comes first in a date
 * such as 03/04/2026, and where a create's answer holds the created record. Every default is what a service like
 * the embedded sandbox does, so a server without a profile behaves exactly as one with an empty profile.
 *
 * The body is built here and only here (`body`), from the request the person previewed: the preview shows this very
 * object and the POST sends it, so what the service is given is what the person saw. Imports nothing of ours.
 */

/** A field name as the service spells it: one JSON key (not a path), visible characters only. */
const fieldName = (fallback: string) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(64, 'must be at most 64 characters')
    .refine((s) => /^[\p{L}\p{N}_$@.:-]+$/u.test(s) && s !== '__proto__', 'must be a plain field name (letters, digits, _ - . : $ @)')
    .default(fallback);

const spelled = z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters').optional();
const statusList = z.array(z.string().trim().min(1, 'must not be empty').max(64)).max(200, 'at most 200 statuses');

export const serviceProfileSchema = z
  .strictObject({
    body: z
      .strictObject({
        client: fieldName('clientId'),
        title: fieldName('title'),
        dueDate: fieldName('dueDate'),
        items: fieldName('items'),
        correctnessMode: fieldName('correctnessMode'),
        item: z.strictObject({ name: fieldName('name'), required: fieldName('required'), type: fieldName('type') }).prefault({}),
      })
      .prefault({}),
    values: z
      .strictObject({
        itemType: z.strictObject(Object.fromEntries(ITEM_TYPES.map((t) => [t, spelled])) as Record<(typeof ITEM_TYPES)[number], typeof spelled>).prefault({}),
        correctnessMode: z
          .strictObject(Object.fromEntries(CORRECTNESS_MODES.map((m) => [m, spelled])) as Record<(typeof CORRECTNESS_MODES)[number], typeof spelled>)
          .prefault({}),
        dueDate: z.enum(['date', 'date-time']).default('date'),
      })
      .prefault({}),
    statuses: z.strictObject({ open: statusList.optional(), closed: statusList.optional() }).prefault({}),
    dates: z.strictObject({ ambiguous: z.enum(['day-first', 'month-first', 'unread']).default('unread') }).prefault({}),
    created: z
      .strictObject({
        record: z
          .string()
          .trim()
          .min(1, 'must not be empty')
          .max(100)
          .refine(
            (s) => s === 'auto' || s === 'body' || /^[\p{L}\p{N}_$@:-]+(\.[\p{L}\p{N}_$@:-]+)*$/u.test(s),
            'must be auto, body, or a field path such as data or result.request',
          )
          .default('auto'),
      })
      .prefault({}),
  })
  .superRefine((p, ctx) => {
    const clash = (names: Record<string, string>, where: string) => {
      const seen = new Map<string, string>();
      for (const [role, name] of Object.entries(names)) {
        const other = seen.get(name);
        if (other) ctx.addIssue({ code: 'custom', path: [where, role], message: `names the same field as ${where}.${other} ("${name}")` });
        seen.set(name, role);
      }
    };
    const { item, ...top } = p.body;
    clash(top, 'body');
    clash(item, 'body.item');
    const open = new Set((p.statuses.open ?? []).map(statusKey));
    for (const status of p.statuses.closed ?? []) {
      if (open.has(statusKey(status))) ctx.addIssue({ code: 'custom', path: ['statuses', 'closed'], message: `"${status}" is listed as open too` });
    }
  });

export type ServiceProfileSpec = z.output<typeof serviceProfileSchema>;

/** The request as previewed, in our own terms: what the body is made from. */
export interface RequestBody {
  clientId: string;
  title: string;
  dueDate?: string;
  items: { name: string; required: boolean; type: string }[];
  correctnessMode?: string;
}

/** A tool argument, as the person and the model know the fields of a request. */
export type Argument = 'client' | 'title' | 'dueDate' | 'items' | 'correctnessMode';

/** What the service's record says it kept, read by our names and by the service's own; `undefined`: the record does not show it. */
export interface Kept {
  clientId?: unknown;
  clientName?: unknown;
  title?: unknown;
  dueDate?: unknown;
  /** How many checklist items (a count, or the length of the items the record lists). */
  items?: number | null;
  correctnessMode?: unknown;
}

const WRAPPERS = ['data', 'request', 'result', 'record'];

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

export class ServiceProfile {
  readonly statuses: StatusRules;
  readonly ambiguousDates: AmbiguousOrder;

  constructor(
    readonly spec: ServiceProfileSpec = serviceProfileSchema.parse({}),
    /** Where it was read from, for the words that name it; undefined: the defaults. */
    readonly source?: string,
  ) {
    this.statuses = new StatusRules(spec.statuses.open ?? DEFAULT_OPEN_STATUSES, spec.statuses.closed ?? DEFAULT_CLOSED_STATUSES);
    this.ambiguousDates = spec.dates.ambiguous;
  }

  /** The exact body the service is given for this request: what the preview shows and the POST sends. */
  body(request: RequestBody): Record<string, unknown> {
    const { body: names, values } = this.spec;
    const out: Record<string, unknown> = {};
    out[names.client] = request.clientId;
    out[names.title] = request.title;
    if (request.dueDate) out[names.dueDate] = values.dueDate === 'date-time' ? `${request.dueDate}T00:00:00Z` : request.dueDate;
    out[names.items] = request.items.map((item) => ({
      [names.item.name]: item.name,
      [names.item.required]: item.required,
      [names.item.type]: values.itemType[item.type as keyof typeof values.itemType] ?? item.type,
    }));
    if (request.correctnessMode) out[names.correctnessMode] = this.modeSpelled(request.correctnessMode);
    return out;
  }

  /** A correctness mode as the service spells it. */
  modeSpelled(mode: string): string {
    return this.spec.values.correctnessMode[mode as keyof ServiceProfileSpec['values']['correctnessMode']] ?? mode;
  }

  /** The service's name for an argument's field, and the profile setting that names it. */
  fieldOf(argument: Argument): { name: string; setting: string } {
    return { name: this.spec.body[argument], setting: `body.${argument}` };
  }

  /**
   * The tool argument a field the service refused came from (its own path: `due_date`, `checklist[0].label`), worded
   * for a person; a field the profile renames is named with its service name and the setting. Unknown paths as given.
   */
  nameField(path: string): string {
    const { body } = this.spec;
    const match = /^([^[.]+)(?:\[(\d+)\](?:\.(.+))?)?$/.exec(path);
    if (!match) return path;
    const [, top, index, inner] = match;
    const argument = (Object.keys(body) as (keyof typeof body)[]).find((k) => k !== 'item' && body[k] === top) as Argument | undefined;
    if (!argument) return path;
    let words: string = argument;
    let renamed = argument !== top;
    let setting = `body.${argument}`;
    if (index !== undefined) {
      words += `[${index}]`;
      if (inner !== undefined) {
        const part = (Object.keys(body.item) as (keyof typeof body.item)[]).find((k) => body.item[k] === inner);
        words += `.${part ?? inner}`;
        if (part && part !== inner) {
          renamed = true;
          setting = `body.item.${part}`;
        }
      }
    }
    return renamed ? `${words} (sent as "${path}", named by ${setting} in the service profile)` : words;
  }

  /** Where a 2xx answer to a create holds the created record (`created.record`), or null when it holds none. */
  createdRecord(answer: unknown): Record<string, unknown> | null {
    const where = this.spec.created.record;
    if (!isObject(answer)) return null;
    let found: unknown = answer;
    if (where === 'auto') {
      const wrapper = WRAPPERS.find((w) => isObject(answer[w]) && Object.keys(answer[w]).length > 0);
      found = wrapper ? answer[wrapper] : answer;
    } else if (where !== 'body') {
      for (const step of where.split('.')) found = isObject(found) ? found[step] : undefined;
    }
    return isObject(found) && Object.keys(found).length > 0 ? found : null;
  }

  /** What a created record says the service kept, by our documented names first, then by the service's own body names. */
  kept(record: Record<string, unknown>): Kept {
    const { body } = this.spec;
    const pick = (...keys: string[]) => {
      for (const key of keys) if (Object.hasOwn(record, key)) return { value: record[key] };
      return undefined;
    };
    const out: Kept = {};
    const client = pick('clientId', body.client, 'client_id');
    if (client) out.clientId = client.value;
    const name = pick('clientName', 'client_name');
    if (name) out.clientName = name.value;
    const title = pick('title', body.title);
    if (title) out.title = title.value;
    const due = pick('dueDate', body.dueDate, 'due_date');
    if (due) out.dueDate = due.value;
    const count = pick('totalItems', 'total_items', 'itemCount');
    const list = pick(body.items, 'items');
    if (count && typeof count.value === 'number' && Number.isFinite(count.value)) out.items = count.value;
    else if (list) out.items = Array.isArray(list.value) ? list.value.length : null;
    const mode = pick('correctnessMode', body.correctnessMode, 'correctness_mode');
    if (mode) out.correctnessMode = mode.value;
    return out;
  }

  /** The profile as `check` prints it: one line per part that differs from the defaults, or that it is the defaults. */
  describe(): string[] {
    const defaults = serviceProfileSchema.parse({});
    const lines: string[] = [];
    const { body, values, statuses, dates, created } = this.spec;
    const renamed = (['client', 'title', 'dueDate', 'items', 'correctnessMode'] as const)
      .filter((k) => body[k] !== defaults.body[k])
      .map((k) => `${k} → "${body[k]}"`);
    const itemRenamed = Object.entries(body.item)
      .filter(([k, v]) => v !== defaults.body.item[k as keyof typeof body.item])
      .map(([k, v]) => `item.${k} → "${v}"`);
    lines.push(
      `body field names: ${[...renamed, ...itemRenamed].join(', ') || 'the defaults (clientId, title, dueDate, items: name, required, type; correctnessMode)'}`,
    );
    const spellings = [
      ...Object.entries(values.itemType).map(([k, v]) => `type ${k} → "${v}"`),
      ...Object.entries(values.correctnessMode).map(([k, v]) => `mode ${k} → "${v}"`),
    ];
    lines.push(
      `values: ${spellings.length ? spellings.join(', ') : 'as the API document spells them'}; due date sent as ${values.dueDate === 'date' ? 'a date (YYYY-MM-DD)' : 'a date-time (YYYY-MM-DDT00:00:00Z)'}`,
    );
    const described = this.statuses.describe();
    lines.push(`statuses open: ${described.open.join(', ')}${statuses.open ? '' : ' (defaults)'}`);
    lines.push(`statuses closed: ${described.closed.join(', ')}${statuses.closed ? '' : ' (defaults)'}`);
    lines.push(`dates such as 03/04/2026: ${dates.ambiguous === 'unread' ? 'not read (set dates.ambiguous to day-first or month-first)' : dates.ambiguous}`);
    lines.push(
      `created record: ${created.record === 'auto' ? 'found in the answer (bare, or under data, request, result or record)' : created.record === 'body' ? 'the answer itself' : `under ${created.record}`}`,
    );
    return lines;
  }
}

export const DEFAULT_PROFILE = new ServiceProfile();
