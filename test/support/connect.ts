// Real SDK clients connected to the real server (linked in memory, or per request through the SDK v2
// HTTP entry, as the run's ERA says), and what tests do with a connection: call, preview then send, confirm.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ElicitResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, expect } from 'vitest';
import type { ApiError } from '../../src/api/errors.js';
import type { ApiClientOptions } from '../../src/api/client.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import type { Sandbox } from '../../src/sandbox/service.js';
import { SANDBOX_KEYS } from '../../src/sandbox/seed.js';
import { createServer, type ServerOptions } from '../../src/mcp/server.js';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { statelessEntry } from '../../src/transport/http.js';
import { ApiState } from '../../src/api/client.js';
import { Agent } from 'undici';
import { SendLedger } from '../../src/send/ledger.js';
import { Confirmations } from '../../src/send/token.js';
import { ERA } from './era.js';
import { captured } from './key-scan.js';
import { ALL_KEYS, AROUND_TODAY, FAST_API, TODAY, sandbox } from './sandbox.js';

export interface Connected {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult & { text: string }>;
  logs: string[];
  close(): Promise<void>;
  /** A tools/call with request options (a cancel signal, a progress callback), as each era's client takes them. */
  callWith(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult>;
  /** Calls `listener` on each notifications/tools/list_changed, however this era's client hears it. */
  onToolsChanged(listener: () => void): Promise<void>;
  /** 2026 only: posts a raw body (with the headers the client sent last) to the server; the JSON-RPC answer. */
  post?(body: string): Promise<unknown>;
}

/** What a test passes with one call: SDK v1 takes it as callTool's third argument, SDK v2 as its second. */
interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
}

export interface ConnectOptions {
  env?: Record<string, string | undefined>;
  key?: string;
  api?: Partial<ApiClientOptions>;
  /** The day the server judges dates on (default: this machine's day). */
  today?: string;
  /** Instead of `today`: asked at each call, for a server that lives from one day into the next. */
  clock?: () => string;
  /** @internal Extra tools, e.g. one that breaks its own output schema. */
  extraTools?: ServerOptions['extraTools'];
  /** Answer elicitation requests with this (absent: the client does not support elicitation). */
  elicit?: (
    message: string,
    form?: { requestedSchema?: { properties?: Record<string, { oneOf?: { const: string; title: string }[] }> } },
  ) => ElicitResult | Promise<ElicitResult>;
  /** The client's protocol revision (default: the suite's ERA). */
  era?: '2025-11-25' | '2026-07-28';
  /** 2026 only: sees (and may replace) each HTTP request body the client sends, as a man in the middle would. */
  tap?: (body: string) => string | undefined;
  /** More client capabilities, e.g. the MCP Apps extension (a host that renders pages). */
  capabilities?: Record<string, unknown>;
}

/**
 * A 2026-07-28 client: the SDK v2 Client pinned to the modern era, over Streamable HTTP whose fetch is
 * the SDK v2 HTTP entry serving the real server (a fresh one per request, as in team mode: the
 * once-only state and the API client's caches are shared between requests, as team mode shares them).
 */
