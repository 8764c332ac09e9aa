import { z } from 'zod';
import { clientRecord, createPayload, toRequest, type Client, type CreatePayload } from '../api/records.js';
import { UserInputError } from '../errors.js';
import { CORRECTNESS_MODES as MODES, itemIn } from './checklist.js';
import { defineTool, type ToolContext } from './define.js';
import { clientLine } from './list-clients.js';
import { dayText, fold, oneLine, quoted } from './render.js';
import { isOpen } from './request-facts.js';
import { isoDate } from './schemas.js';

/** Finds the one client `query` names: by id, then e-mail, then exact display name; never a guess. */
function resolveClient(clients: Client[], query: string): { client?: Client; candidates: Client[] } {
  const q = query.trim().toLowerCase();
  const name = q.replace(/\s+/g, ' ');
  for (const same of [
    (c: Client) => c.id?.toLowerCase() === q,
    (c: Client) => c.email?.trim().toLowerCase() === q,
    (c: Client) => c.displayName?.trim().replace(/\s+/g, ' ').toLowerCase() === name,
  ]) {
    const found = clients.filter(same);
    if (found.length === 1) return { client: found[0], candidates: found };
    if (found.length > 1) return { candidates: found };
  }
  return { candidates: [] };
}

function bigrams(s: string): Set<string> {
  const set = new Set<string>();
  for (let i = 0; i < s.length - 1; i++) set.add(s.slice(i, i + 2));
  return set;
}

/** The clients whose name or e-mail looks most like `query` (Dice similarity over letter pairs). */
function closestClients(clients: Client[], query: string, count = 3): Client[] {
  const q = fold(query.trim());
  const qb = bigrams(q);
  const score = (text: string) => {
    if (!text) return 0;
    if (text.includes(q) || (q.length > 3 && q.includes(text))) return 1;
    const tb = bigrams(text);
    let shared = 0;
    for (const b of qb) if (tb.has(b)) shared++;
    return (2 * shared) / (qb.size + tb.size || 1);
  };
  return clients
    .map((c) => ({ c, s: Math.max(score(fold(c.displayName)), score(fold(c.email))) }))
    .filter((x) => x.s >= 0.35)
    .sort((a, b) => b.s - a.s)
    .slice(0, count)
    .map((x) => x.c);
}

async function findClient(ctx: ToolContext, query: string): Promise<Client> {
  let clients = await ctx.api.listClients({ reuse: true, signal: ctx.signal });
  let { client, candidates } = resolveClient(clients, query);
  if (!client && candidates.length === 0) {
    // The cached list may predate the client: look once more, fresh.
    clients = await ctx.api.listClients({ signal: ctx.signal });
    ({ client, candidates } = resolveClient(clients, query));
  }
  if (client) return client;
  if (candidates.length > 1) {
    throw new UserInputError(
      `${quoted(query, 60)} matches ${candidates.length} clients; nothing was sent. Pass the id of the one you mean as client:\n` +
        candidates.slice(0, 20).map(clientLine).join('\n'),
    );
  }
  const close = closestClients(clients, query);
  throw new UserInputError(
    `No client has the id, e-mail or exact name ${quoted(query, 60)}; nothing was sent.` +
      (close.length ? ` Closest:\n${close.map(clientLine).join('\n')}\nPass the id of the right one as client.` : ' Use list_clients with a search to find the client, then pass its id.'),
  );
}

function describePayload(p: CreatePayload): string {
  const required = p.items.filter((i) => i.required).length;
  const items = p.items.map((i, n) => `  ${n + 1}. ${quoted(i.name, 100)} (${i.type}${i.required ? ', required' : ', optional'})`).join('\n');
  return (
    `${quoted(p.title, 200)}, ${p.items.length} item${p.items.length === 1 ? '' : 's'} (${required} required), ` +
    `${p.dueDate ? `due ${p.dueDate}` : 'no due date'}, correctness mode ${p.correctnessMode ?? "(the service's default)"}:\n${items}`
  );
}

