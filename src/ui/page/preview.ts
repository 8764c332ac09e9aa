import type { ToolCall } from './bridge.js';
import { connect, el, failureView, idText, newApp, grouped, readable, resultText, show, text, type ToolResultLike } from './common.js';
import { CHECK, differencesBlock, exactBody, plural, recipientsTable, requestDetails, warningsBlock, who, type Batch, type Single } from './preview-parts.js';

/**
 * The send preview for create_request and create_request_batch. It shows the exact body the
 * preview's confirmation token is bound to, and who gets it (each recipient as resolved: name,
 * e-mail, id, beside what was given). Send, pressed by the person, calls send_from_page through the
 * host bridge with the page's own token (in the result's _meta: the model never sees it); on a host
 * that did not say it shows pages, the token is in the preview and Send calls the same tool with it.
 * The server's once-only rules (the token is single use, one send per
 * recipient and title at a time, the 24-hour ledger) decide what is sent; the page adds only that its
 * button works once per page. Wording is for the person: no tool or parameter names.
 */
const app = newApp('docreq-send-preview');
let input: Record<string, unknown> = {};
/** Set once Send is pressed: a second press, or a second result, sends nothing. */
let pressed = false;

const isBatch = (s: Record<string, unknown>): s is Record<string, unknown> & Batch => Array.isArray(s.recipients);
const isSingle = (s: Record<string, unknown>): s is Record<string, unknown> & Single => typeof s.outcome === 'string' && typeof s.client === 'object';

/**
 * The call Send makes: the previewed body and the preview's token; a batch's recipients as the
 * assistant gave them (the token is bound to the ids they resolved to: should one now resolve to
 * another client, nothing is sent), else by those ids.
 */
/** The page's own token: in the result's _meta on a host that shows pages (the model never sees it). */
interface PageToken {
  token: string;
  expiresAt: string | null;
}
function pageTokenOf(result: ToolResultLike): PageToken | undefined {
  const meta = result._meta?.['docreq-mcp/send'] as Partial<PageToken> | undefined;
  return typeof meta?.token === 'string' ? { token: meta.token, expiresAt: meta.expiresAt ?? null } : undefined;
}

/**
 * What Send calls. With the page's own token: send_from_page, which only the page may call, with the
 * send tool's arguments as below. Otherwise (a host that showed the page without saying it shows pages,
 * so the token was in the preview): the send tool itself with that token.
 */
function sendCall(s: Single | Batch, token: string, byPage: boolean): ToolCall {
  const call = toolCall(s, token);
  if (!byPage) return call;
  const { confirmationToken: _, ...args } = call.arguments;
  return { name: 'send_from_page', arguments: { tool: call.name, arguments: args, pageToken: token } };
}

function toolCall(s: Single | Batch, token: string): ToolCall {
  const p = s.previewed;
  const body = {
    title: p.title,
    items: p.items,
    ...(p.dueDate ? { dueDate: p.dueDate } : {}),
    ...(p.correctnessMode ? { correctnessMode: p.correctnessMode } : {}),
  };
  const allowDuplicate = input.allowDuplicate === true ? { allowDuplicate: true } : {};
  if ('recipients' in s) {
    // As the assistant gave them (so the outcome lists them so again); the token holds the ids they resolved to.
    const given =
      Array.isArray(input.clients) && input.clients.length === s.recipients.length && input.clients.every((c) => typeof c === 'string')
        ? input.clients
        : s.recipients.map((r) => r.clientId ?? r.client);
    return { name: 'create_request_batch', arguments: { clients: given, ...body, ...allowDuplicate, confirmationToken: token } };
  }
  // The client as resolved for the preview (its id): the token is bound to it.
  return { name: 'create_request', arguments: { client: s.client.id ?? p.clientId, ...body, ...allowDuplicate, confirmationToken: token } };
}

function status(line: string, kind = ''): HTMLElement {
  return el('p', { role: 'status', class: `status ${kind}`, 'data-testid': 'status' }, line);
}

/** The clients a name matched, when the server asks the page "which one?" (the refusal's _meta). */
interface ChoiceAsked {
  given: string;
  candidates: { id: string; displayName: string; email: string }[];
}
function choiceOf(result: ToolResultLike): ChoiceAsked | undefined {
  const asked = result._meta?.['docreq-mcp/choose'] as Partial<ChoiceAsked> | undefined;
  return asked && Array.isArray(asked.candidates) && asked.candidates.length > 1 ? (asked as ChoiceAsked) : undefined;
}

/**
 * "Which one?" on the page: each client the name matched (name, e-mail, id) and "None of these". A pick
 * asks the server for the preview to that client (nothing is sent until Send); none sends nothing.
 */
