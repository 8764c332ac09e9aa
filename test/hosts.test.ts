import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { childEnv } from './support/folders.js';

// `npm run hosts` prints each host's configuration for this clone; what it prints must start a
// working server today (before the package is published): the sandbox entry is run as a host would.
interface Entry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}
interface Host {
  host: string;
  config?: { mcpServers?: Record<string, Entry>; servers?: Record<string, Entry & { type: string }>; inputs?: unknown[] };
  commands?: string[];
}

const script = new URL('../scripts/hosts.mjs', import.meta.url).pathname;

describe('npm run hosts', () => {
  it('prints every host with absolute paths to this clone, and the sandbox entry starts', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--json']);
    const hosts = JSON.parse(stdout) as Host[];
    expect(hosts.map((h) => h.host)).toEqual(['Claude Desktop', 'Claude Code', 'VS Code', 'Cursor', 'Windsurf']);
    const entries: Entry[] = [];
    for (const h of hosts) {
      const servers = h.config?.mcpServers ?? h.config?.servers;
      if (servers) {
        expect(Object.keys(servers)).toEqual(['docreq-sandbox', 'docreq']);
        entries.push(...Object.values(servers));
      }
      for (const line of h.commands ?? []) expect(line).not.toContain('npx');
    }
    const vscode = hosts.find((h) => h.host === 'VS Code')!;
    expect(vscode.config?.servers?.docreq?.type).toBe('stdio');
    // The key is asked for (hidden, kept in VS Code's secret storage), never a value written into .vscode/mcp.json.
    expect(vscode.config?.servers?.docreq?.env?.DOCREQ_API_KEY).toBe('${input:docreq-api-key}');
    expect(vscode.config?.inputs).toEqual([{ type: 'promptString', id: 'docreq-api-key', description: 'Document Request Service API key', password: true }]);
    for (const e of entries) {
      expect(isAbsolute(e.command) && isAbsolute(e.args[0]!)).toBe(true);
      expect(existsSync(e.args[0]!)).toBe(true);
    }
    const sandboxEntry = hosts[0]!.config!.mcpServers!['docreq-sandbox']!;
    const transport = new StdioClientTransport({ command: sandboxEntry.command, args: sandboxEntry.args, env: childEnv(), stderr: 'pipe' });
    const client = new Client({ name: 'hosts-test', version: '1' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('create_request');
    } finally {
      await client.close();
    }
  });

  it('prints the human form with the published-package note', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [script]);
    expect(stdout).toContain('## Claude Code');
    expect(stdout).toContain('claude mcp add docreq-sandbox -- ');
    expect(stdout).toMatch(/Once the package is published/);
  });
});
