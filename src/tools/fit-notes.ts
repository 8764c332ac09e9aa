import type { RequestRecord } from '../api/records.js';
import type { ServiceProfile } from '../domain/service-profile.js';
import { quoted } from '../text/render.js';
import { count } from './list-text.js';
import { itemCounts, listFacts } from '../requests/facts.js';

/**
 * "Exact, or says why not": the notes an answer carries when the firm's service did something the profile does not
 * account for. A status named neither open nor closed, a due date in a form not read, a list that signals more pages,
 * checklist counts that cannot be. Each note says how it was counted and the setting that would settle it, so a
 * number is never called exact when it is not.
 */

const PROFILE = 'the service profile (DOCREQ_SERVICE_PROFILE)';

/** Statuses among `byStatus` (status → count; "(none)" for a record without one) that the profile names neither open nor closed. */
export function unknownStatusNote(byStatus: Readonly<Record<string, number>>, profile: ServiceProfile): string | undefined {
  const unknown = Object.entries(byStatus).filter(([status]) => profile.statuses.kind(status === '(none)' ? null : status) === 'unknown');
  if (unknown.length === 0) return undefined;
  const n = unknown.reduce((sum, [, k]) => sum + k, 0);
  const shown = unknown.slice(0, 8).map(([status, k]) => `${status === '(none)' ? 'no status' : quoted(status, 40)} (${k})`);
  return (
    `${count(n, 'request')} ${n === 1 ? 'has a status' : 'have statuses'} the service profile names neither open nor closed: ${shown.join(', ')}${unknown.length > 8 ? ', …' : ''}. ` +
    `${n === 1 ? 'It was' : 'They were'} counted as open (and overdue when past due) unless every checklist item is complete. ` +
    `If such a status ends a request, list it under statuses.closed in ${PROFILE}; under statuses.open if it does not.`
  );
}

/** Due dates there but not read: never counted as "no due date", nor as overdue or due soon. */
export function unreadDatesNote(all: readonly RequestRecord[]): string | undefined {
  const unread = listFacts(all).unreadDue;
  if (!unread) return undefined;
  const examples = unread.examples.map((e) => quoted(e, 40)).join(', ');
  const ambiguous = unread.ambiguous
    ? ` ${unread.ambiguous === unread.count ? 'Each' : `${unread.ambiguous} of them`} could be read day-first or month-first: set dates.ambiguous in ${PROFILE} to day-first or month-first.`
    : '';
  return (
    `${count(unread.count, 'request')} (of ${all.length}) ${unread.count === 1 ? 'has a due date' : 'have due dates'} that this server cannot read as a calendar day (e.g. ${examples}): ` +
    `not counted as overdue, due soon, or without a due date.${ambiguous}`
  );
}

/** Per list (its item counts, made once per list): how many records have counts that cannot be. */
const IMPOSSIBLE = new WeakMap<Float64Array, number>();

/** Checklist counts that cannot be (completed above total, a negative count): flagged, never summed silently. */
function impossibleCountsNote(all: readonly RequestRecord[]): string | undefined {
  const { totals, dones } = itemCounts(all);
  let n = IMPOSSIBLE.get(totals);
  if (n === undefined) {
    n = 0;
    for (let i = 0; i < totals.length; i++) if (dones[i]! > totals[i]! || dones[i]! < 0 || totals[i]! < 0) n++;
    IMPOSSIBLE.set(totals, n);
  }
  if (n === 0) return undefined;
  return `${count(n, 'request')} (of ${all.length}) ${n === 1 ? 'has checklist counts' : 'have checklist counts'} that cannot be (completed above total, or below zero): summed as the service gave them, so the checklist totals are not exact.`;
}

/** The list signalled more pages (`paging`: the signal, worded by the API client): every count is at least, not exact. */
export function pagingNote(what: 'request' | 'client', paging: string | undefined): string | undefined {
  if (!paging) return undefined;
  return `AT LEAST: ${paging}, so the service may hold more ${what}s than it listed. The API document says its lists are whole; this one signals more pages, so every count here is a lower bound and a ${what} on a later page is not seen.`;
}

/** Every note of fit for one request list, in the order they matter. */
export function requestFitNotes(
  all: readonly RequestRecord[],
  byStatus: Readonly<Record<string, number>>,
  profile: ServiceProfile,
  paging: string | undefined,
): string[] {
  return [pagingNote('request', paging), unknownStatusNote(byStatus, profile), unreadDatesNote(all), impossibleCountsNote(all)].filter(
    (n): n is string => n !== undefined,
  );
}
