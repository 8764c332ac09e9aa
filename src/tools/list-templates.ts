import { z } from 'zod';
import type { Template } from '../templates/builtin.js';
import { findTemplate, templateCatalog, type TemplateCatalog } from '../templates/load.js';
import { ITEM_TYPES, MAX_ITEM_NAME, MAX_TITLE } from '../domain/checklist.js';
import { UserInputError } from '../errors.js';
import { defineTool, type ToolResult } from './define.js';
import { answerTable, remember } from '../freeze.js';
import { oneLine, quoted } from '../text/render.js';

const itemOut = z.object({ name: z.string(), required: z.boolean(), type: z.enum(ITEM_TYPES) });

const summaryOut = z.object({
  name: z.string(),
  title: z.string(),
  description: z.string(),
  itemCount: z.number().int(),
  correctnessMode: z.string().optional(),
  dueInDays: z.number().int().optional(),
  source: z.enum(['built-in', 'file']),
});

export function templateSummary(t: Template): z.output<typeof summaryOut> {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    itemCount: t.items.length,
    ...(t.correctnessMode ? { correctnessMode: t.correctnessMode } : {}),
    ...(t.dueInDays !== undefined ? { dueInDays: t.dueInDays } : {}),
    source: t.source,
  };
}

/** A template in full, as the docreq://templates/{name} resource gives it. */
export function templateJson(t: Template): z.output<typeof summaryOut> & { items: z.output<typeof itemOut>[] } {
  return { ...templateSummary(t), items: t.items.map((i) => ({ ...i })) };
}

function templateLine(t: Template): string {
  return `- ${t.name}: ${quoted(t.title, 80)}, ${t.items.length} items${t.source === 'file' ? " (the firm's)" : ''}`;
}

/** A template in full, as a model reads it: defaults, then one line per item. */
function templateText(t: Template): string {
  const defaults = [
    `title ${quoted(t.title, MAX_TITLE)}`,
    t.correctnessMode ? `correctness mode ${t.correctnessMode}` : "the service's default correctness mode",
    t.dueInDays !== undefined ? `due ${t.dueInDays} days after sending` : 'no due date',
  ];
  return (
    `${t.name}${t.source === 'file' ? " (the firm's template)" : ' (built-in)'}: ${oneLine(t.description, 500)}\nDefaults: ${defaults.join(', ')}.\n` +
    `${t.items.length} items:\n${t.items.map((i, n) => `  ${n + 1}. ${quoted(i.name, MAX_ITEM_NAME)} (${i.type}, ${i.required ? 'required' : 'optional'})`).join('\n')}`
  );
}

/**
 * The `template` parameter's description: the names a model may pass, as many as `room` characters
 * hold (tools/list is read into every conversation); the rest are counted and left to list_templates.
 */
export function templateParamDescription(catalog: TemplateCatalog, room: number): string {
  // The firm's own first: they are the ones a model cannot guess.
  const names = [...catalog.templates.filter((t) => t.source === 'file'), ...catalog.templates.filter((t) => t.source !== 'file')].map((t) => t.name);
  let shown = '';
  let n = 0;
  for (const name of names) {
    const rest = names.length - n - 1;
    const tail = rest > 0 ? `, ${rest} more (list_templates)`.length : 0;
    if (shown.length + name.length + 2 + tail > room) break;
    shown += `${n ? ', ' : ''}${name}`;
    n++;
  }
  const more = n === 0 ? 'see list_templates' : names.length > n ? `, ${names.length - n} more (list_templates)` : '';
  return `Template: ${shown}${more}. Its items first; title, mode, due offset as defaults.`;
}

function problemsText(catalog: TemplateCatalog): string {
  return catalog.problems.length
    ? `\nThe firm's templates file is not used until it is fixed (only the built-ins are available):\n${catalog.problems.map((p) => `- ${p}`).join('\n')}`
    : '';
}

const outputSchema = z.object({
  total: z.number().int(),
  templates: z.array(summaryOut).describe('Every template; only the one asked for when name is given.'),
  items: z.array(itemOut).nullable().describe("The named template's items; null without name."),
  problems: z.array(z.string()).describe("Why the firm's templates file is not used; empty when fine."),
});
type ListTemplatesOut = z.output<typeof outputSchema>;

/** Answers kept per catalogue (the catalogue object lives until the file changes); bounded, the oldest dropped first. */
const answersFor = answerTable<TemplateCatalog, TemplateCatalog, ToolResult<ListTemplatesOut>>();

export const listTemplates = defineTool({
  name: 'list_templates',
  title: 'List checklist templates',
  description:
    "Checklist templates (built-in and the firm's own): name, title, item count; with name, its items and defaults. " +
    'Pass the name as template to create_request(_batch).',
  inputSchema: z.strictObject({
    name: z.string().max(100).optional().describe('A template name, e.g. "individual-tax-return": show its items.'),
  }),
  outputSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // eslint-disable-next-line @typescript-eslint/require-await
  async handler(input, ctx) {
    const catalog = templateCatalog(ctx.config.templatesFile);
    // The same catalogue (the very object, kept until the file changes) gives the same answer: worked out once, frozen.
    const answers = answersFor(catalog, catalog);
    const key = input.name === undefined ? '' : `=${input.name}`;
    return answers.get(key) ?? remember(answers, key, answer(catalog, input.name));
  },
});

/** What list_templates answers about one catalogue (throws for a name it does not have). */
function answer(catalog: TemplateCatalog, name: string | undefined): ToolResult<ListTemplatesOut> {
  const templates = catalog.templates.map(templateSummary);
  const base = { total: templates.length, problems: [...catalog.problems] };
  if (name !== undefined) {
    const found = findTemplate(catalog, name);
    if (!found) {
      throw new UserInputError(`No template is named ${quoted(name, 60)}. Templates: ${catalog.templates.map((t) => t.name).join(', ')}.${problemsText(catalog)}`);
    }
    return { text: templateText(found) + problemsText(catalog), structured: { ...base, templates: [templateSummary(found)], items: found.items.map((i) => ({ ...i })) } };
  }
  const fromFile = catalog.templates.filter((t) => t.source === 'file').length;
  const header = `${templates.length} templates (${templates.length - fromFile} built-in, ${fromFile} the firm's). Call list_templates with name for a template's items.`;
  return { text: `${header}\n${catalog.templates.map(templateLine).join('\n')}${problemsText(catalog)}`, structured: { ...base, templates, items: null } };
}
