import { z } from 'zod';
import type { Template } from '../templates/builtin.js';
import type { Templates } from '../templates/catalogue.js';
import type { TemplateCatalog } from '../templates/load.js';
import { problemsText, templateItemOut, templateSummaryOut, type ShownCatalog } from '../templates/render.js';
import { MAX_ITEM_NAME, MAX_TITLE } from '../domain/checklist.js';
import { defineTool, type ToolResult } from './define.js';
import { answerCache } from '../cache.js';
import { oneLine, quoted } from '../text/render.js';

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

const outputSchema = z.object({
  total: z.number().int(),
  templates: z.array(templateSummaryOut).describe('Every template; only the one asked for when name is given.'),
  items: z.array(templateItemOut).nullable().describe("The named template's items; null without name."),
  problems: z.array(z.string()).describe("Why the firm's templates file is not used; empty when fine."),
});
type ListTemplatesOut = z.output<typeof outputSchema>;

/** Answers kept per catalogue (the catalogue object lives until the file changes); bounded, the oldest dropped first. */
const answersFor = answerCache<TemplateCatalog, TemplateCatalog, ToolResult<ListTemplatesOut>>();

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
    const catalog = ctx.templates.current();
    // The same catalogue (the very object, kept until the file changes) gives the same answer: worked out once, frozen.
    const answers = answersFor(catalog, catalog);
    const key = input.name === undefined ? '' : `=${input.name}`;
    return answers.get(key) ?? answers.keep(key, answer(ctx.templates, catalog, input.name));
  },
});

/** What list_templates answers about one catalogue (throws for a name it does not have). */
function answer(catalogue: Templates, catalog: ShownCatalog, name: string | undefined): ToolResult<ListTemplatesOut> {
  const templates = catalog.summaries;
  const base = { total: templates.length, problems: [...catalog.problems] };
  if (name !== undefined) {
    const found = catalogue.find(name, { catalog });
    const { items, ...summary } = catalog.full.get(found)!;
    return { text: templateText(found) + problemsText(catalog), structured: { ...base, templates: [summary], items } };
  }
  const fromFile = catalog.templates.filter((t) => t.source === 'file').length;
  const header = `${templates.length} templates (${templates.length - fromFile} built-in, ${fromFile} the firm's). Call list_templates with name for a template's items.`;
  return { text: `${header}\n${catalog.templates.map(templateLine).join('\n')}${problemsText(catalog)}`, structured: { ...base, templates, items: null } };
}
