import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll } from 'vitest';
import type { ApiClientOptions } from '../src/api/client.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/service.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { createServer } from '../src/mcp/server.js';

/** Everything any test captured (logs, results, errors): scanned for the key at the end. */
export const captured: string[] = [];
export const ALL_KEYS = Object.values(SANDBOX_KEYS);

export const FAST_API: Partial<ApiClientOptions> = { retryBaseDelayMs: 5 };

export async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sb = await startSandbox(options);
  afterAll(() => sb.close());
  return sb;
}

export interface Connected {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult & { text: string }>;
  logs: string[];
  close(): Promise<void>;
}

export interface ConnectOptions {
  env?: Record<string, string | undefined>;
  key?: string;
  api?: Partial<ApiClientOptions>;
  today?: string;
  /** Answer elicitation requests with this (absent: the client does not support elicitation). */
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
}

/** A real SDK Client linked in memory to the real server, which talks HTTP to the sandbox. */
export async function connect(sb: Sandbox | undefined, options: ConnectOptions = {}): Promise<Connected> {
  const env = {
    DOCREQ_API_KEY: options.key ?? SANDBOX_KEYS.demo,
    DOCREQ_BASE_URL: sb?.url,
    ...options.env,
  };
  const config = loadConfig({}, env);
  const logs: string[] = [];
  const logger = createLogger('debug', config.api ? [config.api.apiKey] : [], (line) => {
    logs.push(line);
    captured.push(line);
  });
  const server = createServer(config, { logger, api: { ...FAST_API, ...options.api }, clock: options.today ? () => options.today! : undefined });
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message));
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    captured.push(JSON.stringify(n.params));
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  await client.listTools(); // so the client validates structuredContent against each outputSchema
  return {
    client,
    logs,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      captured.push(text, JSON.stringify(result.structuredContent ?? null));
      return { ...result, text };
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}

export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`expected success, got error: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

export function isoToday(): string {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
