import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '../src/config.js';
import { createServer } from '../src/mcp/server.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { defineTool } from '../src/tools/define.js';
import { ERA } from './support/era.js';
import { ALL_KEYS } from './support/sandbox.js';
import { connect, sandboxAndClient, structured } from './support/connect.js';

const { sb, firm, mcp, upstream } = await sandboxAndClient();

describe('modes and configuration', () => {
  it('does not offer create_request in read-only mode, and refuses a call to it', async () => {
    const ro = await connect(sb, { env: { DOCREQ_READ_ONLY: 'true' } });
    const names = (await ro.client.listTools()).tools.map((t) => t.name);
    const result = await ro.call('create_request', { client: 'x', title: 'T', items: [{ name: 'a' }] });
    await ro.close();
    expect(names).toEqual(['list_clients', 'list_requests', 'list_templates']);
    expect(result.isError).toBe(true);
    expect(result.text).toContain('read-only');
    expect(upstream()).toBe(0);
  });

  it('answers every tool call with the variables to set when not configured', async () => {
    const bare = await connect(undefined, { env: { DOCREQ_API_KEY: undefined, DOCREQ_BASE_URL: 'http://example.com' } });
    for (const tool of ['list_clients', 'list_requests']) {
      const result = await bare.call(tool);
      expect(result.isError).toBe(true);
      expect(result.text).toContain('DOCREQ_API_KEY is not set');
      expect(result.text).toContain('DOCREQ_BASE_URL (or --base-url) must use https://');
      expect(result.text).toContain('--sandbox');
    }
    await bare.close();
  });
});

