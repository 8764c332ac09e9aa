import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ToolDefinition } from '../tools/define.js';
import { onceFor } from '../cache.js';
import { deepFreeze } from '../freeze.js';
import type { ShownCatalog } from '../templates/render.js';
import { APP_ONLY_TOOLS, withAppPage } from '../ui/apps.js';

/** How a tool is listed by tools/list: schemas every major function-calling API accepts as they are. */

/** JSON Schema keywords every major function-calling API accepts. */
const PORTABLE_KEYS = new Set([
  'type',
  'properties',
  'required',
  'items',
  'description',
  'enum',
  'default',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'format',
  'anyOf',
  'additionalProperties',
  'propertyNames',
  'title',
  'nullable',
]);

/** `type: [T, "null"]` for a scalar T (a nullable object keeps its listed shape). */
function nullableScalar(types: unknown[]): boolean {
  return types.length === 2 && types.includes('null') && types.some((t) => t === 'string' || t === 'number' || t === 'integer' || t === 'boolean');
}

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/** A schema that is only a type (bounds aside): a scalar, null, or an array of scalars. */
function plainScalar(schema: unknown, arrays: boolean): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const s = schema as { type?: unknown; items?: unknown; anyOf?: unknown };
  if (s.type === 'array') return arrays && plainScalar(s.items, false);
  if (Array.isArray(s.anyOf)) return s.anyOf.every((x) => plainScalar(x, false));
  const types: unknown[] = Array.isArray(s.type) ? s.type : [s.type];
  return types.length > 0 && types.every((t) => typeof t === 'string' && SCALARS.has(t));
}

/** "A scalar or null" (as `type: [T, "null"]` or as `anyOf`), or any union of scalars and lists of them. */
function isNullableScalar(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const { type, anyOf } = schema as { type?: unknown; anyOf?: unknown };
  if (Array.isArray(type)) return nullableScalar(type);
  return Array.isArray(anyOf) && anyOf.every((x) => plainScalar(x, true));
}

function portable(schema: unknown, isInput: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => portable(s, isInput));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!PORTABLE_KEYS.has(key)) continue;
    // zod writes ±MAX_SAFE_INTEGER bounds on every integer: noise to a model, so dropped.
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    // Inputs are checked strictly by us; a listed `additionalProperties: false` trips some hosts.
    if (isInput && key === 'additionalProperties') continue;
    // String caps (200, 320, 2,000 characters) guard the server, which enforces them and says so; listing
    // them would spend the tools/list budget on limits no sensible argument comes near.
    if (isInput && key === 'maxLength') continue;
    // Output schemas are for validating results, not for the model's choice of arguments: their
    // descriptions would only spend the tools/list budget (the text result explains itself).
    if (!isInput && key === 'description') continue;
    // Our own validation of results is strict (mcp/output-check.ts); the listed copy need not repeat
    // it: no closed objects, no required lists, and a property that is "a scalar or null" left to the
    // object's `additionalProperties: true` (spelled out as `anyOf` it would cost 2,000 characters).
    // What is saved goes to the inputs' descriptions within the tools/list budget (12,000 characters).
    if (!isInput && key === 'additionalProperties' && value === false) continue;
    // Record values that are scalars or lists of them (a client's other fields) are listed as any value.
    if (!isInput && key === 'additionalProperties' && isNullableScalar(value)) {
      out[key] = true;
      continue;
    }
    // JSON object keys are strings anyway.
    if (key === 'propertyNames' && value && typeof value === 'object' && Object.keys(value).length === 1 && (value as { type?: unknown }).type === 'string')
      continue;
    if (!isInput && key === 'required') continue;
    if (!isInput && key === 'properties' && value && typeof value === 'object') {
      const kept = Object.entries(value).filter(([, v]) => !isNullableScalar(v));
      out[key] = Object.fromEntries(kept.map(([k, v]) => [k, portable(v, isInput)]));
      if (kept.length < Object.keys(value).length) out.additionalProperties = true;
      continue;
    }
    if (key === 'type' && Array.isArray(value)) {
      // `type: ["string", "null"]` is legal but single-type dialects (Gemini's) reject it.
      out.anyOf = value.map((t) => ({ type: t as string }));
      continue;
    }
    if (key === 'additionalProperties' && value && typeof value === 'object' && Object.keys(value).length === 0) {
      out[key] = true; // `{}` constrains nothing: say "any value" plainly
      continue;
    }
    if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, portable(v, isInput)]));
    } else if (key === 'enum' || key === 'required' || key === 'default') {
      out[key] = value;
    } else {
      out[key] = portable(value, isInput);
    }
  }
  return out;
}

