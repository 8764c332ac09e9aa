// npm run bundle: the server (esbuild: server/index.js and its chunks, no node_modules), the MCP Bundle manifest validated offline, the
// .mcpb packed, then unpacked and started on the sandbox to check it lists exactly the declared tools.
// (test/shipped.test.ts builds the same bundle and sends through it end to end.)
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { hostCommand, manifest, mcpb, packBundle } from './bundle-server.mjs';

const root = new URL('..', import.meta.url).pathname;
const say = (line) => process.stdout.write(`${line}\n`);
const fail = (message) => {
  process.stderr.write(`bundle: ${message}\n`);
  process.exit(1);
};

const dir = join(root, 'bundle');
const out = join(root, `${manifest.name}-${manifest.version}.mcpb`);
const validated = await packBundle(dir, out).catch((error) => fail(error.message));
const chunks = readdirSync(join(dir, 'server/chunks'));
const chunkBytes = chunks.reduce((n, f) => n + statSync(join(dir, 'server/chunks', f)).size, 0);
say(
  `server/index.js: ${(statSync(join(dir, 'server/index.js')).size / 1024).toFixed(0)} KiB + ${chunks.length} chunks ${(chunkBytes / 1024).toFixed(0)} KiB, no node_modules`,
);
say(validated);
say(`packed ${out.replace(root, '')}: ${(statSync(out).size / 1024).toFixed(0)} KiB`);

// Smoke test what a host installs: unpack the .mcpb and start it the way the manifest says.
const installed = mkdtempSync(join(tmpdir(), 'docreq-mcpb-'));
mcpb('unpack', out, installed);
// The "try the sandbox" choice: no key, no URL (a host fills an unanswered option with nothing).
const host = hostCommand(installed, { sandbox: true, read_only: 'false' });
const transport = new StdioClientTransport({
  command: host.command,
  args: host.args,
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...host.env },
  stderr: 'pipe',
});
const client = new Client({ name: 'bundle-smoke', version: '1' });
await client.connect(transport);
const listed = (await client.listTools()).tools.map((t) => t.name);
const declared = manifest.tools.map((t) => t.name);
const clients = await client.callTool({ name: 'list_clients', arguments: { limit: 1 } });
// The MCP Apps pages travel inside the server's code.
const pages = await Promise.all(['ui://docreq/send-preview.html', 'ui://docreq/dashboard.html'].map((uri) => client.readResource({ uri })));
await client.close();
rmSync(installed, { recursive: true, force: true });
if (JSON.stringify(listed) !== JSON.stringify(declared)) fail(`the bundle lists ${listed.join(', ')} but the manifest declares ${declared.join(', ')}`);
if (clients.isError) fail(`list_clients failed in the bundle: ${JSON.stringify(clients.content)}`);
for (const page of pages) {
  const [content] = page.contents;
  if (content.mimeType !== 'text/html;profile=mcp-app' || !content.text?.startsWith('<!doctype html>'))
    fail(`the bundle does not carry the page ${content.uri}`);
}
say(`smoke test: the unpacked bundle carries both MCP Apps pages (${pages.map((p) => `${p.contents[0].text.length} bytes`).join(', ')})`);
say(`smoke test: the unpacked bundle lists exactly the declared tools (${listed.join(', ')}) and answers list_clients`);
