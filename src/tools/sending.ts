import { z } from 'zod';
import type { Client, CreatePayload, RequestRecord } from '../api/records.js';
import { addDays } from '../clock.js';
import { UserInputError } from '../errors.js';
import { checkEmailText, titleKey } from '../text/invisible.js';
import { dayText, fold, oneLine, quoted } from '../text/render.js';
import { expandTemplate } from '../templates/expand.js';
import { UnknownTemplateError } from '../templates/catalogue.js';
import type { Template } from '../templates/builtin.js';
import { CORRECTNESS_MODES, itemIn, MAX_ITEM_NAME, MAX_ITEMS, MAX_TITLE, type CorrectnessMode } from '../domain/checklist.js';
import type { ToolContext } from './define.js';
import { day } from './list-text.js';
import type { LedgerEntry } from '../send/ledger.js';
import { ledgerReason } from '../send/outcomes.js';
import { isOpen } from '../requests/facts.js';
import { likeliest } from './resolve-client.js';
import { DEFAULT_PROFILE, type ServiceProfile } from '../domain/service-profile.js';

/**
 * What create_request and create_request_batch share before the send pipeline (src/send/pipeline.ts):
 * the request's fields, drafted and checked (before any HTTP call), the preview's words, and each
 * recipient checked for a duplicate (the service's list and this server's own 24-hour record).
 */

/** The request's fields, shared by create_request and create_request_batch. */
export const requestFields = {
  title: z.string().max(2_000).optional().describe(`Title, 1–${MAX_TITLE} characters. Optional with a template.`),
  // Checked without a listed pattern (like the list tools' days), to keep tools/list small.
  dueDate: day.optional().describe('Due day, YYYY-MM-DD, today or later.'),
  items: z.array(itemIn).max(MAX_ITEMS).optional().describe(`Checklist, 1–${MAX_ITEMS} items in all.`),
  // Listed with the catalogue's names in place of this (src/mcp/tool-schema.ts withTemplateNames).
  template: z.string().max(100).optional().describe("A template's name (list_templates): its items come first; its title, mode and due offset are defaults."),
  correctnessMode: z.enum(CORRECTNESS_MODES).optional().describe("Answer checking; omit for the service's default."),
  dryRun: z.boolean().optional().describe('true: preview only; send nothing.'),
  allowDuplicate: z.boolean().optional().describe('true: send although the same title is open or was sent in 24 h (a NEW request, not a reminder).'),
  confirmationToken: z.string().max(200).optional().describe('From this exact preview, once the person agreed to send.'),
};

