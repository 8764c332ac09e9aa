import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpUiResourceMetaSchema, McpUiToolMetaSchema, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps';
import { getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createServer } from '../src/mcp/server.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { APP_CSP, APP_PAGES } from '../src/ui/apps.js';
import { captured, sandboxAndClient, structured, TODAY } from './helpers.js';

/**
 * MCP Apps (contract §3.7): the pages' resources checked against ext-apps's own schemas, and each page
 * loaded in Debian's Chromium inside a minimal host built from ext-apps's AppBridge, talking to our
 * real server (a real SDK client, in memory) against the real sandbox over HTTP.
 */

const root = new URL('..', import.meta.url).pathname;
/** What the checks read of a page's elements (this file is typed for Node, without the DOM's types). */
interface El {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): El | null;
}
/** ext-apps's own reader of a tool's page (SDK v2's Tool type; the listing is the same JSON). */
const uiUri = (tool: unknown) => getToolUiResourceUri(tool as Parameters<typeof getToolUiResourceUri>[0]);
const SHOTS = join(root, 'test/.generated/screenshots');
const UI = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [RESOURCE_MIME_TYPE] } } };
// The build's own page builder (a plain .mjs script), typed by use.
const { buildPages, PAGE_BUDGET } = (await import(new URL('../scripts/build-pages.mjs', import.meta.url).href)) as {
  buildPages: () => Promise<Record<string, string>>;
  PAGE_BUDGET: { bytes: number; gzipBytes: number };
};
const pages = await buildPages();
// The server run from source reads dist/ui (npm test builds it first); rewritten only when stale, so a
// run after the build writes nothing while other test files pack dist.
mkdirSync(join(root, 'dist/ui'), { recursive: true });
for (const [name, html] of Object.entries(pages)) {
  const file = join(root, 'dist/ui', `${name}.html`);
  if (!existsSync(file) || readFileSync(file, 'utf8') !== html) writeFileSync(file, html);
}

const { sb, firm, mcp } = await sandboxAndClient();
const POSTS = () => sb.calls.filter((c) => c.method === 'POST' && c.path === '/api/v1/requests');
const active = firm.clients.filter((c) => c.status === 'active' && c.email);

async function appClient(env: Record<string, string> = {}, capabilities: object = UI) {
  const config = loadConfig({}, { DOCREQ_API_KEY: SANDBOX_KEYS.demo, DOCREQ_BASE_URL: sb.url, ...env });
  const server = createServer(config, { clock: () => TODAY });
  const client = new Client({ name: 'apps-host', version: '1' }, { capabilities });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  afterAll(() => client.close());
  return client;
}

describe('app resources, validated with ext-apps (its zod schemas and its host-side reader)', () => {
  it('lists the three tools with _meta.ui.resourceUri and each page as text/html;profile=mcp-app with its CSP', async () => {
    const client = await appClient();
    const tools = (await client.listTools()).tools;
    const withUi = tools.filter((t) => uiUri(t));
    expect(withUi.map((t) => [t.name, uiUri(t)])).toEqual([
      ['list_requests', 'ui://docreq/dashboard.html'],
      ['create_request', 'ui://docreq/send-preview.html'],
      ['create_request_batch', 'ui://docreq/send-preview.html'],
    ].sort((a, b) => tools.findIndex((t) => t.name === a[0]) - tools.findIndex((t) => t.name === b[0])));
    for (const tool of withUi) {
      McpUiToolMetaSchema.strict().parse(tool._meta!.ui);
      // Only the spec's key: the flat one is deprecated (hosts read both).
      expect(Object.keys(tool._meta!)).toEqual(['ui']);
      expect(RESOURCE_URI_META_KEY in tool._meta!).toBe(false);
    }
    const listed = (await client.listResources()).resources.filter((r) => r.uri.startsWith('ui://'));
    expect(listed.map((r) => r.uri).sort()).toEqual(APP_PAGES.map((p) => p.uri).sort());
    for (const resource of listed) {
      expect(resource.mimeType).toBe(RESOURCE_MIME_TYPE);
      const read = await client.readResource({ uri: resource.uri });
      const content = read.contents[0]!;
      expect(content.mimeType).toBe(RESOURCE_MIME_TYPE);
      const meta = McpUiResourceMetaSchema.strict().parse((content._meta as { ui: unknown }).ui);
      expect(meta.csp).toEqual(APP_CSP);
      const html = (content as { text: string }).text;
      expect(html.startsWith('<!doctype html>')).toBe(true);
      // Self-contained: no external script, style, font, image or frame, and a CSP of its own.
      expect(html).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
      expect(html).toContain("connect-src 'none'");
    }
  });

  it('lists the same to a client that does not render Apps (hosts ignore _meta.ui), and no send preview in read-only mode', async () => {
    const plain = await appClient({}, {});
    const withApps = await appClient();
    expect(JSON.stringify((await plain.listTools()).tools)).toBe(JSON.stringify((await withApps.listTools()).tools));
    const readOnly = await appClient({ DOCREQ_READ_ONLY: 'true' });
    expect((await readOnly.listResources()).resources.filter((r) => r.uri.startsWith('ui://')).map((r) => r.uri)).toEqual(['ui://docreq/dashboard.html']);
  });

  it(`keeps each page within its budget (${PAGE_BUDGET.bytes} bytes, ${PAGE_BUDGET.gzipBytes} gzipped) and its own code free of HTML parsing`, () => {
    for (const [name, html] of Object.entries(pages)) {
      const bytes = Buffer.byteLength(html);
      const gzip = gzipSync(html).length;
      console.log(`page ${name}: ${bytes} bytes, ${gzip} gzipped`);
      expect(bytes).toBeLessThanOrEqual(PAGE_BUDGET.bytes);
      expect(gzip).toBeLessThanOrEqual(PAGE_BUDGET.gzipBytes);
    }
    for (const file of ['common.ts', 'preview.ts', 'dashboard.ts']) {
      expect(readFileSync(join(root, 'src/ui/page', file), 'utf8')).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser/);
    }
  });
});

