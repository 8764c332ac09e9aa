import { AsyncLocalStorage } from 'node:async_hooks';
import { CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY, Server, ProtocolError, ProtocolErrorCode, inputRequired, inputResponse, preloadSchemas } from '@modelcontextprotocol/server';
import type { CacheHint, CallToolResult, ClientCapabilities, InputRequiredResult, LoggingLevel, LoggingMessageNotificationParams, ServerContext } from '@modelcontextprotocol/server';
import { DocReqApi, type ApiClientOptions } from '../api/client.js';
import { localToday } from '../clock.js';
import { secretsOf, type Config } from '../config.js';
import { ConfigurationError, UserInputError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { SendLedger } from '../send/ledger.js';
import { storeFingerprint } from '../store/index.js';
import { Confirmations, TOKEN_TTL_MS } from '../send/token.js';
import type { Confirmation, SendingContext, ToolContext, ToolDefinition } from '../tools/define.js';
import { INSTRUCTIONS, TOOLS } from '../tools/index.js';
import { templateCatalog, watchTemplateNames } from '../templates/load.js';
import { VERSION } from '../version.js';
import { registerTemplatesAndPrompts } from './catalog-extras.js';
import { decodeArguments, describeIssues } from './arguments.js';
import { checkOutput } from './output-check.js';
import { errorResult, explain, type KeySource } from './results.js';
import { redactor, sealer } from '../text/redact.js';
import { listedTool, withTemplateNames } from './tool-schema.js';
import { oneLine, quoted } from '../text/render.js';
import { deepFreeze } from '../freeze.js';
import { visibleResult } from '../text/visible.js';

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
  /** Where the key came from, for what a rejected key tells the person to check (team mode: 'header'). */
  keyFrom?: KeySource;
  /** Team mode with sign-in: the signed-in person, and where each send's audit line goes. */
  actor?: { email: string; sub: string; role?: 'reader' | 'sender' };
  audit?: (line: string) => void;
  /** Told of every tools/call once answered (its result; undefined when it failed as a protocol error) and how long it took, in ms: team mode's metrics. */
  onCall?: (tool: string, result: CallToolResult | InputRequiredResult | undefined, ms: number) => void;
  /** @internal Tools offered after the catalogue's own (tests use it to prove the output check). */
  extraTools?: ToolDefinition[];
}

/**
 * `ttlMs`/`cacheScope` on 2026-07-28 list results (2025 results carry none). What they list is fixed
 * for the life of the process (the catalogue, DOCREQ_READ_ONLY) and is the same for every key, so a shared
 * cache may keep it, except as cacheHintsFor says (a templates file, a signed-in person's role); nothing in them is revalidated against the
 * service. resources/read of a template is the same; server/discover too.
 */
const CACHE_HINTS: Partial<Record<'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list' | 'resources/read' | 'server/discover', CacheHint>> = {
  'tools/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'prompts/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/read': { ttlMs: 3_600_000, cacheScope: 'public' },
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' },
};

/**
 * The hints for one server: a firm's templates file can change (its names are in tools/list and in the
 * template resources), so with one the lists are kept a minute; a signed-in person's tools/list depends
 * on their role (a reader is not offered the sending tools), so it is private to them.
 */
function cacheHintsFor(templatesFile: string | undefined, perPerson: boolean): typeof CACHE_HINTS {
  if (!templatesFile && !perPerson) return CACHE_HINTS;
  const ttlMs = templatesFile ? 60_000 : 3_600_000;
  const out: typeof CACHE_HINTS = {};
  for (const [method, hint] of Object.entries(CACHE_HINTS) as [keyof typeof CACHE_HINTS, CacheHint][]) {
    out[method] = { ...hint, ttlMs, ...(perPerson && (method === 'tools/list' || method === 'server/discover') ? { cacheScope: 'private' } : {}) };
  }
  return out;
}

/**
 * Single use of an MRTR request state (contract §9): true the first time a state id is claimed for a
 * firm, false ever after (within the ledger's memory). The one place to rewire onto the send store's
 * `claim(key, value, ttlMs)`.
 */
function claimRequestState(ledger: SendLedger, firm: string, stateId: string, ttlMs: number = TOKEN_TTL_MS): Promise<boolean> {
  return ledger.claimOnce(firm, `mrtr:${stateId}`, ttlMs);
}

/** Thrown by `confirm` in an MRTR first round: the question goes back to the client as input_required. */
class AskThroughClient extends Error {
  constructor(readonly question: string) {
    super('asking through the client');
  }
}

