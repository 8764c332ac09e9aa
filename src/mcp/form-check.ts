import type { JsonSchemaType, JsonSchemaValidator, JsonSchemaValidatorResult, jsonSchemaValidator } from '@modelcontextprotocol/server';

/**
 * How the SDK checks an accepted elicitation answer against the form it asked for. MCP lets a form ask
 * only for a flat object of booleans, text, numbers and choices (one or several); that is all this
 * checks, and all this server asks (the send confirmation, one boolean). The SDK's default is Ajv, a
 * whole JSON Schema engine (about 150 KB) evaluated and instantiated at every start; the build puts
 * this class in its place (scripts/build-options.mjs, sdkShims) and createServer passes it, so the
 * source and what ships check alike. A schema outside what a form may ask is refused, never passed.
 */
export class FormCheck implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    return (input: unknown): JsonSchemaValidatorResult<T> => {
      const problem = formProblem(schema, input);
      return problem === undefined ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: problem };
    };
  }
}

type Field = Record<string, unknown>;
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function formProblem(schema: JsonSchemaType, input: unknown): string | undefined {
  if (schema.type !== 'object') return 'the form is not an object of fields';
  if (!isObject(input)) return 'the answer is not an object';
  const fields = (isObject(schema.properties) ? schema.properties : {}) as Record<string, unknown>;
  for (const name of Array.isArray(schema.required) ? schema.required : []) {
    if (!Object.hasOwn(input, name)) return `${name} is missing`;
  }
  for (const [name, value] of Object.entries(input)) {
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!isObject(field)) {
      if (schema.additionalProperties === false) return `${name} was not asked for`;
      continue;
    }
    const problem = fieldProblem(field, value);
    if (problem !== undefined) return `${name} ${problem}`;
  }
  return undefined;
}

/** The values a choice allows: `enum`, or `oneOf`/`anyOf` entries with a `const` (titled choices). */
function choices(field: Field): unknown[] | undefined {
  if (Array.isArray(field.enum)) return field.enum as unknown[];
  const titled = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : undefined;
  return titled?.filter(isObject).map((c) => c.const);
}

function fieldProblem(field: Field, value: unknown): string | undefined {
  switch (field.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'is not true or false';
    case 'string': {
      if (typeof value !== 'string') return 'is not text';
      const allowed = choices(field);
      if (allowed && !allowed.includes(value)) return 'is not one of the choices';
      const length = [...value].length;
      if (typeof field.minLength === 'number' && length < field.minLength) return `is shorter than ${field.minLength} characters`;
      if (typeof field.maxLength === 'number' && length > field.maxLength) return `is longer than ${field.maxLength} characters`;
      return undefined;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'is not a number';
      if (field.type === 'integer' && !Number.isInteger(value)) return 'is not a whole number';
      if (typeof field.minimum === 'number' && value < field.minimum) return `is less than ${field.minimum}`;
      if (typeof field.maximum === 'number' && value > field.maximum) return `is more than ${field.maximum}`;
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(value)) return 'is not a list';
      const allowed = isObject(field.items) ? choices(field.items) : undefined;
      if (!allowed) return 'is a list the form cannot check';
      if (value.some((v) => !allowed.includes(v))) return 'holds a value that is not one of the choices';
      if (typeof field.minItems === 'number' && value.length < field.minItems) return `has fewer than ${field.minItems} choices`;
      if (typeof field.maxItems === 'number' && value.length > field.maxItems) return `has more than ${field.maxItems} choices`;
      return undefined;
    }
    default:
      return 'is of a kind a form cannot ask for';
  }
}