export const createRequest = defineTool({
  name: 'create_request',
  title: 'Create and send a document request',
  description:
    'Creates a document request (a checklist of items) for one client and SENDS IT: the service e-mails the client. ' +
    'Workflow: find the client with list_clients; call with dryRun: true to validate and preview; show the preview to the person ' +
    'and get their go-ahead; then call again with dryRun: false. client takes an id (best), e-mail or exact name and never guesses. ' +
    'Refuses when the client already has an open request with the same title unless allowDuplicate is true. ' +
    'Never retry a failed send without checking list_requests first.',
  inputSchema: z.strictObject({
    client: z.string().min(1).max(320).describe("The client's id (preferred), e-mail, or exact display name."),
    title: z
      .string()
      .refine((s) => s.trim().length > 0, 'must not be empty')
      .refine((s) => s.trim().length <= 200, 'must be at most 200 characters')
      .describe('Title of the request, 1–200 characters, e.g. "2025 tax return documents".'),
    dueDate: isoDate.optional().describe('Due day, YYYY-MM-DD, today or later.'),
    items: z.array(itemIn).min(1).max(100).describe('The checklist, 1–100 items.'),
    correctnessMode: z.enum(MODES).optional().describe("How strictly answers are checked: off, advisory, soft, hard. Omit for the service's default."),
    dryRun: z.boolean().optional().describe('true: validate, resolve the client, check for duplicates and show what would be sent; send nothing. Default false.'),
    allowDuplicate: z.boolean().optional().describe('true: send even if the client has an open request with the same title. Default false.'),
  }),
  outputSchema: z.object({
    sent: z.boolean().describe('Whether the request was sent (the client e-mailed).'),
    dryRun: z.boolean(),
    client: clientRecord,
    payload: createPayload.describe('The body that was, or would be, POSTed.'),
    request: z.record(z.string(), z.unknown()).nullable().describe('The created request as the service returned it, or null.'),
    warnings: z.array(z.string()),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    const title = input.title.trim();
    if (input.dueDate && input.dueDate < ctx.today) {
      throw new UserInputError(`dueDate ${input.dueDate} is in the past (today is ${ctx.today}); nothing was sent. Give today or a later day.`);
    }
    const warnings: string[] = [];
    await ctx.progress(0, 3, 'Resolving the client');
    // The duplicate guard's GET runs while the client is resolved (both are reads; nothing is sent).
    const requests = ctx.api.listRequests({ signal: ctx.signal });
    requests.catch(() => undefined); // awaited below; if resolution fails first, its outcome is moot
    const client = await findClient(ctx, input.client);
    if (!client.id) throw new UserInputError(`The client ${quoted(client.displayName, 60)} has no id in the service's answer, so no request can be created for it.`);
    if (client.status && client.status.toLowerCase() !== 'active') {
      warnings.push(`The client's status is ${quoted(client.status, 30)}, not active.`);
    }

    const payload: CreatePayload = {
      clientId: client.id,
      title,
      ...(input.dueDate ? { dueDate: input.dueDate } : {}),
      items: input.items.map((i) => ({ name: i.name.trim(), required: i.required ?? true, type: i.type ?? 'file' })),
      ...(input.correctnessMode ? { correctnessMode: input.correctnessMode } : {}),
    };

    await ctx.progress(1, 3, "Checking the client's open requests");
    const sameTitle = fold(title);
    const sameName = fold(client.displayName?.trim());
    const existing = (await requests).find(
      (r) => isOpen(r) && fold(r.title?.trim()) === sameTitle && fold(r.clientName?.trim()) === sameName,
    );
    if (existing) {
      const which = `${quoted(existing.title, 80)} (id ${oneLine(existing.id, 40)}, status ${oneLine(existing.status, 20)}, created ${dayText(existing.createdAt)})`;
      if (!input.allowDuplicate) {
        throw new UserInputError(
          `${quoted(client.displayName, 48)} already has an open request ${which}; nothing was sent. ` +
            'If the person really wants a second one, call again with allowDuplicate: true.',
        );
      }
      warnings.push(`Sent although an open request with the same title exists: ${which}.`);
    }

    const who = `${quoted(client.displayName, 48)} <${oneLine(client.email, 60)}> (id ${oneLine(client.id, 40)})`;
    const base = { client, payload };
    if (input.dryRun) {
      return {
        text: `DRY RUN: nothing was sent. Would send to ${who}: ${describePayload(payload)}` +
          `${warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''}\nTo send, confirm with the person, then call again with dryRun: false.`,
        structured: { ...base, sent: false, dryRun: true, request: null, warnings },
      };
    }

    if (ctx.config.confirmSend !== 'never') {
      const answer = await ctx.confirm(`Send this document request to ${who}? The service will e-mail the client.\n${describePayload(payload)}`);
      if (answer === 'declined') {
        return {
          text: `NOT SENT: the person declined to send ${quoted(title, 80)} to ${who}. Nothing was sent.`,
          structured: { ...base, sent: false, dryRun: false, request: null, warnings: [...warnings, 'The person declined; nothing was sent.'] },
        };
      }
      if (answer === 'unsupported') {
        if (ctx.config.confirmSend === 'always') {
          throw new UserInputError(
            'Nothing was sent: DOCREQ_CONFIRM_SEND is "always", which needs the person to confirm through MCP elicitation, and this host does not support it. ' +
              'Use a host with elicitation, or ask whoever configured the server to set DOCREQ_CONFIRM_SEND=auto.',
          );
        }
        warnings.push('This host cannot ask the person to confirm (no MCP elicitation); the send relied on the assistant having confirmed.');
      }
    }

    await ctx.progress(2, 3, 'Sending');
    const outcome = await ctx.api.createRequest(payload, ctx.signal);
    warnings.push(...outcome.warnings.map((w) => `${w} list_requests shows the created request.`));
    const created = outcome.record ? toRequest(outcome.record) : undefined;
    return {
      text:
        `SENT: ${quoted(title, 80)} to ${who}` +
        (created ? `: request id ${oneLine(created.id, 40)}, status ${oneLine(created.status, 20)}, ${payload.items.length} items, ${payload.dueDate ? `due ${payload.dueDate}` : 'no due date'}.` : '.') +
        (warnings.length ? `\nWarnings: ${warnings.join(' ')}` : ''),
      structured: { ...base, sent: true, dryRun: false, request: outcome.record, warnings },
    };
  },
});
