/**
 * Failures a tool raises itself. Handlers throw; src/mcp/call-tool.ts is the one place any throw
 * becomes a result. The service's own failures are the typed errors of src/api/errors.ts.
 */

/** Bad or ambiguous input from the caller: reported as an error result saying what to change; nothing was sent. */
export class UserInputError extends Error {
  override name = 'UserInputError';
  /** What only the page gets with this refusal (the result's _meta), e.g. the clients to choose among. */
  readonly pageMeta: Record<string, unknown> | undefined;
  constructor(message: string, pageMeta?: Record<string, unknown>) {
    super(message);
    this.pageMeta = pageMeta;
  }
}

/** The server is not configured well enough to call the service: reported as an error result naming what to set. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}
