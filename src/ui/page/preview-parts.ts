import { el, idText, grouped, text, type Child } from './common.js';

/** The send preview's pieces, each drawn from what the tool answered: the request, who gets it, what differs, the exact body. */

interface Item {
  name: string;
  required: boolean;
  type: string;
}
interface Payload {
  clientId?: string;
  title: string;
  dueDate?: string;
  items: Item[];
  correctnessMode?: string;
}
interface RequestRec {
  id?: string | null;
  status?: string | null;
}
interface Confirmation {
  needed: boolean;
  token: string | null;
  expiresAt: string | null;
}
// `payload` is the exact body the service gets (its own field names); `previewed` the same request in the tools' terms.
export interface Single {
  sent: boolean;
  dryRun: boolean;
  confirmation: Confirmation;
  client: { id: string | null; displayName: string | null; email: string | null };
  payload: Record<string, unknown>;
  previewed: Payload;
  request: RequestRec | null;
  outcome: string;
  warnings: string[];
  asPreviewed?: boolean | null;
  differences?: string[];
}
interface Recipient {
  client: string;
  clientId: string | null;
  displayName?: string | null;
  email?: string | null;
  outcome: string;
  request: RequestRec | null;
  reason: string | null;
  asPreviewed?: boolean | null;
  differences?: string[];
}
export interface Batch {
  sent: number;
  dryRun: boolean;
  confirmation: Confirmation;
  payload: Record<string, unknown>;
  previewed: Payload;
  recipients: Recipient[];
  stoppedBy: string | null;
  warnings: string[];
}

const OUTCOME_WORDS: Record<string, string> = {
  will_send: 'will send',
  sent: 'sent',
  accepted: 'accepted, not yet known to be e-mailed',
  may_have_been_sent: 'may have been sent',
  not_sent: 'not sent',
  skipped: 'will not send',
  already_sent: 'sent before',
  declined: 'not sent (declined)',
  previewed: 'not sent',
};
const words = (outcome: string) => OUTCOME_WORDS[outcome] ?? outcome.replace(/_/g, ' ');
export const plural = (n: number, one: string, many = `${one}s`) => `${grouped(n)} ${n === 1 ? one : many}`;
/** What to do when an outcome is unclear, said once. */
export const CHECK = 'Look at this client’s requests in the document request service before sending again.';

export function requestDetails(p: Payload): Node {
  const rows: [string, Child][] = [
    ['Title', text(p.title)],
    ['Due', p.dueDate ? text(p.dueDate) : 'no due date'],
    ['Correctness mode', p.correctnessMode ? text(p.correctnessMode) : "the service's default"],
  ];
  const required = p.items.filter((i) => i.required).length;
  return el(
    'section',
    { 'aria-labelledby': 'request-h' },
    el('h2', { id: 'request-h' }, 'Request'),
    el('dl', {}, ...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { 'data-field': k.toLowerCase() }, v)])),
    el(
      'table',
      { 'data-testid': 'items' },
      el('caption', {}, `Checklist: ${plural(p.items.length, 'item')}, ${grouped(required)} required`),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', { scope: 'col' }, '#'),
          el('th', { scope: 'col' }, 'Item'),
          el('th', { scope: 'col' }, 'Type'),
          el('th', { scope: 'col' }, 'Required'),
        ),
      ),
      el(
        'tbody',
        {},
        ...p.items.map((i, n) =>
          el('tr', {}, el('td', {}, n + 1), el('td', {}, text(i.name)), el('td', {}, text(i.type)), el('td', {}, i.required ? 'required' : 'optional')),
        ),
      ),
    ),
  );
}

/** What the service kept that differs from the preview, said plainly (a send's result only). */
export function differencesBlock(asPreviewed: boolean | null | undefined, differences: string[] | undefined, who?: string): Child {
  if (asPreviewed !== false || !differences?.length) return null;
  return el(
    'section',
    { class: 'warn', 'data-testid': 'differences' },
    el('h2', {}, who === undefined ? 'Not as previewed' : 'Not as previewed: ', who === undefined ? null : text(who)),
    el('ul', {}, ...differences.map((d) => el('li', {}, text(d)))),
  );
}

