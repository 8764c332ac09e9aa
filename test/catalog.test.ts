import { afterAll, describe, expect, it } from 'vitest';
import { sandbox } from './support/sandbox.js';
import { connect } from './support/connect.js';

const sb = await sandbox();
const mcp = await connect(sb);
afterAll(() => mcp.close());
const { tools } = await mcp.client.listTools();

function walk(schema: unknown, visit: (node: Record<string, unknown>, path: string) => void, path = '$'): void {
  if (!schema || typeof schema !== 'object') return;
  visit(schema as Record<string, unknown>, path);
  for (const [key, value] of Object.entries(schema)) {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, visit, `${path}.${key}[${i}]`));
    else if (value && typeof value === 'object') walk(value, visit, `${path}.${key}`);
  }
}

describe('tool catalogue', () => {
  it('lists exactly the four tools, in under 12,000 characters in all', () => {
    expect(tools.map((t) => t.name)).toEqual(['list_clients', 'list_requests', 'create_request', 'create_request_batch', 'list_templates']);
    // What a model reads: hosts hand it the tools without _meta (the MCP Apps page links, 186 characters).
    expect(JSON.stringify(tools.map(({ _meta: _, ...t }) => t)).length).toBeLessThan(12_000);
    expect(JSON.stringify(tools.map((t) => t._meta ?? null)).length).toBeLessThan(250);
  });

  it.each(tools.map((t) => [t.name, t]))('%s has a title, all four annotations and a description under 1,024 characters', (_, tool) => {
    expect(tool.title).toBeTruthy();
    expect(tool.description!.length).toBeGreaterThan(80);
    expect(tool.description!.length).toBeLessThan(1024);
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
      expect(typeof tool.annotations?.[hint], hint).toBe('boolean');
    }
  });

  it('marks reads as read-only and idempotent, and both sends as destructive (directories count e-mailing a client so), neither read-only nor idempotent', () => {
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.annotations!]));
    // The two lists read the firm's service (an open world); the templates are this server's own file.
    expect(byName.list_clients).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: true });
    expect(byName.list_requests).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: true });
    expect(byName.list_templates).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    for (const read of ['list_clients', 'list_requests', 'list_templates']) expect(byName[read]).toMatchObject({ destructiveHint: false });
    for (const send of ['create_request', 'create_request_batch'])
      expect(byName[send], send).toMatchObject({ readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: true });
  });

  it.each(tools.map((t) => [t.name, t]))('%s lists portable schemas: object root, no $schema, no root unions, no huge patterns', (_, tool) => {
    for (const schema of [tool.inputSchema, tool.outputSchema!]) {
      expect(schema.type).toBe('object');
      for (const key of ['anyOf', 'oneOf', 'allOf', 'not', '$ref', '$defs']) expect(schema).not.toHaveProperty(key);
      walk(schema, (node, path) => {
        expect(node, path).not.toHaveProperty('$schema');
        expect(Array.isArray(node.type), `${path}.type is an array`).toBe(false);
        if (typeof node.pattern === 'string') expect(node.pattern.length, path).toBeLessThan(40);
      });
    }
  });

  it.each(tools.map((t) => [t.name, t]))('%s describes every input field', (_, tool) => {
    const props = tool.inputSchema.properties as Record<string, { description?: string }>;
    for (const [name, prop] of Object.entries(props)) expect(prop.description, name).toBeTruthy();
  });

  it('says in the list tools what this server cannot do', () => {
    for (const tool of tools.filter((t) => t.name === 'list_clients' || t.name === 'list_requests')) {
      expect(tool.description, tool.name).toMatch(
        /cannot remind clients, change, re-date, cancel or delete requests, change client details, or see answers and files/,
      );
    }
  });

  it('lists the same schemas as the snapshot (a schema change is a visible diff)', async () => {
    await expect(JSON.stringify(tools, null, 2)).toMatchFileSnapshot('__toolsnaps__/tools.json');
  });
});