export const confirmationOut = z.object({
  needed: z.boolean().describe("true: sending needs the person's go-ahead (by)."),
  // page: the person presses Send on the page (its token is the page's alone); token: below; asked: the host's form; none: cannot send here.
  by: z.enum(['page', 'token', 'asked', 'none', 'unattended']),
  token: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

/**
 * How this call's send is confirmed: the strongest way the host offers the person (docs/sending.md,
 * "Who presses Send"). `pressed`: the call came from the preview page's Send (send_from_page), which
 * only the person's press makes. `page`: the host renders MCP Apps, so the person presses Send there and
 * the confirmation token goes only to the page (the result's _meta), never to the model. `asked`: the
 * host's form (elicitation, or input_required on 2026-07-28). `token`: a host with neither, under
 * `auto`: the token is in the preview for the model to pass back once the person agreed. `none`:
 * DOCREQ_CONFIRM_SEND=person (or always) and the host offers no way to ask: nothing can be sent.
 * `unattended`: DOCREQ_CONFIRM_SEND=never.
 */
export type SendWay = 'pressed' | 'page' | 'asked' | 'token' | 'none' | 'unattended';

export function sendWay(ctx: Pick<ToolContext, 'config' | 'canAsk' | 'showsPages' | 'viaPage'>): SendWay {
  // Checked first: a press of Send arrives only with a page token (verified by the tool), whatever the mode.
  const mode = ctx.config.confirmSend;
  if (ctx.viaPage) return 'pressed';
  if (mode === 'never') return 'unattended';
  if (mode === 'always') return ctx.canAsk ? 'asked' : 'none';
  if (ctx.showsPages) return 'page';
  if (ctx.canAsk) return 'asked';
  return mode === 'auto' ? 'token' : 'none';
}

/** The way as a result names it (confirmation.by): a press of Send is the page's way. */
export const confirmedBy = (way: SendWay): Exclude<SendWay, 'pressed'> => (way === 'pressed' ? 'page' : way);

/** The binding a page's token is issued for: the preview's own, marked so no model-facing check takes it. */
export const pageBinding = <B extends object>(binding: B) => ({ ...binding, by: 'page' as const });

/** Where the page's token travels: the result's _meta, which hosts hand the page and not the model. */
export const PAGE_TOKEN_META = 'docreq-mcp/send';

/** A model-facing call that brought a confirmationToken to a host whose sends are the person's press. */
const PAGE_NOT_TOKEN =
  "This host shows the preview page: a send is the person's press of Send there, never a confirmationToken from the chat; nothing was sent. ";

/** What the model does next when the person sends from the page. */
export function pageNext(expiresAt: number, tool: string): string {
  const until = new Date(expiresAt).toISOString().slice(0, 16).replace('T', ' ');
  return (
    `Next: the preview page shown with this result has a Send button; only the person's press sends it (until ${until} UTC). ` +
    `If they do not press it, nothing is sent, and you cannot send it for them: calling ${tool} again only previews again. Tell the person to check the page and press Send if it is right.`
  );
}

/** A host that offers no way to ask the person, under a mode that needs one: nothing can be sent. */
export function cannotConfirm(mode: string): UserInputError {
  if (mode === 'always') return cannotAsk();
  return new UserInputError(
    "Nothing was sent: this server is set so that only a person can send (DOCREQ_CONFIRM_SEND=person), by pressing Send on the preview page or answering the host's own form, and this host offers neither. " +
      'Send it from a host that shows MCP Apps pages or asks through a form, or ask whoever runs the server.',
  );
}

export interface ItemInput {
  name: string;
  required?: boolean | undefined;
  type?: string | undefined;
}

export interface DraftInput {
  title?: string | undefined;
  items?: ItemInput[] | undefined;
  dueDate?: string | undefined;
  correctnessMode?: string | undefined;
}

/** A request as it will be sent, minus its recipient. */
export interface Draft {
  title: string;
  dueDate?: string;
  items: { name: string; required: boolean; type: string }[];
  correctnessMode?: string;
  warnings: string[];
}

/** Refuses every send while a safety setting cannot be read (fail closed); reads still work. */
export function assertSendingAllowed(ctx: ToolContext): void {
  if (ctx.sending.disabled) throw new UserInputError(`Nothing was sent: sending is disabled until this is fixed: ${ctx.sending.disabled}`);
}

/** The request a call describes, its template applied; checked before any HTTP call. */
export function draftFromInput(
  input: DraftInput & { title?: string | undefined; items?: ItemInput[] | undefined; template?: string | undefined },
  ctx: ToolContext,
): Draft {
  let { title, items, dueDate, correctnessMode } = input;
  if (input.template !== undefined) {
    const template = ctx.templates.find(input.template, { so: 'nothing was sent' });
    const expanded = expandTemplate(template, items as Parameters<typeof expandTemplate>[1], {
      today: ctx.today,
      ...(title !== undefined ? { title } : {}),
      ...(dueDate !== undefined ? { dueDate } : {}),
      ...(correctnessMode !== undefined ? { correctnessMode: correctnessMode as CorrectnessMode } : {}),
    });
    ({ title, items, dueDate, correctnessMode } = expanded);
  }
  if (title === undefined) throw new UserInputError('Nothing was sent: give a title (or a template, whose title is the default).');
  return draftRequest({ title, items: items ?? [], dueDate, correctnessMode }, ctx.today);
}

/** The templates whose name looks like `name` (spaces or underscores read as dashes), closest first, at most five. */
export function closeTemplates(templates: readonly Template[], name: string): Template[] {
  return likeliest(templates, fold(name.trim()).replace(/[\s_]+/g, '-'), (t) => [t.name], 0.5)
    .slice(0, 5)
    .map((x) => x.item);
}

/**
 * The call's input with the template it means: a name that matches none but is close to some is asked of
 * the person in the host's form (each close one by name and title; "none of these" sends nothing);
 * without a form, draftFromInput's refusal names every template, as before.
 */
export async function withTemplateMeant<I extends { template?: string | undefined }>(ctx: ToolContext, input: I): Promise<I> {
  if (input.template === undefined) return input;
  return { ...input, template: (await templateMeant(ctx, input.template)).name };
}

async function templateMeant(ctx: ToolContext, name: string): Promise<Template> {
  try {
    return ctx.templates.find(name, { so: 'nothing was sent' });
  } catch (error) {
    const close = error instanceof UnknownTemplateError ? closeTemplates(ctx.templates.current().templates, name) : [];
    if (close.length === 0) throw error;
    const picks = await ctx.choose(`No template is named ${quoted(name, 60)}. Which one was meant? Nothing is sent until the request is confirmed.`, [
      { key: 'template', title: 'Template', options: close.map((t) => ({ value: t.name, title: `${t.name}: ${oneLine(t.title, 80)}` })) },
    ]);
    if (picks === 'unsupported') throw error;
    const picked = picks === 'declined' ? null : picks.template;
    if (!picked) throw new UserInputError(`Nothing was sent: the person chose none of the templates close to ${quoted(name, 60)}.`);
    return ctx.templates.find(picked, { so: 'nothing was sent' });
  }
}

/** Why a confirmationToken given was not taken: it expired, or it belongs to another request (`boundTo` names what it binds). */
export function tokenRefused(reason: 'expired' | 'mismatch' | 'malformed' | 'other-secret', boundTo: string): string {
  if (reason === 'expired') return 'The confirmationToken given has expired (tokens last 15 minutes); nothing was sent. ';
  if (reason === 'other-secret') {
    return (
      "The confirmationToken given was signed by a server with another DOCREQ_TOKEN_SECRET (a replica that does not share this one's); nothing was sent. " +
      'Every replica behind one address needs the same DOCREQ_TOKEN_SECRET. '
    );
  }
  return `The confirmationToken given does not belong to this exact ${boundTo} and key (and person, when signed in); nothing was sent. `;
}

/** How a send is confirmed on this call, and the confirmationToken it brought, checked against the preview's binding. */
export interface Confirmation {
  way: SendWay;
  /** The token's id when it was taken (it belongs to this exact draft and key, and has not expired). */
  tokenId: string | undefined;
  /** Why a token given was not taken, as the result's first words; empty otherwise. */
  tokenNote: string;
}

/**
 * Checks the confirmationToken a call brought (`boundTo` names what its binding covers, for the refusal). On a host
 * that shows the preview page a token from the chat is never taken: only the page's own, through the person's press
 * (bound as the page's). The press itself (`pressed`) that brings no valid page token is refused by `requirePress`.
 */
export function takeConfirmation(ctx: ToolContext, token: string | undefined, binding: object, boundTo: string): Confirmation {
  const way = sendWay(ctx);
  if (!token) return { way, tokenId: undefined, tokenNote: '' };
  if (way === 'page') return { way, tokenId: undefined, tokenNote: PAGE_NOT_TOKEN };
  const check = ctx.sending.tokens.verify(token, way === 'pressed' ? pageBinding(binding) : binding);
  return check.ok ? { way, tokenId: check.id, tokenNote: '' } : { way, tokenId: undefined, tokenNote: tokenRefused(check.reason, boundTo) };
}

/** A press of Send whose page token was not taken sends nothing: it is never turned into a preview the model could confirm. */
export function requirePress({ way, tokenId, tokenNote }: Confirmation): void {
  if (way === 'pressed' && !tokenId)
    throw new UserInputError(`Nothing was sent: the preview page's confirmation was not taken. ${tokenNote}Ask the assistant for a new preview.`);
}

/** Why a call without a token previews instead of sending. */
export const GO_AHEAD = "Sending needs the person's go-ahead, given as the confirmationToken below.";

/** DOCREQ_CONFIRM_SEND=always on a host that cannot ask the person: nothing can be sent. */
export function cannotAsk(): UserInputError {
  return new UserInputError(
    'Nothing was sent: DOCREQ_CONFIRM_SEND is "always", which needs the person to confirm through MCP elicitation, and this host does not support it. ' +
      'Use a host with elicitation, or ask whoever runs the server to set DOCREQ_CONFIRM_SEND=auto (confirmation by token).',
  );
}

/** What the model does next after a preview. */
export function previewNext(needed: boolean, token: string, expiresAt: number, tool: string): string {
  const until = new Date(expiresAt).toISOString().slice(0, 16).replace('T', ' ');
  return needed
    ? `Next: show the person this preview. Only once they agree, call ${tool} again with the same arguments plus confirmationToken: ${JSON.stringify(token)} (single use, valid until ${until} UTC). Do not send without their go-ahead.`
    : `Next: show the person this preview; once they agree, call ${tool} again without dryRun${token ? ` (you may pass confirmationToken: ${JSON.stringify(token)})` : ''}.`;
}

/** Checks the e-mailed text and the dates; throws one error naming every problem. */
function draftRequest(input: DraftInput & { title: string; items: ItemInput[] }, asOf: string): Draft {
  const problems: string[] = [];
  const title = checkEmailText(input.title, MAX_TITLE);
  if (!title.ok) problems.push(`title: ${title.detail}`);
  const items = input.items.map((item, n) => {
    const name = checkEmailText(item.name, MAX_ITEM_NAME);
    if (!name.ok) problems.push(`items[${n}].name: ${name.detail}`);
    return { name: name.ok ? name.text : '', required: item.required ?? true, type: item.type ?? 'file' };
  });
  if (items.length === 0) problems.push('items: give at least one item (or a template)');
  if (items.length > MAX_ITEMS) problems.push(`items: at most ${MAX_ITEMS} in all (there are ${items.length})`);
  if (input.dueDate && input.dueDate < asOf) problems.push(`dueDate: ${input.dueDate} is in the past (today is ${asOf}); give today or a later day`);
  if (problems.length) throw new UserInputError(`Invalid request; nothing was called or sent:\n${problems.map((p) => `- ${p}`).join('\n')}`);
  const warnings: string[] = [];
  if (input.dueDate && input.dueDate > addDays(asOf, 365)) warnings.push(`The due date ${input.dueDate} is more than a year ahead: check it is the one meant.`);
  return {
    title: title.ok ? title.text : '',
    ...(input.dueDate ? { dueDate: input.dueDate } : {}),
    items,
    ...(input.correctnessMode ? { correctnessMode: input.correctnessMode } : {}),
    warnings,
  };
}

/** The service profile in force (the defaults without one). */
export function profileOf(ctx: Pick<ToolContext, 'config'>): ServiceProfile {
  return ctx.config.serviceProfile ?? DEFAULT_PROFILE;
}

/**
 * A client who is not active, and its status, or undefined. One rule for both send tools: such a client is previewed
 * with a warning naming the status and sent only with the person's go-ahead (never unattended).
 */
export function notActive(client: Client): string | undefined {
  return client.status && client.status.trim().toLowerCase() !== 'active' ? client.status : undefined;
}

/** The warning a preview carries for a client who is not active. */
export function notActiveWarning(status: string): string {
  return `The client's status is ${quoted(status, 30)}, not active.`;
}

/** Why an unattended send (DOCREQ_CONFIRM_SEND=never) does not go to a client who is not active. */
export function notActiveUnattended(status: string): string {
  return `the client's status is ${quoted(status, 30)}, not active, and with DOCREQ_CONFIRM_SEND=never nobody confirms sending to such a client`;
}

/** The request in our own terms (its recipient and title key the once-only record); the body POSTed is profileOf(ctx).body(it). */
export function payloadFor(clientId: string, draft: Draft): CreatePayload {
  return {
    clientId,
    title: draft.title,
    ...(draft.dueDate ? { dueDate: draft.dueDate } : {}),
    items: draft.items,
    ...(draft.correctnessMode ? { correctnessMode: draft.correctnessMode } : {}),
  };
}

export function describeDraft(d: Pick<Draft, 'title' | 'dueDate' | 'items' | 'correctnessMode'>): string {
  const required = d.items.filter((i) => i.required).length;
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  const items = d.items.map((i, n) => `  ${n + 1}. ${JSON.stringify(i.name)} (${i.type}, ${i.required ? 'required' : 'optional'})`).join('\n');
  return (
    `Title: ${JSON.stringify(d.title)}\nDue: ${d.dueDate ?? 'no due date'}\nCorrectness mode: ${d.correctnessMode ?? "the service's default"}\n` +
    `Items: ${plural(d.items.length, 'item')} (${required} required):\n${items}`
  );
}

export function clientLabel(c: Client): string {
  return `${quoted(c.displayName, 48)} <${oneLine(c.email, 60)}> (id ${oneLine(c.id, 40)})`;
}

/**
 * Why sending this title to this client would be a duplicate, or undefined: an open request with
 * the same title in the service's list, or a send (or possible send) by this server in the last 24 hours.
 */
export async function duplicateOf(ctx: ToolContext, client: Client, title: string, requests: RequestRecord[]): Promise<string | undefined> {
  return (await ownRecord(ctx, client.id ?? '', titleKey(title)))?.reason ?? duplicateOpen(client, title, requests, profileOf(ctx));
}

/**
 * This server's record of a send of this title to this client in the last 24 hours, and why it
 * blocks sending it again; a record still pending whose claim is held is a send in flight.
 */
export async function ownRecord(ctx: ToolContext, clientId: string, key: string): Promise<{ recent: LedgerEntry; reason: string } | undefined> {
  const { ledger, firm } = ctx.sending;
  const recent = await ledger.recent(firm, clientId, key);
  if (!recent) return undefined;
  return { recent, reason: ledgerReason(recent, recent.outcome === 'pending' && (await ledger.claimed(firm, clientId, key))) };
}

/** An open request with the same title for this client in the service's list, worded; or undefined. */
export function duplicateOpen(client: Client, title: string, requests: RequestRecord[], profile: ServiceProfile = DEFAULT_PROFILE): string | undefined {
  const key = titleKey(title);
  const name = fold(client.displayName?.trim().replace(/\s+/g, ' '));
  const open = requests.find((r) => isOpen(r, profile) && titleKey(r.title) === key && fold(r.clientName?.trim().replace(/\s+/g, ' ')) === name);
  if (open) {
    return `the client already has an open request ${quoted(open.title, 80)} (id ${oneLine(open.id, 40)}, status ${oneLine(open.status, 20)}, created ${dayText(open.createdAt)})`;
  }
  return undefined;
}

export { titleKey };
