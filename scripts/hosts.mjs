#!/usr/bin/env node
// npm run hosts: each assistant host's configuration for THIS clone (absolute paths), ready to paste.
// Works today, before the package is on the npm registry. `--sandbox` entries need no account;
// the firm entries name the two variables to fill in. `--json` prints one object per host instead.
import { existsSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const node = process.execPath;
const firmEnv = { DOCREQ_API_KEY: 'your-firm-api-key', DOCREQ_BASE_URL: 'https://docs.example.com' };
const stdio = (sandbox) => ({ command: node, args: sandbox ? [cli, '--sandbox'] : [cli], ...(sandbox ? {} : { env: firmEnv }) });
const servers = { 'docreq-sandbox': stdio(true), docreq: stdio(false) };
const home = homedir();
const claudeDesktop =
  platform() === 'darwin'
    ? `${home}/Library/Application Support/Claude/claude_desktop_config.json`
    : platform() === 'win32'
      ? '%APPDATA%\\Claude\\claude_desktop_config.json'
      : `${home}/.config/Claude/claude_desktop_config.json`;
const quote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export const HOSTS = [
  { host: 'Claude Desktop', file: claudeDesktop, config: { mcpServers: servers }, note: 'merge into "mcpServers", then restart Claude Desktop' },
  {
    host: 'Claude Code',
    commands: [
      `claude mcp add docreq-sandbox -- ${quote(node)} ${quote(cli)} --sandbox`,
      `claude mcp add docreq -e DOCREQ_API_KEY=your-firm-api-key -e DOCREQ_BASE_URL=https://docs.example.com -- ${quote(node)} ${quote(cli)}`,
    ],
  },
  {
    host: 'VS Code',
    file: '.vscode/mcp.json in your workspace (or "MCP: Open User Configuration")',
    note: 'VS Code asks for the key once, hides what is typed and keeps it in its secret storage: it is never written into the file',
    config: {
      inputs: [{ type: 'promptString', id: 'docreq-api-key', description: 'Document Request Service API key', password: true }],
      servers: Object.fromEntries(
        Object.entries(servers).map(([name, s]) => [
          name,
          { type: 'stdio', ...s, ...(s.env ? { env: { ...s.env, DOCREQ_API_KEY: '${input:docreq-api-key}' } } : {}) },
        ]),
      ),
    },
  },
  { host: 'Cursor', file: `${home}/.cursor/mcp.json (or .cursor/mcp.json in a project)`, config: { mcpServers: servers } },
  { host: 'Windsurf', file: `${home}/.codeium/windsurf/mcp_config.json`, config: { mcpServers: servers } },
];

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(HOSTS, null, 2)}\n`);
  } else {
    const lines = [`docreq-mcp from this clone: ${cli}`];
    if (!existsSync(cli)) lines.push('(dist/cli.js is not built yet: run npm run build first)');
    lines.push('Each host gets two entries: docreq-sandbox (no account) and docreq (fill in the key and the URL).', '');
    for (const h of HOSTS) {
      lines.push(`## ${h.host}`);
      if (h.file) lines.push(`file: ${h.file}${h.note ? ` (${h.note})` : ''}`);
      if (h.config) lines.push(JSON.stringify(h.config, null, 2));
      for (const c of h.commands ?? []) lines.push(c);
      lines.push('');
    }
    lines.push('Once the package is published, `npx -y docreq-mcp` can replace the node command and path (see mcp.json).');
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