describe('what the server says of itself, and a session not yet initialised', () => {
  const env = () => ({ DOCREQ_API_KEY: SANDBOX_KEYS.demo, DOCREQ_BASE_URL: sb.url });

  it('names itself and the capabilities it has in its initialize answer', async () => {
    const server = createServer(loadConfig({}, env()));
    const client = new Client({ name: 'caps', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'docreq-mcp', title: 'Document Requests' });
      expect(client.getServerCapabilities()).toMatchObject({
        tools: { listChanged: true },
        logging: {},
        resources: { listChanged: true },
        prompts: {},
        completions: {},
      });
    } finally {
      await client.close();
    }
  });

  it('refuses a tools/call on a 2025 session before initialize, calling nothing', async () => {
    const server = createServer(loadConfig({}, env()));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const answers: JSONRPCMessage[] = [];
    clientSide.onmessage = (message) => answers.push(message);
    await server.connect(serverSide);
    await clientSide.start();
    const before = upstream();
    await clientSide.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_clients', arguments: {} } });
    for (let i = 0; i < 100 && answers.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await server.close();
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ id: 7, error: { code: -32600 } });
    expect((answers[0] as { error: { message: string } }).error.message).toContain(
      'The session is not initialised: send initialize first. Nothing was called or sent.',
    );
    expect(upstream()).toBe(before);
  });

  it('tells onCall how long each call took, in ms', async () => {
    const took: number[] = [];
    const server = createServer(loadConfig({}, env()), { onCall: (_tool, _result, ms) => took.push(ms) });
    const client = new Client({ name: 'timed', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    let outside: number;
    try {
      const started = performance.now();
      await client.callTool({ name: 'list_templates', arguments: {} });
      outside = performance.now() - started;
    } finally {
      await client.close();
    }
    // A duration, not a clock reading: the server's span of the call lies inside the client's.
    expect(took).toHaveLength(1);
    expect(took[0]).toBeGreaterThanOrEqual(0);
    expect(took[0]).toBeLessThanOrEqual(outside);
  });

  it('offers no prompt or page that sends in read-only mode', async () => {
    const listed = async (readOnly: boolean) => {
      const server = createServer(loadConfig({}, { ...env(), ...(readOnly ? { DOCREQ_READ_ONLY: 'true' } : {}) }));
      const client = new Client({ name: 'ro', version: '1.0.0' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
      try {
        return { prompts: (await client.listPrompts()).prompts.map((p) => p.name), resources: (await client.listResources()).resources.map((r) => r.uri) };
      } finally {
        await client.close();
      }
    };
    const all = await listed(false);
    const readOnly = await listed(true);
    expect(all.prompts).toContain('send-checklist');
    expect(readOnly.prompts).not.toContain('send-checklist');
    expect(readOnly.prompts).toEqual(all.prompts.filter((p) => p !== 'send-checklist'));
    // The send tools' pages go with them; what is left is a part of the full list.
    const gone = all.resources.filter((uri) => !readOnly.resources.includes(uri));
    expect(gone.length).toBeGreaterThan(0);
    for (const uri of gone) expect(uri).toMatch(/^ui:\/\//);
    for (const uri of readOnly.resources) expect(all.resources).toContain(uri);
  });
});

describe('progress', () => {
  // Both eras: at 2026-07-28 notifications/progress "continue to flow on the response stream of the request they relate to".
  it('reports progress when the caller asks for it', async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    await mcp.callWith('list_requests', {}, { onprogress: (p) => seen.push(p) });
    expect(seen.map((p) => p.progress)).toEqual([0, 1]);
    expect(seen[1]!.message).toMatch(/^Filtering \d+ requests$/);
  });
});

describe('the first call', () => {
  // Nothing after initialize warms ICU's number format (src/mcp/server.ts): no answer may need it, or a
  // script's first call would pay for making it.
  it("answers every tool's common questions without ICU's number format", async () => {
    const toLocaleString = vi.spyOn(Number.prototype, 'toLocaleString');
    const numberFormat = vi.spyOn(Intl, 'NumberFormat');
    try {
      const calls: [string, Record<string, unknown>][] = [
        ['list_clients', {}],
        ['list_clients', { details: true, search: 'a' }],
        ['list_requests', {}],
        ['list_requests', { groupBy: 'client', sort: 'most_outstanding' }],
        ['list_requests', { overdue: true, search: 'tax', limit: 3, offset: 2 }],
        ['list_requests', { client: firm.clients[0]!.displayName.split(' ')[0]! }],
        ['list_templates', {}],
        ['create_request', { client: firm.clients[1]!.id, title: 'Preview only', items: [{ name: 'W-2' }] }],
        ['create_request_batch', { clients: [firm.clients[1]!.id, firm.clients[3]!.id], title: 'Preview only', items: [{ name: 'W-2' }] }],
      ];
      for (const [tool, args] of calls) expect((await mcp.call(tool, args)).isError, tool).toBeFalsy();
      expect(toLocaleString).not.toHaveBeenCalled();
      expect(numberFormat).not.toHaveBeenCalled();
    } finally {
      toLocaleString.mockRestore();
      numberFormat.mockRestore();
    }
  });

  it('the built server (dist/index.js) warms nothing of ICU after initialize, and answers without it', async () => {
    const lib = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof import('../src/index.js');
    const toLocaleString = vi.spyOn(Number.prototype, 'toLocaleString');
    const numberFormat = vi.spyOn(Intl, 'NumberFormat');
    const server = lib.createServer(lib.loadConfig({}, { DOCREQ_API_KEY: SANDBOX_KEYS.demo, DOCREQ_BASE_URL: sb.url }));
    const client = new Client({ name: 'built', version: '1.0.0' });
    try {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
      // What the server does after initialize runs in the next turns (undici, the SDK's schemas).
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const [tool, args] of [
        ['list_requests', {}],
        ['list_clients', { details: true }],
        ['list_templates', {}],
      ] as const) {
        expect(((await client.callTool({ name: tool, arguments: args })) as CallToolResult).isError, tool).toBeFalsy();
      }
      expect(toLocaleString).not.toHaveBeenCalled();
      expect(numberFormat).not.toHaveBeenCalled();
    } finally {
      toLocaleString.mockRestore();
      numberFormat.mockRestore();
      await client.close();
    }
  });
});

describe('confirmation before a send', () => {
  const args = (title: string) => ({ client: firm.clients[2]!.id, title, items: [{ name: 'Bank statements' }], dueDate: '2099-01-31' });

  it('asks the person through elicitation and sends when they accept', async () => {
    const asked: string[] = [];
    const host = await connect(sb, { elicit: (m) => (asked.push(m), { action: 'accept', content: { confirm: true } }) });
    const result = await host.call('create_request', args('Confirmed send'));
    await host.close();
    expect(structured<{ sent: boolean }>(result).sent).toBe(true);
    expect(asked[0]).toContain('Confirmed send');
    expect(asked[0]).toContain(firm.clients[2]!.email);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
  });

  it.each([
    ['declines', { action: 'decline' as const }],
    ['cancels', { action: 'cancel' as const }],
    ['accepts without ticking confirm', { action: 'accept' as const, content: { confirm: false } }],
  ])('sends nothing when the person %s', async (_, answer) => {
    const host = await connect(sb, { elicit: () => answer });
    const result = await host.call('create_request', args(`Declined ${answer.action}`));
    await host.close();
    expect(result.isError).toBeFalsy();
    expect(structured<{ sent: boolean }>(result).sent).toBe(false);
    expect(result.text).toMatch(/^NOT SENT/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('refuses to send without elicitation when DOCREQ_CONFIRM_SEND=always', async () => {
    const strict = await connect(sb, { env: { DOCREQ_CONFIRM_SEND: 'always' } });
    const result = await strict.call('create_request', args('Always confirm'));
    await strict.close();
    expect(result.isError).toBe(true);
    expect(result.text).toContain('DOCREQ_CONFIRM_SEND');
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('does not ask when DOCREQ_CONFIRM_SEND=never', async () => {
    let asked = 0;
    const host = await connect(sb, { env: { DOCREQ_CONFIRM_SEND: 'never' }, elicit: () => (asked++, { action: 'decline' }) });
    const result = await host.call('create_request', args('Never ask'));
    await host.close();
    expect(structured<{ sent: boolean }>(result).sent).toBe(true);
    expect(asked).toBe(0);
  });

  // 2025 only: a pushed elicitation/create that fails. At 2026-07-28 the server pushes no request: "Server-to-client
  // interactions (sampling, elicitation, roots) are embedded in results as input requests" (Streamable HTTP), so
  // a host that cannot ask does not retry, and nothing is sent (test/mrtr.test.ts: declines, altered and replayed states).
  it.skipIf(ERA === '2026-07-28')('sends nothing and says so when the host fails to ask the person', async () => {
    const host = await connect(sb, {
      elicit: () => {
        throw new Error('the dialog crashed');
      },
    });
    const result = await host.call('create_request', { client: firm.clients[2]!.id, title: 'Elicitation fails', items: [{ name: 'x' }] });
    await host.close();
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Nothing was sent: asking the person to confirm failed/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });
});

describe('dispatch', () => {
  it('answers an unknown tool with a protocol error (-32602, as the specification lists it) naming the tools offered', async () => {
    const error = (await mcp.call('delete_everything').catch((e: unknown) => e)) as { code?: number; message?: string };
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('Unknown tool "delete_everything"');
    expect(error.message).toContain('list_clients, list_requests, create_request');
    expect(upstream()).toBe(0);
  });

  it("checks a result against the tool's outputSchema and answers a mismatch as a clear error", async () => {
    const broken = defineTool({
      name: 'broken_tool',
      title: 'Broken tool',
      description: 'Returns a result that breaks its own output schema.',
      inputSchema: z.strictObject({}),
      outputSchema: z.object({ count: z.number(), names: z.array(z.string()) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: () => Promise.resolve({ text: 'three', structured: { count: 'three', names: [1] } as unknown as { count: number; names: string[] } }),
    });
    const host = await connect(sb, { extraTools: [broken] });
    const result = await host.call('broken_tool');
    await host.close();
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.text).toMatch(/^broken_tool produced a result that does not match its output schema/);
    expect(result.text).toContain('count:');
    expect(result.text).toContain('names.0:');
  });

  it('checks rows apart from the rest of a result: a shared row found good once is not re-checked, a bad row or field is still caught', async () => {
    const good = Object.freeze({ n: 1, label: 'one' });
    const bad = Object.freeze({ n: 'two', label: 'two' });
    let answer: { total: unknown; rows: readonly object[]; bounded: unknown[] } = { total: 1, rows: [good], bounded: [] };
    const rows = defineTool({
      name: 'rows_tool',
      title: 'Rows tool',
      description: 'Returns rows it shares between answers.',
      inputSchema: z.strictObject({}),
      outputSchema: z.strictObject({
        total: z.number(),
        rows: z.array(z.object({ n: z.number(), label: z.string() })),
        bounded: z.array(z.object({ n: z.number() })).max(1),
        maybe: z.array(z.object({ n: z.number() })).optional(),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: () => Promise.resolve({ text: 'rows', structured: answer as never }),
    });
    const host = await connect(sb, { extraTools: [rows] });
    expect((await host.call('rows_tool')).isError).toBeFalsy();
    // The same good row again, beside a bad one: the bad one is named by its place.
    answer = { total: 2, rows: [good, bad], bounded: [] };
    const badRow = await host.call('rows_tool');
    expect(badRow.isError).toBe(true);
    expect(badRow.text).toContain('rows.1.n:');
    expect(badRow.text).not.toContain('rows.0');
    // Good rows, a bad field beside them; a field the schema does not have (strict); an array with a bound of its own.
    answer = { total: 'two', rows: [good, good], bounded: [] };
    expect((await host.call('rows_tool')).text).toContain('total:');
    answer = { total: 1, rows: [good], bounded: [], extra: true } as never;
    expect((await host.call('rows_tool')).isError).toBe(true);
    answer = { total: 1, rows: [good], bounded: [{ n: 1 }, { n: 2 }] };
    expect((await host.call('rows_tool')).text).toContain('bounded:');
    answer = { total: 1, rows: 'none' as never, bounded: [] };
    expect((await host.call('rows_tool')).text).toContain('rows:');
    // An optional list of rows: absent is fine, a bad row in it is named, and so is a list that is not one.
    answer = { total: 1, rows: [good], bounded: [], maybe: [Object.freeze({ n: 1 }), Object.freeze({ n: 'x' })] } as never;
    expect((await host.call('rows_tool')).text).toContain('maybe.1.n:');
    answer = { total: 1, rows: [good], bounded: [], maybe: 'x' } as never;
    expect((await host.call('rows_tool')).text).toContain('maybe:');
    answer = { total: 1, rows: [good], bounded: [], maybe: [good] } as never;
    expect((await host.call('rows_tool')).isError).toBeFalsy();
    // A row that is not frozen can change between answers: it is checked every time.
    const loose: { n: unknown; label: string } = { n: 3, label: 'three' };
    answer = { total: 1, rows: [loose], bounded: [] };
    expect((await host.call('rows_tool')).isError).toBeFalsy();
    loose.n = 'three';
    expect((await host.call('rows_tool')).text).toContain('rows.0.n:');
    await host.close();
  });
});

describe('what an API failure tells the person to do', () => {
  it('names DOCREQ_API_KEY, never the key, when the service rejects the key', async () => {
    const revoked = await connect(sb, { key: sb.keys.revoked });
    const result = await revoked.call('list_clients');
    await revoked.close();
    expect(result.isError).toBe(true);
    expect(result.text).toContain('rejected the API key');
    expect(result.text).toContain('Check DOCREQ_API_KEY');
    for (const key of ALL_KEYS) expect(result.text).not.toContain(key);
  });

  it('gives the wait a 429 asked for', async () => {
    sb.inject('GET /api/v1/clients', {
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '120' },
      body: { error: { code: 'too_many_requests', message: 'Slow down.' } },
    });
    const result = await mcp.call('list_clients');
    expect(result.isError).toBe(true);
    expect(result.text).toContain('rate limiting');
    expect(result.text).toContain('Try again in 120 s.');
  });

  it('says the service failed, and to try later, on a 5xx', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'status', status: 500 });
    const result = await mcp.call('list_requests');
    expect(result.isError).toBe(true);
    expect(result.text).toContain('The service failed (500)');
    expect(result.text).toContain('Try again later.');
    expect(result.text).not.toContain('API key');
  });
});
