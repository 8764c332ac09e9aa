import { z } from 'zod';
import type { ToolDefinition } from '../tools/define.js';

/** Frozen results that passed their tool's check. */
const conforming = new WeakMap<object, ToolDefinition>();

/**
 * A result's rows are checked one by one, apart from the rest of it (the envelope), when its schema
 * is an object whose fields include arrays of objects with no bound of their own: a frozen row (a
 * row a tool keeps and shares across answers, as list_requests does each record's) found to conform
 * is not checked again. The two checks together are the whole schema's check.
 */
interface Split {
  envelope: z.ZodType;
  rows: [field: string, row: z.ZodType, checked: WeakSet<object>][];
}
const splits = new WeakMap<ToolDefinition, Split | null>();

function splitOf(tool: ToolDefinition): Split | null {
  let split = splits.get(tool);
  if (split !== undefined) return split;
  split = null;
  const schema = tool.outputSchema as z.ZodType;
  if (schema instanceof z.ZodObject) {
    const rows: Split['rows'] = [];
    const loose: Record<string, z.ZodType> = {};
    for (const [field, type] of Object.entries(schema.shape)) {
      const optional = type instanceof z.ZodOptional;
      const list: unknown = optional ? type.unwrap() : type;
      // An array with checks of its own (a length bound) stays whole in the envelope.
      if (list instanceof z.ZodArray && !list._zod.def.checks?.length && list.element instanceof z.ZodObject) {
        rows.push([field, list.element, new WeakSet()]);
        loose[field] = optional ? z.array(z.unknown()).optional() : z.array(z.unknown());
      }
    }
    if (rows.length) split = { envelope: schema.extend(loose), rows };
  }
  splits.set(tool, split);
  return split;
}

type Issue = { path: PropertyKey[]; message: string };

/** The issues of `structured` against the tool's schema (none: it conforms). */
function issuesOf(tool: ToolDefinition, structured: unknown): Issue[] {
  // jitless: zod would compile a checker for each schema on its first parse (tens of ms on a process's
  // first call of each tool); one result a call is too few parses to earn that back.
  const split = splitOf(tool);
  if (!split || structured === null || typeof structured !== 'object' || Array.isArray(structured)) {
    const checked = tool.outputSchema.safeParse(structured, { jitless: true });
    return checked.success ? [] : checked.error.issues;
  }
  const issues: Issue[] = [];
  for (const [field, row, checked] of split.rows) {
    const list = (structured as Record<string, unknown>)[field];
    if (!Array.isArray(list)) continue; // the envelope's check says so
    for (const [i, item] of (list as unknown[]).entries()) {
      const shared = item !== null && typeof item === 'object' && Object.isFrozen(item);
      if (shared && checked.has(item)) continue;
      const result = row.safeParse(item, { jitless: true });
      if (result.success) {
        if (shared) checked.add(item);
      } else {
        issues.push(...result.error.issues.map((issue) => ({ path: [field, i, ...issue.path], message: issue.message })));
      }
    }
  }
  const envelope = split.envelope.safeParse(structured, { jitless: true });
  return envelope.success ? issues : [...envelope.error.issues, ...issues];
}

/**
 * Checks a result against the tool's outputSchema before it is answered, as the SDK's McpServer does:
 * a result that breaks its own schema is a bug here, reported plainly instead of one the host rejects.
 * Returns the error message, or undefined when the result conforms.
 */
export function checkOutput(tool: ToolDefinition, structured: unknown): string | undefined {
  // A frozen result (an answer a tool keeps and shares, e.g. list_requests') cannot change: checked once.
  const shared = structured !== null && typeof structured === 'object' && Object.isFrozen(structured);
  if (shared && conforming.get(structured) === tool) return undefined;
  const found = issuesOf(tool, structured);
  if (!found.length) {
    if (shared) conforming.set(structured, tool);
    return undefined;
  }
  const issues = found.slice(0, 3).map((i) => `${i.path.map(String).join('.') || '(result)'}: ${i.message}`);
  return (
    `${tool.name} produced a result that does not match its output schema (a bug in docreq-mcp): ${issues.join('; ')}` +
    `${found.length > 3 ? `; …${found.length - 3} more` : ''}. ` +
    'Anything already sent stays sent; check list_requests before trying again.'
  );
}
