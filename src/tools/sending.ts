import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../api/errors.js';
import type { Client, CreatePayload, RequestRecord } from '../api/records.js';
import { addDays } from '../clock.js';
import { UserInputError } from '../errors.js';
import { checkEmailText, titleKey } from '../text/invisible.js';
import { dayText, fold, oneLine, quoted } from '../text/render.js';
import { expandTemplate } from '../templates/expand.js';
import { findTemplate, templateCatalog } from '../templates/load.js';
import { CORRECTNESS_MODES, itemIn, MAX_ITEM_NAME, MAX_ITEMS, MAX_TITLE, type CorrectnessMode } from '../domain/checklist.js';
import type { ToolContext } from './define.js';
import { day } from './list-text.js';
import type { LedgerEntry } from '../send/ledger.js';
import { isOpen } from './request-facts.js';

/**
 * The steps every send goes through, shared by create_request and create_request_batch, in the
 * contract's order: the request is drafted and checked (before any HTTP call), each recipient is
 * checked for a duplicate (the service's list and this server's own 24-hour ledger), the send is
 * confirmed, and the POST is made exactly once, its outcome recorded whatever it was.
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
  confirmationToken: z.string().max(200).optional().describe("From this exact preview, once the person agreed to send."),
};

export const confirmationOut = z.object({
  needed: z.boolean().describe('true: sending needs confirmationToken from this preview.'),
  token: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

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
export function draftFromInput(input: DraftInput & { title?: string | undefined; items?: ItemInput[] | undefined; template?: string | undefined }, ctx: ToolContext): Draft {
  let { title, items, dueDate, correctnessMode } = input;
  if (input.template !== undefined) {
    const catalog = templateCatalog(ctx.config.templatesFile);
    const template = findTemplate(catalog, input.template);
    if (!template) {
      throw new UserInputError(
        `No template is named ${quoted(input.template, 60)}; nothing was sent. Templates: ${catalog.templates.map((t) => t.name).join(', ') || 'none'}.` +
          (catalog.problems.length ? ` (The firm's templates file is not used: ${catalog.problems[0]})` : ''),
      );
    }
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

/** The exact POST body; its JSON text is what the preview shows and what is sent. */
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
  const key = titleKey(title);
  const recent = await ctx.sending.ledger.recent(ctx.sending.firm, client.id ?? '', key);
  if (recent) return ledgerReason(recent, recent.outcome === 'pending' && (await ctx.sending.ledger.claimed(ctx.sending.firm, client.id ?? '', key)));
  return duplicateOpen(client, title, requests);
}

/** An open request with the same title for this client in the service's list, worded; or undefined. */
export function duplicateOpen(client: Client, title: string, requests: RequestRecord[]): string | undefined {
  const key = titleKey(title);
  const name = fold(client.displayName?.trim().replace(/\s+/g, ' '));
  const open = requests.find((r) => isOpen(r) && titleKey(r.title) === key && fold(r.clientName?.trim().replace(/\s+/g, ' ')) === name);
  if (open) {
    return `the client already has an open request ${quoted(open.title, 80)} (id ${oneLine(open.id, 40)}, status ${oneLine(open.status, 20)}, created ${dayText(open.createdAt)})`;
  }
  return undefined;
}

/** Who sent what: one JSON line per send with a signed-in person, ids only (never the key, never the client's name or address). */
export function auditSend(ctx: ToolContext, clientId: string, outcome: string, requestId: string | null): void {
  const { actor, audit } = ctx.sending;
  if (actor && audit) audit(JSON.stringify({ time: new Date().toISOString(), audit: 'send', outcome, email: actor.email, sub: actor.sub, firm: ctx.sending.firm, clientId, requestId }));
}

/**
 * Another call holds the claim for this recipient and title (contract §7): what that means and when
 * it clears. A claim is a lease its owner renews; one whose server stopped clears within about a
 * minute (CLAIM_TTL_MS), and the send's pre-POST record answers from then on.
 */
