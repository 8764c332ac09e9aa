import type { ToolDefinition } from '../tools/define.js';

/** Frozen results that passed their tool's check. */
const conforming = new WeakMap<object, ToolDefinition>();

/**
 * Checks a result against the tool's outputSchema before it is answered, as the SDK's McpServer does:
 * a result that breaks its own schema is a bug here, reported plainly instead of one the host rejects.
 * Returns the error message, or undefined when the result conforms.
 */
export function checkOutput(tool: ToolDefinition, structured: unknown): string | undefined {
  // A frozen result (an answer a tool keeps and shares, e.g. list_requests') cannot change: checked once.
  const shared = structured !== null && typeof structured === 'object' && Object.isFrozen(structured);
  if (shared && conforming.get(structured) === tool) return undefined;
  // jitless: zod would compile a checker for each schema on its first parse (tens of ms on a process's
  // first call of each tool); one result a call is too few parses to earn that back.
  const checked = tool.outputSchema.safeParse(structured, { jitless: true });
  if (checked.success) {
    if (shared) conforming.set(structured, tool);
    return undefined;
  }
  const issues = checked.error.issues.slice(0, 3).map((i) => `${i.path.map(String).join('.') || '(result)'}: ${i.message}`);
  return (
    `${tool.name} produced a result that does not match its output schema (a bug in docreq-mcp): ${issues.join('; ')}` +
    `${checked.error.issues.length > 3 ? `; …${checked.error.issues.length - 3} more` : ''}. ` +
    'Anything already sent stays sent; check list_requests before trying again.'
  );
}