const CONFIRM_SCHEMA = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Send it', description: 'Yes: send the request and e-mail the client.' } },
  required: ['confirm'],
};

const LOG_LEVEL = { error: 'error', warn: 'warning', info: 'info', debug: 'debug' } as const;
const SEVERITY: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const passes = (level: LoggingLevel, threshold: LoggingLevel | undefined) => {
  const at = threshold === undefined ? -1 : SEVERITY.indexOf(threshold);
  return at >= 0 && SEVERITY.indexOf(level) >= at;
};
/** The tool call being served, so a log line written during it goes to its client only if that client asked. */
const callLog = new AsyncLocalStorage<{ server: Server; threshold(): LoggingLevel | undefined; send(params: LoggingMessageNotificationParams): Promise<void> }>();

/** Content kept with an answer a tool keeps and shares (frozen): built once, and sealed once per set of secrets (redactDeep). */
const answered = new WeakMap<object, CallToolResult>();
function answerOf(result: { text: string; structured: unknown; isError?: boolean }): CallToolResult {
  const shared = Object.isFrozen(result);
  const known = shared ? answered.get(result) : undefined;
  if (known) return { ...known };
  const content: CallToolResult['content'] = [{ type: 'text', text: result.text }];
  const answer: CallToolResult = { content: shared ? deepFreeze(content) : content, structuredContent: result.structured, ...(result.isError ? { isError: true } : {}) };
  if (shared) answered.set(result, answer);
  return { ...answer };
}

