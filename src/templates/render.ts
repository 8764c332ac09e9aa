import { z } from 'zod';
import { ITEM_TYPES } from '../domain/checklist.js';
import type { Template } from './builtin.js';
import type { TemplateCatalog } from './load.js';

/**
 * A template's words and shapes wherever it is shown: list_templates, the template resources, the
 * `template` parameter in tools/list, the refusal of a name no template has, and the status line of
 * `check` and the logs. What depends only on the catalog is worked out once per catalog (shownCatalog),
 * so what shows it reads it finished.
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

type TemplateSummary = z.output<typeof templateSummaryOut>;
type TemplateJson = TemplateSummary & { items: z.output<typeof templateItemOut>[] };

/** One description of the `template` parameter, and the room (characters) the names it shows need. */
interface ParamDescription {
  room: number;
  text: string;
}

/** A catalog with what every answer shows of it: templates/catalogue.ts makes one per version of the file. */
export interface ShownCatalog extends TemplateCatalog {
  /** The names, as one string: what tells tools/list and the template resources have changed. */
  names: string;
  /** Each template's summary, in the catalog's order (list_templates, the docreq://templates index). */
  summaries: TemplateSummary[];
  /** Each template in full, as its resource (docreq://templates/{name}) and list_templates with a name give it. */
  full: ReadonlyMap<Template, TemplateJson>;
  /** What is loaded, or why the firm's file is not used, in one line (templatesStatus). */
  status: string;
  /**
   * The `template` parameter's descriptions, fewest names first, each with the room its names need
   * (the first names none and fits any room): tools/list, read into every conversation, takes the
   * longest its budget holds; the names left out are counted and left to list_templates.
   */
  paramDescriptions: ParamDescription[];
}

export function shownCatalog(catalog: TemplateCatalog): ShownCatalog {
  const summaries = catalog.templates.map(templateSummary);
  return {
    ...catalog,
    names: catalog.templates.map((t) => t.name).join(','),
    summaries,
    full: new Map(catalog.templates.map((t, i) => [t, { ...summaries[i]!, items: t.items.map((item) => ({ ...item })) }])),
    status: templatesStatus(catalog),
    paramDescriptions: paramDescriptions(catalog),
  };
}

function templateSummary(t: Template): TemplateSummary {
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

/**
 * Each description of the `template` parameter: the names a model may pass, the firm's first (they
 * are the ones a model cannot guess), one more name at each step; a step needs the room of its own
 * names and of every step before it, so the longest that fits never skips a name.
 */
function paramDescriptions(catalog: TemplateCatalog): ParamDescription[] {
  const names = [...catalog.templates.filter((t) => t.source === 'file'), ...catalog.templates.filter((t) => t.source !== 'file')].map((t) => t.name);
  const text = (n: number) => {
    const more = n === 0 ? 'see list_templates' : names.length > n ? `, ${names.length - n} more (list_templates)` : '';
    return `Template: ${names.slice(0, n).join(', ')}${more}. Its items first; title, mode, due offset as defaults.`;
  };
  const out: ParamDescription[] = [{ room: -Infinity, text: text(0) }];
  let shown = 0;
  let room = -Infinity;
  names.forEach((name, n) => {
    const rest = names.length - n - 1;
    const tail = rest > 0 ? `, ${rest} more (list_templates)`.length : 0;
    room = Math.max(room, shown + name.length + 2 + tail);
    shown += (n ? 2 : 0) + name.length;
    out.push({ room, text: text(n + 1) });
  });
  return out;
}

/** Why the firm's file is not used, on lines of its own after what was asked; empty when it is used (or there is none). */
export function problemsText(catalog: TemplateCatalog): string {
  return catalog.problems.length
    ? `\nThe firm's templates file is not used until it is fixed (only the built-ins are available):\n${catalog.problems.map((p) => `- ${p}`).join('\n')}`
    : '';
}

/** One line for `check` and the logs: what is loaded, or why the firm's file is not used. */
export function templatesStatus(catalog: TemplateCatalog): string {
  const builtIn = `${catalog.builtIn} built-in`;
  if (!catalog.file) return `templates: ${builtIn} (no DOCREQ_TEMPLATES_FILE)`;
  if (catalog.problems.length) {
    return `templates: ${builtIn} only; the firm's file is not used until fixed:\n${catalog.problems.map((p) => `  - ${p}`).join('\n')}`;
  }
  const overrides = catalog.overridden.length ? `, replacing ${catalog.overridden.join(', ')}` : '';
  return `templates: ${builtIn}, ${catalog.fromFile} from ${catalog.file}${overrides}`;
}
