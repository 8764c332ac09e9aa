import { connect, el, newApp, resultText, show, type Child, type ToolResultLike } from './common.js';

/**
 * The send preview for create_request and create_request_batch. It shows the exact body the
 * preview's confirmation token is bound to; Send, pressed by the person, calls the same tool through
 * the host bridge with that token. The server's once-only rules (the token is single use, one send
 * per recipient and title at a time, the 24-hour ledger) decide what is sent; the page adds only
 * that its button works once per page.
 */

interface Item { name: string; required: boolean; type: string }
interface Payload { clientId?: string; title: string; dueDate?: string; items: Item[]; correctnessMode?: string }
interface RequestRec { id?: string | null; status?: string | null }
interface Confirmation { needed: boolean; token: string | null; expiresAt: string | null }
interface Single { sent: boolean; dryRun: boolean; confirmation: Confirmation; client: { id: string | null; displayName: string | null; email: string | null }; payload: Payload; request: RequestRec | null; outcome: string; warnings: string[] }
interface Recipient { client: string; clientId: string | null; outcome: string; request: RequestRec | null; reason: string | null }
interface Batch { sent: number; dryRun: boolean; confirmation: Confirmation; payload: Payload; recipients: Recipient[]; stoppedBy: string | null; warnings: string[] }

const app = newApp('docreq-send-preview');
let input: Record<string, unknown> = {};
/** Set once Send is pressed: a second press, or a second result, sends nothing. */
let pressed = false;

const words = (outcome: string) => outcome.replace(/_/g, ' ');

function requestDetails(p: Payload): Node {
  const rows: [string, Child][] = [
    ['Title', p.title],
    ['Due', p.dueDate ?? 'no due date'],
    ['Correctness mode', p.correctnessMode ?? "the service's default"],
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
      el('caption', {}, `Checklist: ${p.items.length} item${p.items.length === 1 ? '' : 's'}, ${required} required`),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, '#'), el('th', { scope: 'col' }, 'Item'), el('th', { scope: 'col' }, 'Type'), el('th', { scope: 'col' }, 'Required'))),
      el('tbody', {}, ...p.items.map((i, n) => el('tr', {}, el('td', {}, n + 1), el('td', {}, i.name), el('td', {}, i.type), el('td', {}, i.required ? 'required' : 'optional')))),
    ),
  );
}

function warningsBlock(warnings: string[]): Child {
  if (!warnings.length) return null;
  return el('section', { class: 'warn', 'aria-labelledby': 'warn-h' }, el('h2', { id: 'warn-h' }, 'Warnings'), el('ul', {}, ...warnings.map((w) => el('li', {}, w))));
}

function exactBody(body: unknown, note: string): Node {
  return el('details', { open: true }, el('summary', {}, 'Exact body that will be sent'), el('p', { class: 'muted' }, note), el('pre', { 'data-testid': 'body' }, JSON.stringify(body, null, 2)));
}

function recipientsTable(recipients: Recipient[], caption: string): Node {
  return el(
    'table',
    { 'data-testid': 'recipients' },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Recipient'), el('th', { scope: 'col' }, 'Client id'), el('th', { scope: 'col' }, 'Outcome'), el('th', { scope: 'col' }, 'Request id or reason'))),
    el(
      'tbody',
      {},
      ...recipients.map((r) =>
        el('tr', { 'data-outcome': r.outcome }, el('td', {}, r.client), el('td', {}, r.clientId ?? '—'), el('td', { class: `o-${r.outcome}` }, words(r.outcome)), el('td', {}, r.request?.id ? `request ${r.request.id}` : (r.reason ?? ''))),
      ),
    ),
  );
}

const isBatch = (s: Record<string, unknown>): s is Record<string, unknown> & Batch => Array.isArray(s.recipients);
const isSingle = (s: Record<string, unknown>): s is Record<string, unknown> & Single => typeof s.outcome === 'string' && typeof s.client === 'object';

/** The arguments Send calls the tool with: the previewed body, and the preview's token. */
function sendArguments(s: Single | Batch, token: string): { name: string; arguments: Record<string, unknown> } {
  const p = s.payload;
  const body = { title: p.title, items: p.items, ...(p.dueDate ? { dueDate: p.dueDate } : {}), ...(p.correctnessMode ? { correctnessMode: p.correctnessMode } : {}) };
  const allowDuplicate = input.allowDuplicate === true ? { allowDuplicate: true } : {};
  if ('recipients' in s) return { name: 'create_request_batch', arguments: { clients: s.recipients.map((r) => r.client), ...body, ...allowDuplicate, confirmationToken: token } };
  return { name: 'create_request', arguments: { client: p.clientId, ...body, ...allowDuplicate, confirmationToken: token } };
}

function status(text: string, kind = ''): HTMLElement {
  return el('p', { role: 'status', class: `status ${kind}`, 'data-testid': 'status' }, text);
}

function render(result: ToolResultLike, afterSend = false): void {
  const s = result.structuredContent;
  if (!s || (!isBatch(s) && !isSingle(s))) {
    show(el('h1', {}, afterSend ? 'Not sent' : 'Document request'), status(resultText(result) || 'No preview was returned.', result.isError ? 'bad' : ''));
    return;
  }
  const previewing = isBatch(s) ? s.recipients.some((r) => r.outcome === 'will_send') && s.confirmation.token !== null : s.outcome === 'previewed';
  if (!previewing || afterSend) return renderOutcome(s, result, afterSend);
  renderPreview(s);
}

