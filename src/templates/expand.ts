import { checklistItem, MAX_ITEMS, type ChecklistItem, type CorrectnessMode, type ItemIn } from '../domain/checklist.js';
import { UserInputError } from '../errors.js';
import { addDays } from '../clock.js';
import type { Template } from './builtin.js';

export interface ExpandedTemplate {
  title: string;
  items: ChecklistItem[];
  correctnessMode: CorrectnessMode | undefined;
  dueDate: string | undefined;
}

/** What the caller gave explicitly (it wins over the template), and the day dueInDays counts from. */
export interface TemplateDefaults {
  today: string;
  title?: string;
  dueDate?: string;
  correctnessMode?: CorrectnessMode;
}

/**
 * A template applied to one request: its items first, then the caller's; its title, mode and due
 * offset only where the caller gave none. Throws UserInputError past MAX_ITEMS in all.
 */
export function expandTemplate(template: Template, extraItems: readonly ItemIn[] | undefined, defaults: TemplateDefaults): ExpandedTemplate {
  const items = [...template.items.map((i) => ({ ...i })), ...(extraItems ?? []).map(checklistItem)];
  if (items.length > MAX_ITEMS) {
    throw new UserInputError(
      `Template "${template.name}" has ${template.items.length} items and ${items.length - template.items.length} more were given: ` +
        `${items.length} in all, more than the ${MAX_ITEMS} a request may hold; nothing was sent. Give fewer items.`,
    );
  }
  const title = defaults.title?.trim() || template.title;
  return {
    title,
    items,
    correctnessMode: defaults.correctnessMode ?? template.correctnessMode,
    dueDate: defaults.dueDate ?? (template.dueInDays !== undefined ? addDays(defaults.today, template.dueInDays) : undefined),
  };
}
