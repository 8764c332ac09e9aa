import { z } from 'zod';
import type { ToolDefinition } from '../tools/define.js';
import { plainIssue } from '../issues.js';

/** Tool arguments as hosts send them: decoded, then worded for the model when they fail validation. */

function innerType(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return s;
}

/**
 * Some hosts send arrays and objects as JSON text, numbers and booleans as strings, or null for an
 * omitted field. Undo that, guided by the schema, before validation judges the input.
 */
export function decodeArguments(value: unknown, schema: z.ZodType): unknown {
  const inner = innerType(schema);
  if (typeof value === 'string') {
    const t = value.trim();
    if ((inner instanceof z.ZodArray && t.startsWith('[')) || (inner instanceof z.ZodObject && t.startsWith('{'))) {
      try {
        return decodeArguments(JSON.parse(t), inner);
      } catch {
        return value;
      }
    }
    if (inner instanceof z.ZodArray && t) return [value];
    if (inner instanceof z.ZodNumber && /^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    if (inner instanceof z.ZodBoolean && (t === 'true' || t === 'false')) return t === 'true';
    return value;
  }
  if (Array.isArray(value) && inner instanceof z.ZodArray) return value.map((v) => decodeArguments(v, inner.element as z.ZodType));
  if (value && typeof value === 'object' && !Array.isArray(value) && inner instanceof z.ZodObject) {
    const shape = inner.shape as Record<string, z.ZodType>;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (v === null && field instanceof z.ZodOptional) continue;
      // defineProperty, not assignment: a "__proto__" key must stay an (unknown, refused) own field
      // rather than replace the prototype that validation would then read fields through.
      Object.defineProperty(out, key, { value: field ? decodeArguments(v, field) : v, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/** The schema at `path` inside `schema` (through optional, default, object and array), if any. */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  for (const step of path) {
    const inner: z.ZodType | undefined = s && innerType(s);
    if (inner instanceof z.ZodObject && typeof step === 'string') s = (inner.shape as Record<string, z.ZodType>)[step];
    else if (inner instanceof z.ZodArray && typeof step === 'number') s = inner.element as z.ZodType;
    else return undefined;
  }
  return s && innerType(s);
}

export function describeIssues(error: z.ZodError, tool: ToolDefinition): string {
  const lines = error.issues.slice(0, 12).map((issue) => {
    const path =
      issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '') || '(arguments)';
    if (issue.code === 'unrecognized_keys') {
      return `- ${path === '(arguments)' ? '' : `${path}: `}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}`;
    }
    return `- ${path}: ${plainIssue(issue, schemaAt(tool.inputSchema, issue.path))}`;
  });
  const fields = Object.keys(tool.inputSchema.shape as Record<string, unknown>).join(', ');
  return `Invalid arguments for ${tool.name}; nothing was called or sent:\n${lines.join('\n')}${error.issues.length > 12 ? `\n…${error.issues.length - 12} more` : ''}\nFields: ${fields}.`;
}
