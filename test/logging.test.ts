import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport as AiStdioTransport } from '@ai-sdk/mcp/mcp-stdio';
import { Client as ModernClient, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

/**
 * MCP log notifications go only to a client that asked for them (logging/setLevel in a 2025-11-25
 * session, the log level in a 2026-07-28 request's envelope); stderr keeps every line. A client that
 * never asked gets none: the AI SDK's client fails on one ("Unsupported message type").
 *
 * The call: create_request for a client no one has, which the server logs at info as it refuses it.
 * Over stdio and over one HTTP response stream, a notification written during a call arrives before
 * the call's answer, so counting once the answer is in is exact.
 */

const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
const sb = await sandbox();
const REFUSED = { name: 'create_request', arguments: { client: 'nobody@nowhere.example', title: 'Never sent', items: [{ name: 'A' }] } };
const heard = (notes: string[]) => notes.filter((n) => n.includes('create_request'));

function stdioServer() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN],
    stderr: 'pipe',
    env: { ...childEnv(), DOCREQ_BASE_URL: sb.url, DOCREQ_API_KEY: sb.keys.demo },
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  return { transport, stderr };
}

function listen(client: { setNotificationHandler: Client['setNotificationHandler'] }): string[] {
  const notes: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const line = JSON.stringify(n.params);
    notes.push(line);
    captured.push(line);
  });
  return notes;
}

async function refusedCall(client: Client): Promise<void> {
  const result = (await client.callTool(REFUSED)) as CallToolResult;
  captured.push(JSON.stringify(result));
  expect(result.isError).toBe(true);
}

describe('over stdio (the built binary, a 2025-11-25 client)', () => {
  it('sends none to a client that never set a level, while stderr keeps the line; after logging/setLevel they arrive, filtered by level', async () => {
    const { transport, stderr } = stdioServer();
    const client = new Client({ name: 'quiet', version: '1' });
    const notes = listen(client);
    await client.connect(transport);
    await refusedCall(client);
    expect(heard(notes)).toEqual([]);
    await expect.poll(() => stderr.join('')).toMatch(/docreq-mcp info: create_request: /);

    await client.setLoggingLevel('error');
    await refusedCall(client);
    expect(heard(notes)).toEqual([]); // info is below error
    await client.setLoggingLevel('info');
    await refusedCall(client);
    expect(heard(notes)).toHaveLength(1);
    expect(JSON.parse(heard(notes)[0]!)).toMatchObject({ level: 'info', logger: 'docreq-mcp' });
    await client.close();
  });
});

describe('over HTTP (team mode)', () => {
  const config = loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' });

  it('a 2025-11-25 client that never set a level gets none', async () => {
    const svc = await teamService(sb, { config });
    const client = new Client({ name: 'quiet', version: '1' });
    const notes = listen(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${sb.keys.demo}` } } }),
    );
    await refusedCall(client);
    expect(heard(notes)).toEqual([]);
    await client.close();
  });

  it('a 2026-07-28 client gets none without a log level in the envelope, and gets them with one', async () => {
    const svc = await teamService(sb, { config });
    const client = new ModernClient({ name: 'modern', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const notes: string[] = [];
    client.setNotificationHandler('notifications/message', (n) => void notes.push(JSON.stringify(n.params)));
    await client.connect(new ModernTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${sb.keys.demo}` } } }));
    const call = async (meta?: Record<string, unknown>) => {
      const result = await client.callTool({ ...REFUSED, ...(meta ? { _meta: meta } : {}) });
      captured.push(JSON.stringify(result));
      expect(result.isError).toBe(true);
    };
    await call();
    expect(heard(notes)).toEqual([]);
    await call({ [LOG_LEVEL_META_KEY]: 'warning' });
    expect(heard(notes)).toEqual([]);
    await call({ [LOG_LEVEL_META_KEY]: 'info' });
    expect(heard(notes)).toHaveLength(1);
    await client.close();
  });
});

describe('the AI SDK client (@ai-sdk/mcp), which fails on a notification it did not ask for', () => {
  async function useAiClient(transport: Parameters<typeof createMCPClient>[0]['transport']) {
    const errors: unknown[] = [];
    const client = await createMCPClient({ transport, onUncaughtError: (error) => void errors.push(error) });
    const tools = await client.tools();
    const result = (await tools.create_request!.execute(REFUSED.arguments, { toolCallId: '1', messages: [], context: {} })) as CallToolResult;
    captured.push(JSON.stringify(result));
    expect(result.isError).toBe(true);
    await client.close();
    return errors;
  }

  it('raises no error over stdio', async () => {
    const transport = new AiStdioTransport({
      command: process.execPath,
      args: [BIN],
      env: { ...childEnv(), DOCREQ_BASE_URL: sb.url, DOCREQ_API_KEY: sb.keys.demo },
      stderr: 'ignore',
    });
    expect((await useAiClient(transport)).map(String)).toEqual([]);
  });

  it('raises no error over HTTP', async () => {
    const svc = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' }) });
    const errors = await useAiClient({ type: 'http', url: `${svc.url}/mcp`, headers: { Authorization: `Bearer ${sb.keys.demo}` } });
    expect(errors.map(String)).toEqual([]);
  });
});
