import type { DocReqApi, ListResult } from './api/client.js';
import type { Client, RequestRecord } from './api/records.js';
import { addDays, localToday } from './clock.js';
import { readDay, type DateForm } from './domain/dates.js';
import type { ServiceProfile } from './domain/service-profile.js';
import { oneLine } from './text/render.js';

/**
 * `check`'s account of how the firm's service fits the profile in force, from one read of each list and no POST:
 * the statuses seen and how each is counted, the date forms seen, the fields beyond the documented ones, any paging
 * signal, and the body a send would POST. What it finds that the profile does not account for is marked "!".
 */

const cap = (s: string) => oneLine(s, 60);

function counted(counts: Record<string, number>, max = 12): string {
  // Most first, ties by name: the same service prints the same lines.
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const shown = entries.slice(0, max).map(([k, n]) => `${cap(k)} ${n}`);
  return shown.join(', ') + (entries.length > max ? `, …${entries.length - max} more` : '');
}

/** The fit's lines as they are written: "✓" for what the profile accounts for, "!" (counted in `problems`) for what it does not. */
class Fit {
  readonly lines: string[] = [];
  problems = 0;
  seen(line: string): void {
    this.lines.push(`✓ ${line}`);
  }
  unaccounted(line: string): void {
    this.problems++;
    this.lines.push(`! ${line}`);
  }
}

/** Request statuses, each with how the profile counts it; returns how many requests it calls open. */
function statusLines(fit: Fit, profile: ServiceProfile, requests: ListResult<RequestRecord>): number {
  const byKind: Record<'open' | 'closed' | 'unknown', Record<string, number>> = { open: {}, closed: {}, unknown: {} };
  for (const r of requests.records) {
    const kind = profile.statuses.kind(r.status);
    const key = r.status ?? '(no status)';
    byKind[kind][key] = (byKind[kind][key] ?? 0) + 1;
  }
  fit.seen(`request statuses seen (${requests.records.length} requests): open ${counted(byKind.open) || 'none'}; closed ${counted(byKind.closed) || 'none'}`);
  if (Object.keys(byKind.unknown).length) {
    fit.unaccounted(
      `statuses the profile names neither open nor closed: ${counted(byKind.unknown)}; counted as open unless every item is complete, and named in answers: list them under statuses.open or statuses.closed`,
    );
  }
  return Object.values(byKind.open).reduce((a, b) => a + b, 0);
}

/** The date forms seen, due dates and creation times alike, and a few that could not be read. */
function dateLines(fit: Fit, profile: ServiceProfile, requests: ListResult<RequestRecord>): void {
  const forms: Partial<Record<DateForm | 'unread', number>> = {};
  const unread: string[] = [];
  for (const r of requests.records) {
    for (const value of [r.dueDate, r.createdAt]) {
      const reading = readDay(value, profile.ambiguousDates);
      if (!reading) continue;
      const form = reading.day === null ? 'unread' : reading.form;
      forms[form] = (forms[form] ?? 0) + 1;
      if (reading.day === null && unread.length < 3) unread.push(value!);
    }
  }
  const formText = counted(Object.fromEntries(Object.entries(forms).filter(([k]) => k !== 'unread')));
  fit.seen(`date forms seen: ${formText || 'none (no dates)'}`);
  if (forms.unread)
    fit.unaccounted(
      `${forms.unread} dates not read (e.g. ${unread.map((u) => JSON.stringify(cap(u))).join(', ')}): for dates such as 03/04/2026 set dates.ambiguous`,
    );
}

/** The body a send would POST to the first active client (or any), as an example: never sent. */
function exampleLine(fit: Fit, profile: ServiceProfile, clients: ListResult<Client>): void {
  const client = clients.records.find((c) => c.status?.toLowerCase() === 'active' && c.id) ?? clients.records.find((c) => c.id);
  const example = profile.body({
    clientId: client?.id ?? '<client id>',
    title: 'Example: documents for your 2026 return',
    dueDate: addDays(localToday(), 14),
    items: [
      { name: 'W-2 forms', required: true, type: 'file' },
      { name: 'Any new dependants?', required: false, type: 'text' },
    ],
    correctnessMode: 'soft',
  });
  fit.seen(`a send would POST (an example; nothing is sent by check): ${JSON.stringify(example)}`);
}

/** The lines of the fit; `problems` counts the lines marked "!" (the profile does not account for something seen). */
function fitLines(
  profile: ServiceProfile,
  clients: ListResult<Client>,
  requests: ListResult<RequestRecord>,
): { lines: string[]; problems: number; open: number } {
  const fit = new Fit();
  fit.seen(`service profile: ${profile.source ? profile.source : 'none set (DOCREQ_SERVICE_PROFILE): the defaults'}`);
  for (const line of profile.describe()) fit.lines.push(`    ${line}`);
  const open = statusLines(fit, profile, requests);

  // Client statuses: a client who is not active is sent to only with the person's go-ahead.
  const clientStatuses: Record<string, number> = {};
  for (const c of clients.records) clientStatuses[c.status ?? '(no status)'] = (clientStatuses[c.status ?? '(no status)'] ?? 0) + 1;
  fit.seen(
    `client statuses seen (${clients.records.length} clients): ${counted(clientStatuses) || 'none'}; a client who is not active is sent to only with the person's go-ahead`,
  );

  dateLines(fit, profile, requests);

  // Fields beyond the documented ones.
  const extra = (result: ListResult<unknown>) => (result.survey ? counted(result.survey.fields) : '');
  fit.seen(`fields beyond the documented ones: clients ${extra(clients) || 'none'}; requests ${extra(requests) || 'none'}`);

  // Paging signals: the API document's lists are whole.
  for (const [what, result] of [
    ['clients', clients],
    ['requests', requests],
  ] as const) {
    if (result.paging)
      fit.unaccounted(`the ${what} list signals more pages (${result.paging}): counts over it are "at least", and a record on a later page is not seen`);
  }
  if (!clients.paging && !requests.paging) fit.seen('paging: none signalled (each list is whole, as the API document says)');

  exampleLine(fit, profile, clients);
  return { lines: fit.lines, problems: fit.problems, open };
}

/**
 * Reads each list once, with the survey of their fields, and prints the fit. Never POSTs. `open` counts the requests
 * the profile calls open: the nearest `check` can come to the firm's active-request limit, which the service does not publish.
 */
export async function checkFit(
  api: DocReqApi,
  profile: ServiceProfile,
  out: (line: string) => void,
): Promise<{ clients: number; problems: number; open: number }> {
  const [clients, requests] = await Promise.all([api.fetchClients({ survey: true }), api.fetchRequests({ survey: true })]);
  const { lines, problems, open } = fitLines(profile, clients, requests);
  for (const line of lines) out(line);
  return { clients: clients.records.length, problems, open };
}
