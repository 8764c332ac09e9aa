import {
  CLIENT_CAPABILITIES_META_KEY as CLIENT_CAPABILITIES,
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  inputResponse,
  type Server,
} from '@modelcontextprotocol/server';
import type { CallToolResult, ClientCapabilities, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import { ConfigurationError, UserInputError } from '../errors.js';
import { onceFor } from '../cache.js';
import { deepFreeze } from '../freeze.js';
import type { SendLedger } from '../send/ledger.js';
import { TOKEN_TTL_MS } from '../send/token.js';
import { oneLine, quoted } from '../text/render.js';
import type { Choice, Confirmation, Picks, ToolContext } from '../tools/define.js';
import { decodeArguments, describeIssues } from './arguments.js';
import type { ServerParts } from './context.js';
import { checkOutput } from './output-check.js';
import { errorResult, explain } from './results.js';
import { rendersPages } from '../ui/apps.js';

/**
 * One tools/call, from the request to its result. Tool calls flow one way: arguments → decoded and
 * validated input → the API client → records → summary and preview. This is the one place a failure
 * becomes a result.
 */

/**
 * Single use of an MRTR request state (both protocol revisions, 2025-11-25 and 2026-07-28): true the first time a state id is claimed for a
 * firm, false ever after (within the ledger's memory). The one place to rewire onto the send store's
 * `claim(key, value, ttlMs)`.
 */
function claimRequestState(ledger: SendLedger, firm: string, stateId: string, ttlMs: number = TOKEN_TTL_MS): Promise<boolean> {
  return ledger.claimOnce(firm, `mrtr:${stateId}`, ttlMs);
}

/** Thrown by `confirm` or `choose` in an MRTR round: the question goes back to the client as input_required. */
class AskThroughClient extends Error {
  constructor(
    readonly question: string,
    readonly key: 'confirm' | 'choose' = 'confirm',
    readonly schema: typeof CONFIRM_SCHEMA | ReturnType<typeof chooseSchema> = CONFIRM_SCHEMA,
  ) {
    super('asking through the client');
  }
}

/** The "none of these" answer of a choice (no client or template id is spelled so). */
const NONE = ':none';

/** A form of one choice per question, each with "None of these" last. */
function chooseSchema(questions: readonly Choice[]) {
  const field = (q: Choice) => ({
    type: 'string' as const,
    title: q.title,
    oneOf: [...q.options.map((o) => ({ const: o.value, title: o.title })), { const: NONE, title: 'None of these (nothing is sent)' }],
  });
  return { type: 'object' as const, properties: Object.fromEntries(questions.map((q) => [q.key, field(q)])), required: questions.map((q) => q.key) };
}

/** The person's picks, each checked against what was offered: null for "none of these"; undefined when an answer is not one of the choices. */
function picksOf(questions: readonly Choice[], content: Record<string, unknown> | undefined): Picks | undefined {
  const picks: Picks = {};
  for (const q of questions) {
    const value = content?.[q.key];
    // null: "none of these" as a state carries it from an earlier round.
    if (value === NONE || value === null) picks[q.key] = null;
    else if (typeof value === 'string' && q.options.some((o) => o.value === value)) picks[q.key] = value;
    else return undefined;
  }
  return picks;
}

/**
 * An MRTR request state: a token bound to the call (tool, input) and to the picks made in earlier rounds,
 * which ride beside it in clear (a later round's question needs them, and the client sends back only
 * the latest round's answers); altered picks fail the token.
 */
function stateOf(token: string, picks: Record<string, unknown> | undefined): string {
  return picks ? `${token}~${Buffer.from(JSON.stringify(picks)).toString('base64url')}` : token;
}
function readState(state: string): { token: string; picks: Record<string, unknown> | undefined } {
  const at = state.indexOf('~');
  if (at < 0) return { token: state, picks: undefined };
  try {
    const picks = JSON.parse(Buffer.from(state.slice(at + 1), 'base64url').toString('utf8')) as unknown;
    return { token: state.slice(0, at), picks: picks !== null && typeof picks === 'object' && !Array.isArray(picks) ? (picks as Record<string, unknown>) : {} };
  } catch {
    return { token: state.slice(0, at), picks: {} };
  }
}

const CONFIRM_SCHEMA = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Send it', description: 'Yes: send the request and e-mail the client.' } },
  required: ['confirm'],
};

type ToolAnswer = { text: string; structured: unknown; isError?: boolean; meta?: Record<string, unknown> };

