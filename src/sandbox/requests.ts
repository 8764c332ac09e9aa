import { CORRECTNESS_MODES, ITEM_TYPES, type CorrectnessMode, type ItemType } from '../domain/checklist.js';
import type { Problem } from './answer.js';
import { isoDay, type SandboxFirm, type SandboxItem, type SandboxRequest } from './seed.js';

/** What the sandbox says of a request: its list record, whether it is open, and a create's validation as the API document states it. */

/** The statuses our service counts as closed. */
export const CLOSED: ReadonlySet<string> = new Set(['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived']);

/** What the service kept of a create body, in our terms; null: none given, or dropped. */
export interface Kept {
  clientId: string;
  title: string;
  dueDate: string | null;
  items: SandboxItem[];
  correctnessMode: CorrectnessMode | null;
}

export function listRecord(r: SandboxRequest) {
  // The list endpoint returns the documented fields only.
  return {
    id: r.id,
    title: r.title,
    status: r.status,
    dueDate: r.dueDate,
    createdAt: r.createdAt,
    clientName: r.clientName,
    totalItems: r.totalItems,
    completedItems: r.completedItems,
  };
}

export function openAtService(r: SandboxRequest, closed: ReadonlySet<string> = CLOSED): boolean {
  return !closed.has(r.status.toLowerCase()) && r.completedItems < r.totalItems;
}

/** A create body read by our own names: what the service keeps, or what it refuses (unknown fields are not looked at). */
export function readOurs(input: unknown, firm: SandboxFirm): { kept: Kept; problems: Problem[] } {
  const problems = validateCreate(input, firm).map(({ field, message }) => ({ path: field ? [field] : [], message }));
  if (problems.length) return { kept: { clientId: '', title: '', dueDate: null, items: [], correctnessMode: null }, problems };
  type Valid = {
    clientId: string;
    title: string;
    dueDate?: string | null;
    items?: { name: unknown; required?: boolean; type?: ItemType }[];
    correctnessMode?: CorrectnessMode;
  };
  const b = input as Valid;
  const kept: Kept = {
    clientId: b.clientId,
    title: b.title.trim(),
    dueDate: b.dueDate ?? null,
    items: (b.items ?? []).map((i) => ({ name: String(i.name).trim(), required: i.required ?? true, type: i.type ?? 'file' })),
    correctnessMode: b.correctnessMode ?? null,
  };
  return { kept, problems };
}

/** Validation as the API document states it, with field details. */
function validateCreate(input: unknown, firm: SandboxFirm): { field: string; message: string }[] {
  const details: { field: string; message: string }[] = [];
  if (!input || typeof input !== 'object' || Array.isArray(input)) return [{ field: '', message: 'the body must be a JSON object' }];
  const b = input as Record<string, unknown>;
  if (typeof b.clientId !== 'string' || !b.clientId) details.push({ field: 'clientId', message: 'is required' });
  else if (!firm.clients.some((c) => c.id === b.clientId)) details.push({ field: 'clientId', message: 'no such client in this firm' });
  if (typeof b.title !== 'string' || !b.title.trim()) details.push({ field: 'title', message: 'is required' });
  if (
    b.dueDate !== undefined &&
    b.dueDate !== null &&
    (typeof b.dueDate !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(b.dueDate) || isoDay(Date.parse(b.dueDate)) !== b.dueDate)
  ) {
    details.push({ field: 'dueDate', message: 'must be a date YYYY-MM-DD' });
  }
  if (b.correctnessMode !== undefined && !(CORRECTNESS_MODES as readonly unknown[]).includes(b.correctnessMode)) {
    details.push({ field: 'correctnessMode', message: `must be one of ${CORRECTNESS_MODES.join(', ')}` });
  }
  if (!Array.isArray(b.items) || b.items.length === 0) {
    details.push({ field: 'items', message: 'must be a non-empty array' });
  } else {
    b.items.forEach((raw: unknown, i) => {
      const item = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
      if (typeof item.name !== 'string' || !item.name.trim()) details.push({ field: `items[${i}].name`, message: 'must be a non-empty string' });
      if (item.required !== undefined && typeof item.required !== 'boolean') details.push({ field: `items[${i}].required`, message: 'must be a boolean' });
      if (item.type !== undefined && !(ITEM_TYPES as readonly unknown[]).includes(item.type)) {
        details.push({ field: `items[${i}].type`, message: `must be one of ${ITEM_TYPES.join(', ')}` });
      }
    });
  }
  return details;
}
