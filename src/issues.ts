import { z } from 'zod';

/**
 * zod's own wording ("Too small: expected number to be >=1") as a person would say it, with the
 * valid range: one rule for tool arguments (src/mcp/arguments.ts) and settings (src/config.ts).
 * A message a schema wrote itself is kept as it is.
 */

function between(min: number | null | undefined, max: number | null | undefined, unit: string): string {
  const lo = typeof min === 'number' && Number.isFinite(min) ? min : undefined;
  const hi = typeof max === 'number' && Number.isFinite(max) ? max : undefined;
  if (lo !== undefined && hi !== undefined) return `from ${lo} to ${hi}${unit}`;
  if (lo !== undefined) return `at least ${lo}${unit}`;
  if (hi !== undefined) return `at most ${hi}${unit}`;
  return '';
}

const KINDS: Record<string, string> = {
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  int: 'a whole number',
};

/** zod's own wording ("Too small: expected number to be >=1") as a person would say it, with the valid range. */
export function plainIssue(issue: z.core.$ZodIssue, schema: z.ZodType | undefined): string {
  if (!/^(Too (small|big)|Invalid (input|option)|Invalid$)/.test(issue.message)) return issue.message;
  if (issue.code === 'too_small' || issue.code === 'too_big') {
    if (schema instanceof z.ZodNumber)
      return `must be ${schema.isInt ? 'a whole number' : 'a number'} ${between(schema.minValue, schema.maxValue, '')}`.trimEnd();
    if (schema instanceof z.ZodString) return `must be ${between(schema.minLength, schema.maxLength, ' characters')}`;
    if (schema instanceof z.ZodArray) {
      const checks = (schema._zod.def.checks ?? []).map((c) => c._zod.def as { check?: string; minimum?: number; maximum?: number });
      return `must have ${between(checks.find((c) => c.check === 'min_length')?.minimum, checks.find((c) => c.check === 'max_length')?.maximum, ' entries')}`;
    }
    const bound = issue.code === 'too_small' ? `at least ${String(issue.minimum)}` : `at most ${String(issue.maximum)}`;
    return `must be ${bound}`;
  }
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  if (issue.code === 'invalid_type') {
    if (schema instanceof z.ZodEnum) return `must be one of ${schema.options.map((v) => JSON.stringify(v)).join(', ')}`;
    if (issue.expected === 'never') return 'is not a field of this tool';
    const range = schema instanceof z.ZodNumber ? ` ${between(schema.minValue, schema.maxValue, '')}` : '';
    return `must be ${KINDS[issue.expected] ?? issue.expected}${range}`.trimEnd();
  }
  return issue.message;
}
