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
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createServer } from '../src/mcp/server.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { startSandbox } from '../src/sandbox/service.js';
import { INVISIBLE } from '../src/text/invisible.js';
import { TOOLS } from '../src/tools/index.js';
import { APP_CSP, APP_PAGES } from '../src/ui/apps.js';
import { suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { AROUND_TODAY, sandbox, TODAY } from './support/sandbox.js';
import { connect, sandboxAndClient, structured, type Connected } from './support/connect.js';

/**
 * MCP Apps: the pages' resources checked against ext-apps's own schemas, and each page
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

// A second firm: 320 clients, and clients whose names are hostile: an unclosed
// right-to-left override, three "Acme Ltd" that differ only by invisible characters, 10,000 letters.
const big = await sandbox({ ...AROUND_TODAY, clients: 320, requests: 2400 });
const HOSTILE = {
  rlo: { id: 'c-north-4471', displayName: 'Northwind \u202e', email: 'ap@northwind.example', status: 'active' },
  acme: [
    { id: 'c-acme-1', displayName: 'Acme Ltd', email: 'office@acme.example', status: 'active' },
    { id: 'c-acme-2', displayName: 'Acme\u200b Ltd', email: 'accounts@acme-ltd.example', status: 'active' },
    { id: 'c-acme-3', displayName: 'Acme Ltd\u{e0020}\u{e0041}', email: 'acme@lookalike.example', status: 'active' },
  ],
  long: { id: 'c-long-1', displayName: 'W'.repeat(10_000), email: 'long@name.example', status: 'active' },
};
for (const [n, c] of [HOSTILE.rlo, ...HOSTILE.acme, HOSTILE.long].entries()) {
  big.demoFirm.clients.push(c);
  big.demoFirm.requests.unshift({
    id: `r-hostile-${n}`,
    title: HOSTILE.acme.includes(c) ? 'Lookalike audit' : 'Year-end accounts',
    status: 'sent',
    dueDate: '2026-03-02',
    createdAt: '2026-02-10T09:00:00.000Z',
    clientId: c.id,
    clientName: c.displayName,
    totalItems: 2,
    completedItems: 0,
    items: [
      { name: 'Bank statements', required: true, type: 'file' },
      { name: 'Payroll summary', required: true, type: 'file' },
    ],
    correctnessMode: 'advisory',
  });
}
big.invalidateLists();
const bigMcp = await connect(big, { today: TODAY });
afterAll(() => bigMcp.close());
/** What a person sees of a text: invisible characters take no room. */
const seen = (text: string | null) => (text ?? '').replace(INVISIBLE, '');

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
    expect(withUi.map((t) => [t.name, uiUri(t)])).toEqual(
      [
        ['list_requests', 'ui://docreq/dashboard.html'],
        ['create_request', 'ui://docreq/send-preview.html'],
        ['create_request_batch', 'ui://docreq/send-preview.html'],
      ].sort((a, b) => tools.findIndex((t) => t.name === a[0]) - tools.findIndex((t) => t.name === b[0])),
    );
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

  it("lists the same to a client that does not render Apps (hosts ignore _meta.ui), but for the page's own Send; and no send preview in read-only mode", async () => {
    const plain = await appClient({}, {});
    const withApps = await appClient();
    const appsTools = (await withApps.listTools()).tools;
    expect(JSON.stringify((await plain.listTools()).tools)).toBe(JSON.stringify(appsTools.filter((t) => t.name !== 'send_from_page')));
    expect(appsTools.at(-1)!._meta).toEqual({ ui: { visibility: ['app'] } });
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
  /** Tool calls the page made through the bridge, and what each answered. */
  let pageCalls = 0;
  const pageCallNames: string[] = [];
  const pageResults: { isError?: boolean; content: { type: string; text?: string }[] }[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    const host = await build({
      entryPoints: [join(root, 'test/browser/host.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      logLevel: 'warning',
    });
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
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<!doctype html><html lang="en"><head><title>host</title><style>iframe{width:720px;height:640px;border:0;display:block}</style></head><body><script src="/host.js"></script></body></html>',
        );
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    mkdirSync(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => http?.close(resolve));
  });

  /** Opens the host with the page; the page's tool calls go to `via`'s server. */
  async function open(uri: string, via: Connected = mcp): Promise<Page> {
    const read = await via.client.readResource({ uri });
    view = (read.contents[0] as { text: string }).text;
    const page = await browser.newPage({ viewport: { width: 860, height: 720 } });
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => captured.push(`page error: ${e.message}`));
    await page.exposeFunction('mcpCallTool', async (params: { name: string; arguments?: Record<string, unknown> }) => {
      pageCalls++;
      pageCallNames.push(params.name);
      const result = await via.client.callTool(params);
      pageResults.push(result as (typeof pageResults)[number]);
      captured.push(JSON.stringify(result));
      return result;
    });
    await page.goto(`${origin}/host.html`);
    return page;
  }

  async function mount(
    page: Page,
    tool: string,
    input: Record<string, unknown>,
    result: CallToolResult,
    theme: 'light' | 'dark',
    host: { locale?: string; width?: number; prompt?: 'decline' } = {},
  ) {
    await page.evaluate((m) => (globalThis as unknown as { mount(options: typeof m): Promise<void> }).mount(m), {
      tool,
      input,
      result: result,
      theme,
      ...host,
    });
    const frame = page.frameLocator('#view');
    await frame.locator('h1').waitFor();
    return frame;
  }

  async function axe(page: Page): Promise<string[]> {
    const frame = page.frames().find((f) => f.url().endsWith('/view.html'))!;
    await frame.evaluate(readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
    const violations = await frame.evaluate(async () => {
      const g = globalThis as unknown as {
        document: unknown;
        axe: { run: (ctx: unknown, o: object) => Promise<{ violations: { id: string; nodes: unknown[] }[] }> };
      };
      return (await g.axe.run(g.document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] })).violations.map((v) => `${v.id} (${v.nodes.length})`);
    });
    return violations;
  }

  /** The dashboard's client rows as shown: name, open and overdue. */
  const groupRows = (frame: FrameLocator) =>
    frame.locator('[data-testid=groups] tbody tr').evaluateAll((trs: El[]) =>
      trs.map((tr) => ({
        clientName: tr.querySelector('th')!.textContent,
        open: Number(tr.querySelector('[data-count=open]')!.getAttribute('data-value')),
        overdue: Number(tr.querySelector('[data-count=overdue]')!.getAttribute('data-value')),
      })),
    );

  const shoot = (page: Page, name: string) => page.locator('#view').screenshot({ path: join(SHOTS, `${name}.png`) });

  it('send preview: shows exactly the body that is POSTed; Send sends once despite a double click, a concurrent model call and a reload', async () => {
    const client = active[0]!;
    const args = {
      client: client.id,
      title: 'Apps: 2025 tax documents',
      dueDate: '2026-04-15',
      correctnessMode: 'advisory',
      items: [
        { name: 'W-2 <img src=x onerror=alert(1)>', type: 'file' },
        { name: 'Prior-year return', required: false },
      ],
    };
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
    // The page's own call was a valid send (it or the model's sent; the other was told it was already being sent).
    expect(pageResults.at(-1)!.content[0]!.text).not.toMatch(/^Invalid arguments/);
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

  it.each([
    ['2025-11-25', 5],
    ['2026-07-28', 6],
  ] as const)(
    "a host that declares Apps (%s, the 2026 client through team mode's HTTP entry): the model's result holds no token; only the person's press sends, once, despite a double click, a reload and a model racing with what it saw",
    async (era, n) => {
      const host = await connect(sb, { today: TODAY, capabilities: UI, era });
      try {
        const client = active[n]!;
        const args = { client: client.id, title: `Apps: the person presses Send (${era})`, items: [{ name: 'Bank statements' }] };
        const preview = await host.call('create_request', args);
        const pageToken = (preview._meta as Record<string, { token: string }>)['docreq-mcp/send']!.token;
        expect(JSON.stringify(preview.content) + JSON.stringify(preview.structuredContent)).not.toContain(pageToken);
        expect(structured<{ confirmation: { by: string; token: null } }>(preview).confirmation).toMatchObject({ by: 'page', token: null });
        const before = POSTS().length;
        const page = await open('ui://docreq/send-preview.html', host);
        let frame = await mount(page, 'create_request', args, preview, 'light');
        expect(await frame.locator('[data-testid=send]').isEnabled()).toBe(true);
        const calls = pageCalls;
        sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 400 }, { times: 1 });
        // The model, meanwhile, with everything it saw: the arguments, and the preview's fields as a token.
        const [, raced] = await Promise.all([
          frame.locator('[data-testid=send]').dblclick(),
          host.call('create_request', { ...args, confirmationToken: JSON.stringify(preview.structuredContent).slice(0, 200) }),
        ]);
        expect(structured<{ sent: boolean }>(raced).sent).toBe(false);
        await frame.locator('h1', { hasText: 'Sent' }).waitFor();
        expect(pageCalls - calls).toBe(1);
        expect(POSTS().slice(before)).toHaveLength(1);
        // The page called the page's own tool with its token.
        expect(pageCallNames.at(-1)).toBe('send_from_page');
        await page.reload();
        frame = await mount(page, 'create_request', args, preview, 'light');
        await frame.locator('[data-testid=send]').click();
        await expect.poll(() => frame.locator('h1').textContent()).toMatch(/Already sent/);
        expect(POSTS().slice(before)).toHaveLength(1);
        await page.close();
      } finally {
        await host.close();
      }
    },
  );

  it('"which one?" on the page: a name two clients share is asked there (name, e-mail, id); the pick is previewed and the person\'s Send sends to that one, once', async () => {
    const host = await connect(sb, { today: TODAY, capabilities: UI });
    try {
      const sams = firm.clients.filter((c) => c.displayName === 'Sam Taylor');
      const chosen = sams[1]!;
      const args = { client: 'Sam Taylor', title: 'Apps: which Sam', items: [{ name: 'Photo ID' }] };
      // The model's one call: refused with the list, as every host gets it; the page gets the choice.
      const refused = await host.call('create_request', args);
      expect(refused.isError).toBe(true);
      for (const sam of sams) expect(refused.text).toContain(sam.id);
      const before = POSTS().length;
      const page = await open('ui://docreq/send-preview.html', host);
      const frame = await mount(page, 'create_request', args, refused, 'light');
      expect(await frame.locator('h1').textContent()).toBe('Which client?');
      const rows = await frame.locator('[data-testid=candidates] li').allTextContents();
      expect(rows).toHaveLength(2);
      for (const sam of sams) expect(rows.some((r) => r.includes(sam.email) && r.includes(sam.id))).toBe(true);
      expect(await axe(page)).toEqual([]);
      await shoot(page, 'which-client');
      await frame.locator(`[data-client="${chosen.id}"] [data-testid=choose]`).click();
      await frame.locator('h1', { hasText: 'Send this document request?' }).waitFor();
      expect(await frame.locator('[data-testid=client]').textContent()).toContain(chosen.email);
      expect(POSTS().length).toBe(before);
      await frame.locator('[data-testid=send]').click();
      await frame.locator('h1', { hasText: 'Sent' }).waitFor();
      const posts = POSTS().slice(before);
      expect(posts).toHaveLength(1);
      expect(posts[0]!.body).toContain(chosen.id);
      expect(pageCallNames.slice(-2)).toEqual(['create_request', 'send_from_page']);
      await page.close();
    } finally {
      await host.close();
    }
  });

  it('"which one?" for a batch on the page: a recipient several clients share is chosen in its row; the batch is previewed again and the person\'s Send sends each once', async () => {
    const host = await connect(sb, { today: TODAY, capabilities: UI });
    try {
      const sams = firm.clients.filter((c) => c.displayName === 'Sam Taylor');
      const chosen = sams[0]!;
      const other = active.filter((c) => c.displayName !== 'Sam Taylor')[9]!;
      const args = { clients: ['Sam Taylor', other.id], title: 'Apps: which Sam, batch', items: [{ name: 'Photo ID' }] };
      const preview = await host.call('create_request_batch', args);
      const before = POSTS().length;
      const page = await open('ui://docreq/send-preview.html', host);
      const frame = await mount(page, 'create_request_batch', args, preview, 'light');
      const outcomes = () => frame.locator('[data-testid=recipients] tbody tr').evaluateAll((rows: El[]) => rows.map((r) => r.getAttribute('data-outcome')));
      expect(await outcomes()).toEqual(['skipped', 'will_send']);
      expect(await frame.locator('[data-testid=choose]').count()).toBe(2);
      expect(await axe(page)).toEqual([]);
      await frame.locator(`[data-testid=choose][data-client="${chosen.id}"]`).click();
      await expect.poll(outcomes).toEqual(['will_send', 'will_send']);
      expect(POSTS().length).toBe(before);
      await frame.locator('[data-testid=send]').click();
      await frame.locator('h1', { hasText: 'Sent to 2 clients' }).waitFor();
      const posts = POSTS().slice(before);
      expect(posts).toHaveLength(2);
      expect(posts.map((p) => (JSON.parse(p.body!) as { clientId: string }).clientId).sort()).toEqual([chosen.id, other.id].sort());
      expect(pageCallNames.slice(-2)).toEqual(['create_request_batch', 'send_from_page']);
      await page.close();
    } finally {
      await host.close();
    }
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

  it('a service that drops fields it does not know: after Send the page says "Sent, but not as previewed" and lists each difference; with a profile naming its fields, the page sends the body in its names, as previewed', async () => {
    const other = await startSandbox({ ...AROUND_TODAY, dialect: 'ignoring' });
    const plain = await connect(other, { today: TODAY });
    const profile = join(suiteFolder(), 'apps-profile.json');
    writeFileSync(profile, JSON.stringify({ body: { dueDate: 'due_date', items: 'checklist' } }));
    const fitted = await connect(other, { today: TODAY, env: { DOCREQ_SERVICE_PROFILE: profile } });
    try {
      const people = other.demoFirm.clients.filter((c) => c.status === 'active');
      const sent = async (via: Connected, title: string, client: (typeof people)[number]) => {
        const args = { client: client.id, title, dueDate: '2026-04-15', items: [{ name: 'W-2 forms' }, { name: 'Photo ID' }] };
        const preview = await via.call('create_request', args);
        const page = await open('ui://docreq/send-preview.html', via);
        const frame = await mount(page, 'create_request', args, preview, 'light');
        const shown = (await frame.locator('[data-testid=body]').textContent())!;
        await frame.locator('[data-testid=send]').click();
        await frame.locator('h1', { hasNotText: 'Send this' }).waitFor();
        return { page, frame, shown, preview };
      };
      const flagged = await sent(plain, 'Apps: dropped fields', people[3]!);
      expect(await flagged.frame.locator('h1').textContent()).toBe('Sent, but not as previewed');
      const listed = await flagged.frame.locator('[data-testid=differences] li').allTextContents();
      expect(listed).toHaveLength(2);
      expect(listed[0]).toContain('it has no due date (previewed 2026-04-15)');
      expect(listed[1]).toContain('it has no checklist items (previewed 2)');
      expect(await axe(flagged.page)).toEqual([]);
      await shoot(flagged.page, 'send-not-as-previewed');
      await flagged.page.close();

      const fine = await sent(fitted, 'Apps: fitted fields', people[4]!);
      expect(await fine.frame.locator('h1').textContent()).toBe('Sent');
      expect(await fine.frame.locator('[data-testid=differences]').count()).toBe(0);
      // What the page sent is the body the preview showed, in the service's own names.
      const post = other.calls.filter((c) => c.method === 'POST').at(-1)!;
      expect(JSON.parse(post.body!)).toEqual(JSON.parse(fine.shown));
      expect(JSON.parse(fine.shown)).toMatchObject({ due_date: '2026-04-15', checklist: [{ name: 'W-2 forms' }, { name: 'Photo ID' }] });
      await fine.page.close();
    } finally {
      await plain.close();
      await fitted.close();
      await other.close();
    }
  });

  it('batch preview: each recipient will send or why not; after Send, the outcome per recipient', async () => {
    const args = {
      clients: [active[2]!.id, active[3]!.email, 'nobody-at-all@example.invalid'],
      title: 'Apps: year-end pack',
      items: [{ name: 'Payroll summary', type: 'file' }],
    };
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
    // Send passed the recipients as the assistant gave them: the outcome lists them so again.
    expect(await frame.locator('[data-testid=recipients] [data-part=given]').allTextContents()).toEqual(args.clients);
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

  it("dashboard: per-client bars in the order asked, with exactly the result's counts; and the firm-wide status", async () => {
    const grouped = await mcp.call('list_requests', { groupBy: 'client', sort: 'most_open', limit: 12 });
    const s = structured<{
      open: number;
      overdue: number;
      dueWithin7Days: number;
      closed: number;
      groups: { clientName: string; open: number; overdue: number }[];
      byStatus: Record<string, number>;
    }>(grouped);
    const page = await open('ui://docreq/dashboard.html');
    await mount(page, 'list_requests', { groupBy: 'client', sort: 'most_open', limit: 12 }, grouped, 'dark');
    await shoot(page, 'dashboard-dark');
    const frame = await mount(page, 'list_requests', { groupBy: 'client', sort: 'most_open', limit: 12 }, grouped, 'light');
    await shoot(page, 'dashboard-light');
    expect(await axe(page)).toEqual([]);
    const totals = await frame
      .locator('[data-total]')
      .evaluateAll((els: El[]): Record<string, number> =>
        Object.fromEntries(els.map((e): [string, number] => [e.getAttribute('data-total') ?? '', Number(e.getAttribute('data-value'))])),
      );
    expect(totals).toEqual({ open: s.open, overdue: s.overdue, dueWithin7Days: s.dueWithin7Days, closed: s.closed });
    // Exactly the rows given, in the order given (most open first, as asked), and said so.
    expect(await groupRows(frame)).toEqual(s.groups.map((g) => ({ clientName: g.clientName ?? '(no name)', open: g.open, overdue: g.overdue })));
    expect(await frame.locator('[data-testid=caption]').textContent()).toMatch(/^Per client, most open requests first: clients 1–12 of \d+$/);

    const firmWide = await mcp.call('list_requests', { limit: 1 });
    const f = frame;
    await mount(page, 'list_requests', { limit: 1 }, firmWide, 'light');
    const statuses = await f
      .locator('[data-testid=statuses] tbody tr')
      .evaluateAll((trs: El[]): Record<string, number> =>
        Object.fromEntries(
          trs.map((tr): [string, number] => [tr.getAttribute('data-status') ?? '', Number(tr.querySelector('[data-count]')!.getAttribute('data-value'))]),
        ),
      );
    expect(statuses).toEqual(structured<{ byStatus: Record<string, number> }>(firmWide).byStatus);
    await shoot(page, 'dashboard-status-light');
    await page.close();
  });

  /** Left edges of a shown client's name, e-mail and id, and whether the e-mail reads left to right. */
  const layout = (frame: FrameLocator, scope: string) =>
    frame.locator(scope).evaluate((root: El) => {
      const doc = (
        root as unknown as {
          ownerDocument: {
            createRange(): {
              selectNodeContents(n: unknown): void;
              setStart(n: unknown, o: number): void;
              setEnd(n: unknown, o: number): void;
              getBoundingClientRect(): { left: number; right: number };
            };
          };
        }
      ).ownerDocument;
      const part = (name: string) =>
        (root as unknown as { querySelector(s: string): { firstChild: unknown; textContent: string } }).querySelector(`[data-part=${name}]`);
      const left = (name: string) => {
        const range = doc.createRange();
        range.selectNodeContents(part(name));
        return range.getBoundingClientRect().left;
      };
      const char = (node: unknown, at: number) => {
        const range = doc.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + 1);
        return range.getBoundingClientRect().left;
      };
      const email = part('email');
      const node = email.firstChild;
      return { name: left('name'), email: left('email'), id: left('id'), emailForward: char(node, 0) < char(node, email.textContent.length - 1) };
    });

  /** Tool names and parameter names (any with a capital or an underscore): none may be read on a page. */
  const TOOL_WORDS = [
    ...new Set(TOOLS.flatMap((t) => [t.name, ...Object.keys((t.inputSchema as unknown as { shape: object }).shape)]).filter((w) => /[A-Z_]/.test(w))),
  ];
  /** The page's visible text (a closed disclosure's content and the exact body aside). */
  const visibleText = (frame: FrameLocator) =>
    frame.locator('main').evaluate((main: El) => {
      const m = main as unknown as {
        cloneNode(deep: boolean): { querySelectorAll(s: string): { remove(): void }[] };
        ownerDocument: { body: { append(n: unknown): void } };
      };
      const copy = m.cloneNode(true) as unknown as { querySelectorAll(s: string): { remove(): void }[]; innerText: string; remove(): void };
      for (const n of copy.querySelectorAll('pre, details:not([open]) > :not(summary)')) n.remove();
      m.ownerDocument.body.append(copy);
      const text = copy.innerText;
      copy.remove();
      return text;
    });
  const noToolWords = (text: string) => TOOL_WORDS.filter((w) => text.includes(w));

  it('bidi: an unclosed U+202E in a client name does not reorder the e-mail and id beside it (nor does a right-to-left name)', async () => {
    const args = { client: HOSTILE.rlo.id, title: 'Year-end accounts 2025', dueDate: '2026-04-30', items: [{ name: 'Bank statements' }] };
    const preview = await bigMcp.call('create_request', args);
    // The server: structuredContent carries no override (the renderer's rule), the id exact.
    const client = structured<{ client: { id: string; displayName: string } }>(preview).client;
    expect(client).toMatchObject({ id: HOSTILE.rlo.id, displayName: 'Northwind ' });
    const page = await open('ui://docreq/send-preview.html', bigMcp);
    const readsInOrder = async (frame: FrameLocator) => {
      const at = await layout(frame, '[data-testid=client]');
      expect(at.name).toBeLessThan(at.email);
      expect(at.email).toBeLessThan(at.id);
      expect(at.emailForward).toBe(true);
    };
    await readsInOrder(await mount(page, 'create_request', args, preview, 'light'));
    // The page on its own: a result whose name still carries the override, or is right-to-left and
    // followed by an address that starts with digits, reads in order too (each field is isolated).
    for (const [displayName, email] of [
      ['Northwind \u202e', 'ap@northwind.example'],
      ['שרה כהן', '1099@tax.example'],
      ['شركة النور', '77@noor.example'],
    ]) {
      const raw = structuredClone(preview) as unknown as CallToolResult & { structuredContent: { client: { displayName: string; email: string } } };
      Object.assign(raw.structuredContent.client, { displayName, email });
      const frame = await mount(page, 'create_request', args, raw, 'light');
      await readsInOrder(frame);
    }
    await page.close();
  });

  it('invisible look-alikes: three clients "Acme Ltd" that differ only by invisible characters look different', async () => {
    const listed = await bigMcp.call('list_requests', { groupBy: 'client', search: 'Lookalike audit', sort: 'most_overdue' });
    const groups = structured<{ groups: { clientName: string }[] }>(listed).groups;
    // The server: three names, none with an invisible character, no two alike.
    expect(groups).toHaveLength(3);
    expect(groups.map((g) => g.clientName).filter((n) => seen(n) !== n)).toEqual([]);
    expect(new Set(groups.map((g) => g.clientName)).size).toBe(3);
    const page = await open('ui://docreq/dashboard.html', bigMcp);
    const input = { groupBy: 'client', search: 'Lookalike audit', sort: 'most_overdue' };
    const names = async (frame: FrameLocator) => (await groupRows(frame)).map((r) => seen(r.clientName));
    let frame = await mount(page, 'list_requests', input, listed, 'light');
    expect(new Set(await names(frame)).size).toBe(3);
    await shoot(page, 'lookalikes-dashboard');
    // The page on its own: handed the raw names (as a server without the rule would), it still shows them apart.
    const raw = structuredClone(listed) as unknown as CallToolResult & { structuredContent: { groups: { clientName: string }[] } };
    const byPlain = new Map(HOSTILE.acme.map((c) => [c.displayName, c.displayName]));
    raw.structuredContent.groups.forEach((g, n) => (g.clientName = [...byPlain.values()][n]!));
    frame = await mount(page, 'list_requests', input, raw, 'light');
    expect(new Set(await names(frame)).size).toBe(3);
    expect((await names(frame)).every((n) => n.startsWith('Acme'))).toBe(true);
    // And in a batch preview, each recipient's name reads apart.
    const args = { clients: HOSTILE.acme.map((c) => c.id), title: 'Lookalike check', items: [{ name: 'Bank statements' }] };
    const batch = await bigMcp.call('create_request_batch', args);
    await page.close();
    const preview = await open('ui://docreq/send-preview.html', bigMcp);
    frame = await mount(preview, 'create_request_batch', args, batch, 'light');
    const shown = await frame.locator('[data-testid=recipients] td:nth-child(2) [data-part=name]').allTextContents();
    expect(shown).toHaveLength(3);
    expect(new Set(shown.map(seen)).size).toBe(3);
    await shoot(preview, 'lookalikes-batch');
    await preview.close();
  });

  it('batch identities: each recipient named as resolved (name, e-mail, id) beside what was given; a short reason, suggestions behind a disclosure', async () => {
    const [a, b, c] = big.demoFirm.clients.filter(
      (x) => x.status === 'active' && x.email && !x.id.startsWith('c-') && big.demoFirm.clients.filter((y) => y.displayName === x.displayName).length === 1,
    );
    // The last is a near miss: not sent, with the clients it may have meant.
    const nearMiss = `${c!.displayName}x`;
    const given = [a!.id, b!.email, c!.displayName, nearMiss];
    const args = { clients: given, title: 'Identity check', items: [{ name: 'Signed engagement letter' }] };
    const preview = await bigMcp.call('create_request_batch', args);
    const rows = structured<{ recipients: { client: string; clientId: string | null; displayName: string | null; email: string | null }[] }>(
      preview,
    ).recipients;
    expect(rows.map((r) => [r.client, r.clientId, r.displayName, r.email])).toEqual([
      [a!.id, a!.id, a!.displayName, a!.email],
      [b!.email, b!.id, b!.displayName, b!.email],
      [c!.displayName, c!.id, c!.displayName, c!.email],
      [nearMiss, null, null, null],
    ]);
    const page = await open('ui://docreq/send-preview.html', bigMcp);
    const frame = await mount(page, 'create_request_batch', args, preview, 'light');
    const shown = await frame
      .locator('[data-testid=recipients] tbody tr')
      .evaluateAll((trs: El[]) =>
        trs.map((tr) =>
          ['td:first-child [data-part=given]', ...['name', 'email', 'id'].map((p) => `td:nth-child(2) [data-part=${p}]`)].map(
            (q) => tr.querySelector(q)?.textContent ?? null,
          ),
        ),
      );
    expect(shown).toEqual([
      [a!.id, a!.displayName, a!.email, a!.id],
      [b!.email, b!.displayName, b!.email, b!.id],
      [c!.displayName, c!.displayName, c!.email, c!.id],
      [nearMiss, null, null, null],
    ]);
    // The skip reason is one short clause; the suggestions are behind a closed disclosure.
    const last = frame.locator('[data-testid=recipients] tbody tr').last();
    expect(await last.locator('[data-part=reason]').textContent()).toBe('no client has this id, e-mail or exact name');
    expect(await last.locator('details').getAttribute('open')).toBeNull();
    expect(await last.locator('details li [data-part=name]').allTextContents()).toContain(c!.displayName);
    expect(await last.locator('details li').first().isVisible()).toBe(false);
    expect(noToolWords(await visibleText(frame))).toEqual([]);
    await shoot(page, 'batch-identities');
    await page.close();
  });

  it('dashboard at 300+ clients: shows and captions exactly what it was handed, grouped for the locale; more, or the most overdue first, through the host', async () => {
    const input = { groupBy: 'client' };
    const first = await bigMcp.call('list_requests', input);
    const s = structured<{ open: number; groupCount: number; groups: { clientName: string; open: number; overdue: number }[] }>(first);
    expect(s.groupCount).toBeGreaterThanOrEqual(300);
    const page = await open('ui://docreq/dashboard.html', bigMcp);
    const frame = await mount(page, 'list_requests', input, first, 'light', { locale: 'de-DE' });
    const expected = (groups: typeof s.groups) => groups.map((g) => ({ clientName: seen(g.clientName), open: g.open, overdue: g.overdue }));
    const rows = async () => (await groupRows(frame)).map((r) => ({ ...r, clientName: seen(r.clientName) }));
    const caption = () => frame.locator('[data-testid=caption]').textContent();
    expect(await rows()).toEqual(expected(s.groups));
    const de = new Intl.NumberFormat('de-DE');
    expect(await caption()).toBe(`Per client, newest request first: clients 1–25 of ${de.format(s.groupCount)}`);
    expect(await frame.locator('[data-total=open]').textContent()).toBe(de.format(s.open));
    expect(s.open).toBeGreaterThan(999);
    // Most overdue first, asked of the server through the host.
    const calls = pageCalls;
    await frame.locator('[data-testid=most-overdue]').click();
    await expect.poll(caption).toBe(`Per client, most overdue first: clients 1–25 of ${de.format(s.groupCount)}`);
    const worst = structured<{ groups: typeof s.groups }>(await bigMcp.call('list_requests', { groupBy: 'client', sort: 'most_overdue', limit: 50 })).groups;
    const all = structured<{ groups: typeof s.groups }>(await bigMcp.call('list_requests', { groupBy: 'client', limit: 500 })).groups;
    expect(await rows()).toEqual(expected(worst.slice(0, 25)));
    expect((await rows())[0]!.overdue).toBe(Math.max(...all.map((g) => g.overdue)));
    await frame.locator('[data-testid=more]').click();
    await expect.poll(caption).toBe(`Per client, most overdue first: clients 1–50 of ${de.format(s.groupCount)}`);
    expect(await rows()).toEqual(expected(worst));
    expect(pageCalls - calls).toBe(2);
    await page.close();
  });

  it('a 10,000-character name wraps: no horizontal overflow in a 784 px frame, every column visible', async () => {
    const fits = async (frame: FrameLocator) => {
      const box = await frame.locator('html').evaluate((html: El) => {
        const h = html as unknown as {
          scrollWidth: number;
          clientWidth: number;
          ownerDocument: { querySelectorAll(s: string): { getBoundingClientRect(): { left: number; right: number; width: number } }[] };
        };
        const heads = [...h.ownerDocument.querySelectorAll('thead th')].map((th) => th.getBoundingClientRect());
        return {
          scrollWidth: h.scrollWidth,
          clientWidth: h.clientWidth,
          heads: heads.map((r) => ({ right: Math.round(r.right), width: Math.round(r.width) })),
        };
      });
      expect(box.clientWidth).toBeLessThanOrEqual(784);
      expect(box.scrollWidth).toBeLessThanOrEqual(box.clientWidth);
      expect(box.heads.length).toBeGreaterThan(0);
      for (const head of box.heads) {
        expect(head.right).toBeLessThanOrEqual(box.clientWidth);
        expect(head.width).toBeGreaterThanOrEqual(24);
      }
    };
    const listed = await bigMcp.call('list_requests', { groupBy: 'client', client: 'WWWWWWWW' });
    expect(structured<{ groups: unknown[] }>(listed).groups).toHaveLength(1);
    let page = await open('ui://docreq/dashboard.html', bigMcp);
    await fits(await mount(page, 'list_requests', { groupBy: 'client' }, listed, 'light', { width: 784 }));
    // The page on its own, handed all 10,000 letters (the API client keeps 2,000).
    const raw = structuredClone(listed) as unknown as CallToolResult & { structuredContent: { groups: { clientName: string }[] } };
    raw.structuredContent.groups[0]!.clientName = HOSTILE.long.displayName;
    await fits(await mount(page, 'list_requests', { groupBy: 'client' }, raw, 'light', { width: 784 }));
    await page.close();
    const args = { clients: [HOSTILE.long.id, HOSTILE.acme[0]!.id], title: 'Long name check', items: [{ name: 'Bank statements' }] };
    const batch = await bigMcp.call('create_request_batch', args);
    page = await open('ui://docreq/send-preview.html', bigMcp);
    await fits(await mount(page, 'create_request_batch', args, batch, 'light', { width: 784 }));
    const single = await bigMcp.call('create_request', { client: HOSTILE.long.id, title: 'Long name check', items: [{ name: 'Bank statements' }] });
    await fits(await mount(page, 'create_request', {}, single, 'light', { width: 784 }));
    await page.close();
  });

  it('a declined prompt says nothing was sent: the server asking the person through the host, and the host asking before the page calls', async () => {
    const declining = await connect(big, { today: TODAY, elicit: () => ({ action: 'decline' }) });
    const bigPosts = () => big.calls.filter((call) => call.method === 'POST').length;
    const before = bigPosts();
    const [a, b] = big.demoFirm.clients.filter((x) => x.status === 'active' && x.email && !x.id.startsWith('c-'));
    const args = { clients: [a!.id, b!.id], title: 'Declined batch', items: [{ name: 'Bank statements' }] };
    const declined = await declining.call('create_request_batch', args);
    expect(declined.text).toMatch(/declined/);
    const page = await open('ui://docreq/send-preview.html', declining);
    let frame = await mount(page, 'create_request_batch', args, declined, 'light');
    let text = await visibleText(frame);
    expect(await frame.locator('[data-testid=status]').textContent()).toBe('You declined: nothing was sent.');
    expect(text).not.toMatch(/may have been sent/i);
    const one = await declining.call('create_request', { client: a!.id, title: 'Declined single', items: [{ name: 'Bank statements' }] });
    frame = await mount(page, 'create_request', {}, one, 'light');
    text = await visibleText(frame);
    expect(await frame.locator('[data-testid=status]').textContent()).toBe('You declined: nothing was sent.');
    expect(text.match(/nothing was sent/gi)).toHaveLength(1);
    // The host asks before the page's call, and the person declines: the call never reaches the server.
    const preview = await bigMcp.call('create_request', { client: b!.id, title: 'Declined at the host', items: [{ name: 'Bank statements' }] });
    frame = await mount(page, 'create_request', {}, preview, 'light', { prompt: 'decline' });
    await frame.locator('[data-testid=send]').click();
    await expect.poll(() => frame.locator('[data-testid=status]').textContent()).toBe('You declined in the host’s prompt: nothing was sent.');
    expect(await visibleText(frame)).not.toMatch(/may have been sent/i);
    expect(bigPosts()).toBe(before);
    await page.close();
    await declining.close();
  });

  it('error pages: one heading, each line once, in words for a person (what the assistant was told behind a disclosure)', async () => {
    const failed = await mcp.call('create_request', { client: 'nobody-at-all@example.invalid', title: 'Will fail', items: [{ name: 'Bank statements' }] });
    expect(failed.isError).toBe(true);
    const page = await open('ui://docreq/send-preview.html');
    const frame = await mount(page, 'create_request', {}, failed, 'light');
    expect(await frame.locator('h1').count()).toBe(1);
    const text = await visibleText(frame);
    const lines = text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    expect(new Set(lines).size).toBe(lines.length);
    expect(text.match(/nothing was sent/gi) ?? []).toHaveLength(1);
    expect(noToolWords(text)).toEqual([]);
    expect(await frame.locator('details').getAttribute('open')).toBeNull();
    expect(await axe(page)).toEqual([]);
    await page.close();
  });

  it('loaded nothing but the host page, its script and the app page', () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => !url.startsWith(origin))).toEqual([]);
    expect(new Set(requested.map((url) => new URL(url).pathname))).toEqual(new Set(['/host.html', '/view.html', '/host.js']));
  });
});
