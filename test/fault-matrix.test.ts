import { afterAll, describe, expect, it } from 'vitest';
import type { Fault, Route } from '../src/sandbox/service.js';
import { ALL_KEYS, sandbox } from './support/sandbox.js';
import { connect } from './support/connect.js';

/**
 * Every tool against every fault. A cell passes when the call answers with the one right outcome for
 * that fault (an error that speaks of it, or a valid result) before the MCP client's own deadline of
 * timeout + slack, the key is absent, a POST was sent at most once, and the next call works.
 * create_request really sends here (DOCREQ_CONFIRM_SEND=never), so each fault lands on its POST.
 */
const TIMEOUT_MS = 800;
const SLACK_MS = 2_500; // retries with backoff, and one Retry-After of 1 s, fit in this

const sb = await sandbox();
sb.demoFirm.monthlyRequestLimit = 1e9;
const mcp = await connect(sb, { env: { DOCREQ_TIMEOUT_MS: String(TIMEOUT_MS) }, api: { maxResponseBytes: 2 * 1024 * 1024 } });
const sender = await connect(sb, { env: { DOCREQ_TIMEOUT_MS: String(TIMEOUT_MS), DOCREQ_CONFIRM_SEND: 'never' }, api: { maxResponseBytes: 2 * 1024 * 1024 } });
afterAll(() => Promise.all([mcp.close(), sender.close()]));

/**
 * `says`: what an error result of a read must say for this fault (absent: the call must succeed); `post`: the one
 * outcome of create_request when the fault lands on its POST (or on the read before it), and what its text says.
 */
