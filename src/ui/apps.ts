import type { ListResourcesResult, ListToolsResult, ReadResourceResult, Resource, Server, ServerContext } from '@modelcontextprotocol/server';
import { pageHtml, type PageName } from './pages.js';

/**
 * MCP Apps (extension io.modelcontextprotocol/ui, ext-apps spec 2026-01-26) at the protocol level:
 * three tools name a ui:// page in `_meta.ui.resourceUri` (and the legacy flat key), and the pages
 * are resources of MIME type text/html;profile=mcp-app with their CSP in `_meta.ui.csp`. Hosts without
 * Apps ignore both; every tool's text and structuredContent are the same with or without them.
 */

export const EXTENSION_ID = 'io.modelcontextprotocol/ui';
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** No origin at all: the page reaches nothing but the host bridge (the spec's secure default, said explicitly). */
export const APP_CSP = { connectDomains: [] as string[], resourceDomains: [] as string[], frameDomains: [] as string[], baseUriDomains: [] as string[] };

interface AppPage {
  uri: string;
  page: PageName;
  title: string;
  description: string;
  tools: string[];
}

export const APP_PAGES: AppPage[] = [
  {
    uri: 'ui://docreq/send-preview.html',
    page: 'preview',
    title: 'Send preview',
    description: 'The exact request before it is sent, with a Send button for the person and the outcome per recipient after.',
    tools: ['create_request', 'create_request_batch'],
  },
  {
    uri: 'ui://docreq/dashboard.html',
    page: 'dashboard',
    title: 'Requests dashboard',
    description: "Open, overdue and due-soon requests per client as bars (list_requests with groupBy client), or the firm's status.",
    tools: ['list_requests'],
  },
];

type Handler = (request: { method: string; params?: unknown }, ctx: ServerContext) => Promise<unknown>;

/** The handler registered before for `method` (the SDK's accessor for its stored handler chain). */
function previous(server: Server, method: string): Handler {
  const handler = (server as unknown as { _getRequestHandler(method: string): Handler | undefined })._getRequestHandler(method);
  if (!handler) throw new Error(`registerApps: no ${method} handler to extend`);
  return handler;
}

/**
 * Adds the pages to a server whose tools/list, resources/list and resources/read handlers are
 * already set (call it last). A page is listed only for a tool that is offered (read-only mode has
 * no sending tools, so no send preview). It is listed to every client alike: a 2025 client's
 * capabilities are unknown to a stateless team-mode instance while a 2026 client's come with each
 * request, and both eras must list the same tools; hosts without Apps ignore `_meta.ui`. Only the
 * spec's `_meta.ui.resourceUri` is written (the flat `ui/resourceUri` key is deprecated; hosts read
 * both): 186 characters in all, which hosts do not hand to the model.
 */
export function registerApps(server: Server): void {
  const listTools = previous(server, 'tools/list');
  const listResources = previous(server, 'resources/list');
  const readResource = previous(server, 'resources/read');
  const offeredPages = (tools: { name: string }[]) => APP_PAGES.filter((p) => p.tools.some((t) => tools.some((tool) => tool.name === t)));

  server.setRequestHandler('tools/list', async (request, ctx) => {
    const listed = (await listTools(request, ctx)) as ListToolsResult;
    return {
      ...listed,
      tools: listed.tools.map((tool) => {
        const page = APP_PAGES.find((p) => p.tools.includes(tool.name));
        return page ? { ...tool, _meta: { ...tool._meta, ui: { resourceUri: page.uri } } } : tool;
      }),
    };
  });
  server.setRequestHandler('resources/list', async (request, ctx) => {
    const listed = (await listResources(request, ctx)) as ListResourcesResult;
    const tools = ((await listTools({ method: 'tools/list', params: {} }, ctx)) as ListToolsResult).tools;
    const pages = offeredPages(tools).map((p): Resource => ({ uri: p.uri, name: p.page, title: p.title, description: p.description, mimeType: APP_MIME_TYPE, _meta: { ui: { csp: APP_CSP } } }));
    return { ...listed, resources: [...listed.resources, ...pages] };
  });
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const page = APP_PAGES.find((p) => p.uri === request.params.uri);
    if (!page) return (await readResource(request, ctx)) as ReadResourceResult;
    return { contents: [{ uri: page.uri, mimeType: APP_MIME_TYPE, text: pageHtml(page.page), _meta: { ui: { csp: APP_CSP, prefersBorder: true } } }] };
  });
}
