import { z } from 'zod';

/**
 * The checklist item as callers and template files write it. One schema for create_request's
 * `items` and for templates, so a template cannot hold an item that create_request would refuse.
 */

export const ITEM_TYPES = ['file', 'text', 'date', 'number', 'boolean'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export const CORRECTNESS_MODES = ['off', 'advisory', 'soft', 'hard'] as const;
export type CorrectnessMode = (typeof CORRECTNESS_MODES)[number];

export const MAX_ITEMS = 100;

export const itemIn = z.strictObject({
  name: z
    .string()
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .refine((s) => [...s.trim()].length <= 200, 'must be at most 200 characters')
    .describe('What to provide, e.g. "W-2 forms".'),
  required: z.boolean().optional().describe('Default true.'),
  type: z.enum(ITEM_TYPES).optional().describe('Default file.'),
});
export type ItemIn = z.output<typeof itemIn>;

/** An item with its defaults filled in: what is POSTed. */
export interface ChecklistItem {
  name: string;
  required: boolean;
  type: ItemType;
}

export function checklistItem(item: ItemIn): ChecklistItem {
  return { name: item.name.trim(), required: item.required ?? true, type: item.type ?? 'file' };
}
