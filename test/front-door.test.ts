import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { RateBucket } from '../src/transport/key-scope.js';
import { captured, sandbox, teamService } from './helpers.js';

/**
 * Team mode's front door (src/transport/http.ts) with real HTTP on 127.0.0.1 in front of the sandbox:
 * the rate limit without a shared store, and bodies built to overflow a recursive reader.
 */

const sb = await sandbox();
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const memory = () => loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' });

function post(url: string, body: string, key = sb.keys.demo) {
  return fetch(`${url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${key}` }, body }).then(async (res) => {
    const text = await res.text();
    captured.push(text.slice(0, 2_000));
    return { status: res.status, headers: res.headers, text };
  });
}

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_clients', arguments: { limit: 1 } } });
const batch = (n: number, from = 0) => JSON.stringify(Array.from({ length: n }, (_, i) => call(from + i)));
const listCalls = () => sb.callsTo('GET', '/api/v1/clients').length;

describe('the per-process rate limit (no shared store) counts every call of a JSON-RPC batch', () => {
  it('refuses a batch with more calls than DOCREQ_RATE_LIMIT (429, no Retry-After) and calls nothing', async () => {
    const svc = await teamService(sb, { config: memory(), rateLimit: 10 });
    expect(svc.sendStore.store.scope).not.toBe('replicas');
    const before = listCalls();
    const refused = await post(svc.url, batch(20));
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('this batch holds 20 tool calls, more than the 10 a minute allowed per key');
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(listCalls()).toBe(before);
    // The bucket was not spent by the refusal: a call still goes through.
    expect((await post(svc.url, JSON.stringify(call(99)))).status).toBe(200);
  });

  it('counts each call of a batch: two batches of 6 against a limit of 10, the second gets 429 with Retry-After', async () => {
    const svc = await teamService(sb, { config: memory(), rateLimit: 10 });
    const first = await post(svc.url, batch(6));
    expect(first.status).toBe(200);
    const second = await post(svc.url, batch(6, 10));
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Four calls are left in this minute: one at a time, the fifth is refused.
    for (let i = 0; i < 4; i++) expect((await post(svc.url, JSON.stringify(call(20 + i)))).status).toBe(200);
    expect((await post(svc.url, JSON.stringify(call(30)))).status).toBe(429);
  });

  it('never allows more at once than the bucket holds, however long it has filled', () => {
    const bucket = new RateBucket(10, 0);
    expect(bucket.take(11, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(bucket.take(11, 3_600_000)).toBe(Number.POSITIVE_INFINITY);
    expect(bucket.take(10, 3_600_000)).toBe(0);
    expect(bucket.take(1, 3_600_000)).toBe(6_000);
  });
});
