import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { DocReqApi, type ApiClientOptions } from '../api/client.js';
import { localToday } from '../clock.js';
import type { Config } from '../config.js';
import { ConfigurationError, UserInputError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { SendLedger } from '../send/ledger.js';
import { Confirmations } from '../send/token.js';
import type { Confirmation, SendingContext, ToolContext, ToolDefinition } from '../tools/define.js';
import { INSTRUCTIONS, TOOLS } from '../tools/index.js';
import { templateCatalog } from '../templates/load.js';
import { registerApps } from '../ui/apps.js';
import { VERSION } from '../version.js';
import { registerTemplatesAndPrompts } from './catalog-extras.js';
import { decodeArguments, describeIssues } from './arguments.js';
import { checkOutput } from './output-check.js';
import { errorResult, explain } from './results.js';
import { redactor, sealer } from './seal.js';
import { listedTool } from './tool-schema.js';

export interface ServerOptions {
  logger?: Logger;
  /** Gives the day overdue is judged on, YYYY-MM-DD; defaults to this machine's calendar day. */
  clock?: () => string;
  /** Extra options for the API client (tests use small caps and fast retries). */
  api?: Partial<ApiClientOptions>;
  /**
   * Once-only sending state shared by every server of a process (team mode builds a server per
   * HTTP request); by default each server has its own.
   */
  sending?: { ledger: SendLedger; confirmations: Confirmations };
  /** Stateless HTTP: each request is its own server, so `initialize` was answered by another one. */
  stateless?: boolean;
  /** Team mode with sign-in: the signed-in person, and where each send's audit line goes. */
  actor?: { email: string; sub: string };
  audit?: (line: string) => void;
  /** @internal Tools offered after the catalogue's own (tests use it to prove the output check). */
  extraTools?: ToolDefinition[];
}

const LOG_LEVEL = { error: 'error', warn: 'warning', info: 'info', debug: 'debug' } as const;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Builds the MCP server. Tool calls flow one way: arguments → decoded and validated input →
 * the API client → records → summary and preview. This is the one place a failure becomes a result.
 */
/**
 * A safety net over the per-call deadline the API client already keeps: the call is answered by
 * DOCREQ_TIMEOUT_MS + 1 s whatever a handler does. A send that is still running goes on (it is
 * never aborted once written) and its outcome is recorded for the duplicate guard.
 */
function withinDeadline<T>(work: Promise<T>, deadline: number, readOnly: boolean): Promise<T> {
  const grace = 750;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new UserInputError(
          readOnly
            ? 'The call did not finish within DOCREQ_TIMEOUT_MS; nothing was changed. Try again, or with narrower filters.'
            : 'The call did not finish within DOCREQ_TIMEOUT_MS. The request may have been sent: check with list_requests before sending again (this server will refuse a duplicate).',
        ),
      );
    }, Math.max(0, deadline - Date.now()) + grace);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function createServer(config: Config, options: ServerOptions = {}): Server {
  const logger = options.logger ?? createLogger(config.logLevel, [config.api?.apiKey, config.tokenSecret].filter((s): s is string => Boolean(s)));
  const clock = options.clock ?? (() => localToday());
  const server = new Server(
    { name: 'docreq-mcp', title: 'Document Requests', version: VERSION },
    { capabilities: { tools: {}, logging: {}, resources: {}, prompts: {}, completions: {} }, instructions: INSTRUCTIONS },
  );
  const api = config.api
    ? new DocReqApi({ ...config.api, timeoutMs: config.timeoutMs, maxResponseBytes: config.maxResponseMb * 1024 * 1024, logger, ...options.api })
    : undefined;
  const confirmations = options.sending?.confirmations ?? new Confirmations(config.tokenSecret);
  const ledger = options.sending?.ledger ?? new SendLedger();
  const apiKey = config.api?.apiKey ?? '';
  const sending: SendingContext = {
    firm: apiKey ? confirmations.fingerprint(apiKey) : '',
    ledger,
    tokens: {
      issue: (binding) => confirmations.issue(apiKey, binding),
      verify: (token, binding) => confirmations.verify(token, apiKey, binding),
      idempotencyKey: (id, recipient) => confirmations.idempotencyKey(id, recipient),
    },
    disabled: config.sendingDisabled,
    actor: options.actor,
    audit: options.audit,
  };
  // The one redaction where results leave the server: the key and every secret setting.
  const seal = sealer([apiKey, config.tokenSecret]);
  // Completion answers carry client names from the service: the same redaction applies.
  const redact = redactor([apiKey, config.tokenSecret]);
  const catalogue = [...TOOLS, ...(options.extraTools ?? [])];
  const offered = catalogue.filter((t) => !(config.readOnly && !t.annotations.readOnlyHint));
  const listed = offered.map(listedTool);

  const removeSink = logger.addSink((level, message) => {
    if (server.transport) server.sendLoggingMessage({ level: LOG_LEVEL[level], logger: 'docreq-mcp', data: message }).catch(() => undefined);
  });
  // Load the HTTP client right after initialize, so the first tool call costs what a later one does.
  server.oninitialized = () => api?.warm();
  server.onclose = () => {
    removeSink();
    void api?.close();
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

  registerTemplatesAndPrompts(server, { templates: templateCatalog(config.templatesFile), listClients: api && (async (signal) => (await api.listClients({ reuse: true, signal })).map((c) => ({ ...c, displayName: c.displayName && redact(c.displayName) }))), today: clock, readOnly: config.readOnly, logger });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    if (!options.stateless && !server.getClientVersion()) {
      throw new McpError(ErrorCode.InvalidRequest, 'The session is not initialised: send initialize first. Nothing was called or sent.');
    }
    return seal(await callTool(request, extra));
  });

  async function callTool(request: { params: { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } } }, extra: Extra): Promise<CallToolResult> {
    const tool = offered.find((t) => t.name === request.params.name);
    if (!tool) {
      const hidden = config.readOnly && catalogue.some((t) => t.name === request.params.name);
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
      const deadline = started + config.timeoutMs;
      const ctx: ToolContext = {
        api,
        config,
        signal: extra.signal,
        deadline,
        canAsk: Boolean(server.getClientCapabilities()?.elicitation),
        sending,
        log: (message) => logger.info(message),
        today: clock(),
        confirm: (message) => confirm(message, extra),
        progress: async (progress, total, message) => {
          if (progressToken === undefined) return;
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total, message } }).catch(() => undefined);
        },
      };
      const result = await withinDeadline(tool.handler(parsed.data, ctx), deadline, tool.annotations.readOnlyHint);
      logger.debug(`${tool.name} answered in ${Date.now() - started} ms`);
      const mismatch = checkOutput(tool, result.structured);
      if (mismatch) {
        logger.error(mismatch);
        return errorResult(mismatch);
      }
      return { content: [{ type: 'text', text: result.text }], structuredContent: result.structured, ...(result.isError ? { isError: true } : {}) };
    } catch (error) {
      const expected = explain(error);
      if (expected !== undefined) {
        logger.info(`${tool.name}: ${expected.split('\n')[0]}`);
        return errorResult(expected);
      }
      const message = error instanceof Error ? error.message : String(error);
      logger.error(`${tool.name} failed unexpectedly: ${message}`);
      return errorResult(`${tool.name} failed unexpectedly (${message.slice(0, 300)}). Nothing was retried; if it was a send, check list_requests before trying again.`);
    }
  }
  registerApps(server);
  return server;
}
