import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DocReqApi, type ApiClientOptions } from './api/client.js';
import { ApiError } from './api/errors.js';
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { registerTemplatesAndPrompts } from './mcp/catalog-extras.js';
import { templateCatalog } from './templates/load.js';
import { createRequest } from './tools/create-request.js';
import { ConfigurationError, UserInputError, type Confirmation, type ToolContext, type ToolDefinition } from './tools/define.js';
import { listClients } from './tools/list-clients.js';
import { listRequests } from './tools/list-requests.js';
import { listTemplates } from './tools/list-templates.js';
import { localToday } from './tools/request-facts.js';
import { VERSION } from './version.js';

export const TOOLS: ToolDefinition[] = [listClients, listRequests, createRequest, listTemplates];

export const INSTRUCTIONS = `docreq-mcp works with the firm's Document Request Service.
- list_clients finds clients (search by name or e-mail) and gives their ids.
- list_requests answers questions about requests: exact counts, overdue, due soon, by status, per client.
- list_templates gives the firm's checklist templates (built-in and the firm's own) and, by name, their items for create_request.
- create_request SENDS an e-mail to a real client. Always: find the client's id, call create_request with dryRun: true, show the person the preview, and send (dryRun: false) only after they agree. Never retry a failed send without checking list_requests.
Counts in every result are exact over all records; lists are paged (limit/offset, nextOffset).`;

export interface ServerOptions {
  logger?: Logger;
  /** The day overdue is judged on; defaults to this machine's calendar day. */
  today?: () => string;
  /** Extra options for the API client (tests use small caps and fast retries). */
  api?: Partial<ApiClientOptions>;
}

const LOG_LEVEL = { error: 'error', warn: 'warning', info: 'info', debug: 'debug' } as const;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** JSON Schema keywords every major function-calling API accepts. */
const PORTABLE_KEYS = new Set(['type', 'properties', 'required', 'items', 'description', 'enum', 'default', 'minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'format', 'anyOf', 'additionalProperties', 'propertyNames', 'title', 'nullable']);

function portable(schema: unknown, isInput: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => portable(s, isInput));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!PORTABLE_KEYS.has(key)) continue;
    // zod writes ±MAX_SAFE_INTEGER bounds on every integer: noise to a model, so dropped.
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    // Inputs are checked strictly by us; a listed `additionalProperties: false` trips some hosts.
    if (isInput && key === 'additionalProperties') continue;
    if (key === 'type' && Array.isArray(value)) {
      // `type: ["string", "null"]` is legal but single-type dialects (Gemini's) reject it.
      out.anyOf = value.map((t) => ({ type: t as string }));
      continue;
    }
    if (key === 'additionalProperties' && value && typeof value === 'object' && Object.keys(value).length === 0) {
      out[key] = true; // `{}` constrains nothing: say "any value" plainly
      continue;
    }
    if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, portable(v, isInput)]));
    } else if (key === 'enum' || key === 'required' || key === 'default') {
      out[key] = value;
    } else {
      out[key] = portable(value, isInput);
    }
  }
  return out;
}

export function listedTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: portable(z.toJSONSchema(tool.inputSchema, { io: 'input', target: 'draft-7' }), true) as Tool['inputSchema'],
    outputSchema: portable(z.toJSONSchema(tool.outputSchema, { io: 'output', target: 'draft-7' }), false) as Tool['outputSchema'],
    annotations: tool.annotations,
  };
}

function innerType(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return s;
}

/**
 * Some hosts send arrays and objects as JSON text, numbers and booleans as strings, or null for an
 * omitted field. Undo that, guided by the schema, before validation judges the input.
 */
