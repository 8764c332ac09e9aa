import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { decodeArguments } from '../src/mcp/arguments.js';
import { TOOLS } from '../src/tools/index.js';
import { nameKey } from '../src/requests/name-keys.js';
import { addDays, ALL_KEYS, AROUND_TODAY, sandbox, TODAY } from './support/sandbox.js';
import { connect } from './support/connect.js';

const sb = await sandbox(AROUND_TODAY);
sb.demoFirm.monthlyRequestLimit = 1e9;
const mcp = await connect(sb, { env: { DOCREQ_CONFIRM_SEND: 'never' }, today: TODAY });
afterAll(() => mcp.close());

const RUNS = Number(process.env.FUZZ_RUNS ?? 700);
// Hundreds of runs per property: a busy machine may take minutes. A test that timed out would leave its calls running
// into the next test's record, so the bound is generous: it stops a hang, not a slow run.
vi.setConfig({ testTimeout: 300_000 });
const tool = (name: string) => TOOLS.find((t) => t.name === name)!;
/** Judges the arguments as the server receives them: JSON on the wire, then the SDK's request parsing. */
const received = (name: string, args: unknown) =>
  CallToolRequestSchema.parse({ method: 'tools/call', params: { name, arguments: JSON.parse(JSON.stringify(args)) as unknown } }).params.arguments;
const isValid = (name: string, args: unknown) => tool(name).inputSchema.safeParse(decodeArguments(received(name, args), tool(name).inputSchema)).success;

const nasty = fc.oneof(
  fc.string({ maxLength: 50 }),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.string({ minLength: 10_000, maxLength: 20_000 }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '',
    ' ',
    '\u0000',
    '\u202e',
    '[]',
    '{}',
    '["sent"]',
    'null',
    'true',
    '-1',
    '1e999',
    'NaN',
  ),
);
const anyValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nasty,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nasty, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/**
 * Text a person can see, as the contract defines what may be e-mailed: no control, format (bidi,
 * zero-width, tag) or other default-ignorable character, and something visible.
 */
// Drawn from a visible alphabet (letters of several scripts, digits, punctuation, emoji, a combining
// accent that NFC composes): filtering arbitrary Unicode for visibility rejects almost every long string.
const VISIBLE = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-&/()#%+éèüöçñßÅØ€£¥中文字한국어日本語😀🎉📄',
  'e\u0301',
  'A\u030a',
  '❤️',
];
const visibleText = (max: number) => fc.string({ unit: fc.constantFrom(...VISIBLE), minLength: 1, maxLength: max }).filter((s) => s.trim().length > 0);
const invisibleChar = fc.constantFrom(
  '\u0000',
  '\u0007',
  '\u001b',
  '\u0085',
  '\u200b',
  '\u200d',
  '\u200e',
  '\u202a',
  '\u202e',
  '\u2066',
  '\u2069',
  '\u2060',
  '\u2063',
  '\u061c',
  '\u180e',
  '\ufeff',
  '\u00ad',
  '\u{E0001}',
  '\u{E0041}',
  '\u{E007F}',
  '\u2028',
  '\u3164',
  '\u034f',
);

/** Argument objects that mix the tool's own field names with anything at all, sometimes JSON-encoded. */
function argsFor(name: string) {
  const fields = Object.keys(tool(name).inputSchema.shape as Record<string, unknown>);
  const dangerous = fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty');
  return fc
    .tuple(fc.dictionary(fc.oneof(fc.constantFrom(...fields), dangerous, nasty), anyValue, { maxKeys: 6 }), fc.boolean())
    .map(([args, encode]) =>
      encode ? Object.fromEntries(Object.entries(args).map(([k, v]) => [k, typeof v === 'object' && v !== null ? JSON.stringify(v) : v])) : args,
    );
}