describe('the pages in Chromium, in a host built from ext-apps AppBridge', () => {
  let browser: Browser;
  let http: HttpServer;
  let origin = '';
  let view = '';
  /** Tool calls the page made through the bridge. */
  let pageCalls = 0;
  const requested: string[] = [];

  beforeAll(async () => {
    const host = await build({ entryPoints: [join(root, 'test/browser/host.ts')], bundle: true, write: false, format: 'iife', platform: 'browser', logLevel: 'warning' });
    const hostJs = host.outputFiles[0]!.text;
    http = createHttpServer((req, res) => {
      if (req.url === '/view.html') {
        // The host applies the resource's _meta.ui.csp, as basic-host's sandbox does.
        const none = (list: string[]) => (list.length ? list.join(' ') : "'none'");
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': `default-src 'none'; script-src 'unsafe-inline' ${APP_CSP.resourceDomains.join(' ')}; style-src 'unsafe-inline'; img-src data:; connect-src ${none(APP_CSP.connectDomains)}; frame-src ${none(APP_CSP.frameDomains)}; base-uri ${none(APP_CSP.baseUriDomains)}`,
        });
        return res.end(view);
      }
      if (req.url === '/host.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(hostJs);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><head><title>host</title><style>iframe{width:720px;height:640px;border:0;display:block}</style></head><body><script src="/host.js"></script></body></html>');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    mkdirSync(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.close(resolve));
  });

  async function open(uri: string): Promise<Page> {
    const read = await mcp.client.readResource({ uri });
    view = (read.contents[0] as { text: string }).text;
    const page = await browser.newPage({ viewport: { width: 760, height: 720 } });
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => captured.push(`page error: ${e.message}`));
    await page.exposeFunction('mcpCallTool', async (params: { name: string; arguments?: Record<string, unknown> }) => {
      pageCalls++;
      const result = await mcp.client.callTool(params);
      captured.push(JSON.stringify(result));
      return result;
    });
    await page.goto(`${origin}/host.html`);
    return page;
  }

  async function mount(page: Page, tool: string, input: Record<string, unknown>, result: CallToolResult, theme: 'light' | 'dark') {
    await page.evaluate((m) => (globalThis as unknown as { mount(options: typeof m): Promise<void> }).mount(m), { tool, input, result: result, theme });
    const frame = page.frameLocator('#view');
    await frame.locator('h1').waitFor();
    return frame;
  }

  async function axe(page: Page): Promise<string[]> {
    const frame = page.frames().find((f) => f.url().endsWith('/view.html'))!;
    await frame.evaluate(readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
    const violations = await frame.evaluate(async () => {
      const g = globalThis as unknown as { document: unknown; axe: { run: (ctx: unknown, o: object) => Promise<{ violations: { id: string; nodes: unknown[] }[] }> } };
      return (await g.axe.run(g.document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] })).violations.map((v) => `${v.id} (${v.nodes.length})`);
    });
    return violations;
  }

  const shoot = (page: Page, name: string) => page.locator('#view').screenshot({ path: join(SHOTS, `${name}.png`) });

  it('send preview: shows exactly the body that is POSTed; Send sends once despite a double click, a concurrent model call and a reload', async () => {
    const client = active[0]!;
    const args = { client: client.id, title: 'Apps: 2025 tax documents', dueDate: '2026-04-15', correctnessMode: 'advisory', items: [{ name: 'W-2 <img src=x onerror=alert(1)>', type: 'file' }, { name: 'Prior-year return', required: false }] };
    const preview = await mcp.call('create_request', args);
    const token = structured<{ confirmation: { token: string } }>(preview).confirmation.token;
    const before = POSTS().length;
    const page = await open('ui://docreq/send-preview.html');

    let frame = await mount(page, 'create_request', args, preview, 'dark');
    await shoot(page, 'send-preview-dark');
    expect(await axe(page)).toEqual([]);
    frame = await mount(page, 'create_request', args, preview, 'light');
    await shoot(page, 'send-preview-light');
    expect(await axe(page)).toEqual([]);

    await expect.poll(() => frame.locator('[data-testid=client]').textContent()).toContain(client.email);
    // Service text and input are text: the item's markup is shown, not parsed.
    expect(await frame.locator('[data-testid=items] tbody tr').first().textContent()).toContain('W-2 <img src=x onerror=alert(1)>');
    expect(await frame.locator('img').count()).toBe(0);
    expect(await frame.locator('[data-testid=body]').isVisible()).toBe(true);
    const shown = JSON.parse((await frame.locator('[data-testid=body]').textContent())!) as unknown;
    expect(shown).toEqual(structured<{ payload: unknown }>(preview).payload);

    const calls = pageCalls;
    // A slow service, so that the page's send and the model's are in flight together.
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 600 }, { times: 2 });
    await Promise.all([frame.locator('[data-testid=send]').dblclick(), mcp.call('create_request', { ...args, confirmationToken: token })]);
    await frame.locator('h1', { hasNotText: 'Send this' }).waitFor();
    expect(pageCalls - calls).toBe(1);
    const posts = POSTS().slice(before);
    expect(posts).toHaveLength(1);
    // Byte for byte: the POST body is the preview's body.
    expect(posts[0]!.body).toBe(JSON.stringify(shown));
    await shoot(page, 'send-preview-after');

    // A reload shows the same preview again; Send now sends nothing more.
    await page.reload();
    frame = await mount(page, 'create_request', args, preview, 'light');
    await frame.locator('[data-testid=send]').click();
    await expect.poll(() => frame.locator('h1').textContent()).toMatch(/Already sent|Not sent/);
    expect(POSTS().slice(before)).toHaveLength(1);
    await page.close();
  });

  it('send preview: Cancel sends nothing', async () => {
    const args = { client: active[1]!.id, title: 'Apps: cancelled request', items: [{ name: 'Bank statements' }] };
    const preview = await mcp.call('create_request', args);
    const before = POSTS().length;
    const calls = pageCalls;
    const page = await open('ui://docreq/send-preview.html');
    const frame = await mount(page, 'create_request', args, preview, 'light');
    await frame.locator('[data-testid=cancel]').click();
    await expect.poll(() => frame.locator('[data-testid=status]').textContent()).toContain('nothing was sent');
    expect(await frame.locator('[data-testid=send]').isDisabled()).toBe(true);
    await frame.locator('[data-testid=send]').click({ force: true });
    expect(pageCalls).toBe(calls);
    expect(POSTS().length).toBe(before);
    await page.close();
  });

  it('batch preview: each recipient will send or why not; after Send, the outcome per recipient', async () => {
    const args = { clients: [active[2]!.id, active[3]!.email, 'nobody-at-all@example.invalid'], title: 'Apps: year-end pack', items: [{ name: 'Payroll summary', type: 'file' }] };
    const preview = await mcp.call('create_request_batch', args);
    const before = POSTS().length;
    const page = await open('ui://docreq/send-preview.html');
    await mount(page, 'create_request_batch', args, preview, 'dark');
    await shoot(page, 'batch-preview-dark');
    let frame = await mount(page, 'create_request_batch', args, preview, 'light');
    await shoot(page, 'batch-preview-light');
    expect(await axe(page)).toEqual([]);
    const outcomes = () => frame.locator('[data-testid=recipients] tbody tr').evaluateAll((rows: El[]) => rows.map((r) => r.getAttribute('data-outcome')));
    expect(await outcomes()).toEqual(['will_send', 'will_send', 'skipped']);
    const shown = JSON.parse((await frame.locator('[data-testid=body]').textContent())!) as Record<string, unknown>;
    await frame.locator('[data-testid=send]').click();
    await frame.locator('h1', { hasText: 'Sent to 2 clients' }).waitFor();
    expect(await outcomes()).toEqual(['sent', 'sent', 'skipped']);
    await shoot(page, 'batch-after-light');
    const posts = POSTS().slice(before);
    expect(posts).toHaveLength(2);
    for (const post of posts) {
      const { clientId: _, ...body } = JSON.parse(post.body!) as Record<string, unknown>;
      expect(body).toEqual(shown);
    }
    frame = page.frameLocator('#view');
    await page.close();
  });

  it("dashboard: per-client bars, most overdue first, with exactly the result's counts; and the firm-wide status", async () => {
    // Asked most-open first: the page itself puts the most overdue first.
    const grouped = await mcp.call('list_requests', { groupBy: 'client', sort: 'most_open', limit: 12 });
    const s = structured<{ open: number; overdue: number; dueWithin7Days: number; closed: number; groups: { clientName: string; open: number; overdue: number }[]; byStatus: Record<string, number> }>(grouped);
    const page = await open('ui://docreq/dashboard.html');
    await mount(page, 'list_requests', { groupBy: 'client' }, grouped, 'dark');
    await shoot(page, 'dashboard-dark');
    const frame = await mount(page, 'list_requests', { groupBy: 'client' }, grouped, 'light');
    await shoot(page, 'dashboard-light');
    expect(await axe(page)).toEqual([]);
    const totals = await frame.locator('[data-total]').evaluateAll((els: El[]): Record<string, number> => Object.fromEntries(els.map((e): [string, number] => [e.getAttribute('data-total') ?? '', Number(e.textContent)])));
    expect(totals).toEqual({ open: s.open, overdue: s.overdue, dueWithin7Days: s.dueWithin7Days, closed: s.closed });
    const rows = await frame.locator('[data-testid=groups] tbody tr').evaluateAll((trs: El[]) =>
      trs.map((tr) => ({ clientName: tr.querySelector('th')!.textContent, open: Number(tr.querySelector('[data-count=open]')!.textContent), overdue: Number(tr.querySelector('[data-count=overdue]')!.textContent) })),
    );
    const byName = (a: { clientName: string | null }, b: { clientName: string | null }) => (a.clientName ?? '').localeCompare(b.clientName ?? '');
    expect([...rows].sort(byName)).toEqual(s.groups.map((g) => ({ clientName: g.clientName ?? '(no name)', open: g.open, overdue: g.overdue })).sort(byName));
    expect(rows.map((r) => r.overdue)).not.toEqual(s.groups.map((g) => g.overdue));
    expect(rows.some((r) => r.overdue > 0)).toBe(true);
    for (let n = 1; n < rows.length; n++) expect(rows[n - 1]!.overdue).toBeGreaterThanOrEqual(rows[n]!.overdue);

    const firmWide = await mcp.call('list_requests', { limit: 1 });
    const f = frame;
    await mount(page, 'list_requests', { limit: 1 }, firmWide, 'light');
    const statuses = await f.locator('[data-testid=statuses] tbody tr').evaluateAll((trs: El[]): Record<string, number> => Object.fromEntries(trs.map((tr): [string, number] => [tr.getAttribute('data-status') ?? '', Number(tr.querySelector('[data-count]')!.textContent)])));
    expect(statuses).toEqual(structured<{ byStatus: Record<string, number> }>(firmWide).byStatus);
    await shoot(page, 'dashboard-status-light');
    await page.close();
  });

  it('loaded nothing but the host page, its script and the app page', () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => !url.startsWith(origin))).toEqual([]);
    expect(new Set(requested.map((url) => new URL(url).pathname))).toEqual(new Set(['/host.html', '/view.html', '/host.js']));
  });
});
