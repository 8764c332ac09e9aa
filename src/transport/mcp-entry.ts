import { createMcpHandler, type McpHttpHandler, type McpServerFactory } from '@modelcontextprotocol/server';
import { tellTemplateChanges } from '../mcp/listing.js';
import { templateCatalogue } from '../templates/catalogue.js';

/**
 * The SDK v2 entry for stateless HTTP: a server per request from `factory`. Each request is its own
 * server, so none can watch the firm's templates file for the life of a session; the entry does, once:
 * a change in the names it gives is told to every 2026-07-28 client listening for it (subscriptions/listen:
 * tools and resources list_changed). A 2025-11-25 client of stateless HTTP has no stream to be told on
 * (GET is 405); the lists' cache hints (a minute with a templates file) bound how stale its copy gets.
 */
export function statelessEntry(factory: McpServerFactory, templatesFile: string | undefined): { handler: McpHttpHandler; stop(): void } {
  const handler = createMcpHandler(factory, { onerror: () => undefined });
  const stopWatching = tellTemplateChanges(templateCatalogue(templatesFile), handler.notify);
  return { handler, stop: () => stopWatching?.() };
}
