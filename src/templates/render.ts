import { z } from 'zod';
import { ITEM_TYPES } from '../domain/checklist.js';
import type { Template } from './builtin.js';
import type { TemplateCatalog } from './load.js';

/**
 * A template's words and shapes wherever it is shown: list_templates, the template resources, the
 * `template` parameter in tools/list, and the refusal of a name no template has.
 */

export const templateItemOut = z.object({ name: z.string(), required: z.boolean(), type: z.enum(ITEM_TYPES) });

export const templateSummaryOut = z.object({
  name: z.string(),
  title: z.string(),
  description: z.string(),
  itemCount: z.number().int(),
  correctnessMode: z.string().optional(),
  dueInDays: z.number().int().optional(),
  source: z.enum(['built-in', 'file']),
});

export function templateSummary(t: Template): z.output<typeof templateSummaryOut> {
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
export function templateJson(t: Template): z.output<typeof templateSummaryOut> & { items: z.output<typeof templateItemOut>[] } {
  return { ...templateSummary(t), items: t.items.map((i) => ({ ...i })) };
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

/** Why the firm's file is not used, on lines of its own after what was asked; empty when it is used (or there is none). */
export function problemsText(catalog: TemplateCatalog): string {
  return catalog.problems.length
    ? `\nThe firm's templates file is not used until it is fixed (only the built-ins are available):\n${catalog.problems.map((p) => `- ${p}`).join('\n')}`
    : '';
}