/** Content kept with an answer a tool keeps and shares (frozen): built once, and sealed once per set of secrets (redactDeep). */
const answered = onceFor<ToolAnswer, CallToolResult>();
function answerOf(result: ToolAnswer): CallToolResult {
  // What only the page gets (the page's token) goes in _meta, which hosts hand the page and not the model.
  if (result.meta)
    return {
      content: [{ type: 'text', text: result.text }],
      structuredContent: result.structured,
      _meta: result.meta,
      ...(result.isError ? { isError: true } : {}),
    };
  if (Object.isFrozen(result)) return { ...answered(result, (kept) => resultOf(kept, deepFreeze([{ type: 'text', text: kept.text }]))) };
  return resultOf(result, [{ type: 'text', text: result.text }]);
}

function resultOf(result: ToolAnswer, content: CallToolResult['content']): CallToolResult {
  return { content, structuredContent: result.structured, ...(result.isError ? { isError: true } : {}) };
}

/**
 * A safety net over the per-call deadline the API client already keeps: the call is answered by
 * DOCREQ_TIMEOUT_MS + 1 s whatever a handler does. A send that is still running goes on (it is
 * never aborted once written) and its outcome is recorded for the duplicate guard.
 */
function withinDeadline<T>(work: Promise<T>, deadline: number, readOnly: boolean): Promise<T> {
  const grace = 750;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        reject(
          new UserInputError(
            readOnly
              ? 'The call did not finish within DOCREQ_TIMEOUT_MS; nothing was changed. Try again, or with narrower filters.'
              : 'The call did not finish within DOCREQ_TIMEOUT_MS. The request may have been sent: check with list_requests before sending again (this server will refuse a duplicate).',
          ),
        );
      },
      Math.max(0, deadline - Date.now()) + grace,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * The capabilities of the client behind this request: a 2026 request brings them in its envelope; a 2025
 * connection's come from its initialize (this server's, or in team mode the session's, kept in the
 * shared store: options.clientCapabilities).
 */
export function capabilitiesOf(
  server: Server,
  options: { clientCapabilities?: ClientCapabilities },
  modern: () => boolean,
  extra: ServerContext,
): ClientCapabilities | undefined {
  if (modern()) return (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES] as ClientCapabilities | undefined;
  return server.getClientCapabilities() ?? options.clientCapabilities;
}

export type ToolCall = { params: { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } } };

type Redact = ServerParts['redact'];
type Sending = ServerParts['sending'];

/** "Send it?" and "which one?" in the host's form, over a 2025 connection that carries the answer back (stdio, or a stateful one). */
function formQuestions(server: Server, redact: Redact, modern: () => boolean) {
  const asked = <T>(question: Promise<T>, what: string, then: string) =>
    question.catch((error: unknown) => {
      const why = oneLine(redact(error instanceof Error ? error.message : String(error)), 200);
      throw new UserInputError(`Nothing was sent: ${what} failed (${why}). Ask them in the chat, then ${then}.`);
    });
  const options = (extra: ServerContext) => ({ signal: extra.mcpReq.signal, timeout: 10 * 60_000 });
  return {
    async confirm(message: string, extra: ServerContext): Promise<Confirmation> {
      if (modern() || !server.getClientCapabilities()?.elicitation) return 'unsupported';
      const result = await asked(
        server.elicitInput({ message, requestedSchema: CONFIRM_SCHEMA }, options(extra)),
        'asking the person to confirm',
        'call again',
      );
      return result.action === 'accept' && result.content?.confirm === true ? 'accepted' : 'declined';
    },
    async choose(message: string, questions: readonly Choice[], extra: ServerContext): Promise<Picks | 'declined' | 'unsupported'> {
      if (!server.getClientCapabilities()?.elicitation) return 'unsupported';
      const result = await asked(
        server.elicitInput({ message, requestedSchema: chooseSchema(questions) }, options(extra)),
        'asking the person which one they meant',
        'call again with the id',
      );
      if (result.action !== 'accept') return 'declined';
      return picksOf(questions, result.content) ?? 'declined';
    },
  };
}

