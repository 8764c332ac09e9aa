import { afterAll, describe, expect, it } from 'vitest';
import type { Fault, Route } from '../src/sandbox/service.js';
import { ALL_KEYS, connect, sandbox } from './helpers.js';

/**
 * Every tool against every fault. A cell passes when the call answers (with an error that speaks of
 * the fault injected, or a valid result) before the MCP client's own deadline of timeout + slack, the
 * key is absent, a POST was sent at most once, and the next call works.
 */
const TIMEOUT_MS = 800;
const SLACK_MS = 2_500; // retries with backoff, and one Retry-After of 1 s, fit in this

const sb = await sandbox();
sb.demoFirm.monthlyRequestLimit = 1e9;
const mcp = await connect(sb, { env: { DOCREQ_TIMEOUT_MS: String(TIMEOUT_MS) }, api: { maxResponseBytes: 2 * 1024 * 1024 } });
afterAll(() => mcp.close());

/** `says`: what an error result must say for this fault (absent: the call must succeed). */
type Setup = { fault?: Fault; before?: () => Promise<void>; after?: () => Promise<void>; says?: RegExp };
const LOST = /Could not reach the service .*\(\w+\)\.|The connection to .* failed \(\w+\) while sending\. The request may have been sent: check with list_requests/;
// A 5xx to a POST may come after the request was handled (contract §3.4): "may have been sent", never "try again".
const serviceFailed = (status: number) => new RegExp(`The service failed \\(${status}\\)\\..*(Try again later\\.|The request may have been sent: check with list_requests)`);
const FAULTS: Record<string, Setup> = {
  'connection refused': { before: () => sb.pause(), after: () => sb.resume(), says: /Could not reach the service .*\(ECONNREFUSED\)/ },
  'reset before headers': { fault: { kind: 'reset' }, says: LOST },
  'reset mid-body': { fault: { kind: 'resetMidBody' }, says: LOST },
  'headers slower than the timeout': { fault: { kind: 'latency', ms: TIMEOUT_MS * 3 }, says: new RegExp(`did not answer within ${TIMEOUT_MS} ms`) },
  'a body that trickles': { fault: { kind: 'trickle', intervalMs: 100, chunkBytes: 8 }, says: new RegExp(`did not answer within ${TIMEOUT_MS} ms`) },
  'HTTP 500': { fault: { kind: 'status', status: 500 }, says: serviceFailed(500) },
  'HTTP 502': { fault: { kind: 'status', status: 502 }, says: serviceFailed(502) },
  'HTTP 503': { fault: { kind: 'status', status: 503 }, says: serviceFailed(503) },
  'HTTP 504': { fault: { kind: 'status', status: 504 }, says: serviceFailed(504) },
  '429 with Retry-After': { fault: { kind: 'status', status: 429, headers: { 'retry-after': '1' } }, says: /rate limiting calls \(429\).*Try again in 1 s\./ },
  '429 without Retry-After': { fault: { kind: 'status', status: 429 }, says: /rate limiting calls \(429\).*Try again shortly\./ },
  'an HTML error page': { fault: { kind: 'html', status: 502 }, says: /The service failed \(502\)\. The body was not JSON \(text\/html\)/ },
  // On a POST these answers still mean "sent" (with a warning), so they are errors only for the lists.
  'truncated JSON': { fault: { kind: 'truncated' }, says: /list is not valid JSON/ },
  '"data" missing': { fault: { kind: 'raw', body: '{"items":[]}' }, says: /list has no "data" array \(data is missing\)/ },
  '"data" not an array': { fault: { kind: 'raw', body: '{"data":{"id":1}}' }, says: /list has no "data" array \(data is object\)/ },
  'records of wrong types': { fault: { kind: 'raw', body: '{"data":[1,"x",null,{"id":{"a":1},"displayName":7,"totalItems":"many","dueDate":false}]}' } },
  'a body over the size cap': { fault: { kind: 'huge', bytes: 50 * 1024 * 1024 }, says: /larger than the 2\.0 MB cap/ },
  'the key revoked mid-session': {
    before: () => Promise.resolve(sb.revoke(sb.keys.demo)),
    after: () => Promise.resolve(sb.restore(sb.keys.demo)),
    says: /rejected the API key .*Check DOCREQ_API_KEY\./s,
  },
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
        if (result.isError) {
          // the message speaks of the fault injected, and not of another (a 5xx is not "check the key")
          expect(setup.says, 'an error where success was expected').toBeDefined();
          expect(text).toMatch(setup.says!);
          if (!/key revoked/.test(faultName)) expect(text).not.toMatch(/API key|DOCREQ_API_KEY/);
        }
        expect(sb.callsTo('POST', '/api/v1/requests').length).toBeLessThanOrEqual(1);
        if (tool.name === 'create_request' && result.isError && sb.callsTo('POST', '/api/v1/requests').length === 1) {
          // a failed POST either says the outcome is unknown or was refused by an answer
          expect(text).toMatch(/may have been sent|refused|failed|rate|limit|rejected|not valid JSON|wrong|cap/i);
        }
        const next = await mcp.client.callTool({ name: 'list_requests', arguments: { limit: 1 } });
        expect(next.isError, JSON.stringify(next.content)).toBeFalsy();
        results.at(-1)!.ok = true;
      });
    }
  }
});