function renderChoice(asked: ChoiceAsked): void {
  const live = el('div', { 'aria-live': 'polite' });
  let chosen = false;
  const pick = async (id: string | null, buttons: HTMLButtonElement[]) => {
    if (chosen) return;
    chosen = true;
    for (const b of buttons) b.disabled = true;
    if (id === null) return void live.replaceChildren(status('None of these: nothing was sent.'));
    live.replaceChildren(status('Preparing the preview…'));
    try {
      const answer = (await app.callServerTool({ name: 'create_request', arguments: { ...input, client: id } })) as ToolResultLike;
      render(answer);
      if (app.hostCapabilities?.updateModelContext) {
        await app
          .updateModelContext({
            content: [
              { type: 'text', text: `The person chose client id ${id} on the page; its preview is shown there, and nothing is sent unless they press Send.` },
            ],
          })
          .catch(() => undefined);
      }
    } catch {
      live.replaceChildren(status('The host did not return the preview. Nothing was sent.', 'bad'));
    }
  };
  const buttons: HTMLButtonElement[] = [];
  const rows = asked.candidates.map((c) => {
    const button = el('button', { type: 'button', 'data-testid': 'choose' }, 'Choose');
    buttons.push(button);
    button.addEventListener('click', () => void pick(c.id, buttons));
    return el('li', { 'data-client': c.id }, who(c.displayName, c.email, c.id), ' ', button);
  });
  const none = el('button', { type: 'button', 'data-testid': 'choose-none' }, 'None of these');
  buttons.push(none);
  none.addEventListener('click', () => void pick(null, buttons));
  show(
    el('h1', {}, 'Which client?'),
    el(
      'p',
      {},
      text(asked.given, '', { 'data-part': 'given' }),
      ` matches ${grouped(asked.candidates.length)} clients. Choose the one who should get this request; nothing is sent until you press Send on its preview.`,
    ),
    el('ul', { class: 'choices', 'data-testid': 'candidates' }, ...rows),
    el('div', { class: 'actions' }, none),
    live,
  );
}

function render(raw: ToolResultLike, afterSend = false): void {
  const result = readable(raw);
  const s = result.structuredContent;
  const asked = !afterSend && result.isError ? choiceOf(raw) : undefined;
  if (asked) return renderChoice(asked);
  if (!s || (!isBatch(s) && !isSingle(s))) {
    if (afterSend) show(...failureView('Not sent', 'The service refused the request: nothing was sent.', result));
    else
      show(
        ...failureView(
          'Nothing to send',
          result.isError ? 'This request could not be prepared, so nothing was sent. The assistant has been told why.' : 'No preview came with this result.',
          result,
        ),
      );
    return;
  }
  const page = pageTokenOf(raw);
  const token = page?.token ?? s.confirmation.token;
  const previewing = isBatch(s) ? s.recipients.some((r) => r.outcome === 'will_send') && token !== null : s.outcome === 'previewed' && token !== null;
  if (!previewing || afterSend) return renderOutcome(s, result, afterSend);
  renderPreview(s, token, Boolean(page));
}

/**
 * "Which one?" for a batch's recipient on the page: the batch is previewed again with that recipient
 * given by the id chosen (nothing is sent until Send, which then names the recipients so).
 */
function chooseRecipient(index: number, id: string): void {
  if (pressed || !Array.isArray(input.clients)) return;
  const clients = [...(input.clients as unknown[])];
  clients[index] = id;
  input = { ...input, clients };
  void app
    .callServerTool({ name: 'create_request_batch', arguments: input })
    .then((answer) => render(answer as ToolResultLike))
    .catch(() => show(el('h1', {}, 'Not prepared'), status('The host did not return the new preview. Nothing was sent.', 'bad')));
}

function renderPreview(s: Single | Batch, token: string | null, byPage: boolean): void {
  const batch = 'recipients' in s;
  const willSend = batch ? s.recipients.filter((r) => r.outcome === 'will_send').length : 1;
  const sendButton = el(
    'button',
    { type: 'button', class: 'primary', 'data-testid': 'send', disabled: !token },
    batch ? `Send to ${plural(willSend, 'client')}` : 'Send',
  );
  const cancelButton = el('button', { type: 'button', 'data-testid': 'cancel' }, 'Cancel');
  const live = el('div', { 'aria-live': 'polite' });
  sendButton.addEventListener('click', () => void send(s, token!, byPage, sendButton, cancelButton, live));
  cancelButton.addEventListener('click', () => {
    if (pressed) return;
    pressed = true;
    sendButton.disabled = true;
    cancelButton.disabled = true;
    live.replaceChildren(status('Cancelled: nothing was sent.'));
  });
  show(
    el('h1', {}, batch ? 'Send this request to several clients?' : 'Send this document request?'),
    el('p', { class: 'muted' }, 'Nothing has been sent yet. The service e-mails each client when you press Send.'),
    batch
      ? recipientsTable(s.recipients, `Recipients: ${grouped(willSend)} will send, ${grouped(s.recipients.length - willSend)} will not`, chooseRecipient)
      : el(
          'section',
          { 'aria-labelledby': 'to-h' },
          el('h2', { id: 'to-h' }, 'To'),
          el('p', { 'data-testid': 'client' }, who(s.client.displayName, s.client.email, s.client.id)),
        ),
    requestDetails(s.previewed),
    warningsBlock(s.warnings),
    exactBody(s.payload, batch ? 'The same body goes to each recipient, with its client id.' : 'This is the JSON the service receives.'),
    el('div', { class: 'actions' }, sendButton, cancelButton),
    live,
  );
}

