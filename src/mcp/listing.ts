import type { CacheHint, Server, Tool } from '@modelcontextprotocol/server';
import type { Templates } from '../templates/catalogue.js';
import type { ToolDefinition } from '../tools/define.js';
import { listedTool, withTemplateNames } from './tool-schema.js';

/**
 * `ttlMs`/`cacheScope` on 2026-07-28 list results (2025 results carry none). What they list is fixed
 * for the life of the process (the catalogue, DOCREQ_READ_ONLY) and is the same for every key, so a shared
 * cache may keep it, except as cacheHintsFor says (a templates file, a signed-in person's role); nothing in them is revalidated against the
 * service. resources/read of a template is the same; server/discover too.
 */
const CACHE_HINTS: Partial<
  Record<'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list' | 'resources/read' | 'server/discover', CacheHint>
> = {
  'tools/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'prompts/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/read': { ttlMs: 3_600_000, cacheScope: 'public' },
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' },
};

/**
 * The hints for one server: a firm's templates file can change (its names are in tools/list and in the
 * template resources), so with one the lists are kept a minute; a signed-in person's tools/list depends
 * on their role (a reader is not offered the sending tools), so it is private to them.
 */
export function cacheHintsFor(templatesFile: string | undefined, perPerson: boolean): typeof CACHE_HINTS {
  if (!templatesFile && !perPerson) return CACHE_HINTS;
  const ttlMs = templatesFile ? 60_000 : 3_600_000;
  const out: typeof CACHE_HINTS = {};
  for (const [method, hint] of Object.entries(CACHE_HINTS) as [keyof typeof CACHE_HINTS, CacheHint][]) {
    out[method] = { ...hint, ttlMs, ...(perPerson && (method === 'tools/list' || method === 'server/discover') ? { cacheScope: 'private' } : {}) };
  }
  return out;
}

/** The tools as tools/list shows them: the `template` parameters name the templates, listed again when the firm's file changes. */
export function toolListing(offered: ToolDefinition[], templates: Templates): () => Tool[] {
  const baseListed = offered.map(listedTool);
  let listedNames: string | undefined;
  let listed = baseListed;
  return () => {
    const catalog = templates.current();
    if (catalog.names !== listedNames) {
      listedNames = catalog.names;
      listed = withTemplateNames(baseListed, catalog);
    }
    return listed;
  };
}

/** Where the tools and resources lists' list_changed go: a server's session, or the stateless entry's listeners. */
export interface ListChanged {
  toolsChanged(): void;
  resourcesChanged(): void;
}

/**
 * Tells `lists` each time the template names change: tools/list (the `template` parameters) and
 * resources/list (one resource per template) both name them. Returns the stop; undefined when there
 * is no file to watch.
 */
export function tellTemplateChanges(templates: Templates, lists: ListChanged): (() => void) | undefined {
  return templates.watchNames(() => {
    lists.toolsChanged();
    lists.resourcesChanged();
  });
}

/**
 * A session that lasts (not stateless HTTP) is told when the list changes (on stdio a 2026 client hears it
 * on its subscriptions/listen stream); stateless HTTP is told by its entry (transport/mcp-entry.ts).
 */
export function watchListChanges(server: Server, templates: Templates | undefined): (() => void) | undefined {
  if (!templates) return undefined;
  // Nothing is told to a server no client is connected to.
  return tellTemplateChanges(templates, {
    toolsChanged: () => {
      if (server.transport) void server.sendToolListChanged().catch(() => undefined);
    },
    resourcesChanged: () => {
      if (server.transport) void server.sendResourceListChanged().catch(() => undefined);
    },
  });
}
