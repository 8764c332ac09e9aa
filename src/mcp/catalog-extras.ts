import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import type { Server, GetPromptResult, Prompt, ReadResourceResult, Resource } from '@modelcontextprotocol/server';
import type { Client } from '../api/records.js';
import type { Logger } from '../log.js';
import type { Template } from '../templates/builtin.js';
import { expandTemplate } from '../templates/expand.js';
import { UnknownTemplateError, type Templates } from '../templates/catalogue.js';
import type { TemplateCatalog } from '../templates/load.js';
import { fold, oneLine, quoted } from '../text/render.js';
import { addDays } from '../clock.js';
import { TOOLS } from '../tools/index.js';
import { appResources, readAppPage } from '../ui/apps.js';

/**
 * Templates as MCP resources, prompts for the firm's common workflows, and argument completion.
 * Everything here reads: no handler calls the service except completion's client list, and no
 * prompt sends anything itself (each tells the model to preview and ask first).
 */

export interface ExtrasDeps {
  /** The server's catalogue (read again when the firm's file changes). */
  templates: Templates;
  /** The firm's clients, for completing client names; absent while the server is not configured. */
  listClients?: (signal: AbortSignal) => Promise<Client[]>;
  /** The day due offsets count from, YYYY-MM-DD. */
  today: () => string;
  /** No sending tool is offered: the send-checklist prompt is not either. */
  readOnly: boolean;
  logger?: Logger;
  /** The one redaction of the server's secrets (src/text/redact.ts). */
  redact?: (text: string) => string;
}

const INDEX_URI = 'docreq://templates';
const TEMPLATE_URI = 'docreq://templates/{name}';
const MAX_COMPLETIONS = 100;

const PROMPTS: (Prompt & { sends?: boolean })[] = [
  {
    name: 'send-checklist',
    title: 'Send a checklist to a client',
    description: 'Send one of the checklist templates to a client: find the client, preview the request, and send only after you agree.',
    arguments: [
      { name: 'client', description: "The client's name, e-mail or id.", required: true },
      { name: 'template', description: 'The template to send, e.g. individual-tax-return.', required: true },
    ],
    sends: true,
  },
  {
    name: 'chase-overdue',
    title: 'Chase overdue documents',
    description: 'Per client, what is overdue and missing, with a draft message you can send yourself (the service cannot send reminders).',
    arguments: [{ name: 'client', description: 'Only this client (part of a name); omit for every client.', required: false }],
  },
  {
    name: 'weekly-status',
    title: 'Weekly status',
    description: "A status report of the firm's document requests: exact counts, what is overdue, what is due this week.",
    arguments: [],
  },
];

function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/** `find` in `catalog`, or undefined for a name no template has. */
function named(templates: Templates, name: string, catalog: TemplateCatalog): Template | undefined {
  try {
    return templates.find(name, { catalog });
  } catch (error) {
    if (error instanceof UnknownTemplateError) return undefined;
    throw error;
  }
}

/** The template a prompt names; a missing or unknown one is the prompt's invalid argument, worded as `find` words it. */
function needTemplate(templates: Templates, name: string | undefined): Template {
  if (!name)
    throw invalid(
      `Give a template: ${templates
        .current()
        .templates.map((t) => t.name)
        .join(', ')}.`,
    );
  try {
    return templates.find(name);
  } catch (error) {
    throw error instanceof UnknownTemplateError ? invalid(error.message) : error;
  }
}

/** Prefix matches first, then substring matches; case- and accent-insensitive; at most 100. */
function completeFrom(candidates: Iterable<string | null | undefined>, typed: string): { values: string[]; total: number; hasMore: boolean } {
  const needle = fold(typed.trim());
  const prefix: string[] = [];
  const inside: string[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (!candidate || seen.has(candidate)) continue;
    seen.add(candidate);
    const folded = fold(candidate);
    if (folded.startsWith(needle)) prefix.push(candidate);
    else if (folded.includes(needle)) inside.push(candidate);
  }
  const all = [...prefix, ...inside];
  return { values: all.slice(0, MAX_COMPLETIONS), total: all.length, hasMore: all.length > MAX_COMPLETIONS };
}

