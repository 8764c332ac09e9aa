import { oneLine } from '../text/render.js';

/** What a list could not read in full: the records whose read fields nest too deep, and the note the model reads of them. */

/** How deep an element of `data` may nest (the element itself is level 1; a request record needs 1). */
export const MAX_ELEMENT_DEPTH = 64;

/** A record one or more of whose read fields could not be read (nested too deep): they stand as null. */
export interface Unreadable {
  /** Its place in the records. */
  index: number;
  /** The read fields that could not be read. */
  fields: string[];
}

/** The records of a list that could not be read in full, by the records array the parser answered. */
const UNREADABLE = new WeakMap<readonly unknown[], readonly Unreadable[]>();

/** Which records of a list (the very array a list parser answered) could not be read in full; none for any other array. */
export function unreadableIn(records: readonly unknown[]): readonly Unreadable[] {
  return UNREADABLE.get(records) ?? [];
}

/** How many records a note names by id before it counts the rest. */
const NAMED = 5;

/**
 * What the model reads of a list's records that could not be read in full: one note naming the first
 * few by id and the fields that stand empty, or none. Each such record is still listed and counted.
 */
export function unreadableNotes(records: readonly { id: string | null }[], noun: 'client' | 'request'): string[] {
  const bad = unreadableIn(records);
  if (bad.length === 0) return [];
  const named = bad.slice(0, NAMED).map((u) => {
    const id = records[u.index]?.id;
    return `${id ? `id ${oneLine(id, 40)}` : 'one with no readable id'} (${u.fields.join(', ')})`;
  });
  const more = bad.length > NAMED ? `, and ${(bad.length - NAMED).toLocaleString('en')} more` : '';
  const them = bad.length === 1 ? `1 ${noun}` : `${bad.length.toLocaleString('en')} ${noun}s`;
  return [
    `${them} in the service's list could not be read in full: ${named.join('; ')}${more}. ` +
      `Those fields are nested more than ${MAX_ELEMENT_DEPTH} levels deep, which no ${noun} field is, so they show as empty; ${bad.length === 1 ? 'it is' : 'each is'} still listed and counted.`,
  ];
}

/** Records, by the very array a list parser answers, whose read fields could not be read. */
export function markUnreadable(records: readonly unknown[], unreadable: readonly Unreadable[]): void {
  UNREADABLE.set(records, unreadable);
}
