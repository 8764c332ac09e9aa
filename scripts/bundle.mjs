// npm run bundle: the server (esbuild: server/index.js and its chunks, no node_modules), the MCP Bundle manifest validated offline, the
// .mcpb packed, then unpacked and started on the sandbox to check it lists exactly the declared tools.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildBundleServer } from './bundle-server.mjs';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));
const say = (line) => process.stdout.write(`${line}\n`);
const mcpb = (...args) => execFileSync(join(root, 'node_modules/.bin/mcpb'), args, { cwd: root, encoding: 'utf8' });
const fail = (message) => {
  process.stderr.write(`bundle: ${message}\n`);
  process.exit(1);
};

if (manifest.version !== pkg.version) fail(`manifest.json version ${manifest.version} differs from package.json ${pkg.version}`);

const dir = join(root, 'bundle');
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'server'), { recursive: true });
await buildBundleServer(join(dir, 'server'));
cpSync(join(root, 'manifest.json'), join(dir, 'manifest.json'));
cpSync(join(root, 'LICENSE'), join(dir, 'LICENSE'));
cpSync(join(root, 'icon.png'), join(dir, 'icon.png'));
writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }, null, 2));
const chunks = readdirSync(join(dir, 'server/chunks'));
const chunkBytes = chunks.reduce((n, f) => n + statSync(join(dir, 'server/chunks', f)).size, 0);
say(`server/index.js: ${(statSync(join(dir, 'server/index.js')).size / 1024).toFixed(0)} KiB + ${chunks.length} chunks ${(chunkBytes / 1024).toFixed(0)} KiB, no node_modules`);

say(mcpb('validate', join(dir, 'manifest.json')).trim());
const out = join(root, `${pkg.name}-${pkg.version}.mcpb`);
rmSync(out, { force: true });
mcpb('pack', dir, out);
say(`packed ${out.replace(root, '')}: ${(statSync(out).size / 1024).toFixed(0)} KiB`);

// Smoke test what a host installs: unpack the .mcpb and start it the way the manifest says.
const installed = mkdtempSync(join(tmpdir(), 'docreq-mcpb-'));
mcpb('unpack', out, installed);
const cfg = manifest.server.mcp_config;
// What the host fills in: the user's answers, else each option's default.
const defaults = Object.fromEntries(Object.entries(manifest.user_config).map(([k, v]) => [k, v.default]));
// The "try the sandbox" choice: no key, no URL (a host fills an unanswered option with nothing).
const userConfig = { ...defaults, sandbox: true, read_only: 'false' };
for (const [k, v] of Object.entries(manifest.user_config)) if (userConfig[k] === undefined && v.required) fail(`smoke test has no value for required user_config.${k}`);
const fill = (s) => s.replaceAll('${__dirname}', installed).replace(/\$\{user_config\.(\w+)\}/g, (_, k) => String(userConfig[k] ?? ''));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: cfg.args.map(fill),
  env: { PATH: process.env.PATH ?? '', ...Object.fromEntries(Object.entries(cfg.env).map(([k, v]) => [k, fill(v)])) },
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
  if (content.mimeType !== 'text/html;profile=mcp-app' || !content.text?.startsWith('<!doctype html>')) fail(`the bundle does not carry the page ${content.uri}`);
}
say(`smoke test: the unpacked bundle carries both MCP Apps pages (${pages.map((p) => `${p.contents[0].text.length} bytes`).join(', ')})`);
say(`smoke test: the unpacked bundle lists exactly the declared tools (${listed.join(', ')}) and answers list_clients`);