describe('fuzzing tool input', () => {
  it.each(['list_clients', 'list_requests', 'create_request'])('%s: no crash; invalid input is an error before any HTTP call', async (name) => {
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(argsFor(name), async (args) => {
        sb.calls.length = 0;
        const valid = isValid(name, args);
        // create_request only dry-runs here: sending is fuzzed below with valid input
        const call = name === 'create_request' && valid ? { ...(args as object), dryRun: true } : args;
        const result = await mcp.client.callTool({ name, arguments: call });
        const text = JSON.stringify(result);
        for (const key of ALL_KEYS) expect(text).not.toContain(key);
        if (!valid) {
          invalid++;
          expect(result.isError).toBe(true);
          expect(sb.calls).toHaveLength(0);
        }
        expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
        if (valid && name !== 'create_request') {
          // exactly the GETs this tool needs (both lists, in parallel, for a join, a grouping or a client name), unless the handler refused first
          const input = tool(name).inputSchema.parse(decodeArguments(received(name, args), tool(name).inputSchema));
          const both =
            name === 'list_clients' ? input.requests !== undefined : input.groupBy !== undefined || nameKey(input.client as string | undefined) !== '';
          const own = `GET /api/v1/${name === 'list_clients' ? 'clients' : 'requests'}`;
          const expected = result.isError && sb.calls.length === 0 ? [] : both ? ['GET /api/v1/clients', 'GET /api/v1/requests'] : [own];
          expect(sb.calls.map((c) => `${c.method} ${c.path}`).sort()).toEqual(expected);
        }
      }),
      { numRuns: RUNS },
    );
    expect(invalid).toBeGreaterThan(RUNS / 4);
  });

  it('create_request: e-mailed text with any invisible character is refused before any HTTP call', async () => {
    const client = sb.demoFirm.clients[0]!.id;
    await fc.assert(
      fc.asyncProperty(visibleText(40), invisibleChar, fc.nat(40), fc.boolean(), async (text, bad, at, inTitle) => {
        sb.calls.length = 0;
        const chars = [...text];
        const tainted = [...chars.slice(0, at % (chars.length + 1)), bad, ...chars.slice(at % (chars.length + 1))].join('');
        const args = inTitle ? { client, title: tainted, items: [{ name: 'W-2' }] } : { client, title: 'Fuzz', items: [{ name: 'ok' }, { name: tainted }] };
        const result = await mcp.call('create_request', args);
        expect(result.isError).toBe(true);
        expect(result.text).toContain(inTitle ? 'title: must not contain invisible' : 'items[1].name: must not contain invisible');
        expect(sb.calls).toHaveLength(0);
      }),
      { numRuns: Math.max(100, Math.round(RUNS / 3)) },
    );
  });

  it('decodes nested JSON text without touching the prototype', () => {
    const decoded = decodeArguments(JSON.parse('{"__proto__":{"polluted":1},"items":"[{\\"name\\":\\"a\\"}]"}'), tool('create_request').inputSchema) as Record<
      string,
      unknown
    >;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(decoded.items).toEqual([{ name: 'a' }]);
  });

  it('create_request: valid input sends exactly the expected body, once', async () => {
    // Unattended (DOCREQ_CONFIRM_SEND=never) sends go to active clients only: the others are refused, not fuzzed here.
    const clients = sb.demoFirm.clients.filter((c) => c.displayName !== 'Sam Taylor' && c.status === 'active');
    let n = 0;
    const validArgs = fc.record(
      {
        who: fc.constantFrom(...clients),
        by: fc.constantFrom('id', 'email', 'name'),
        title: visibleText(60),
        items: fc.array(
          fc.record(
            { name: visibleText(80), required: fc.boolean(), type: fc.constantFrom('file', 'text', 'date', 'number', 'boolean') },
            { requiredKeys: ['name'] },
          ),
          { minLength: 1, maxLength: 6 },
        ),
        correctnessMode: fc.constantFrom('off', 'advisory', 'soft', 'hard'),
        dueInDays: fc.integer({ min: 0, max: 400 }),
      },
      { requiredKeys: ['who', 'by', 'title', 'items'] },
    );
    await fc.assert(
      fc.asyncProperty(validArgs, async (v) => {
        sb.calls.length = 0;
        const title = `${v.title.trim()} #${++n}`;
        const dueDate = v.dueInDays === undefined ? undefined : addDays(TODAY, v.dueInDays);
        const args = {
          client: v.by === 'id' ? v.who.id : v.by === 'email' ? v.who.email : v.who.displayName,
          title,
          items: v.items,
          ...(dueDate ? { dueDate } : {}),
          ...(v.correctnessMode ? { correctnessMode: v.correctnessMode } : {}),
        };
        const result = await mcp.client.callTool({ name: 'create_request', arguments: args });
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
        const posts = sb.callsTo('POST', '/api/v1/requests');
        expect(posts).toHaveLength(1);
        expect(JSON.parse(posts[0]!.body!)).toEqual({
          clientId: v.who.id,
          title: title.normalize('NFC').trim(),
          ...(dueDate ? { dueDate } : {}),
          items: v.items.map((i) => ({ name: i.name.normalize('NFC').trim(), required: i.required ?? true, type: i.type ?? 'file' })),
          ...(v.correctnessMode ? { correctnessMode: v.correctnessMode } : {}),
        });
      }),
      { numRuns: Math.max(50, RUNS / 5) },
    );
  });
});

