import { Server, ProtocolError, ProtocolErrorCode, preloadSchemas, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { CallToolResult, InputRequiredResult, Tool } from '@modelcontextprotocol/server';
import type { Config } from '../config.js';
import { visibleResult } from '../text/visible.js';
import { INSTRUCTIONS } from '../tools/index.js';
import { VERSION } from '../version.js';
import { capabilitiesOf, toolCaller } from './call-tool.js';
import { APP_ONLY_TOOLS, rendersPages } from '../ui/apps.js';
import { registerTemplatesAndPrompts } from './catalog-extras.js';
import { serverContext, type ServerOptions } from './context.js';
import { FormCheck } from './form-check.js';
import { cacheHintsFor, toolListing, watchListChanges } from './listing.js';
import { mcpLogging } from './logging.js';

export type { ServerOptions } from './context.js';

/** A listing without the tools only a page calls: what a host that shows no pages lists (made once per listing). */
const withoutAppOnly = new WeakMap<readonly Tool[], Tool[]>();
function forModels(tools: readonly Tool[]): Tool[] {
  let kept = withoutAppOnly.get(tools);
  if (!kept) withoutAppOnly.set(tools, (kept = tools.filter((t) => !APP_ONLY_TOOLS.includes(t.name))));
  return kept;
}

/** Checks an accepted confirmation against the form asked (./form-check.ts), shared by every server. */
const FORM_CHECK = new FormCheck();

/**
 * Builds the MCP server from its context (./context.ts: the secrets and their one redaction, the logger,
 * the API client, once-only sending, the catalogue): its lists, its logging, and tools/call
 * (./call-tool.ts), whose every result is sealed here, once, as it leaves.
 */
export function createServer(config: Config, options: ServerOptions = {}): Server {
  const parts = serverContext(config, options);
  const { api, logger, seal } = parts;
  const server = new Server(
    { name: 'docreq-mcp', title: 'Document Requests', version: VERSION },
    {
      capabilities: { tools: { listChanged: true }, logging: {}, resources: { listChanged: true }, prompts: {}, completions: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: FORM_CHECK,
      cacheHints: cacheHintsFor(config.templatesFile, Boolean(options.actor)),
      // Team mode's plain 2026 call: the revision is added to those this server speaks, as the SDK's entry adds it.
      ...(options.modernRevision ? { supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS, options.modernRevision] } : {}),
    },
  );
  /** A 2026-07-28 connection or request: no initialize, identity and capabilities come with each request. */
  const modern = () => (server.getNegotiatedProtocolVersion() ?? '') >= '2026';
  const logging = mcpLogging(server, logger, modern);
  const listed = toolListing(parts.offered, parts.templates);
  const stopWatching = watchListChanges(server, options.stateless ? undefined : parts.templates);
  const callTool = toolCaller(server, parts, modern);

  // Load the HTTP client right after initialize, so the first tool call costs what a later one does;
  // in the next turn, the SDK's wire schemas (built lazily, else inside the first tools/call). ICU's
  // number format is deliberately not warmed: counts are grouped without it (tools/list-text.ts num),
  // and warming it would take this thread just as a script's first call arrives (docs/performance.md).
  server.oninitialized = () => {
    api?.warm();
    setImmediate(preloadSchemas);
  };
  server.onclose = () => {
    stopWatching?.();
    logging.removeSink();
    void api?.close();
  };

  registerTemplatesAndPrompts(server, {
    templates: parts.templates,
    listClients: api && (async (signal) => api.listClients({ reuse: true, signal })),
    redact: parts.redact,
    today: parts.clock,
    readOnly: config.readOnly,
    logger,
  });
  // send_from_page is listed only to a host that shows pages (it hides the tool from its model); such a
  // list depends on the requester's capabilities, so a 2026 answer says it is not for a shared cache.
  server.setRequestHandler('tools/list', (_request, ctx) => {
    if (!rendersPages(capabilitiesOf(server, options, modern, ctx))) return { tools: forModels(listed()) };
    return modern() ? { tools: listed(), ttlMs: 60_000, cacheScope: 'private' as const } : { tools: listed() };
  });
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    // 2025 clients only: a 2026 client has no initialize.
    if (!options.stateless && !modern() && !server.getClientVersion()) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'The session is not initialised: send initialize first. Nothing was called or sent.');
    }
    const started = performance.now();
    let result: CallToolResult | InputRequiredResult | undefined;
    try {
      // Sealed, then its structuredContent shown by the renderer's invisible-character rule (src/text/render.ts).
      result = visibleResult(seal(await logging.during(ctx, () => callTool(request, ctx))));
      return result;
    } finally {
      options.onCall?.(request.params.name, result, performance.now() - started);
    }
  });
  return server;
}
