import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { DocReqApi } from '../api/client.js';
import type { Config } from '../config.js';
import type { Templates } from '../templates/catalogue.js';
import type { SendLedger } from '../send/ledger.js';
import type { TokenCheck } from '../send/token.js';

export type Confirmation = 'accepted' | 'declined' | 'unsupported';

/** One "which one?" question: its key in the answer, its title, and the options (value and the words shown). */
export interface Choice {
  key: string;
  title: string;
  options: { value: string; title: string }[];
}
/** The person's picks by question key; null: "none of these". */
export type Picks = Record<string, string | null>;

/** Confirmation tokens for this call's firm (the key is bound in; tools never see it). */
interface TokenIssuer {
  issue(binding: unknown): { token: string; expiresAt: number };
  verify(token: string, binding: unknown): TokenCheck;
  idempotencyKey(confirmationId: string, recipient: string): string;
}

/** What once-only sending needs, scoped to the firm whose key this call carries. */
export interface SendingContext {
  /** A fingerprint of the key (never the key): what the ledger is keyed by. */
  firm: string;
  ledger: SendLedger;
  tokens: TokenIssuer;
  /** Why nothing may be sent (a safety setting cannot be read, the send store cannot be used), or undefined. */
  disabled: string | undefined;
  /** Team mode with sign-in: the person sending, recorded with every send (docs/sign-in-setup.md). */
  actor?: { email: string; sub: string } | undefined;
  /** Where the one JSON audit line of each send goes (stderr); only with an actor. */
  audit?: ((line: string) => void) | undefined;
}

/** What a handler may use; built per call by src/mcp/call-tool.ts. */
export interface ToolContext {
  api: DocReqApi;
  config: Config;
  /** The server's checklist templates (the built-ins and the firm's file). */
  templates: Templates;
  /** The host's cancellation of this call. A POST already written is not aborted by it. */
  signal: AbortSignal;
  /** When the whole call must be answered by (epoch ms): DOCREQ_TIMEOUT_MS from its start. */
  deadline: number;
  /** The day "overdue" and "today or later" are judged on, YYYY-MM-DD. */
  today: string;
  /** Asks the person through MCP elicitation; 'unsupported' when the host cannot ask. */
  confirm(message: string): Promise<Confirmation>;
  /**
   * "Which one?": asks the person, in the host's form, to pick one option per question (elicitation, or
   * input_required on 2026-07-28): the value picked for each (null: "none of these"), 'declined', or
   * 'unsupported' when the host cannot ask (the caller then answers with the list, as it would).
   */
  choose(message: string, questions: readonly Choice[]): Promise<Picks | 'declined' | 'unsupported'>;
  /** Whether the host can ask the person (MCP elicitation, or input_required on 2026-07-28). */
  canAsk: boolean;
  /** Whether the host renders MCP Apps pages (its capabilities declare the ui extension): the person sends from the preview page. */
  showsPages: boolean;
  /** This call came from the preview page's Send (send_from_page): the person's own press. */
  viaPage?: boolean;
  sending: SendingContext;
  /** A log line for the person running the server (stderr and MCP logging); info unless said. */
  log(message: string, level?: 'info' | 'error'): void;
  /** A warning for the person running the server, e.g. the outcome of a send its host cancelled (default: log). */
  warn?(message: string): void;
  /** The one redaction (src/text/redact.ts) of this call's secrets: for text not from the service, before it is cut. */
  redact(text: string): string;
  progress(done: number, total: number, message: string): Promise<void>;
}

export interface ToolResult<O> {
  text: string;
  structured: O;
  /** The result's _meta: what only the page gets (hosts hand it to the page, not to the model). */
  meta?: Record<string, unknown>;
  /** A result that reports a failure but still carries structured content (e.g. "may have been sent"). */
  isError?: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyObject = z.ZodObject<any>;

export interface ToolDefinition<I extends AnyObject = AnyObject, O extends AnyObject = AnyObject> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  /** All four hints; `readOnlyHint: false` is what hides a tool in read-only mode. */
  annotations: Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;
  /** Throws UserInputError, ConfigurationError (src/errors.ts) or an ApiError; never answers an error itself. */
  handler(input: z.output<I>, ctx: ToolContext): Promise<ToolResult<z.output<O>>>;
}

export function defineTool<I extends AnyObject, O extends AnyObject>(tool: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return tool;
}
