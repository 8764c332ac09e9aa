import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { DocReqApi } from '../api/client.js';
import type { Config } from '../config.js';

export type Confirmation = 'accepted' | 'declined' | 'unsupported';

/** What a handler may use; built per call by src/mcp/server.ts. */
export interface ToolContext {
  api: DocReqApi;
  config: Config;
  signal: AbortSignal;
  /** The day "overdue" and "today or later" are judged on, YYYY-MM-DD. */
  today: string;
  /** Asks the person through MCP elicitation; 'unsupported' when the host cannot ask. */
  confirm(message: string): Promise<Confirmation>;
  progress(done: number, total: number, message: string): Promise<void>;
}

export interface ToolResult<O> {
  text: string;
  structured: O;
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