async function connectModern(config: ReturnType<typeof loadConfig>, serverOptions: ServerOptions, options: ConnectOptions, logs: string[]): Promise<Connected> {
  const sending = { ledger: new SendLedger(), confirmations: new Confirmations(config.tokenSecret) };
  const state = new ApiState();
  // One connection pool for every per-request server, as team mode has: closing a request's server
  // (the SDK does when its response stream closes, which is how a 2026 client cancels) leaves a POST
  // already written to finish and be recorded.
  const sharedPool = new Agent({ keepAliveTimeout: 4_000, connections: 16 });
  const built: ReturnType<typeof createServer>[] = [];
  // Team mode's own entry (src/transport/http.ts): it tells 2026 clients listening when the templates file changes.
  const entry = statelessEntry(() => {
    const server = createServer(config, { ...serverOptions, api: { ...serverOptions.api, state, sharedPool }, sending, stateless: true });
    built.push(server);
    return server;
  }, config.templatesFile);
  const handler = entry.handler;
  const listening: { close(): Promise<void> }[] = [];
  const client = new ModernClient(
    { name: 'test', version: '1.0.0' },
    { capabilities: { ...(options.elicit ? { elicitation: {} } : {}), ...options.capabilities }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler('elicitation/create', async (request) => (await answer(request.params.message, request.params as never)) as never);
  }
  client.setNotificationHandler('notifications/message', (n) => {
    captured.push(JSON.stringify(n.params));
  });
  let lastHeaders: RequestInit['headers'];
  const transport = new StreamableHTTPClientTransport(new URL('http://docreq.test/mcp'), {
    fetch: (url, init) => {
      let body = init?.body;
      if (typeof body === 'string' && init?.method === 'POST') {
        lastHeaders = init.headers;
        body = options.tap?.(body) ?? body;
      }
      return handler.fetch(new Request(url, { ...init, body }));
    },
  });
  await client.connect(transport);
  await client.listTools();
  return {
    client: client as unknown as Client,
    logs,
    async post(body) {
      // The standard headers must agree with the body (the SDK checks them): set them from it.
      const headers = new Headers(lastHeaders);
      const message = JSON.parse(body) as { method: string; params?: { name?: string } };
      headers.set('mcp-method', message.method);
      if (message.params?.name) headers.set('mcp-name', message.params.name);
      const response = await handler.fetch(new Request('http://docreq.test/mcp', { method: 'POST', headers, body }));
      const text = await response.text();
      captured.push(text);
      const data =
        text.startsWith('event:') || text.includes('\ndata: ')
          ? text
              .split('\n')
              .find((l) => l.startsWith('data: '))!
              .slice(6)
          : text;
      return JSON.parse(data) as unknown;
    },
    async call(name, args = {}) {
      return called((await client.callTool({ name, arguments: args })) as CallToolResult);
    },
    async callWith(name, args, callOptions) {
      const result = (await client.callTool({ name, arguments: args }, callOptions)) as CallToolResult;
      captured.push(JSON.stringify(result));
      return result;
    },
    async onToolsChanged(listener) {
      // 2026-07-28: change notifications come only on a subscriptions/listen stream the client opens.
      client.setNotificationHandler('notifications/tools/list_changed', () => listener());
      listening.push(await client.listen({ toolsListChanged: true }));
    },
    async close() {
      for (const subscription of listening) await subscription.close().catch(() => undefined);
      entry.stop();
      await client.close();
      await handler.close();
      for (const server of built) await server.close().catch(() => undefined);
      await sharedPool.close().catch(() => undefined);
    },
  };
}

/** A tool result with its text joined, both kept for the key scan: what every connection's call() answers. */
function called(result: CallToolResult): CallToolResult & { text: string } {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  captured.push(text, JSON.stringify(result.structuredContent ?? null));
  return { ...result, text };
}

/** `call(name, args)` on any connected SDK Client (a spawned server's, over stdio or HTTP): the result with its text, kept for the key scan. */
export function callerFor(client: Pick<Client, 'callTool'>): Connected['call'] {
  return async (name, args = {}) => called((await client.callTool({ name, arguments: args })) as CallToolResult);
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
  const serverOptions: ServerOptions = {
    logger,
    api: { ...FAST_API, ...options.api },
    clock: options.clock ?? (options.today ? () => options.today! : undefined),
    extraTools: options.extraTools,
  };
  if ((options.era ?? ERA) === '2026-07-28') return connectModern(config, serverOptions, options, logs);
  const server = createServer(config, serverOptions);
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: { ...(options.elicit ? { elicitation: {} } : {}), ...options.capabilities } });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message, request.params as never));
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
      return called((await client.callTool({ name, arguments: args })) as CallToolResult);
    },
    async callWith(name, args, callOptions) {
      const result = (await client.callTool({ name, arguments: args }, undefined, callOptions)) as CallToolResult;
      captured.push(JSON.stringify(result));
      return result;
    },
    onToolsChanged(listener) {
      // 2025-11-25: the server sends notifications/tools/list_changed on the session unasked.
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => listener());
      return Promise.resolve();
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/** The usual test file's set-up: a sandbox laid out around TODAY, and a client whose server judges dates on TODAY. */
export async function sandboxAndClient(options: ConnectOptions = {}) {
  const sb = await sandbox(AROUND_TODAY);
  const mcp = await connect(sb, { today: TODAY, ...options });
  afterAll(() => mcp.close());
  /** Calls the sandbox received since the test began. */
  const upstream = () => sb.calls.length;
  return { sb, firm: sb.demoFirm, mcp, upstream };
}

export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`expected success, got error: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/**
 * A send as a host without elicitation makes it: the first call previews and hands out a token; the
 * second, with the token (the person's go-ahead), sends. Returns both results.
 */
export async function previewThenSend(mcp: Pick<Connected, 'call'>, tool: string, args: Record<string, unknown>) {
  const preview = await mcp.call(tool, args);
  const token = (preview.structuredContent as { confirmation?: { token?: string | null } } | undefined)?.confirmation?.token;
  if (!token) throw new Error(`no confirmation token in the preview: ${preview.text}`);
  const sent = await mcp.call(tool, { ...args, confirmationToken: token });
  return { preview, sent, token };
}

/** The error a failing API call throws, checked to carry no key (and captured for the key scan). */
export async function apiFailure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    captured.push((error as Error).message);
    for (const key of ALL_KEYS) expect((error as Error).message).not.toContain(key);
    return error as ApiError;
  }
  throw new Error('expected a failure');
}

/** Servers connected to one sandbox (the file's usual TODAY), each closed when the file ends. */
export function serversOn(sb: Sandbox): (options?: ConnectOptions) => Promise<Connected> {
  const open: Connected[] = [];
  afterAll(async () => {
    for (const m of open) await m.close();
  });
  return async (options = {}) => {
    const mcp = await connect(sb, { today: TODAY, ...options });
    open.push(mcp);
    return mcp;
  };
}

/**
 * A person who confirms every send and, asked "which one?", picks none of the clients offered (so a
 * name several clients share is skipped, as for a host without a form); the confirmation questions go
 * into `asked`.
 */
export function confirmingPerson(asked: string[] = []): NonNullable<ConnectOptions['elicit']> {
  return (message, form) => {
    const fields = form?.requestedSchema?.properties ?? {};
    if ('confirm' in fields || Object.keys(fields).length === 0) {
      asked.push(message);
      return { action: 'accept', content: { confirm: true } };
    }
    return { action: 'accept', content: Object.fromEntries(Object.keys(fields).map((k) => [k, ':none'])) };
  };
}

/** The capabilities of a host that shows MCP Apps pages (the ui extension with the pages' MIME type). */
export const APPS_HOST = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

/** The preview page's own token, in a result's _meta (never in what the model reads). */
export const pageTokenOf = (result: { _meta?: Record<string, unknown> }): string | undefined =>
  (result._meta?.['docreq-mcp/send'] as { token?: string } | undefined)?.token;

/** connect() to `sb` judged on TODAY, as a test file opens several hosts: each closed once the file is done. */
export function hostsOn(sb: Sandbox): (options?: ConnectOptions) => Promise<Connected> {
  const opened: Connected[] = [];
  afterAll(async () => {
    for (const c of opened) await c.close();
  });
  return async (options = {}) => {
    const c = await connect(sb, { today: TODAY, ...options });
    opened.push(c);
    return c;
  };
}
