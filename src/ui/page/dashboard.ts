import { connect, el, failureView, newApp, grouped, readable, show, text, type ToolResultLike } from './common.js';

/**
 * The firm's dashboard for list_requests: with groupBy "client", open and overdue requests per client
 * as bars, in the order the result was asked for; otherwise the firm-wide status. Every number is the
 * result's own (structuredContent), shown as it came: the page counts and sorts nothing itself, and
 * its caption says which order it was given and how many of how many clients it shows.
 * More, or the most overdue first, is asked of the server through the host bridge.
 */

interface Group {
  clientName: string | null;
  requests: number;
  open: number;
  overdue: number;
  nextDue: string | null;
  oldestOverdue: string | null;
}
interface Listing {
  asOf: string;
  matched?: number;
  total?: number;
  byStatus: Record<string, number>;
  open: number;
  closed: number;
  overdue: number;
  dueWithin7Days: number;
  offset?: number;
  nextOffset?: number | null;
  groups?: Group[];
  groupCount?: number;
}

/** The order each sort puts client rows in, in a person's words (the tool's default is newest). */
const ORDER: Record<string, string> = {
  newest: 'newest request first',
  oldest: 'oldest request first',
  due_soonest: 'next due first',
  least_complete: 'least complete first',
  most_open: 'most open requests first',
  most_overdue: 'most overdue first',
  most_outstanding: 'most outstanding items first',
};

const app = newApp('docreq-dashboard');
let input: Record<string, unknown> = {};
/** Rows shown so far, and the listing they came from (a next page appends to them). */
let shown: Group[] = [];
let firstOffset = 0;

const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

function bar(value: number, max: number, kind: string, label: string): HTMLElement {
  const width = max > 0 ? Math.round((value / max) * 1000) / 10 : 0;
  return el(
    'span',
    { class: 'cell' },
    el('span', { class: 'num', 'data-count': label, 'data-value': String(value) }, value),
    el('span', { class: `bar ${kind}`, style: `width:${width}%`, 'aria-hidden': 'true' }),
  );
}

function tile(label: string, value: number, key: string): HTMLElement {
  return el(
    'div',
    { class: 'tile' },
    el('span', { class: 'big', 'data-total': key, 'data-value': String(value) }, value),
    el('span', { class: 'muted' }, label),
  );
}

/** Asks the server again through the host (the person pressed a button); the answer replaces or extends the rows. */
async function ask(args: Record<string, unknown>, append: boolean, button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    const answer = (await app.callServerTool({ name: 'list_requests', arguments: args })) as ToolResultLike;
    input = args;
    render(answer, append);
  } catch {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.after(el('p', { role: 'status', class: 'status bad' }, 'The host did not return the next rows. Try again.'));
  }
}

function render(raw: ToolResultLike, append = false): void {
  const result = readable(raw);
  const s = result.structuredContent as Listing | undefined;
  if (!s || typeof s.open !== 'number') {
    show(...failureView('Document requests', result.isError ? 'The requests could not be listed.' : 'No requests came with this result.', result));
    return;
  }
  const weekEnd = addDays(s.asOf, 7);
  const head = header(s);
  if (s.groups) showGroups(s, s.groups, weekEnd, head, append);
  else show(...head, statusTable(s.byStatus));
}

/** What every view starts with: the title, the as-of line and the totals. */
function header(s: Listing): HTMLElement[] {
  const totals = el(
    'div',
    { class: 'tiles', role: 'group', 'aria-label': 'Totals' },
    tile('open', s.open, 'open'),
    tile('overdue', s.overdue, 'overdue'),
    tile('due within 7 days', s.dueWithin7Days, 'dueWithin7Days'),
    tile('closed', s.closed, 'closed'),
  );
  return [
    el('h1', {}, 'Document requests'),
    el('p', { class: 'muted' }, `As of ${s.asOf}; exact counts over ${grouped(s.matched ?? s.total ?? 0)} matching requests.`),
    totals,
  ];
}

