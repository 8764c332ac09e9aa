import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/service.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

// A third-party client: the AI SDK's MCP client treats any notification it did not ask for as an
// error ("Unsupported message type"). Over stdio (the built CLI) and team mode (HTTP), in both of its
// start-up styles (server/discover first, or initialize), a session of reads, a refused call and a
// preview raises no error.
const CLI = new URL('../dist/cli.js', import.meta.url).pathname;
const DUE = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);

type McpClient = Awaited<ReturnType<typeof createMCPClient>>;

async function session(client: McpClient, errors: unknown[]): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toContain('create_request');
  const calls: [string, Record<string, unknown>][] = [
    ['list_clients', { limit: 3 }],
    ['list_requests', { overdue: true }],
    ['list_templates', {}],
    // Refused: no such client (the server logs a failed call; nobody asked for logs).
    ['create_request', { client: 'nobody@unknown.example', title: 'Bank statements', items: [{ name: 'Statements', type: 'file' }], dryRun: true }],
    ['create_request', { client: 'Grace Patel', title: 'W-2', dueDate: DUE, items: [{ name: 'W-2', type: 'file' }], dryRun: true }],
    ['list_requests', { limit: 'many' }],
  ];
  for (const [name, args] of calls) {
    const result = await client.callTool({ name, arguments: args });
    captured.push(JSON.stringify(result));
  }
  // Give any stray notification time to arrive before the client is closed.
  await new Promise((r) => setTimeout(r, 300));
  await client.close();
  expect(errors.map((e) => String((e as Error)?.message ?? e))).toEqual([]);
}

describe('the AI SDK MCP client', () => {
  let sb: Sandbox;
  let mcpUrl: string;
  beforeAll(async () => {
    sb = await sandbox();
    const svc = await teamService(sb);
    mcpUrl = `${svc.url}/mcp`;
  });
  afterAll(() => sb.close());

  for (const discovery of [true, false]) {
    it(`over stdio (built CLI, ${discovery ? 'server/discover' : 'initialize'}) raises no error`, async () => {
      const errors: unknown[] = [];
      const transport = new StdioMCPTransport({ command: process.execPath, args: [CLI, '--sandbox'], env: childEnv(), stderr: 'pipe' });
      const client = await createMCPClient({ transport, protocolVersionDiscovery: discovery, onUncaughtError: (e) => errors.push(e) });
      await session(client, errors);
    });

    it(`over HTTP (team mode, ${discovery ? 'server/discover' : 'initialize'}) raises no error`, async () => {
      const errors: unknown[] = [];
      const client = await createMCPClient({
        transport: { type: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${sb.keys.demo}` } },
        protocolVersionDiscovery: discovery,
        onUncaughtError: (e) => errors.push(e),
      });
      await session(client, errors);
    });
  }
});