function sendChecklist(template: Template, client: string, today: string): string {
  const expanded = expandTemplate(template, [], { today });
  const args = {
    client: '<the client id from list_clients>',
    title: expanded.title,
    ...(expanded.dueDate ? { dueDate: expanded.dueDate } : {}),
    items: expanded.items,
    ...(expanded.correctnessMode ? { correctnessMode: expanded.correctnessMode } : {}),
    dryRun: true,
  };
  return [
    `Send the ${quoted(template.title, 200)} checklist (template ${oneLine(template.name, 100)}) to the client ${quoted(client, 200)}.`,
    '',
    `1. Find the client: call list_clients with search ${quoted(client, 200)}. If no client or more than one matches, show me the candidates and ask which one; never guess.`,
    "2. Preview: call create_request with these arguments (the client's id in place of the placeholder); change the title, due date or items only if I asked you to:",
    JSON.stringify(args, null, 2),
    '3. Show me the preview: the recipient, title, due date and every item. Ask me to confirm.',
    '4. Only after I agree, call create_request again with the same arguments and dryRun: false. If the send fails or its outcome is unclear, check list_requests before trying again; never send twice.',
  ].join('\n');
}

function chaseOverdue(client: string | undefined, today: string): string {
  const filter = client ? `, client: ${quoted(client, 200)}` : '';
  return [
    `Help me chase overdue documents${client ? ` from ${quoted(client, 200)}` : ''} (today is ${today}). The service cannot send reminders, and you must not send anything: you draft, I send.`,
    '',
    `1. Call list_requests with overdue: true${filter}, sort: "due_soonest", limit: 500. While nextOffset is not null, call again with offset: nextOffset, so that you have every overdue request. Its counts are exact: quote them, never estimate.`,
    '2. Group the requests by client. For each client list every overdue request: its title, due date, days overdue (daysOverdue), and what is missing (totalItems minus completedItems items still outstanding, of totalItems).',
    '3. For each client, write a short, polite DRAFT message I can send myself: name each request and its due date, say how many items are still missing, and ask for them by a new date a few days from today. Label each one clearly as a draft.',
    'Do not call create_request: a new request is not a reminder, and it would e-mail the client a second checklist.',
  ].join('\n');
}

function weeklyStatus(today: string): string {
  return [
    `Give me a status report of the firm's document requests as of ${today}.`,
    '',
    '1. Call list_requests with limit: 1 for the exact totals: requests by status, overdue, due within 7 days, checklist items completed of all.',
    '2. Call list_requests with overdue: true, sort: "due_soonest", limit: 20: the longest overdue, and the exact number overdue.',
    `3. Call list_requests with dueAfter: "${today}", dueBefore: "${addDays(today, 7)}", sort: "due_soonest": what is due this week.`,
    '4. Call list_requests with sort: "least_complete", limit: 10: the open requests furthest from complete.',
    'Report in a few short sections: headline numbers (exact, from the results), overdue by client, due this week, furthest behind, and suggested next steps (for overdue clients: the chase-overdue prompt drafts messages). Send nothing.',
  ].join('\n');
}