type Extra = ServerContext;

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
  const logger = options.logger ?? createLogger(config.logLevel, secretsOf(config));
  const clock = options.clock ?? (() => localToday());
  const server = new Server(
    { name: 'docreq-mcp', title: 'Document Requests', version: VERSION },
    { capabilities: { tools: { listChanged: true }, logging: {}, resources: { listChanged: true }, prompts: {}, completions: {} }, instructions: INSTRUCTIONS, cacheHints: cacheHintsFor(config.templatesFile, Boolean(options.actor)) },
  );
  /** A 2026-07-28 connection or request: no initialize, identity and capabilities come with each request. */
  const modern = () => (server.getNegotiatedProtocolVersion() ?? '') >= '2026';
  const clientCapabilities = (extra: Extra): ClientCapabilities | undefined =>
    modern() ? ((extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) : server.getClientCapabilities();
  const api = config.api
    ? new DocReqApi({ ...config.api, timeoutMs: config.timeoutMs, maxResponseBytes: config.maxResponseMb * 1024 * 1024, logger, ...options.api })
    : undefined;
  const confirmations = options.sending?.confirmations ?? new Confirmations(config.tokenSecret);
  const ledger = options.sending?.ledger ?? new SendLedger();
  const apiKey = config.api?.apiKey ?? '';
  // Signed in: tokens and MRTR request states are the previewing person's too (their IdP subject).
  const person = options.actor?.sub;
  const sending: SendingContext = {
    firm: apiKey ? storeFingerprint(apiKey, config.api?.baseUrl) : '',
    ledger,
    tokens: {
      issue: (binding) => confirmations.issue(apiKey, binding, person),
      verify: (token, binding) => confirmations.verify(token, apiKey, binding, person),
      idempotencyKey: (id, recipient) => confirmations.idempotencyKey(id, recipient),
    },
    disabled: config.sendingDisabled,
    actor: options.actor,
    audit: options.audit,
  };
  // The one redaction (src/text/redact.ts) where results leave the server: the key and every secret
  // setting. Service text was already redacted as the API client read it, before any cap.
  const seal = sealer(secretsOf(config));
  const redact = redactor(secretsOf(config));
  const catalogue = [...TOOLS, ...(options.extraTools ?? [])];
  const offered = catalogue.filter((t) => !(config.readOnly && !t.annotations.readOnlyHint));
  const baseListed = offered.map(listedTool);
  // The `template` parameters name the templates: listed again when the firm's file changes.
  let listedNames: string | undefined;
  let listed = baseListed;
  const currentListed = () => {
    const catalog = templateCatalog(config.templatesFile);
    const names = catalog.templates.map((t) => t.name).join(',');
    if (names !== listedNames) {
      listedNames = names;
      listed = withTemplateNames(baseListed, catalog);
    }
    return listed;
  };
  // A session that lasts (not stateless HTTP) is told when the list changes (on stdio a 2026 client hears it
  // on its subscriptions/listen stream); stateless HTTP is told by its entry (transport/http.ts, mcpEntry).
  const templatesFile = options.stateless ? undefined : config.templatesFile;
  const stopWatching = templatesFile
    ? watchTemplateNames(templatesFile, () => {
        if (!server.transport) return;
        void server.sendToolListChanged().catch(() => undefined);
        void server.sendResourceListChanged().catch(() => undefined);
      })
    : undefined;

  // MCP log notifications go only to a client that asked (contract §11): a 2025-11-25 session with
  // logging/setLevel, a 2026-07-28 request with the log level in its envelope; stderr keeps every line.
  // Some clients fail on a notification they did not ask for (the AI SDK's: "Unsupported message type").
  // Over stateless HTTP a 2025 client's setLevel reaches only the server of that one request.
  let asked: LoggingLevel | undefined;
  server.setRequestHandler('logging/setLevel', (request) => {
    asked = request.params.level;
    return {};
  });
  const removeSink = logger.addSink((level, message) => {
    const params = { level: LOG_LEVEL[level], logger: 'docreq-mcp', data: message };
    const call = callLog.getStore();
    if (call && call.server !== server) return; // another server's call (one logger shared by several)
    if (call) {
      if (passes(params.level, call.threshold())) void call.send(params).catch(() => undefined);
    } else if (!modern() && passes(params.level, asked) && server.transport) {
      void server.sendLoggingMessage(params).catch(() => undefined);
    }
  });
  // Load the HTTP client right after initialize, so the first tool call costs what a later one does;
  // in the next turns, ICU's English number format (every count is written with toLocaleString) and
  // the SDK's wire schemas (built lazily, else inside the first tools/call).
  server.oninitialized = () => {
    api?.warm();
    setImmediate(() => {
      (1234.5).toLocaleString('en');
      setImmediate(preloadSchemas);
    });
  };
  server.onclose = () => {
    stopWatching?.();
    removeSink();
    void api?.close();
  };

  async function confirm(message: string, extra: Extra): Promise<Confirmation> {
    if (modern() || !server.getClientCapabilities()?.elicitation) return 'unsupported';
    const request = { message, requestedSchema: CONFIRM_SCHEMA };
    const result = await server.elicitInput(request, { signal: extra.mcpReq.signal, timeout: 10 * 60_000 }).catch((error: unknown) => {
      const why = oneLine(redact(error instanceof Error ? error.message : String(error)), 200);
      throw new UserInputError(`Nothing was sent: asking the person to confirm failed (${why}). Ask them in the chat, then call again.`);
    });
    return result.action === 'accept' && result.content?.confirm === true ? 'accepted' : 'declined';
  }

  registerTemplatesAndPrompts(server, { templates: () => templateCatalog(config.templatesFile), listClients: api && (async (signal) => api.listClients({ reuse: true, signal })), redact, today: clock, readOnly: config.readOnly, logger });
  server.setRequestHandler('tools/list', () => ({ tools: currentListed() }));
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    // 2025 clients only: a 2026 client has no initialize (contract §9).
    if (!options.stateless && !modern() && !server.getClientVersion()) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'The session is not initialised: send initialize first. Nothing was called or sent.');
    }
    const envelopeLevel = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined;
    const threshold = () => (modern() ? envelopeLevel : asked);
    const send = (params: LoggingMessageNotificationParams) => ctx.mcpReq.notify({ method: 'notifications/message', params });
    const started = performance.now();
    let result: CallToolResult | InputRequiredResult | undefined;
    try {
      // Sealed, then its structuredContent shown by the renderer's invisible-character rule (contract §3.7.1).
      result = visibleResult(seal(await callLog.run({ server, threshold, send }, () => callTool(request, ctx))));
      return result;
    } finally {
      options.onCall?.(request.params.name, result, performance.now() - started);
    }
  });

  async function callTool(request: { params: { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } } }, extra: Extra): Promise<CallToolResult | InputRequiredResult> {
    const tool = offered.find((t) => t.name === request.params.name);
    if (!tool) {
      // A tool this server has, held back by read-only mode, is refused as a tool result (the model can act on it).
      if (config.readOnly && catalogue.some((t) => t.name === request.params.name)) {
        // A signed-in reader is told their role; the setting is named only to whoever runs the server.
        if (options.actor?.role === 'reader') return errorResult(`${request.params.name} is not offered: you are signed in with the reader role, which may list and read but not send. Ask your firm's IT team if you should be able to send. Nothing was sent.`);
        return errorResult(`${request.params.name} is not offered: the server runs read-only (DOCREQ_READ_ONLY / --read-only). Nothing was sent.`);
      }
      // A name no tool has is a protocol error: "Unknown tool" is one of the specification's Protocol Errors (-32602).
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool ${quoted(redact(String(request.params.name)), 60)}. Tools: ${offered.map((t) => t.name).join(', ')}.`);
    }
    // jitless: one parse a call does not earn back zod's compiling a checker for the schema (see checkOutput).
    const parsed = tool.inputSchema.safeParse(decodeArguments(request.params.arguments ?? {}, tool.inputSchema), { jitless: true });
    if (!parsed.success) return errorResult(describeIssues(parsed.error, tool));
    // MRTR (2026-07-28 with elicitation): the first round's question goes back as input_required with a
    // request state bound like a token (key fingerprint, the signed-in person, this tool and input, expiry); the retry
    // answers it once. A missing, altered, expired, foreign or replayed state sends nothing.
    const mrtr = modern() && Boolean(clientCapabilities(extra)?.elicitation);
    const binding = { mrtr: tool.name, input: parsed.data as unknown };
    let answered: 'accepted' | 'declined' | undefined;
    const state = mrtr ? extra.mcpReq.requestState<string>() : undefined;
    if (mrtr && state !== undefined) {
      const check = typeof state === 'string' ? sending.tokens.verify(state, binding) : ({ ok: false, reason: 'malformed' } as const);
      if (!check.ok) return errorResult(`Nothing was sent: the confirmation state that came back is not valid for this call (${check.reason}). Call again without it to be asked again.`);
      let first: boolean;
      try {
        first = await claimRequestState(sending.ledger, sending.firm, check.id);
      } catch (error) {
        return errorResult(redact(error instanceof Error ? error.message : String(error)));
      }
      if (!first) return errorResult('Nothing was sent: this confirmation was already answered once. Call again to be asked again.');
      const view = inputResponse(extra.mcpReq.inputResponses, 'confirm');
      answered = view.kind === 'elicit' && view.action === 'accept' && (view.content as { confirm?: unknown } | undefined)?.confirm === true ? 'accepted' : 'declined';
    }
    const started = Date.now();
    try {
      // Every setting speaks (contract §2): one that cannot be read stops every call, naming it.
      if (!api || config.callsDisabled?.length) {
        throw new ConfigurationError(
          `docreq-mcp is not configured, so nothing was called:\n${(api ? config.callsDisabled! : config.problems).map((p) => `- ${p}`).join('\n')}\n` +
            'Set these in the host\'s "env" for this server and restart it. To try it without an account, start it with --sandbox.',
        );
      }
      const progressToken = request.params._meta?.progressToken;
      const deadline = started + config.timeoutMs;
      const ctx: ToolContext = {
        api,
        config,
        signal: extra.mcpReq.signal,
        deadline,
        canAsk: Boolean(clientCapabilities(extra)?.elicitation),
        sending,
        log: (message, level = 'info') => logger[level](message),
        warn: (message) => logger.warn(message),
        redact,
        today: clock(),
        confirm: (message) => {
          if (!mrtr) return confirm(message, extra);
          if (answered) return Promise.resolve(answered);
          return Promise.reject(new AskThroughClient(message));
        },
        progress: async (progress, total, message) => {
          if (progressToken === undefined) return;
          await extra.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total, message: oneLine(redact(message), 200) } }).catch(() => undefined);
        },
      };
      const result = await withinDeadline(tool.handler(parsed.data, ctx), deadline, tool.annotations.readOnlyHint);
      logger.debug(`${tool.name} answered in ${Date.now() - started} ms`);
      const mismatch = checkOutput(tool, result.structured);
      if (mismatch) {
        logger.error(mismatch);
        return errorResult(mismatch);
      }
      return answerOf(result);
    } catch (error) {
      if (error instanceof AskThroughClient) {
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ message: error.question, requestedSchema: CONFIRM_SCHEMA }) },
          requestState: sending.tokens.issue(binding).token,
        });
      }
      const expected = explain(error, options.keyFrom);
      if (expected !== undefined) {
        logger.info(`${tool.name}: ${expected.split('\n')[0]}`);
        return errorResult(expected);
      }
      // Redacted before it is cut: a secret cut by the cap would otherwise survive as its prefix.
      const message = redact(error instanceof Error ? error.message : String(error));
      logger.error(`${tool.name} failed unexpectedly: ${message}`);
      return errorResult(`${tool.name} failed unexpectedly (${oneLine(message, 300)}). Nothing was retried; if it was a send, check list_requests before trying again.`);
    }
  }
  return server;
}