export function inProgressReason(title: string, to = 'this client', since?: number): string {
  const when = since === undefined ? '' : ` at ${new Date(since).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return (
    `a send of ${quoted(title, 80)} to ${to} is already in progress (started${when} by another call, in this or another process sharing the send store), so it may have been sent. ` +
    'Check with list_requests in a minute: if that call\'s server stopped mid-send, this hold clears within about a minute, and the send\'s record then answers "may have been sent" for 24 hours'
  );
}

/** Why the send store's record of this recipient and title blocks sending it again. */
export function ledgerReason(recent: LedgerEntry, claimed = false): string {
  const when = new Date(recent.at).toISOString().slice(0, 16).replace('T', ' ');
  if (recent.outcome === 'sent') {
    return `this server sent ${quoted(recent.title, 80)} to this client at ${when} UTC${recent.requestId ? ` (request id ${oneLine(recent.requestId, 40)})` : ''}`;
  }
  if (recent.outcome === 'pending' && claimed) return inProgressReason(recent.title, 'this client', recent.at);
  if (recent.outcome === 'pending') {
    return `this server may have sent ${quoted(recent.title, 80)} to this client: a send started at ${when} UTC and its outcome was never recorded (the server stopped mid-send), so it may have been sent; check with list_requests`;
  }
  return `this server may have sent ${quoted(recent.title, 80)} to this client at ${when} UTC (the outcome was unclear: it may have been sent); check with list_requests`;
}

export type PostResult =
  | { outcome: 'sent'; request: RequestRecord | null; warnings: string[] }
  | { outcome: 'may_have_been_sent'; request: null; warnings: string[]; message: string };

/**
 * POSTs once with the given Idempotency-Key. The recovery point comes first: "pending" (may have
 * been sent) is recorded in the send store BEFORE the POST is written, so a process killed
 * mid-POST leaves a record that blocks the same send; if the store cannot take it, nothing is sent
 * (fail closed). After the answer the record is settled: sent, may have been sent, or removed when
 * the service definitely wrote nothing. A store failing after the POST does not hide the outcome
 * from the person: it is logged at error level. A definite failure throws; an unclear one is
 * returned as "may have been sent", which the duplicate guard then treats as sent.
 */
export async function postOnce(ctx: ToolContext, client: Client, payload: CreatePayload, idempotencyKey: string): Promise<PostResult> {
  const key = titleKey(payload.title);
  const { ledger, firm, actor } = ctx.sending;
  const audit = (outcome: string, requestId: string | null) => auditSend(ctx, payload.clientId, outcome, requestId);
  await ledger.record(firm, payload.clientId, key, { outcome: 'pending', requestId: null, title: payload.title, by: actor });
  const settle = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      ctx.log(`send store: the outcome of a send to client ${oneLine(payload.clientId, 40)} could not be recorded (${oneLine(ctx.redact(error instanceof Error ? error.message : String(error)), 300)}); its pre-send record stays, so it is treated as "may have been sent" for 24 hours`, 'error');
    }
  };
  try {
    const answer = await ctx.api.createRequest(payload, { idempotencyKey, signal: ctx.signal, deadline: ctx.deadline });
    await settle(() => ledger.record(firm, payload.clientId, key, { outcome: 'sent', requestId: answer.record?.id ?? null, title: payload.title, by: actor }));
    audit('sent', answer.record?.id ?? null);
    cancelledOutcome(ctx, payload, `was sent${answer.record?.id ? ` (request id ${oneLine(answer.record.id, 40)})` : ''}`);
    return { outcome: 'sent', request: answer.record, warnings: actor ? [`Sent in the name of ${actor.email} (signed in).`, ...answer.warnings] : answer.warnings };
  } catch (error) {
    if (error instanceof ApiError && error.outcomeUnknown) {
      await settle(() => ledger.record(firm, payload.clientId, key, { outcome: 'may_have_been_sent', requestId: null, title: payload.title, by: actor }));
      audit('may_have_been_sent', null);
      cancelledOutcome(ctx, payload, 'may have been sent (no clear answer came): check with list_requests before sending again');
      return { outcome: 'may_have_been_sent', request: null, warnings: [], message: error.message };
    }
    if (error instanceof ApiError) await settle(() => ledger.forget(firm, payload.clientId, key));
    else await settle(() => ledger.record(firm, payload.clientId, key, { outcome: 'may_have_been_sent', requestId: null, title: payload.title, by: actor }));
    throw error;
  }
}

/**
 * A host that cancels a call after the POST was written gets no answer (a POST is never aborted
 * once written), so the person learns the outcome from a warning instead.
 */
function cancelledOutcome(ctx: ToolContext, payload: CreatePayload, outcome: string): void {
  if (!ctx.signal.aborted) return;
  (ctx.warn ?? ctx.log)(`a send the host cancelled after it was written ${outcome}: ${quoted(payload.title, 80)} to client ${oneLine(payload.clientId, 40)}`);
}

/** A fresh Idempotency-Key for a send confirmed some other way than a token (elicitation, or none). */
export function freshConfirmationId(): string {
  return randomUUID();
}

export { titleKey };
