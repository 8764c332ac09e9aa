/** The client names among a list_requests answer's matches, counted per name for the notes that name them. */
import type { Client, RequestRecord } from '../api/records.js';
import { nameKeys } from './name-keys.js';
import { sharedClientNames } from './facts.js';
import type { NameCount } from './pass.js';
import type { Selection } from './query.js';

/** Matched requests per name key (grouped: per group; else with a client name asked: per match; otherwise none). */
export function matchedPerName(sel: Selection): Map<string, number> {
  const perName = new Map<string, number>();
  const { names, found } = sel;
  if (sel.grouped) {
    // A group's name key is its first record's, from the list's name table (keyed once per list).
    for (const g of found.groups) {
      const key = names!.keys[names!.ids[g.first]!]!;
      perName.set(key, (perName.get(key) ?? 0) + g.requests);
    }
  } else if (sel.needle) {
    for (const i of found.picked) {
      const key = names!.keys[names!.ids[i]!]!;
      perName.set(key, (perName.get(key) ?? 0) + 1);
    }
  }
  return perName;
}

/** The different names the matches carry, per name key: the first raw name met, and its matched requests. */
export function namesMatched(all: readonly RequestRecord[], sel: Selection): Map<string, NameCount> {
  const keyOf = nameKeys();
  const perName = new Map<string, NameCount>();
  const met = (name: string | null, n: number) => {
    const key = keyOf(name);
    const seen = perName.get(key);
    if (seen) seen.n += n;
    else perName.set(key, { name, n });
  };
  if (sel.grouped) for (const g of sel.found.groups) met(g.clientName, g.requests);
  else for (const i of sel.found.picked) met(all[i]!.clientName, 1);
  return perName;
}

/** Of the names several clients share, those on the page, each with its requests shown there (undefined when no name is shared). */
export function sharedOnPage(
  all: readonly RequestRecord[],
  clients: readonly Client[],
  page: readonly number[],
): { shared: ReadonlyMap<string, Client[]>; onPage: Map<string, number> } | undefined {
  const shared = sharedClientNames(clients);
  if (!shared.size) return undefined;
  const keyOf = nameKeys();
  const onPage = new Map<string, number>();
  for (const index of page) {
    const key = keyOf(all[index]!.clientName);
    if (shared.has(key)) onPage.set(key, (onPage.get(key) ?? 0) + 1);
  }
  return { shared, onPage };
}
