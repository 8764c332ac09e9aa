import type { ToolDefinition } from '../tools/define.js';

/**
 * Checks a result against the tool's outputSchema before it is answered, as the SDK's McpServer does:
 * a result that breaks its own schema is a bug here, reported plainly instead of one the host rejects.
 * Returns the error message, or undefined when the result conforms.
 */
export function checkOutput(tool: ToolDefinition, structured: unknown): string | undefined {
  const checked = tool.outputSchema.safeParse(structured);
  if (checked.success) return undefined;
  const issues = checked.error.issues.slice(0, 3).map((i) => `${i.path.map(String).join('.') || '(result)'}: ${i.message}`);
  return (
    `${tool.name} produced a result that does not match its output schema (a bug in docreq-mcp): ${issues.join('; ')}` +
    `${checked.error.issues.length > 3 ? `; …${checked.error.issues.length - 3} more` : ''}. ` +
    'Anything already sent stays sent; check list_requests before trying again.'
  );
}