describe('fuzzing API answers', () => {
  const body = fc.oneof(
    fc.json(),
    fc.string(),
    fc.array(fc.jsonValue(), { maxLength: 20 }).map((data) => JSON.stringify({ data })),
    fc
      .array(
        fc.dictionary(
          fc.constantFrom('id', 'displayName', 'email', 'status', 'title', 'dueDate', 'createdAt', 'clientName', 'totalItems', 'completedItems', '__proto__'),
          fc.jsonValue(),
        ),
        { maxLength: 20 },
      )
      .map((data) => JSON.stringify({ data })),
  );
  it.each(['list_clients', 'list_requests'])('%s never crashes, whatever the service answers', async (name) => {
    const route = name === 'list_clients' ? 'GET /api/v1/clients' : 'GET /api/v1/requests';
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom(200, 201, 400, 404, 500), async (raw, status) => {
        sb.clearFaults();
        sb.inject(route, { kind: 'raw', status, body: raw });
        // The SDK client also checks structuredContent against the listed outputSchema.
        const result = await mcp.client.callTool({ name, arguments: { limit: 500 } });
        expect(result.content).toBeInstanceOf(Array);
        if (!result.isError) expect(result.structuredContent).toBeTruthy();
      }),
      { numRuns: RUNS },
    );
  });
});

describe('prototype keys', () => {
  it('never reads fields through a "__proto__" key', async () => {
    sb.calls.length = 0;
    const smuggle = (fields: object) => JSON.parse(`{"__proto__": ${JSON.stringify(fields)}}`) as Record<string, unknown>;
    const listed = await mcp.client.callTool({ name: 'list_clients', arguments: smuggle({ search: 'zzzz-nobody' }) });
    expect((listed.structuredContent as { matched: number }).matched).toBe(sb.demoFirm.clients.length);
    const refused = await mcp.client.callTool({
      name: 'create_request',
      arguments: smuggle({ client: sb.demoFirm.clients[0]!.id, title: 'T', items: [{ name: 'a' }] }),
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('client: must be text');
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
    expect(({} as Record<string, unknown>).search).toBeUndefined();
  });

  it('keeps a "__proto__" own key as an unknown field when called in-process', () => {
    const args = JSON.parse('{"__proto__": {"search": "x"}}') as unknown;
    const decoded = decodeArguments(args, tool('list_clients').inputSchema) as Record<string, unknown>;
    expect(Object.keys(decoded)).toEqual(['__proto__']);
    expect(decoded.search).toBeUndefined();
    expect(tool('list_clients').inputSchema.safeParse(decoded).success).toBe(false);
  });
});