/** The client rows shown so far (a next page appends), captioned with their order and which of how many they are, and the buttons that ask for more. */
function showGroups(s: Listing, groups: Group[], weekEnd: string, head: HTMLElement[], append: boolean): void {
  // As given: the page never re-sorts what it was handed.
  shown = append ? [...shown, ...groups] : [...groups];
  if (!append) firstOffset = s.offset ?? 0;
  const sort = typeof input.sort === 'string' ? input.sort : 'newest';
  const order = ORDER[sort];
  const count = s.groupCount ?? shown.length;
  const from = firstOffset + 1;
  const to = firstOffset + shown.length;
  const which = shown.length === count ? `all ${grouped(count)} clients` : `clients ${grouped(from)}–${grouped(to)} of ${grouped(count)}`;
  const table = groupTable(shown, s.asOf, weekEnd, `Per client, ${order ?? 'in the order the server gave'}: ${which}`);
  const actions = groupActions(s, sort, count - to);
  show(...head, table, actions.childElementCount ? actions : null);
}

/** Open and overdue per client as bars on one scale, and each client's next due day (marked when it falls within the week). */
function groupTable(rows: Group[], asOf: string, weekEnd: string, caption: string): HTMLElement {
  const max = Math.max(1, ...rows.map((g) => Math.max(g.open, g.overdue)));
  return el(
    'table',
    { class: 'bars', 'data-testid': 'groups' },
    el('caption', { 'data-testid': 'caption' }, caption),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'Client'),
        el('th', { scope: 'col' }, 'Open'),
        el('th', { scope: 'col' }, 'Overdue'),
        el('th', { scope: 'col' }, 'Next due'),
      ),
    ),
    el(
      'tbody',
      {},
      ...rows.map((g) => {
        const soon = g.nextDue !== null && g.nextDue >= asOf && g.nextDue <= weekEnd;
        return el(
          'tr',
          {},
          el('th', { scope: 'row' }, text(g.clientName, '(no name)')),
          el('td', {}, bar(g.open, max, 'open', 'open')),
          el('td', {}, bar(g.overdue, max, 'overdue', 'overdue')),
          el('td', {}, g.nextDue ? text(g.nextDue) : '—', soon ? el('span', { class: 'badge' }, ' due within 7 days') : null),
        );
      }),
    ),
  );
}

/** The buttons under the client rows: the next page (when there is one), and the most overdue first (unless shown so). */
function groupActions(s: Listing, sort: string, remaining: number): HTMLElement {
  const actions = el('div', { class: 'actions' });
  const { offset: _o, ...rest } = input;
  const limit = typeof input.limit === 'number' ? input.limit : 25;
  if (typeof s.nextOffset === 'number') {
    const more = el('button', { type: 'button', 'data-testid': 'more' }, `Show ${grouped(Math.min(limit, remaining))} more`);
    more.addEventListener('click', () => void ask({ ...rest, groupBy: 'client', offset: s.nextOffset, limit }, true, more));
    actions.append(more);
  }
  if (sort !== 'most_overdue' && s.overdue > 0) {
    const worst = el('button', { type: 'button', 'data-testid': 'most-overdue' }, 'Show the most overdue first');
    worst.addEventListener('click', () => void ask({ ...rest, groupBy: 'client', sort: 'most_overdue', limit }, false, worst));
    actions.append(worst);
  }
  return actions;
}

/** The firm-wide view: requests per status as bars. */
function statusTable(byStatus: Record<string, number>): HTMLElement {
  // Statuses in the order the service's counts came (largest first), ties by name: the page's own
  // order, said so in the caption.
  const statuses = Object.entries(byStatus).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const max = Math.max(1, ...statuses.map(([, n]) => n));
  return el(
    'table',
    { class: 'bars', 'data-testid': 'statuses' },
    el('caption', {}, 'Requests by status, most first'),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Status'), el('th', { scope: 'col' }, 'Requests'))),
    el(
      'tbody',
      {},
      ...statuses.map(([name, n]) => el('tr', { 'data-status': name }, el('th', { scope: 'row' }, text(name)), el('td', {}, bar(n, max, 'open', 'requests')))),
    ),
  );
}

app.ontoolinput = (params) => {
  input = params.arguments ?? {};
};
app.ontoolresult = (result) => render(result as ToolResultLike);
void connect(app);