/**
 * A tool as tools/list shows it. Computed once per definition and frozen (team mode builds a server
 * per request: converting the schemas each time cost more than answering list_templates), so the
 * list is the same object, in the same order, every time: deterministic and cacheable.
 */
const listedOnce = onceFor<ToolDefinition, Tool>();
export function listedTool(tool: ToolDefinition): Tool {
  return listedOnce(tool, (t) => deepFreeze(prebuilt(t) ?? listTool(t)));
}

declare const __DOCREQ_TOOL_LISTING__: string | undefined;
let built: Record<string, Tool> | undefined;
/**
 * The catalogue's tools as listTool lists them, worked out when the package is built (scripts/
 * build-options.mjs, toolListingDefine): reading that JSON at start costs a fraction of converting five
 * zod schemas (cold start, docs/performance.md). Used only for a definition it matches (name, title and
 * description); anything else, and the source run by the tests, is converted here. test/shipped.test.ts
 * checks the built CLI lists exactly what the source does.
 */
function prebuilt(tool: ToolDefinition): Tool | undefined {
  if (typeof __DOCREQ_TOOL_LISTING__ !== 'string') return undefined;
  built ??= JSON.parse(__DOCREQ_TOOL_LISTING__) as Record<string, Tool>;
  const listed = Object.hasOwn(built, tool.name) ? built[tool.name] : undefined;
  return listed && listed.title === tool.title && listed.description === tool.description ? listed : undefined;
}

/**
 * Every tool of `tools` as listTool lists it, by name: what the build keeps (scripts/build-options.mjs
 * bundles and calls it, so no import names it).
 * @public
 */
export function builtListing(tools: readonly ToolDefinition[]): Record<string, Tool> {
  return Object.fromEntries(tools.map((t) => [t.name, listTool(t)]));
}

function listTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: portable(z.toJSONSchema(tool.inputSchema, { io: 'input', target: 'draft-7' }), true) as Tool['inputSchema'],
    outputSchema: portable(z.toJSONSchema(tool.outputSchema, { io: 'output', target: 'draft-7' }), false) as Tool['outputSchema'],
    // The listed annotations repeat the title, as hosts that show annotations expect.
    annotations: { title: tool.title, ...tool.annotations },
  };
}

/** All of tools/list, in characters (JSON): it is read into every conversation. */
const TOOLS_LIST_BUDGET = 12_000;

function describeTemplate(tool: Tool, description: string): Tool {
  const props = tool.inputSchema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!props?.template) return tool;
  return { ...tool, inputSchema: { ...tool.inputSchema, properties: { ...props, template: { ...props.template, description } } } };
}

const SEE_FIRST = (name: string) => `Template: the names listed for ${name}'s template, or list_templates.`;

/**
 * The listed tools with each `template` parameter naming the catalogue's templates, so the whole list
 * stays under TOOLS_LIST_BUDGET whatever the firm's file holds: every name in every parameter when
 * they fit; otherwise as many as fit in the first tool's parameter (the firm's first), the others
 * pointing to it, and the rest counted and left to list_templates. Then each tool's MCP Apps page is
 * linked (ui/apps.ts), outside the budget: hosts do not hand `_meta` to the model.
 */
export function withTemplateNames(tools: Tool[], catalog: ShownCatalog): Tool[] {
  return describeTemplates(tools, catalog).map(withAppPage);
}

/** The catalogue's longest `template` description whose names fit in `room` characters. */
function describedIn(catalog: ShownCatalog, room: number): string {
  return catalog.paramDescriptions.findLast((d) => d.room <= room)!.text;
}

function describeTemplates(tools: Tool[], catalog: ShownCatalog): Tool[] {
  const hasTemplate = (t: Tool) => Boolean((t.inputSchema.properties as Record<string, unknown> | undefined)?.template);
  const first = tools.find(hasTemplate);
  if (!first) return tools;
  // What a model is handed: a tool only the page calls is listed only to hosts that keep it from the model.
  const size = (listed: Tool[]) => JSON.stringify(listed.filter((t) => !APP_ONLY_TOOLS.includes(t.name))).length;
  const all = describedIn(catalog, Infinity);
  const everywhere = tools.map((t) => describeTemplate(t, all));
  if (size(everywhere) < TOOLS_LIST_BUDGET) return everywhere;
  const bare = describedIn(catalog, 0);
  const others = tools.map((t) => describeTemplate(t, t === first ? bare : SEE_FIRST(first.name)));
  const room = Math.min(1_000, TOOLS_LIST_BUDGET - 1 - size(others) + 'see list_templates'.length);
  return others.map((t) => (t.name === first.name ? describeTemplate(t, describedIn(catalog, room)) : t));
}