function message(text: string, description: string): GetPromptResult {
  return { description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}

type Offered = Omit<(typeof PROMPTS)[number], 'sends'>[];

/** Registers resources, prompts and completion on the SDK's low-level Server (capabilities declared by its constructor). */
export function registerTemplatesAndPrompts(server: Server, deps: ExtrasDeps): void {
  const catalog = deps.templates.current();
  const prompts: Offered = PROMPTS.filter((p) => !(deps.readOnly && p.sends)).map(({ sends: _sends, ...p }) => p);
  if (catalog.problems.length) deps.logger?.warn(catalog.status);
  else deps.logger?.debug(catalog.status);
  registerResources(server, deps);
  registerPrompts(server, deps, prompts);
  registerCompletion(server, deps, prompts);
}

/** The templates as resources (the index, one per template, a resource template by name), then the MCP Apps pages. */
function registerResources(server: Server, deps: ExtrasDeps): void {
  const current = () => deps.templates.current();
  const json = (uri: string, value: unknown): ReadResourceResult => ({
    contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
  });

  // The MCP Apps pages (ui/apps.ts) follow the templates, each only beside a tool offered: read-only mode hides every sending tool.
  const pages = appResources(TOOLS.filter((t) => !(deps.readOnly && !t.annotations.readOnlyHint)).map((t) => t.name));
  server.setRequestHandler('resources/list', () => ({
    resources: [
      {
        uri: INDEX_URI,
        name: 'templates',
        title: 'Checklist templates',
        description: "Every checklist template (built-in and the firm's), with item counts.",
        mimeType: 'application/json',
      },
      ...current().templates.map((t): Resource => ({
        uri: `${INDEX_URI}/${t.name}`,
        name: t.name,
        title: t.title,
        description: t.description,
        mimeType: 'application/json',
      })),
      ...pages,
    ],
  }));
  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: [
      {
        uriTemplate: TEMPLATE_URI,
        name: 'template',
        title: 'A checklist template',
        description: 'One template with its items, by name.',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler('resources/read', (request) => {
    const { uri } = request.params;
    const page = readAppPage(uri);
    if (page) return page;
    const catalog = current();
    if (uri === INDEX_URI) return json(uri, { templates: catalog.summaries, problems: catalog.problems });
    const name = uri.startsWith(`${INDEX_URI}/`) ? decodeURIComponent(uri.slice(INDEX_URI.length + 1)) : undefined;
    const found = name ? named(deps.templates, name, catalog) : undefined;
    const full = found && catalog.full.get(found);
    // SDK v2 answers it with the current specification's code (-32602, data.uri) in both eras.
    if (!full) throw new ResourceNotFoundError(oneLine(uri, 200));
    return json(uri, full);
  });
}

/** The prompts: a send-checklist draft, overdue chasers and the weekly status (read-only mode: none that sends). */
function registerPrompts(server: Server, deps: ExtrasDeps, prompts: Offered): void {
  server.setRequestHandler('prompts/list', () => ({ prompts }));
  server.setRequestHandler('prompts/get', (request) => {
    const { name, arguments: args = {} } = request.params;
    const prompt = prompts.find((p) => p.name === name);
    if (!prompt) throw invalid(`Unknown prompt ${quoted(name, 60)}. Prompts: ${prompts.map((p) => p.name).join(', ')}.`);
    for (const arg of prompt.arguments ?? []) if (arg.required && !args[arg.name]?.trim()) throw invalid(`The ${name} prompt needs ${arg.name}.`);
    const today = deps.today();
    // Arguments are often completion answers, i.e. client names from the service: rendered as data
    // (one line, invisible characters removed, quoted where they appear), never as our own words.
    switch (name) {
      case 'send-checklist': {
        const template = needTemplate(deps.templates, args.template);
        return message(sendChecklist(template, args.client!.trim(), today), `Send ${oneLine(template.name, 100)} to ${quoted(args.client, 100)}`);
      }
      case 'chase-overdue':
        return message(chaseOverdue(args.client?.trim() || undefined, today), prompt.description!);
      default:
        return message(weeklyStatus(today), prompt.description!);
    }
  });
}

/** Completion: template names for the resource template and the prompts, client names (from the service, as data) for the prompts. */
function registerCompletion(server: Server, deps: ExtrasDeps, prompts: Offered): void {
  const current = () => deps.templates.current();
  server.setRequestHandler('completion/complete', async (request, ctx) => {
    const { ref, argument } = request.params;
    const none = { completion: { values: [], total: 0, hasMore: false } };
    const templateNames = () => ({
      completion: completeFrom(
        current().templates.map((t) => t.name),
        argument.value,
      ),
    });
    if (ref.type === 'ref/resource') return ref.uri === TEMPLATE_URI && argument.name === 'name' ? templateNames() : none;
    const prompt = prompts.find((p) => p.name === ref.name);
    if (!prompt?.arguments?.some((a) => a.name === argument.name)) return none;
    if (argument.name === 'template') return templateNames();
    if (argument.name !== 'client' || !deps.listClients) return none;
    try {
      const clients = await deps.listClients(ctx.mcpReq.signal);
      // Names from the service, as data: redacted, one line, invisible characters removed, capped.
      const redact = deps.redact ?? ((t: string) => t);
      return {
        completion: completeFrom(
          clients.map((c) => (c.displayName ? oneLine(redact(c.displayName), 200) : null)),
          argument.value,
        ),
      };
    } catch (error) {
      // Completion is a convenience: a failing service means no suggestions, not a failed prompt.
      deps.logger?.debug(`completing client names failed: ${(error as Error).message}`);
      return none;
    }
  });
}
