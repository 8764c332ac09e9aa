import type { CallToolResult } from '@modelcontextprotocol/server';
import {
  ApiError,
  KeyRejectedError,
  NotFoundServiceError,
  PlanLimitError,
  RateLimitedError,
  RedirectedError,
  ServiceFailedError,
  TooLargeError,
  type PlanLimit,
} from '../api/errors.js';
import { ConfigurationError, UserInputError } from '../errors.js';

/** Where failures become words for a person or a model: the API's plain errors plus what to do next. */

export function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** What the firm can do about each limit of its plan. */
const PLAN_ADVICE: Record<PlanLimit, string> = {
  'active-requests': 'complete or archive open requests, or upgrade the plan in the dashboard',
  billing: 'wait for the next billing period, or upgrade the plan in the dashboard',
  plan: 'complete or archive open requests, wait for the next billing period, or upgrade the plan in the dashboard',
};

/** What to do about an API failure; empty when the message says it all. */
function guidance(error: ApiError, keyFrom: KeySource): string {
  if (error instanceof KeyRejectedError) {
    return keyFrom === 'header' ? " Check the key this request sent as Authorization: Bearer <key> (the firm's API key)." : ' Check DOCREQ_API_KEY.';
  }
  // Only a plan limit gets the advice to archive or upgrade: a rate limit passes by waiting.
  if (error instanceof PlanLimitError) return ` What the firm can do: ${PLAN_ADVICE[error.limit]}.`;
  if (error instanceof RateLimitedError) {
    return error.retryAfterMs !== undefined
      ? ` The service asked to wait (Retry-After). Try again in ${Math.ceil(error.retryAfterMs / 1000)} s.`
      : ' Try again shortly.';
  }
  if (error instanceof ServiceFailedError) return ' Try again later.';
  if (error instanceof NotFoundServiceError || error instanceof RedirectedError) return ' Check DOCREQ_BASE_URL.';
  if (error instanceof TooLargeError) return " If the firm's lists really are this large, raise DOCREQ_MAX_RESPONSE_MB.";
  return '';
}

/** The message for a failure we expected (bad input, configuration, the service); undefined for a bug. */
/** Where the key came from: the environment (stdio, check) or each request's Authorization header (team mode). */
export type KeySource = 'env' | 'header';

export function explain(error: unknown, keyFrom: KeySource = 'env'): string | undefined {
  if (error instanceof ApiError) {
    // "…may have been sent." reads on as the words of every other outcome: "may have been sent: check with list_requests".
    if (error.outcomeUnknown) return `${error.message.replace(/\.$/, '')}: check with list_requests before sending again.`;
    return `${error.message}${guidance(error, keyFrom)}`;
  }
  if (error instanceof UserInputError || error instanceof ConfigurationError) return error.message;
  return undefined;
}
