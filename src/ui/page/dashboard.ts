import { connect, el, newApp, resultText, show, type ToolResultLike } from './common.js';

/**
 * The firm's dashboard for list_requests: with groupBy "client", open and overdue requests per client
 * as bars, the most overdue first; otherwise the firm-wide status. Every number is the result's own
 * (structuredContent), shown as it came: the page counts nothing itself.
 */

interface Group { clientName: string | null; requests: number; open: number; overdue: number; nextDue: string | null; oldestOverdue: string | null }
interface Listing {
  asOf: string;
  matched?: number;
  total?: number;
  byStatus: Record<string, number>;
  open: number;
  closed: number;
  overdue: number;
  dueWithin7Days: number;
  groups?: Group[];
  groupCount?: number;
}

const app = newApp('docreq-dashboard');

const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** most_overdue's order: overdue count, then the oldest overdue date, then open, then the name. */
function mostOverdueFirst(a: Group, b: Group): number {
  return b.overdue - a.overdue || (a.oldestOverdue ?? '9999').localeCompare(b.oldestOverdue ?? '9999') || b.open - a.open || (a.clientName ?? '').localeCompare(b.clientName ?? '');
}

function bar(value: number, max: number, kind: string, label: string): HTMLElement {
  const width = max > 0 ? Math.round((value / max) * 1000) / 10 : 0;
  return el('span', { class: 'cell' }, el('span', { class: 'num', 'data-count': label }, value), el('span', { class: `bar ${kind}`, style: `width:${width}%`, 'aria-hidden': 'true' }));
}

function tile(label: string, value: number, key: string): HTMLElement {
  return el('div', { class: 'tile' }, el('span', { class: 'big', 'data-total': key }, value), el('span', { class: 'muted' }, label));
}

function render(result: ToolResultLike): void {
  const s = result.structuredContent as Listing | undefined;
  if (!s || typeof s.open !== 'number') {
    show(el('h1', {}, 'Document requests'), el('p', { role: 'status', class: result.isError ? 'status bad' : 'status' }, resultText(result) || 'No result.'));
    return;
  }
  const weekEnd = addDays(s.asOf, 7);
  const totals = el(
    'div',
    { class: 'tiles', role: 'group', 'aria-label': 'Totals' },
    tile('open', s.open, 'open'),
    tile('overdue', s.overdue, 'overdue'),
    tile('due within 7 days', s.dueWithin7Days, 'dueWithin7Days'),
    tile('closed', s.closed, 'closed'),
  );
  const head = [el('h1', {}, 'Document requests'), el('p', { class: 'muted' }, `As of ${s.asOf}; exact counts over ${s.matched ?? s.total ?? 0} matching requests.`), totals];
  if (s.groups) {
    const groups = [...s.groups].sort(mostOverdueFirst);
    const max = Math.max(1, ...groups.map((g) => Math.max(g.open, g.overdue)));
    const table = el(
      'table',
      { class: 'bars', 'data-testid': 'groups' },
      el('caption', {}, `Per client, most overdue first: ${groups.length}${s.groupCount !== undefined && s.groupCount !== groups.length ? ` of ${s.groupCount}` : ''} client${groups.length === 1 ? '' : 's'}`),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Client'), el('th', { scope: 'col' }, 'Open'), el('th', { scope: 'col' }, 'Overdue'), el('th', { scope: 'col' }, 'Next due'))),
      el(
        'tbody',
        {},
        ...groups.map((g) => {
          const soon = g.nextDue !== null && g.nextDue >= s.asOf && g.nextDue <= weekEnd;
          return el(
            'tr',
            { 'data-client': g.clientName ?? '' },
            el('th', { scope: 'row' }, g.clientName ?? '(no name)'),
            el('td', {}, bar(g.open, max, 'open', 'open')),
            el('td', {}, bar(g.overdue, max, 'overdue', 'overdue')),
            el('td', {}, g.nextDue ?? '—', soon ? el('span', { class: 'badge' }, ' due within 7 days') : null),
          );
        }),
      ),
    );
    show(...head, table);
    return;
  }
  const statuses = Object.entries(s.byStatus).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const max = Math.max(1, ...statuses.map(([, n]) => n));
  show(
    ...head,
    el(
      'table',
      { class: 'bars', 'data-testid': 'statuses' },
      el('caption', {}, 'Requests by status'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Status'), el('th', { scope: 'col' }, 'Requests'))),
      el('tbody', {}, ...statuses.map(([name, n]) => el('tr', { 'data-status': name }, el('th', { scope: 'row' }, name), el('td', {}, bar(n, max, 'open', 'requests'))))),
    ),
  );
}

app.ontoolresult = (result) => render(result as ToolResultLike);
void connect(app);
