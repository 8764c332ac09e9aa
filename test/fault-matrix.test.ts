import { afterAll, describe, expect, it } from 'vitest';
import type { Fault, Route } from '../src/sandbox/service.js';
import { ALL_KEYS, connect, sandbox } from './helpers.js';

/**
 * Every tool against every fault. A cell passes when the call answers (with a clear error or a valid
 * result) before the MCP client's own deadline of timeout + slack, the key is absent, a POST was sent
 * at most once, and the next call works.
 */
const TIMEOUT_MS = 800;
const SLACK_MS = 2_500; // retries with backoff, and one Retry-After of 1 s, fit in this

const sb = await sandbox();
sb.demoFirm.monthlyRequestLimit = 1e9;
const mcp = await connect(sb, { env: { DOCREQ_TIMEOUT_MS: String(TIMEOUT_MS) }, api: { maxResponseBytes: 2 * 1024 * 1024 } });
afterAll(() => mcp.close());

type Setup = { fault?: Fault; before?: () => Promise<void>; after?: () => Promise<void>; all?: boolean };
const FAULTS: Record<string, Setup> = {
  'connection refused': { before: () => sb.pause(), after: () => sb.resume() },
  'reset before headers': { fault: { kind: 'reset' } },
  'reset mid-body': { fault: { kind: 'resetMidBody' } },
  'headers slower than the timeout': { fault: { kind: 'latency', ms: TIMEOUT_MS * 3 } },
  'a body that trickles': { fault: { kind: 'trickle', intervalMs: 100, chunkBytes: 8 } },
  'HTTP 500': { fault: { kind: 'status', status: 500 } },
  'HTTP 502': { fault: { kind: 'status', status: 502 } },
  'HTTP 503': { fault: { kind: 'status', status: 503 } },
  'HTTP 504': { fault: { kind: 'status', status: 504 } },
  '429 with Retry-After': { fault: { kind: 'status', status: 429, headers: { 'retry-after': '1' } } },
  '429 without Retry-After': { fault: { kind: 'status', status: 429 } },
  'an HTML error page': { fault: { kind: 'html', status: 502 } },
  'truncated JSON': { fault: { kind: 'truncated' } },
  '"data" missing': { fault: { kind: 'raw', body: '{"items":[]}' } },
  '"data" not an array': { fault: { kind: 'raw', body: '{"data":{"id":1}}' } },
  'records of wrong types': { fault: { kind: 'raw', body: '{"data":[1,"x",null,{"id":{"a":1},"displayName":7,"totalItems":"many","dueDate":false}]}' } },
  'a body over the size cap': { fault: { kind: 'huge', bytes: 50 * 1024 * 1024 } },
  'the key revoked mid-session': { before: () => Promise.resolve(sb.revoke(sb.keys.demo)), after: () => Promise.resolve(sb.restore(sb.keys.demo)) },
};

let counter = 0;
const TOOLS: { name: string; route: Route; args: () => Record<string, unknown> }[] = [
  { name: 'list_clients', route: 'GET /api/v1/clients', args: () => ({ search: 'a' }) },
  { name: 'list_requests', route: 'GET /api/v1/requests', args: () => ({ overdue: true }) },
  {
    name: 'create_request',
    route: 'POST /api/v1/requests',
    args: () => ({ client: sb.demoFirm.clients[1]!.id, title: `Matrix ${++counter}`, items: [{ name: 'Statement' }] }),
  },
];

const results: { tool: string; fault: string; ok: boolean }[] = [];

describe('fault matrix', () => {
  afterAll(() => {
    const passed = results.filter((r) => r.ok).length;
    const faults = Object.keys(FAULTS);
    const rows = faults.map((f) => `${f.padEnd(32)} ${TOOLS.map((t) => (results.find((r) => r.tool === t.name && r.fault === f)?.ok ? 'pass' : 'FAIL').padEnd(15)).join('')}`);
    console.log(`\nFault matrix (timeout ${TIMEOUT_MS} ms + ${SLACK_MS} ms slack)\n${''.padEnd(32)} ${TOOLS.map((t) => t.name.padEnd(15)).join('')}\n${rows.join('\n')}\ncells passed: ${passed}/${results.length}`);
  });

  for (const tool of TOOLS) {
    for (const [faultName, setup] of Object.entries(FAULTS)) {
      it(`${tool.name} × ${faultName}`, async () => {
        results.push({ tool: tool.name, fault: faultName, ok: false });
        sb.clearFaults();
        sb.calls.length = 0;
        if (setup.fault) sb.inject(tool.route, setup.fault);
        await setup.before?.();
        let result;
        try {
          result = await mcp.client.callTool({ name: tool.name, arguments: tool.args() }, undefined, { timeout: TIMEOUT_MS + SLACK_MS });
        } finally {
          sb.clearFaults();
          await setup.after?.();
        }
        const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
        expect(text.length).toBeGreaterThan(0);
        for (const key of ALL_KEYS) expect(text).not.toContain(key);
        expect(text).not.toMatch(/<html|<!DOCTYPE/i);
        if (result.isError) expect(text).toMatch(/service|timed? out|within|reach|connection|key|rate|sent|JSON|cap|data/i);
        expect(sb.callsTo('POST', '/api/v1/requests').length).toBeLessThanOrEqual(1);
        if (tool.name === 'create_request' && result.isError && sb.callsTo('POST', '/api/v1/requests').length === 1) {
          // a failed POST either says the outcome is unknown or was refused by an answer
          expect(text).toMatch(/may have been sent|refused|failed|rate|limit|rejected|not valid JSON|wrong|cap/i);
        }
        const next = await mcp.client.callTool({ name: 'list_requests', arguments: { limit: 1 } });
        expect(next.isError).toBeFalsy();
        results.at(-1)!.ok = true;
      });
    }
  }
});