function renderPreview(s: Single | Batch): void {
  const batch = 'recipients' in s;
  const willSend = batch ? s.recipients.filter((r) => r.outcome === 'will_send').length : 1;
  const token = s.confirmation.token;
  const sendButton = el('button', { type: 'button', class: 'primary', 'data-testid': 'send', disabled: !token }, batch ? `Send to ${willSend} client${willSend === 1 ? '' : 's'}` : 'Send');
  const cancelButton = el('button', { type: 'button', 'data-testid': 'cancel' }, 'Cancel');
  const live = el('div', { 'aria-live': 'polite' });
  sendButton.addEventListener('click', () => void send(s, token!, sendButton, cancelButton, live));
  cancelButton.addEventListener('click', () => {
    if (pressed) return;
    pressed = true;
    sendButton.disabled = true;
    cancelButton.disabled = true;
    live.replaceChildren(status('Cancelled: nothing was sent.'));
  });
  const body = batch ? s.payload : s.payload;
  show(
    el('h1', {}, batch ? 'Send this request to several clients?' : 'Send this document request?'),
    el('p', { class: 'muted' }, 'Nothing has been sent yet. The service e-mails each client when you press Send.'),
    batch
      ? recipientsTable(s.recipients, `Recipients: ${willSend} will send, ${s.recipients.length - willSend} will not`)
      : el('section', { 'aria-labelledby': 'to-h' }, el('h2', { id: 'to-h' }, 'To'), el('p', { 'data-testid': 'client' }, el('strong', {}, s.client.displayName ?? '(no name)'), ' ', el('span', {}, `<${s.client.email ?? 'no e-mail'}>`), el('span', { class: 'muted' }, ` · id ${s.client.id ?? '—'}`))),
    requestDetails(s.payload),
    warningsBlock(s.warnings),
    exactBody(body, batch ? 'The same body goes to each recipient, with its clientId.' : 'This is the JSON the service receives.'),
    el('div', { class: 'actions' }, sendButton, cancelButton),
    live,
  );
}

async function send(s: Single | Batch, token: string, sendButton: HTMLButtonElement, cancelButton: HTMLButtonElement, live: HTMLElement): Promise<void> {
  if (pressed) return;
  pressed = true;
  sendButton.disabled = true;
  cancelButton.disabled = true;
  sendButton.setAttribute('aria-busy', 'true');
  live.replaceChildren(status('Sending…'));
  try {
    const answer = (await app.callServerTool(sendArguments(s, token))) as ToolResultLike;
    render(answer, true);
    const line = resultText(answer).split('\n')[0] ?? '';
    if (app.getHostCapabilities()?.updateModelContext) {
      await app.updateModelContext({ content: [{ type: 'text', text: `The person pressed Send on the preview page. Result: ${line}` }] }).catch(() => undefined);
    }
  } catch (error) {
    // The call may have reached the server: never offer to send again from this page.
    live.replaceChildren(status(`The host did not return the result (${error instanceof Error ? error.message : String(error)}). The request may have been sent: check with list_requests before sending again.`, 'bad'));
  }
}

function renderOutcome(s: Single | Batch, result: ToolResultLike, afterSend: boolean): void {
  const text = resultText(result).split('\n')[0] ?? '';
  if ('recipients' in s) {
    const count = (o: string) => s.recipients.filter((r) => r.outcome === o).length;
    const head = s.sent > 0 ? `Sent to ${s.sent} client${s.sent === 1 ? '' : 's'}` : 'Nothing was sent';
    show(
      el('h1', {}, head),
      status(`${count('sent')} sent, ${count('may_have_been_sent')} may have been sent, ${count('not_sent') + count('skipped')} not sent${count('already_sent') ? `, ${count('already_sent')} already sent before` : ''}.${s.stoppedBy ? ` Stopped by ${s.stoppedBy}.` : ''}`, result.isError ? 'bad' : ''),
      recipientsTable(s.recipients, 'Outcome per recipient'),
      count('may_have_been_sent') ? el('p', {}, 'For “may have been sent”: check with list_requests before sending again.') : null,
      warningsBlock(s.warnings),
    );
    return;
  }
  const id = s.request?.id ? `Request id ${s.request.id}.` : '';
  const to = `${s.client.displayName ?? '(no name)'} <${s.client.email ?? 'no e-mail'}>`;
  const view: Record<string, [string, string, string]> = {
    sent: ['Sent', `Sent to ${to}. ${id}`, 'ok'],
    may_have_been_sent: ['May have been sent', `The outcome is unclear: check with list_requests before sending again. ${text}`, 'bad'],
    already_sent: ['Already sent', `This confirmation was used before; nothing more was sent. ${id}`, ''],
    declined: ['Not sent', 'The person declined; nothing was sent.', ''],
    previewed: ['Not sent', afterSend ? `Nothing was sent: ${text}` : text, 'bad'],
  };
  const [title, line, kind] = view[s.outcome] ?? ['Result', text, ''];
  show(el('h1', {}, title), status(line.trim(), kind), requestDetails(s.payload), warningsBlock(s.warnings));
}

app.ontoolinput = (params) => {
  input = params.arguments ?? {};
};
app.ontoolresult = (result) => {
  // A result for this page's own tool call; once Send was pressed, the page shows its own answer.
  if (!pressed) render(result as ToolResultLike);
};
void connect(app);