export function warningsBlock(warnings: string[]): Child {
  if (!warnings.length) return null;
  return el(
    'section',
    { class: 'warn', 'aria-labelledby': 'warn-h' },
    el('h2', { id: 'warn-h' }, 'Warnings'),
    el('ul', {}, ...warnings.map((w) => el('li', {}, text(w)))),
  );
}

export function exactBody(body: unknown, note: string): Node {
  return el(
    'details',
    { open: true },
    el('summary', {}, 'Exact body that will be sent'),
    el('p', { class: 'muted' }, note),
    el('pre', { 'data-testid': 'body' }, JSON.stringify(body, null, 2)),
  );
}

/** A client as resolved: name, e-mail and id, each isolated. */
export function who(name: string | null | undefined, email: string | null | undefined, id: string | null | undefined): HTMLElement {
  return el(
    'span',
    { class: 'who' },
    el('strong', {}, text(name, '(no name)', { 'data-part': 'name' })),
    ' ',
    el('span', {}, '<', text(email, 'no e-mail', { 'data-part': 'email' }), '>'),
    ' ',
    el('span', { class: 'muted' }, 'id ', idText(id, { 'data-part': 'id' })),
  );
}

// Suggestions the server lists in a reason: "Name" <e-mail> (id …), as its clientLabel writes them.
const SUGGESTION = /"((?:[^"\\]|\\.)*)" <([^>]*)> \(id ([^)]*)\)/g;

/**
 * A reason, short: its first clause (up to the first colon, semicolon or bracket), and the rest
 * behind a disclosure; clients it suggests are listed there by name, e-mail and id.
 */
function reasonCell(reason: string | null, request: RequestRec | null, choose?: (id: string) => void): Child {
  if (request?.id) return el('span', {}, 'request ', idText(request.id));
  if (!reason) return null;
  const short = /^[^:;(]*/.exec(reason)![0].trim() || reason;
  // A name several clients share ("ambiguous"): on a preview, each of them can be chosen here ("which one?").
  const pickable = choose && short === 'ambiguous';
  const suggested = [...reason.matchAll(SUGGESTION)].map((m) => {
    const shown = who(JSON.parse(`"${m[1]}"`) as string, m[2], m[3]);
    if (!pickable) return shown;
    const button = el('button', { type: 'button', 'data-testid': 'choose', 'data-client': m[3] }, 'Choose');
    button.addEventListener('click', () => choose(m[3]!));
    return el('span', {}, shown, ' ', button);
  });
  if (short === reason && !suggested.length) return text(reason, '', { 'data-part': 'reason' });
  return el(
    'span',
    {},
    text(short, '', { 'data-part': 'reason' }),
    el(
      'details',
      { class: 'why', ...(pickable ? { open: true } : {}) },
      el(
        'summary',
        {},
        suggested.length ? `${grouped(suggested.length)} ${pickable ? 'clients to choose from' : `similar client${suggested.length === 1 ? '' : 's'}`}` : 'Why',
      ),
      suggested.length ? el('ul', {}, ...suggested.map((s) => el('li', {}, s))) : el('p', {}, text(reason)),
    ),
  );
}

/** A choice among the clients a recipient's name matched: its index among the recipients and the id chosen. */
type ChooseRecipient = (index: number, id: string) => void;

export function recipientsTable(recipients: Recipient[], caption: string, choose?: ChooseRecipient): Node {
  return el(
    'table',
    { 'data-testid': 'recipients', class: 'recipients' },
    el('caption', {}, caption),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'Given'),
        el('th', { scope: 'col' }, 'Client'),
        el('th', { scope: 'col' }, 'Outcome'),
        el('th', { scope: 'col' }, 'Request or why not'),
      ),
    ),
    el(
      'tbody',
      {},
      ...recipients.map((r, n) =>
        el(
          'tr',
          { 'data-outcome': r.outcome },
          el('td', {}, text(r.client, '', { 'data-part': 'given' })),
          el('td', {}, r.clientId ? who(r.displayName, r.email, r.clientId) : el('span', { class: 'muted' }, 'no client found')),
          el('td', { class: `o-${r.outcome}` }, words(r.outcome)),
          el('td', {}, reasonCell(r.reason, r.request, choose && ((id) => choose(n, id)))),
        ),
      ),
    ),
  );
}
