import type { ReadResourceResult, Resource, Tool } from '@modelcontextprotocol/server';
import { pageHtml, type PageName } from './pages.js';

/**
 * MCP Apps (extension io.modelcontextprotocol/ui, ext-apps spec 2026-01-26) at the protocol level:
 * three tools name a ui:// page in `_meta.ui.resourceUri` (and the legacy flat key), and the pages
 * are resources of MIME type text/html;profile=mcp-app with their CSP in `_meta.ui.csp`. Hosts without
 * Apps ignore both; every tool's text and structuredContent are the same with or without them.
 *
 * Composed where each answer is made, through the SDK's public API only: tools/list links each page
 * as the tools are listed (mcp/tool-schema.ts withTemplateNames, after the size budget, which counts
 * what a model reads: hosts do not hand it `_meta`, 186 characters in all); resources/list and
 * resources/read add the pages beside the templates (mcp/catalog-extras.ts). A page is listed to
 * every client alike: a 2025 client's capabilities are unknown to a stateless team-mode instance
 * while a 2026 client's come with each request, and both eras must list the same tools; hosts
 * without Apps ignore `_meta.ui`.
 */

const APP_MIME_TYPE = 'text/html;profile=mcp-app';

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

/** Tools only a page may call (the preview's Send): hosts that follow the spec keep them from the model. */
export const APP_ONLY_TOOLS: readonly string[] = ['send_from_page'];

/**
 * A listed tool with the page it shows linked: the spec's `_meta.ui.resourceUri` only (the flat key is
 * deprecated); a tool only the page calls, with `visibility: ["app"]`.
 */
export function withAppPage<T extends Tool>(tool: T): T {
  if (APP_ONLY_TOOLS.includes(tool.name)) return { ...tool, _meta: { ...tool._meta, ui: { visibility: ['app'] } } };
  const page = APP_PAGES.find((p) => p.tools.includes(tool.name));
  return page ? { ...tool, _meta: { ...tool._meta, ui: { resourceUri: page.uri } } } : tool;
}

/** The MCP Apps extension, as a client declares it in its capabilities (ext-apps's EXTENSION_ID). */
const APPS_EXTENSION = 'io.modelcontextprotocol/ui';

/**
 * Whether a client renders our pages: its capabilities declare the ui extension with our page's MIME type,
 * as the spec has hosts declare it. Without that, nothing is assumed: the page path is never chosen.
 */
export function rendersPages(capabilities: { extensions?: Record<string, unknown> } | undefined): boolean {
  const ui = capabilities?.extensions?.[APPS_EXTENSION] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(APP_MIME_TYPE);
}

/** The pages offered beside these tools, as resources/list shows them (a page is listed only for a tool offered). */
export function appResources(offered: readonly string[]): Resource[] {
  return APP_PAGES.filter((p) => p.tools.some((t) => offered.includes(t))).map((p): Resource => ({
    uri: p.uri,
    name: p.page,
    title: p.title,
    description: p.description,
    mimeType: APP_MIME_TYPE,
    _meta: { ui: { csp: APP_CSP } },
  }));
}

/** resources/read of a page: its HTML and CSP; undefined for any other URI. */
export function readAppPage(uri: string): ReadResourceResult | undefined {
  const page = APP_PAGES.find((p) => p.uri === uri);
  if (!page) return undefined;
  return { contents: [{ uri: page.uri, mimeType: APP_MIME_TYPE, text: pageHtml(page.page), _meta: { ui: { csp: APP_CSP, prefersBorder: true } } }] };
}
