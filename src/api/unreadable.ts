import { oneLine } from '../text/render.js';

/**
 * What a list could not read in full: the records whose read fields nest too deep, and the note the model reads of them;
 * and the signs that the service holds more of a list than its answer gave.
 */

/** How deep an element of `data` may nest (the element itself is level 1; a request record needs 1). */
export const MAX_ELEMENT_DEPTH = 64;

/** A record one or more of whose read fields could not be read (nested too deep): they stand as null. */
export interface Unreadable {
  /** Its place in the records. */
  index: number;
  /** The read fields that could not be read. */
  fields: string[];
}

/** The records of a list that could not be read in full, by the records array the parser answered. */
const UNREADABLE = new WeakMap<readonly unknown[], readonly Unreadable[]>();

/** Which records of a list (the very array a list parser answered) could not be read in full; none for any other array. */
export function unreadableIn(records: readonly unknown[]): readonly Unreadable[] {
  return UNREADABLE.get(records) ?? [];
}

/** How many records a note names by id before it counts the rest. */
const NAMED = 5;

/**
 * What the model reads of a list's records that could not be read in full: one note naming the first
 * few by id and the fields that stand empty, or none. Each such record is still listed and counted.
 */
export function unreadableNotes(records: readonly { id: string | null }[], noun: 'client' | 'request'): string[] {
  const bad = unreadableIn(records);
  if (bad.length === 0) return [];
  const named = bad.slice(0, NAMED).map((u) => {
    const id = records[u.index]?.id;
    return `${id ? `id ${oneLine(id, 40)}` : 'one with no readable id'} (${u.fields.join(', ')})`;
  });
  const more = bad.length > NAMED ? `, and ${(bad.length - NAMED).toLocaleString('en')} more` : '';
  const them = bad.length === 1 ? `1 ${noun}` : `${bad.length.toLocaleString('en')} ${noun}s`;
  return [
    `${them} in the service's list could not be read in full: ${named.join('; ')}${more}. ` +
      `Those fields are nested more than ${MAX_ELEMENT_DEPTH} levels deep, which no ${noun} field is, so they show as empty; ${bad.length === 1 ? 'it is' : 'each is'} still listed and counted.`,
  ];
}

/** Records, by the very array a list parser answers, whose read fields could not be read. */
export function markUnreadable(records: readonly unknown[], unreadable: readonly Unreadable[]): void {
  UNREADABLE.set(records, unreadable);
}

/*
 * Signs that the service holds more of a list than one answer gave. The documented lists have no
 * pages, so any such sign means the records read may be only the first page: every count of that
 * list is then a lower bound, and the note names the sign as one sentence (see bodyPaging, linkPaging).
 */

/** Where a list answer may say there is more: its top level, then the objects APIs commonly nest paging in. */
const PAGING_PLACES = ['', 'meta', 'pagination', 'paging', 'page_info', 'pageInfo', 'links', '_links'] as const;
/** Keys whose value, when set (not null, false, empty), points at a next page. */
const NEXT_KEYS = [
  'next',
  'next_cursor',
  'nextCursor',
  'next_page',
  'nextPage',
  'nextPageToken',
  'next_page_token',
  'next_page_url',
  'nextPageUrl',
  'next_url',
  'nextUrl',
  'nextLink',
  '@odata.nextLink',
  'cursor',
] as const;
/** Keys that say there is more when they are exactly true. */
const MORE_KEYS = ['has_more', 'hasMore', 'more', 'has_next', 'hasNext', 'has_next_page', 'hasNextPage'] as const;
/** Keys that, as a number larger than the records given, say the list holds more. */
const TOTAL_KEYS = ['total', 'total_count', 'totalCount', 'count', 'total_results', 'totalResults'] as const;
/** Keys that, as a number of pages beyond the page given (1 unless one of PAGE_KEYS says otherwise), say there are more. */
const PAGES_KEYS = ['total_pages', 'totalPages', 'last_page', 'lastPage', 'page_count', 'pageCount'] as const;
const PAGE_KEYS = ['page', 'current_page', 'currentPage', 'page_number', 'pageNumber'] as const;

