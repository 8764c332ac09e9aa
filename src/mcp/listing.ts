import type { CacheHint, Server, Tool } from '@modelcontextprotocol/server';
import { templateCatalog, watchTemplateNames } from '../templates/load.js';
import type { ToolDefinition } from '../tools/define.js';
import { listedTool, withTemplateNames } from './tool-schema.js';

/**
 * `ttlMs`/`cacheScope` on 2026-07-28 list results (2025 results carry none). What they list is fixed
 * for the life of the process (the catalogue, DOCREQ_READ_ONLY) and is the same for every key, so a shared
 * cache may keep it, except as cacheHintsFor says (a templates file, a signed-in person's role); nothing in them is revalidated against the
 * service. resources/read of a template is the same; server/discover too.
 */
const CACHE_HINTS: Partial<Record<'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list' | 'resources/read' | 'server/discover', CacheHint>> = {
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
export function toolListing(offered: ToolDefinition[], templatesFile: string | undefined): () => Tool[] {
  const baseListed = offered.map(listedTool);
  let listedNames: string | undefined;
  let listed = baseListed;
  return () => {
    const catalog = templateCatalog(templatesFile);
    const names = catalog.templates.map((t) => t.name).join(',');
    if (names !== listedNames) {
      listedNames = names;
      listed = withTemplateNames(baseListed, catalog);
    }
    return listed;
  };
}

/**
 * A session that lasts (not stateless HTTP) is told when the list changes (on stdio a 2026 client hears it
 * on its subscriptions/listen stream); stateless HTTP is told by its entry (transport/http.ts, mcpEntry).
 */
export function watchListChanges(server: Server, templatesFile: string | undefined): (() => void) | undefined {
  return templatesFile
    ? watchTemplateNames(templatesFile, () => {
        if (!server.transport) return;
        void server.sendToolListChanged().catch(() => undefined);
        void server.sendResourceListChanged().catch(() => undefined);
      })
    : undefined;
}
