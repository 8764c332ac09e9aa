// npm run build && node scripts/screenshots.mjs: the README's pictures of the MCP Apps pages, taken
// from realistic sandbox data. The built server (dist/cli.js --sandbox) is driven over stdio by the
// official SDK client; each page is read from it as a resource and shown by the test host
// (test/browser/host.ts: ext-apps's AppBridge, a sandboxed iframe, the page's declared CSP) in Debian's
// Chromium; the page's own tool calls (Send) go back to the same server. Due dates are in the future,
// every recipient is named. Writes docs/app-*.png.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';

const root = new URL('..', import.meta.url).pathname;
const out = (name) => join(root, 'docs', name);
const CHROMIUM = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'];

const state = mkdtempSync(join(tmpdir(), 'docreq-shots-state-'));
process.on('exit', () => rmSync(state, { recursive: true, force: true }));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [join(root, 'dist/cli.js'), '--sandbox', '--log-level', 'warn'],
  env: { PATH: process.env.PATH, DOCREQ_STATE_DIR: state },
  stderr: 'ignore',
});
// No elicitation: Send on the page is the person's confirmation (the token flow).
const client = new Client({ name: 'docreq-screenshots', version: '1.0.0' }, { capabilities: {} });
await client.connect(transport);

const day = (days) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${result.content.map((c) => c.text).join(' ')}`);
  return result;
};

const host = await build({
  entryPoints: [join(root, 'test/browser/host.ts')],
  bundle: true,
  write: false,
  format: 'iife',
  platform: 'browser',
  logLevel: 'warning',
});
let view = '';
let csp = '';
const http = createServer((req, res) => {
  if (req.url === '/view.html') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp }).end(view);
  if (req.url === '/host.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(host.outputFiles[0].text);
  res
    .writeHead(200, { 'content-type': 'text/html' })
    .end(
      '<!doctype html><html lang="en"><head><title>host</title><style>body{margin:0}iframe{width:760px;height:600px;border:0;display:block}</style></head><body><script src="/host.js"></script></body></html>',
    );
});
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${http.address().port}`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM });

/** The page for `uri`, in the host, with the resource's own CSP (as hosts apply `_meta.ui.csp`). */
async function open(uri) {
  const content = (await client.readResource({ uri })).contents[0];
  view = content.text;
  const policy = content._meta.ui.csp;
  const list = (l) => (l.length ? l.join(' ') : "'none'");
  csp = `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src ${list(policy.connectDomains)}; frame-src ${list(policy.frameDomains)}; base-uri ${list(policy.baseUriDomains)}`;
  const page = await browser.newPage({ viewport: { width: 760, height: 900 }, deviceScaleFactor: 1 });
  await page.exposeFunction('mcpCallTool', (params) => client.callTool(params));
  await page.goto(`${origin}/host.html`);
  return page;
}

async function mount(page, tool, input, result, theme) {
  await page.evaluate((m) => globalThis.mount(m), { tool, input, result, theme, locale: 'en-US' });
  const frame = page.frameLocator('#view');
  await frame.locator('h1').waitFor();
  return frame;
}

/** The frame as the person sees it, whole (the host sizes it to the page). */
async function shoot(page, name) {
  await page.waitForTimeout(200);
  await page.locator('#view').screenshot({ path: out(name) });
  process.stdout.write(`docs/${name}\n`);
}

const clients = (await call('list_clients', { limit: 40 })).structuredContent.clients.filter((c) => c.status === 'active' && c.email);
const [one, a, b, c] = clients;

// A single request: the preview before Send.
const single = {
  client: one.id,
  title: '2025 tax return documents',
  dueDate: day(21),
  correctnessMode: 'advisory',
  items: [
    { name: 'W-2 forms from every employer', type: 'file' },
    { name: '1099-INT and 1099-DIV statements', type: 'file' },
    { name: 'Receipts for deductible expenses', type: 'file', required: false },
    { name: 'Prior-year return', type: 'file', required: false },
  ],
};
let page = await open('ui://docreq/send-preview.html');
await mount(page, 'create_request', single, await call('create_request', single), 'light');
await shoot(page, 'app-send-preview.png');
await page.close();

// A batch: recipients given by id, e-mail and name (and one that matches no client), then Send.
const batch = {
  clients: [a.id, b.email, c.displayName, `${c.displayName.split(' ')[0]} Smith-Jones`],
  title: 'Year-end payroll pack',
  dueDate: day(30),
  items: [
    { name: 'Payroll summary for the year', type: 'file' },
    { name: 'P60 or W-2 copies for every employee', type: 'file' },
  ],
};
page = await open('ui://docreq/send-preview.html');
let frame = await mount(page, 'create_request_batch', batch, await call('create_request_batch', batch), 'light');
await shoot(page, 'app-batch-preview.png');
await frame.locator('[data-testid=send]').click();
await frame.locator('h1', { hasText: 'Sent to' }).waitFor();
await shoot(page, 'app-batch-outcome.png');
await page.close();

// The dashboard: the most overdue clients first, as asked and captioned.
const listing = { groupBy: 'client', sort: 'most_overdue', limit: 10 };
page = await open('ui://docreq/dashboard.html');
frame = await mount(page, 'list_requests', listing, await call('list_requests', listing), 'dark');
await shoot(page, 'app-dashboard-dark.png');
await page.close();

await browser.close();
http.close();
await client.close();