type Place = { path: string; value: Record<string, unknown> };

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
/** An own property only: nothing inherited is read as the service's answer. */
const own = (o: Record<string, unknown>, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A value that points somewhere: not null, false, an empty or blank text, an empty list or object. */
function isSet(v: unknown): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (typeof v === 'string') return v.trim() !== '';
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/**
 * The first sign of more pages in a list answer's body (everything but its records: the parser's
 * skeleton, read once at the end), as a sentence; undefined when it gives none. `records`: how many
 * the answer held. Explicit signs (a next link or cursor, a "more" flag) are named before totals.
 */
export function bodyPaging(body: unknown, records: number): string | undefined {
  if (!isPlainObject(body)) return undefined;
  const places: Place[] = [];
  for (const name of PAGING_PLACES) {
    const value = name === '' ? body : own(body, name);
    if (isPlainObject(value)) places.push({ path: name === '' ? '' : `${name}.`, value });
  }
  for (const { path, value } of places) {
    for (const key of MORE_KEYS) if (own(value, key) === true) return `the answer's "${path}${key}" is true`;
    for (const key of NEXT_KEYS) if (isSet(own(value, key))) return `the answer's "${path}${key}" is set`;
  }
  const counted = (n: number, noun: string) => `${n.toLocaleString('en')} ${noun}${n === 1 ? '' : 's'}`;
  for (const { path, value } of places) {
    for (const key of TOTAL_KEYS) {
      const total = own(value, key);
      if (isNumber(total) && total > records) return `the answer's "${path}${key}" is ${total.toLocaleString('en')} but it holds ${counted(records, 'record')}`;
    }
    const page = PAGE_KEYS.map((key) => own(value, key)).find(isNumber) ?? 1;
    for (const key of PAGES_KEYS) {
      const pages = own(value, key);
      if (isNumber(pages) && pages > page) return `the answer's "${path}${key}" is ${pages.toLocaleString('en')} but it is page ${page.toLocaleString('en')}`;
    }
  }
  return undefined;
}

/** What stops a token in a Link header's parameters. */
const LINK_STOPS = new Set([' ', '\t', ';', ',', '=', '"', '<']);

/**
 * Whether a Link header's link types (`rel`) hold "next" (RFC 8288: quoted or not, in any case, among
 * several, on any of its links, in any of its lines), read in one pass: a target's own ";rel=next"
 * between < and >, or one inside another parameter's quoted value, is not a link type.
 */
export function linkPaging(link: string | string[] | undefined): string | undefined {
  for (const value of Array.isArray(link) ? link : link ? [link] : []) {
    const n = value.length;
    // 'link': not in a parameter; then the parameter's name, its '=', its value.
    let state: 'link' | 'name' | 'eq' | 'value' = 'link';
    let name = '';
    let i = 0;
    while (i < n) {
      const c = value[i]!;
      if (c === ' ' || c === '\t') i++;
      else if (c === '<') {
        const end = value.indexOf('>', i);
        if (end < 0) break;
        i = end + 1;
        state = 'link';
      } else if (c === ';' || c === ',' || c === '=') {
        if (c === ';') state = 'name';
        else if (c === '=' && state === 'eq') state = 'value';
        else state = 'link';
        i++;
      } else {
        let token = '';
        if (c === '"') {
          for (i++; i < n && value[i] !== '"'; i++) {
            if (value[i] === '\\') i++; // a quoted pair: the next character as it is
            token += value[i] ?? '';
          }
          i++;
        } else {
          const from = i;
          while (i < n && !LINK_STOPS.has(value[i]!)) i++;
          token = value.slice(from, i);
        }
        if (state === 'value' && name === 'rel' && token.toLowerCase().split(/\s+/).includes('next')) return 'the answer has a Link header with rel="next"';
        if (state === 'name') {
          name = token.toLowerCase();
          state = 'eq';
        } else state = 'link';
      }
    }
  }
  return undefined;
}