type Post = { outcome: 'not sent' | 'may have been sent' | 'sent'; says: RegExp };
type Setup = { fault?: Fault; before?: () => Promise<void>; after?: () => Promise<void>; says?: RegExp; post: Post };
const MAY = /The request may have been sent: check with list_requests/;
const mayHaveBeenSent = (cause: RegExp): Post => ({ outcome: 'may have been sent', says: new RegExp(`${cause.source}[\\s\\S]*${MAY.source}`) });
// A 5xx to a read: try again. To a POST it may come after the request was handled: "may have been sent", never "try again".
const serviceFailed = (status: number) => new RegExp(`The service failed \\(${status}\\)\\..*Try again later\\.`);
// A 2xx to the POST whose body is odd: the request was created; the odd body is a warning, never "not sent".
const SENT_ANYWAY: Post = { outcome: 'sent', says: /^SENT/ };
const FAULTS: Record<string, Setup> = {
  'connection refused': {
    before: () => sb.pause(),
    after: () => sb.resume(),
    says: /Could not reach the service .*\(ECONNREFUSED\)/,
    post: { outcome: 'not sent', says: /Could not reach the service .*\(ECONNREFUSED\)/ },
  },
  'reset before headers': {
    fault: { kind: 'reset' },
    says: /Could not reach the service .*\(\w+\)\./,
    post: mayHaveBeenSent(/The connection to .* failed \(\w+\) while sending\./),
  },
  'reset mid-body': { fault: { kind: 'resetMidBody' }, says: /Could not reach the service .*\(\w+\)\./, post: mayHaveBeenSent(/failed \(\w+\)/) },
  'headers slower than the timeout': {
    fault: { kind: 'latency', ms: TIMEOUT_MS * 3 },
    says: new RegExp(`did not answer within ${TIMEOUT_MS} ms`),
    post: mayHaveBeenSent(new RegExp(`did not answer within ${TIMEOUT_MS} ms`)),
  },
  'a body that trickles': {
    fault: { kind: 'trickle', intervalMs: 100, chunkBytes: 8 },
    says: new RegExp(`did not answer within ${TIMEOUT_MS} ms`),
    post: mayHaveBeenSent(new RegExp(`did not answer within ${TIMEOUT_MS} ms`)),
  },
  'HTTP 500': { fault: { kind: 'status', status: 500 }, says: serviceFailed(500), post: mayHaveBeenSent(/The service failed \(500\)\./) },
  'HTTP 502': { fault: { kind: 'status', status: 502 }, says: serviceFailed(502), post: mayHaveBeenSent(/The service failed \(502\)\./) },
  'HTTP 503': { fault: { kind: 'status', status: 503 }, says: serviceFailed(503), post: mayHaveBeenSent(/The service failed \(503\)\./) },
  'HTTP 504': { fault: { kind: 'status', status: 504 }, says: serviceFailed(504), post: mayHaveBeenSent(/The service failed \(504\)\./) },
  '429 with Retry-After': {
    fault: { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
    says: /rate limiting calls \(429\).*Try again in 1 s\./,
    post: { outcome: 'not sent', says: /rate limiting calls \(429\).*Try again in 1 s\./ },
  },
  '429 without Retry-After': {
    fault: { kind: 'status', status: 429 },
    says: /rate limiting calls \(429\).*Try again shortly\./,
    post: { outcome: 'not sent', says: /rate limiting calls \(429\).*Try again shortly\./ },
  },
  'an HTML error page': {
    fault: { kind: 'html', status: 502 },
    says: /The service failed \(502\)\. The body was not JSON \(text\/html\)/,
    post: mayHaveBeenSent(/The service failed \(502\)\. The body was not JSON \(text\/html\)/),
  },
  // On a POST these answers still mean "sent" (with a warning), so they are errors only for the lists.
  'truncated JSON': { fault: { kind: 'truncated' }, says: /list is not valid JSON/, post: SENT_ANYWAY },
  '"data" missing': { fault: { kind: 'raw', body: '{"items":[]}' }, says: /list has no "data" array \(data is missing\)/, post: SENT_ANYWAY },
  '"data" not an array': { fault: { kind: 'raw', body: '{"data":{"id":1}}' }, says: /list has no "data" array \(data is object\)/, post: SENT_ANYWAY },
  'records of wrong types': {
    fault: { kind: 'raw', body: '{"data":[1,"x",null,{"id":{"a":1},"displayName":7,"totalItems":"many","dueDate":false}]}' },
    post: SENT_ANYWAY,
  },
  'a body over the size cap': { fault: { kind: 'huge', bytes: 50 * 1024 * 1024 }, says: /larger than the 2\.0 MB cap/, post: SENT_ANYWAY },
  'the key revoked mid-session': {
    before: () => Promise.resolve(sb.revoke(sb.keys.demo)),
    after: () => Promise.resolve(sb.restore(sb.keys.demo)),
    says: /rejected the API key .*Check DOCREQ_API_KEY\./s,
    post: { outcome: 'not sent', says: /rejected the API key .*Check DOCREQ_API_KEY\./s },
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
    const rows = faults.map(
      (f) => `${f.padEnd(32)} ${TOOLS.map((t) => (results.find((r) => r.tool === t.name && r.fault === f)?.ok ? 'pass' : 'FAIL').padEnd(15)).join('')}`,
    );
    console.log(
      `\nFault matrix (timeout ${TIMEOUT_MS} ms + ${SLACK_MS} ms slack)\n${''.padEnd(32)} ${TOOLS.map((t) => t.name.padEnd(15)).join('')}\n${rows.join('\n')}\ncells passed: ${passed}/${results.length}`,
    );
  });

  for (const tool of TOOLS) {
    for (const [faultName, setup] of Object.entries(FAULTS)) {
      it(`${tool.name} × ${faultName}`, async () => {
        results.push({ tool: tool.name, fault: faultName, ok: false });
        const postsBefore = sb.callsTo('POST', '/api/v1/requests').length;
        if (setup.fault) sb.inject(tool.route, setup.fault);
        await setup.before?.();
        let result;
        try {
          result = await (tool.name === 'create_request' ? sender : mcp).client.callTool({ name: tool.name, arguments: tool.args() }, undefined, {
            timeout: TIMEOUT_MS + SLACK_MS,
          });
        } finally {
          sb.clearFaults();
          await setup.after?.();
        }
        const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
        expect(text.length).toBeGreaterThan(0);
        for (const key of ALL_KEYS) expect(text).not.toContain(key);
        expect(text).not.toMatch(/<html|<!DOCTYPE/i);
        const posts = sb.callsTo('POST', '/api/v1/requests').length - postsBefore;
        if (tool.name === 'create_request') {
          // The one right outcome of a send under this fault, in its structured answer and its words.
          const outcome = (result.structuredContent as { outcome?: string } | undefined)?.outcome;
          const { post } = setup;
          if (post.outcome === 'sent') expect([result.isError ?? false, outcome]).toEqual([false, 'sent']);
          else if (post.outcome === 'may have been sent') expect([result.isError, outcome, posts]).toEqual([true, 'may_have_been_sent', 1]);
          else {
            expect(result.isError).toBe(true);
            expect(text).not.toMatch(/may have been sent/i);
          }
          expect(text).toMatch(post.says);
          if (post.outcome !== 'sent') expect(text).not.toMatch(/Try again later/);
        } else if (result.isError) {
          // the message speaks of the fault injected, and not of another (a 5xx is not "check the key")
          expect(setup.says, 'an error where success was expected').toBeDefined();
          expect(text).toMatch(setup.says!);
        }
        if (result.isError && !/key revoked/.test(faultName)) expect(text).not.toMatch(/API key|DOCREQ_API_KEY/);
        expect(posts).toBeLessThanOrEqual(1);
        const next = await mcp.client.callTool({ name: 'list_requests', arguments: { limit: 1 } });
        expect(next.isError, JSON.stringify(next.content)).toBeFalsy();
        results.at(-1)!.ok = true;
      });
    }
  }
});
