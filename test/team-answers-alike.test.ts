import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { APPS_HOST } from './support/connect.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

const { questions } = (await import(new URL('../scripts/bench/throughput.mjs', import.meta.url).href)) as {
  questions: (count: number, seed?: number, today?: Date) => Record<string, unknown>[];
};

/**
 * Team mode's cheap path for a 2025-11-25 client changes no answer. A client that declares no capability gets no
 * session (nothing read from the store per call), a key's fingerprint is kept between requests, and a call
 * with no progress token is answered as one JSON body; a host that shows pages keeps a session, read per
 * call; a call with a progress token is answered as an event stream (its progress, then its answer). The throughput benchmark's
 * varied list_requests questions, and the other reads, are answered alike by each, byte for byte.
 */
const sb = await sandbox({ clients: 300, requests: 2_000 });
const svc = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE_DIR: '' }) });

async function client(capabilities: Record<string, unknown> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${sb.keys.demo}` } } });
  const c = new Client({ name: 'alike', version: '1' }, { capabilities });
  await c.connect(transport);
  afterAll(() => c.close());
  return { client: c, transport };
}

const plain = await client();
const pages = await client(APPS_HOST);

/** What a model and a host read of an answer: its content, structured content and error flag. */
const read = (r: CallToolResult) => {
  captured.push(JSON.stringify(r.content));
  return JSON.stringify({ content: r.content, structuredContent: r.structuredContent, isError: r.isError ?? false });
};

describe('team mode answers a 2025 client alike, with a session or without, plain or streamed', () => {
  it('only the host, which declares capabilities, has a session', () => {
    expect(plain.transport.sessionId).toBeUndefined();
    expect(pages.transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it("the benchmark's varied list_requests questions, and the other reads", async () => {
    const asked: [string, Record<string, unknown>][] = [
      ...questions(60, 31).map((q): [string, Record<string, unknown>] => ['list_requests', q]),
      ['list_clients', {}],
      ['list_clients', { search: 'trust' }],
      ['list_templates', {}],
      ['list_requests', { overdue: true, groupBy: 'client', sort: 'most_overdue' }],
    ];
    // Each list read once first: every answer compared is then a revalidated one (it says so).
    for (const name of ['list_requests', 'list_clients']) await plain.client.callTool({ name, arguments: {} });
    for (const [name, args] of asked) {
      const a = read((await plain.client.callTool({ name, arguments: args })) as CallToolResult);
      const b = read((await pages.client.callTool({ name, arguments: args })) as CallToolResult);
      const streamed = read((await plain.client.callTool({ name, arguments: args }, undefined, { onprogress: () => undefined })) as CallToolResult);
      expect(b, `${name} ${JSON.stringify(args)}`).toBe(a);
      expect(streamed, `${name} ${JSON.stringify(args)} (with a progress token)`).toBe(a);
      expect(a).not.toContain('"isError":true');
    }
  });
});