export function decodeArguments(value: unknown, schema: z.ZodType): unknown {
  const inner = innerType(schema);
  if (typeof value === 'string') {
    const t = value.trim();
    if ((inner instanceof z.ZodArray && t.startsWith('[')) || (inner instanceof z.ZodObject && t.startsWith('{'))) {
      try {
        return decodeArguments(JSON.parse(t), inner);
      } catch {
        return value;
      }
    }
    if (inner instanceof z.ZodArray && t) return [value];
    if (inner instanceof z.ZodNumber && /^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    if (inner instanceof z.ZodBoolean && (t === 'true' || t === 'false')) return t === 'true';
    return value;
  }
  if (Array.isArray(value) && inner instanceof z.ZodArray) return value.map((v) => decodeArguments(v, inner.element as z.ZodType));
  if (value && typeof value === 'object' && !Array.isArray(value) && inner instanceof z.ZodObject) {
    const shape = inner.shape as Record<string, z.ZodType>;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (v === null && field instanceof z.ZodOptional) continue;
      // defineProperty, not assignment: a "__proto__" key must stay an (unknown, refused) own field
      // rather than replace the prototype that validation would then read fields through.
      Object.defineProperty(out, key, { value: field ? decodeArguments(v, field) : v, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

function describeIssues(error: z.ZodError, tool: ToolDefinition): string {
  const lines = error.issues.slice(0, 12).map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') || '(arguments)';
    if (issue.code === 'unrecognized_keys') {
      return `- ${path === '(arguments)' ? '' : `${path}: `}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}`;
    }
    return `- ${path}: ${issue.message}`;
  });
  const fields = Object.keys(tool.inputSchema.shape as Record<string, unknown>).join(', ');
  return `Invalid arguments for ${tool.name}; nothing was called or sent:\n${lines.join('\n')}${error.issues.length > 12 ? `\n…${error.issues.length - 12} more` : ''}\nFields: ${fields}.`;
}

function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/**
 * Builds the MCP server. Tool calls flow one way: arguments → decoded and validated input →
 * the API client → records → summary and preview. This is the one place a failure becomes a result.
 */
export function createServer(config: Config, options: ServerOptions = {}): McpServer {
  const logger = options.logger ?? createLogger(config.logLevel, config.api ? [config.api.apiKey] : []);
  const today = options.today ?? (() => localToday());
  const mcp = new McpServer(
    { name: 'docreq-mcp', title: 'Document Requests', version: VERSION },
    { capabilities: { tools: {}, logging: {}, resources: {}, prompts: {}, completions: {} }, instructions: INSTRUCTIONS },
  );
  const server = mcp.server;
  const api = config.api ? new DocReqApi({ ...config.api, timeoutMs: config.timeoutMs, logger, ...options.api }) : undefined;
  const offered = TOOLS.filter((t) => !(config.readOnly && t.writes));
  const listed = offered.map(listedTool);

  const removeSink = logger.addSink((level, message) => {
    if (server.transport) server.sendLoggingMessage({ level: LOG_LEVEL[level], logger: 'docreq-mcp', data: message }).catch(() => undefined);
  });
  const previousOnClose = server.onclose;
  server.onclose = () => {
    removeSink();
    void api?.close();
    previousOnClose?.();
  };

  async function confirm(message: string, extra: Extra): Promise<Confirmation> {
    if (!server.getClientCapabilities()?.elicitation) return 'unsupported';
    const request = {
      message,
      requestedSchema: {
        type: 'object' as const,
        properties: { confirm: { type: 'boolean' as const, title: 'Send it', description: 'Yes: send the request and e-mail the client.' } },
        required: ['confirm'],
      },
    };
    const result = await server.elicitInput(request, { signal: extra.signal, timeout: 10 * 60_000 }).catch((error: unknown) => {
      const why = error instanceof Error ? error.message : String(error);
      throw new UserInputError(`Nothing was sent: asking the person to confirm failed (${why}). Ask them in the chat, then call again.`);
    });
    return result.action === 'accept' && result.content?.confirm === true ? 'accepted' : 'declined';
  }

  registerTemplatesAndPrompts(server, { templates: templateCatalog(config.templatesFile), listClients: api && ((signal) => api.listClients({ maxAgeMs: 30_000, signal })), today, readOnly: config.readOnly, logger });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = offered.find((t) => t.name === request.params.name);
    if (!tool) {
      const hidden = config.readOnly && TOOLS.some((t) => t.name === request.params.name);
      return errorResult(
        hidden
          ? `${request.params.name} is not offered: the server runs read-only (DOCREQ_READ_ONLY / --read-only). Nothing was sent.`
          : `Unknown tool ${JSON.stringify(String(request.params.name).slice(0, 60))}. Tools: ${offered.map((t) => t.name).join(', ')}.`,
      );
    }
    const parsed = tool.inputSchema.safeParse(decodeArguments(request.params.arguments ?? {}, tool.inputSchema));
    if (!parsed.success) return errorResult(describeIssues(parsed.error, tool));
    const started = Date.now();
    try {
      if (!api) {
        throw new ConfigurationError(
          `docreq-mcp is not configured, so nothing was called:\n${config.problems.map((p) => `- ${p}`).join('\n')}\n` +
            'Set these in the host\'s "env" for this server and restart it. To try it without an account, start it with --sandbox.',
        );
      }
      const progressToken = request.params._meta?.progressToken;
      const ctx: ToolContext = {
        api,
        config,
        logger,
        signal: extra.signal,
        today: today(),
        confirm: (message) => confirm(message, extra),
        progress: async (progress, total, message) => {
          if (progressToken === undefined) return;
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total, message } }).catch(() => undefined);
        },
      };
      const result = await tool.handler(parsed.data, ctx);
      logger.debug(`${tool.name} answered in ${Date.now() - started} ms`);
      return { content: [{ type: 'text', text: result.text }], structuredContent: result.structured };
    } catch (error) {
      if (error instanceof UserInputError || error instanceof ConfigurationError || error instanceof ApiError) {
        logger.info(`${tool.name}: ${error.message.split('\n')[0]}`);
        return errorResult(error.message);
      }
      const message = error instanceof Error ? error.message : String(error);
      logger.error(`${tool.name} failed unexpectedly: ${message}`);
      return errorResult(`${tool.name} failed unexpectedly (${message.slice(0, 300)}). Nothing was retried; if it was a send, check list_requests before trying again.`);
    }
  });
  return mcp;
}