/** A host that asked the person and was told no says so in its refusal. */
const DECLINED = /declin|denied|reject|refus|cancel|not allowed|disallow/i;

async function send(
  s: Single | Batch,
  token: string,
  byPage: boolean,
  sendButton: HTMLButtonElement,
  cancelButton: HTMLButtonElement,
  live: HTMLElement,
): Promise<void> {
  if (pressed) return;
  pressed = true;
  sendButton.disabled = true;
  cancelButton.disabled = true;
  sendButton.setAttribute('aria-busy', 'true');
  live.replaceChildren(status('Sending…'));
  try {
    const answer = (await app.callServerTool(sendCall(s, token, byPage))) as ToolResultLike;
    render(answer, true);
    const line = resultText(answer).split('\n')[0] ?? '';
    if (app.hostCapabilities?.updateModelContext) {
      await app
        .updateModelContext({ content: [{ type: 'text', text: `The person pressed Send on the preview page. Result: ${line}` }] })
        .catch(() => undefined);
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    // Declined in the host's own prompt: the call never reached the server. Anything else may have
    // reached it: the page never offers to send again.
    if (DECLINED.test(why)) live.replaceChildren(status('You declined in the host’s prompt: nothing was sent.'));
    else live.replaceChildren(status(`The host did not return the result, so this page cannot tell whether it was sent. ${CHECK}`, 'bad'));
  }
}

function renderOutcome(s: Single | Batch, result: ToolResultLike, afterSend: boolean): void {
  if ('recipients' in s) {
    const count = (o: string) => s.recipients.filter((r) => r.outcome === o).length;
    const declined = count('declined');
    const parts = [
      count('sent') ? `${grouped(count('sent'))} sent` : '',
      count('may_have_been_sent') ? `${grouped(count('may_have_been_sent'))} may have been sent` : '',
      count('already_sent') ? `${grouped(count('already_sent'))} sent before` : '',
      count('not_sent') + count('skipped') + declined ? `${grouped(count('not_sent') + count('skipped') + declined)} not sent` : '',
    ].filter(Boolean);
    const head = s.sent > 0 ? `Sent to ${plural(s.sent, 'client')}` : declined ? 'Not sent: you declined' : 'Nothing was sent';
    const line = declined && !s.sent ? 'You declined: nothing was sent.' : `${parts.join(', ')}.${s.stoppedBy ? ` Stopped early: ${s.stoppedBy}.` : ''}`;
    show(
      el('h1', {}, head),
      status(line, result.isError || count('may_have_been_sent') ? 'bad' : ''),
      recipientsTable(s.recipients, 'Outcome per recipient'),
      ...s.recipients.filter((r) => r.asPreviewed === false).map((r) => differencesBlock(false, r.differences, r.displayName ?? r.client)),
      count('may_have_been_sent') ? el('p', {}, `For “may have been sent”: ${CHECK}`) : null,
      warningsBlock(s.warnings),
    );
    return;
  }
  const view: Record<string, [string, string, string]> = {
    sent:
      s.asPreviewed === false
        ? ['Sent, but not as previewed', 'Sent, but the service kept something other than the preview (below).', 'bad']
        : ['Sent', 'Sent. The service e-mails the client.', 'ok'],
    accepted: ['Accepted, not yet known to be e-mailed', 'The service queued the request and has not said the client was e-mailed.', ''],
    may_have_been_sent: ['May have been sent', `The outcome is unclear. ${CHECK}`, 'bad'],
    already_sent: ['Already sent', 'This preview was sent before; nothing more was sent.', ''],
    declined: ['Not sent', 'You declined: nothing was sent.', ''],
    previewed: ['Not sent', afterSend ? 'The service did not accept the confirmation: nothing was sent.' : 'Nothing can be sent from this preview.', 'bad'],
  };
  const [title, line, kind] = view[s.outcome] ?? ['Result', '', ''];
  const to = el(
    'p',
    { 'data-testid': 'client' },
    'To ',
    who(s.client.displayName, s.client.email, s.client.id),
    s.request?.id ? el('span', {}, ' · request ', idText(s.request.id)) : null,
  );
  // The server's warnings say it again in its own words: the page's line is enough for the outcome.
  show(
    el('h1', {}, title),
    status(line, kind),
    to,
    differencesBlock(s.asPreviewed, s.differences),
    requestDetails(s.previewed),
    warningsBlock(s.warnings.filter((w) => !/nothing was sent/i.test(w))),
  );
}

app.ontoolinput = (params) => {
  input = params.arguments ?? {};
};
app.ontoolresult = (result) => {
  // A result for this page's own tool call; once Send was pressed, the page shows its own answer.
  if (!pressed) render(result as ToolResultLike);
};
void connect(app);
