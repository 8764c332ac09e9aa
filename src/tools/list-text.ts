/** Shared by list_clients and list_requests: name matching, shared-name notes, plurals and the list header. */
import { z } from 'zod';
import type { Client } from '../api/records.js';
import { oneLine, quoted } from '../text/render.js';

/** What no tool of this server can do, said in the tools' own descriptions (a host may drop the server's instructions). */
export const CANNOT_DO = 'This server cannot remind clients, change, re-date, cancel or delete requests, change client details, or see answers and files.';

/**
 * A number as English text ("1,234"): whole numbers are grouped here, exactly as toLocaleString('en')
 * groups them, without a call into ICU for each (an answer writes dozens); anything else goes to ICU.
 */
export function num(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en');
  const text = String(n);
  return n > -1000 && n < 1000 ? text : text.replace(/\B(?=(\d{3})+$)/g, ',');
}

/** "1 item", "2 items", "1 company", "3 companies". */
export function count(n: number, noun: string, many = /[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`): string {
  return `${num(n)} ${n === 1 ? noun : many}`;
}

const MAX_NOTES = 5;
const MAX_IDS = 6;

/**
 * One note per shared name met (at most a few, then how many more), each naming the clients with their ids.
 * `what(key)` says what the result counted under that name, e.g. "3 requests".
 */
export function sharedNameNotes(shared: ReadonlyMap<string, Client[]>, keys: Iterable<string>, what: (key: string) => string): string[] {
  const notes: string[] = [];
  let more = 0;
  const seen = new Set<string>();
  for (const key of keys) {
    const clients = shared.get(key);
    if (!clients || seen.has(key)) continue;
    seen.add(key);
    if (notes.length >= MAX_NOTES) {
      more++;
      continue;
    }
    const ids = clients.slice(0, MAX_IDS).map((c) => `id ${oneLine(c.id, 40)}${c.email ? ` <${oneLine(c.email, 60)}>` : ''}`);
    const rest = clients.length > MAX_IDS ? `, and ${clients.length - MAX_IDS} more` : '';
    notes.push(
      `${quoted(clients[0]!.displayName, 60)} is the name of ${count(clients.length, 'client')} (${ids.join('; ')}${rest}). ` +
        `Requests carry only the client's name, so ${what(key)} under this name may belong to any of them; they are not merged into one client.`,
    );
  }
  if (more > 0) notes.push(`${count(more, 'other name')} shared by several clients also ${more === 1 ? 'occurs' : 'occur'} here; see list_clients.`);
  return notes;
}

/** Status counts as text, largest first, capped so an open set of statuses cannot blow the budget. */
export function statusText(counts: Record<string, number>, max = 12): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  const shown = entries.slice(0, max).map(([k, n]) => `${oneLine(k, 30)} ${n}`);
  if (entries.length > max) shown.push(`${entries.length - max} other statuses ${entries.slice(max).reduce((a, [, n]) => a + n, 0)}`);
  return shown.join(', ') || 'none';
}

export interface ListSummary {
  /** e.g. "As of 2026-03-16: " */
  prefix?: string;
  total: number;
  noun: string;
  matched: number;
  filters: string[];
  /** Sentences of exact facts over the matched records. */
  facts: string[];
  offset: number;
  returned: number;
  /** What the page lists, when not the records themselves (e.g. "client names"), and how many of them. */
  rows?: { noun: string; count: number };
  order?: string;
}

/** One summary line: the total, the filters and how many matched, the facts, and which rows are shown. */
export function summarizeList(s: ListSummary): string {
  const head = `${s.prefix ?? ''}${count(s.total, s.noun)}` + (s.filters.length ? `, ${num(s.matched)} match ${s.filters.join(', ')}` : '') + '.';
  const rows = s.rows ?? { noun: s.noun, count: s.matched };
  const showing = `Showing ${range(s.offset, s.returned)} of ${count(rows.count, rows.noun)}${s.order ? `, ${s.order}` : ''}.`;
  return [head, ...s.facts, showing].join(' ');
}

/** A calendar day; checked without a listed pattern, to keep tools/list small. */
export const day = z
  .string()
  .refine((s) => /^\d{4}-\d{2}-\d{2}$/.test(s), 'must be a date YYYY-MM-DD')
  .refine((s) => !Number.isNaN(Date.parse(s)) && new Date(Date.parse(s)).toISOString().startsWith(s), 'is not a real calendar date');

/** limit and offset for the list tools, described briefly (tools/list is read into every conversation). */
export function pageInput(fallback: number) {
  return {
    limit: z.number().int().min(1).max(500).optional().describe(`Page size (default ${fallback}); counts cover all.`),
    offset: z.number().int().min(0).max(10_000_000).optional().describe('Skip this many; see nextOffset.'),
  };
}

/** Paging fields of a list result. */
export const compactPage = {
  total: z.number().int(),
  matched: z.number().int(),
  offset: z.number().int(),
  returned: z.number().int(),
  nextOffset: z.number().int().nullable(),
};

/** Said when the service answered 304: the records are the copy read last time, confirmed current. */
export function revalidatedLine(revalidated: boolean): string[] {
  return revalidated ? ['(Revalidated: the service confirmed the list is unchanged since the last call.)'] : [];
}

const TEXT_BUDGET = 7_600;

/**
 * Joins a header and record lines within the text budget, then says how many more there are and
 * the offset that shows them. Exact counts stay in the header whatever is cut.
 */
export function pageText(header: string, lines: string[], offset: number, matched: number, emptyHint: string): string {
  if (matched === 0) return `${header}\n${emptyHint}`;
  if (lines.length === 0) return `${header}\nNo records at offset ${offset}: ${matched} matched; use offset=0.`;
  let text = header;
  let shown = 0;
  for (const line of lines) {
    if (text.length + line.length + 60 > TEXT_BUDGET) break;
    text += `\n${line}`;
    shown++;
  }
  const rest = matched - offset - shown;
  if (rest > 0) text += `\n…${rest} more; use offset=${offset + shown}`;
  return text;
}

function range(offset: number, returned: number): string {
  return returned === 0 ? 'none' : `${offset + 1}–${offset + returned}`;
}