/** A tool this server does not offer: held back by read-only mode (a result the model can act on), or no tool at all (a protocol error). */
function notOffered(name: string, parts: ServerParts): CallToolResult {
  const { config, options, catalogue, offered, redact } = parts;
  if (config.readOnly && catalogue.some((t) => t.name === name)) {
    // A signed-in reader is told their role; the setting is named only to whoever runs the server.
    if (options.actor?.role === 'reader')
      return errorResult(
        `${name} is not offered: you are signed in with the reader role, which may list and read but not send. Ask your firm's IT team if you should be able to send. Nothing was sent.`,
      );
    return errorResult(`${name} is not offered: the server runs read-only (DOCREQ_READ_ONLY / --read-only). Nothing was sent.`);
  }
  // "Unknown tool" is one of the specification's Protocol Errors (-32602).
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Unknown tool ${quoted(redact(String(name)), 60)}. Tools: ${offered.map((t) => t.name).join(', ')}.`,
  );
}

/** What an MRTR round brought back: the answer to "send it?", picks made in earlier rounds, and this round's answer to a choice. */
interface Round {
  answer?: 'accepted' | 'declined';
  carried?: Record<string, unknown> | undefined;
  chosen?: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
  /** The picks this call settled on (carried, then this round's), for a later round's state. */
  picked?: Record<string, unknown> | undefined;
}

/**
 * MRTR (2026-07-28 with elicitation): the first round's question went back as input_required with a request
 * state bound like a token (key fingerprint, the signed-in person, this tool and input, expiry); the retry
 * answers it once. A missing, altered, expired, foreign or replayed state sends nothing (an error result).
 */
async function readRound(
  state: unknown,
  extra: ServerContext,
  sending: Sending,
  binding: (picks: Record<string, unknown> | undefined) => Record<string, unknown>,
  redact: Redact,
): Promise<Round | { refused: CallToolResult }> {
  const read = typeof state === 'string' ? readState(state) : undefined;
  const round: Round = { carried: read?.picks };
  const check = read ? sending.tokens.verify(read.token, binding(round.carried)) : ({ ok: false, reason: 'malformed' } as const);
  if (!check.ok)
    return {
      refused: errorResult(
        `Nothing was sent: the confirmation state that came back is not valid for this call (${check.reason}). Call again without it to be asked again.`,
      ),
    };
  let first: boolean;
  try {
    first = await claimRequestState(sending.ledger, sending.firm, check.id);
  } catch (error) {
    return { refused: errorResult(redact(error instanceof Error ? error.message : String(error))) };
  }
  if (!first) return { refused: errorResult('Nothing was sent: this confirmation was already answered once. Call again to be asked again.') };
  const view = inputResponse(extra.mcpReq.inputResponses, 'confirm');
  // A round that asked only "which one?" holds no answer to the confirmation: it is asked next.
  if (view.kind !== 'missing')
    round.answer =
      view.kind === 'elicit' && view.action === 'accept' && (view.content as { confirm?: unknown } | undefined)?.confirm === true ? 'accepted' : 'declined';
  const choice = inputResponse(extra.mcpReq.inputResponses, 'choose');
  if (choice.kind === 'elicit') round.chosen = { action: choice.action, ...(choice.content ? { content: choice.content } : {}) };
  else if (choice.kind === 'missing' && view.kind === 'missing') round.answer = 'declined';
  return round;
}

/** The API client, once every setting speaks (docs/settings.md): one that cannot be read stops every call, naming it. */
function configuredApi({ api, config }: ServerParts): NonNullable<ServerParts['api']> {
  if (api && !config.callsDisabled?.length) return api;
  throw new ConfigurationError(
    `docreq-mcp is not configured, so nothing was called:\n${(api ? config.callsDisabled! : config.problems).map((p) => `- ${p}`).join('\n')}\n` +
      'Set these in the host\'s "env" for this server and restart it. To try it without an account, add --sandbox to the command (in the MCP Bundle: turn on the sandbox).',
  );
}

/** A failure as a result: an expected one in the person's words (with what the page needs to help), anything else redacted and cut. */
function failureResult(error: unknown, toolName: string, parts: ServerParts): CallToolResult {
  const { options, logger, redact } = parts;
  const expected = explain(error, options.keyFrom);
  if (expected !== undefined) {
    logger.info(`${toolName}: ${expected.split('\n')[0]}`);
    // A refusal the page can help the person with (which client?) carries what the page needs in _meta.
    const pageMeta = error instanceof UserInputError ? error.pageMeta : undefined;
    return pageMeta ? { ...errorResult(expected), _meta: pageMeta } : errorResult(expected);
  }
  // Redacted before it is cut: a secret cut by the cap would otherwise survive as its prefix.
  const message = redact(error instanceof Error ? error.message : String(error));
  logger.error(`${toolName} failed unexpectedly: ${message}`);
  return errorResult(
    `${toolName} failed unexpectedly (${oneLine(message, 300)}). Nothing was retried; if it was a send, check list_requests before trying again.`,
  );
}

/**
 * "Send it?" and "which one?" over MRTR: answered from what this round brought back, or asked in the next round
 * (AskThroughClient becomes input_required with the picks so far in its state).
 */
function roundQuestions(round: Round): Pick<ToolContext, 'confirm' | 'choose'> {
  return {
    confirm: (message) => (round.answer ? Promise.resolve(round.answer) : Promise.reject(new AskThroughClient(message))),
    choose: (message, questions) => {
      // Answered in an earlier round, or earlier in this call.
      const earlier = round.picked && picksOf(questions, round.picked);
      if (earlier) return Promise.resolve(earlier);
      // A round brings one answer, to the first question still open: a later question of the same call (which
      // template, then which client) is asked in a round of its own.
      const chosen = round.chosen;
      round.chosen = undefined;
      if (!chosen) return Promise.reject(new AskThroughClient(message, 'choose', chooseSchema(questions)));
      // Declined, or an answer that picks nothing offered: nothing is sent (never asked again in a loop).
      const fresh = chosen.action === 'accept' ? picksOf(questions, chosen.content) : undefined;
      if (!fresh) return Promise.resolve('declined');
      round.picked = { ...round.picked, ...fresh };
      return Promise.resolve(fresh);
    },
  };
}

/** Progress notifications to the caller that asked for them (a progress token), the message redacted and cut; none otherwise. */
function progressTo(extra: ServerContext, progressToken: string | number | undefined, redact: Redact): ToolContext['progress'] {
  return async (progress, total, message) => {
    if (progressToken === undefined) return;
    await extra.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken, progress, total, message: oneLine(redact(message), 200) } })
      .catch(() => undefined);
  };
}

/** The tools/call handler of one server, before its result is sealed. */
export function toolCaller(server: Server, parts: ServerParts, modern: () => boolean) {
  const { config, options, logger, sending, redact, offered, clock } = parts;
  const clientCapabilities = (extra: ServerContext) => capabilitiesOf(server, options, modern, extra);
  const form = formQuestions(server, redact, modern);

  return async function callTool(request: ToolCall, extra: ServerContext): Promise<CallToolResult | InputRequiredResult> {
    const tool = offered.find((t) => t.name === request.params.name);
    if (!tool) return notOffered(request.params.name, parts);
    // jitless: one parse a call does not earn back zod's compiling a checker for the schema (see checkOutput).
    const parsed = tool.inputSchema.safeParse(decodeArguments(request.params.arguments ?? {}, tool.inputSchema), { jitless: true });
    if (!parsed.success) return errorResult(describeIssues(parsed.error, tool));
    const mrtr = modern() && Boolean(clientCapabilities(extra)?.elicitation);
    const binding = (picks: Record<string, unknown> | undefined) => ({ mrtr: tool.name, input: parsed.data as unknown, ...(picks ? { picks } : {}) });
    const state = mrtr ? extra.mcpReq.requestState<string>() : undefined;
    let round: Round = {};
    if (mrtr && state !== undefined) {
      const read = await readRound(state, extra, sending, binding, redact);
      if ('refused' in read) return read.refused;
      round = { ...read, picked: read.carried };
    }
    const rounds = roundQuestions(round);
    const started = Date.now();
    try {
      const client = configuredApi(parts);
      const deadline = started + config.timeoutMs;
      const ctx: ToolContext = {
        api: client,
        config,
        templates: parts.templates,
        signal: extra.mcpReq.signal,
        deadline,
        // Team mode's 2025 session knows its client's capabilities, but an elicitation's answer comes back
        // as another HTTP request that any replica may get: there, only the page and the token ask.
        canAsk: modern() ? mrtr : Boolean(server.getClientCapabilities()?.elicitation),
        showsPages: rendersPages(clientCapabilities(extra)),
        sending,
        log: (message, level = 'info') => logger[level](message),
        warn: (message) => logger.warn(message),
        redact,
        today: clock(),
        confirm: (message) => (mrtr ? rounds.confirm(message) : form.confirm(message, extra)),
        choose: (message, questions) => (mrtr ? rounds.choose(message, questions) : form.choose(message, questions, extra)),
        progress: progressTo(extra, request.params._meta?.progressToken, redact),
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
          inputRequests: { [error.key]: inputRequired.elicit({ message: error.question, requestedSchema: error.schema }) },
          requestState: stateOf(sending.tokens.issue(binding(round.picked)).token, round.picked),
        });
      }
      return failureResult(error, tool.name, parts);
    }
  };
}
