import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { DocReqApi } from '../api/client.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';

/** Bad or ambiguous input from the caller: nothing was sent; the message says what to change. */
export class UserInputError extends Error {
  override name = 'UserInputError';
}

/** The server is not configured well enough to call the service. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

export type Confirmation = 'accepted' | 'declined' | 'unsupported';

export interface ToolContext {
  api: DocReqApi;
  config: Config;
  logger: Logger;
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
  annotations: Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>> & { title: string };
  /** Hidden in read-only mode. */
  writes: boolean;
  handler(input: z.output<I>, ctx: ToolContext): Promise<ToolResult<z.output<O>>>;
}

export function defineTool<I extends AnyObject, O extends AnyObject>(tool: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return tool;
}
