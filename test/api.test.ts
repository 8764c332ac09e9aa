import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DocReqApi, type ApiClientOptions } from '../src/api/client.js';
import type { CreatePayload } from '../src/api/records.js';
import {
  BadResponseError,
  InputRefusedError,
  KeyRejectedError,
  NotFoundServiceError,
  PlanLimitError,
  RateLimitedError,
  ServiceFailedError,
  TimedOutError,
  UnreachableError,
} from '../src/api/errors.js';
import { createLogger } from '../src/log.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { sandbox } from './support/sandbox.js';
import { apiFailure } from './support/connect.js';

const sb = await sandbox();
const apis: DocReqApi[] = [];
function api(options: Partial<ApiClientOptions> = {}): DocReqApi {
  const a = new DocReqApi({ baseUrl: sb.url, apiKey: SANDBOX_KEYS.demo, timeoutMs: 5_000, retryBaseDelayMs: 5, ...options });
  apis.push(a);
  return a;
}
const failure = apiFailure;
const demo = () => sb.demoFirm;
const payload = (): CreatePayload => ({
  clientId: demo().clients[0]!.id,
  title: `API test ${Math.random()}`,
  items: [{ name: 'W-2', required: true, type: 'file' }],
});

describe('requests it sends', () => {
  it("sends the bearer key, Accept, Accept-Encoding, User-Agent on GET; Content-Type, the caller's Idempotency-Key and exactly JSON.stringify(payload) on POST", async () => {
    const a = api();
    await a.listClients();
    const body = payload();
    await a.createRequest(body, { idempotencyKey: 'confirmation-1' });
    await a.createRequest(payload(), { idempotencyKey: 'confirmation-2' });
    const [get, post1, post2] = sb.calls;
    expect(get).toMatchObject({ method: 'GET', accept: 'application/json', acceptEncoding: 'gzip, br', idempotencyKey: undefined });
    expect(get!.userAgent).toMatch(/^docreq-mcp\/\d+\.\d+\.\d+/);
    expect(post1).toMatchObject({ method: 'POST', contentType: 'application/json', idempotencyKey: 'confirmation-1', body: JSON.stringify(body) });
    expect(post2!.idempotencyKey).toBe('confirmation-2');
  });

  it('keeps a path prefix in the base URL', async () => {
    const a = api({ baseUrl: `${sb.url}/prefix` });
    const error = await failure(a.listClients());
    expect(sb.calls[0]!.path).toBe('/prefix/api/v1/clients');
    expect(error).toBeInstanceOf(NotFoundServiceError); // the sandbox serves no prefix: 404
    expect(error.message).toContain(`There is no Document Request Service at ${sb.url}/prefix`);
  });
});

describe('firm scoping and keys', () => {
  it("returns only the key's own firm's records", async () => {
    const demoIds = new Set((await api().listClients()).map((c) => c.id));
    const harbor = await api({ apiKey: SANDBOX_KEYS.harbor }).listClients();
    expect(harbor.length).toBe(sb.firms.get(SANDBOX_KEYS.harbor)!.clients.length);
    expect(harbor.some((c) => demoIds.has(c.id))).toBe(false);
  });

  it.each([
    ['revoked', SANDBOX_KEYS.revoked],
    ['unknown', 'drk_not_a_key_123456'],
    ['malformed', 'has spaces in it'],
  ])('answers a %s key with KeyRejectedError that never shows the key', async (_, key) => {
    const error = await failure(api({ apiKey: key }).listRequests());
    expect(error).toBeInstanceOf(KeyRejectedError);
    expect(error.message).toContain('rejected the API key');
    expect(error.message).not.toContain(key);
  });
});

describe('typed errors', () => {
  it('reports the active-request limit (409) as a plan limit with the service words and what to do', async () => {
    const error = await failure(
      api({ apiKey: SANDBOX_KEYS.harbor }).createRequest(
        { ...payload(), clientId: sb.firms.get(SANDBOX_KEYS.harbor)!.clients[0]!.id },
        { idempotencyKey: randomUUID() },
      ),
    );
    expect(error).toBeInstanceOf(PlanLimitError);
    expect(error.status).toBe(409);
    expect(error.code).toBe('active_request_limit_reached');
    expect(error.message).toMatch(/allows \d+ active requests/);
    expect(error.message).toMatch(/complete or archive/i);
  });

  it('reports the monthly billing limit (402) as a plan limit', async () => {
    const error = await failure(
      api({ apiKey: SANDBOX_KEYS.northwind }).createRequest(
        { ...payload(), clientId: sb.firms.get(SANDBOX_KEYS.northwind)!.clients[0]!.id },
        { idempotencyKey: randomUUID() },
      ),
    );
    expect(error).toBeInstanceOf(PlanLimitError);
    expect(error.code).toBe('billing_limit_reached');
  });

  it('reports a 422 as refused input with the field details', async () => {
    const error = await failure(api().createRequest({ ...payload(), items: [{ name: ' ', required: true, type: 'file' }] }, { idempotencyKey: randomUUID() }));
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.status).toBe(422);
    expect(error.details).toContainEqual({ field: 'items[0].name', message: 'must be a non-empty string' });
    expect(error.message).toContain('"items[0].name": "must be a non-empty string"');
  });

  it('reports a 429 without limit words as rate limiting, with the wait it asked for', async () => {
    sb.inject('GET /api/v1/clients', {
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '120' },
      body: { error: { code: 'too_many_requests', message: 'Slow down.' } },
    });
    const error = await failure(api().listClients());
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(120_000);
    expect(sb.calls).toHaveLength(1); // Retry-After beyond 10 s is not waited for
  });

  it('reports a 5xx as a service failure and reads RFC 7807 bodies', async () => {
    sb.inject('GET /api/v1/clients', { kind: 'status', status: 500, body: { title: 'Internal error', detail: 'database unavailable' } });
    const error = await failure(api().listClients());
    expect(error).toBeInstanceOf(ServiceFailedError);
    expect(error.message).toContain('Internal error: database unavailable');
  });

  it('never pastes an HTML error page into the message', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'html', status: 500 });
    const error = await failure(api().listRequests());
    expect(error).toBeInstanceOf(ServiceFailedError);
    expect(error.message).toContain('not JSON (text/html)');
    expect(error.message).not.toContain('<');
  });

  it('reports a 200 that is not JSON, and JSON of the wrong shape, as a bad response', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'truncated' }, { times: 1 });
    expect(await failure(api().listRequests())).toBeInstanceOf(BadResponseError);
    sb.inject('GET /api/v1/requests', { kind: 'raw', body: '{"items":[]}' }, { times: 1 });
    const shape = await failure(api().listRequests());
    expect(shape).toBeInstanceOf(BadResponseError);
    expect(shape.message).toContain('no "data" array');
  });

  it('reports a refused connection as unreachable', async () => {
    const closed = new DocReqApi({ baseUrl: 'http://127.0.0.1:9', apiKey: SANDBOX_KEYS.demo, timeoutMs: 2_000, retryBaseDelayMs: 5 });
    const error = await failure(closed.listClients());
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('keeps records of odd types, never dropping one', async () => {
    sb.inject('GET /api/v1/requests', {
      kind: 'raw',
      body: JSON.stringify({ data: [{ id: 7, title: null, totalItems: '3', completedItems: 'x', dueDate: 20260101, extra: { a: 1 } }, 'not an object'] }),
    });
    const records = await api().listRequests();
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ id: '7', title: null, totalItems: 3, completedItems: null, dueDate: '20260101' });
    expect(records[0]).not.toHaveProperty('extra');
  });
});

describe('retries', () => {
  it.each([502, 503, 504])('retries a GET answered %i at most twice', async (status) => {
    sb.inject('GET /api/v1/clients', { kind: 'status', status });
    await failure(api().listClients());
    expect(sb.callsTo('GET', '/api/v1/clients')).toHaveLength(3);
  });

  it('succeeds when a transient failure clears within the retries', async () => {
    sb.inject('GET /api/v1/clients', { kind: 'reset' }, { times: 2 });
    expect(await api().listClients()).toHaveLength(demo().clients.length);
    expect(sb.calls).toHaveLength(3);
  });

  it('honours a short Retry-After on 429', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { times: 1 });
    const lines: string[] = [];
    await api({ logger: createLogger('info', [], (l) => lines.push(l)) }).listRequests();
    expect(lines.join('')).toContain('retry 1 of 2 in 1000 ms');
    expect(sb.calls).toHaveLength(2);
  });

  it('does not retry other 4xx', async () => {
    await failure(api({ apiKey: SANDBOX_KEYS.revoked }).listClients());
    expect(sb.calls).toHaveLength(1);
  });

  it.each([
    ['503', { kind: 'status', status: 503 }],
    ['a reset before headers', { kind: 'reset' }],
  ] as const)('never retries a POST answered with %s', async (_, fault) => {
    sb.inject('POST /api/v1/requests', fault);
    const before = sb.emails.length;
    await failure(api().createRequest(payload(), { idempotencyKey: randomUUID() }));
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
    expect(sb.emails.length).toBe(before);
  });

  it('reports a POST whose answer was lost as "may have been sent", after exactly one send', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'reset' }, { after: true });
    const before = sb.emails.length;
    const error = await failure(api().createRequest(payload(), { idempotencyKey: randomUUID() }));
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toContain('may have been sent');
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
    expect(sb.emails.length).toBe(before + 1);
  });

  it('says nothing was sent when the connection was refused', async () => {
    const closed = new DocReqApi({ baseUrl: 'http://127.0.0.1:9', apiKey: SANDBOX_KEYS.demo, timeoutMs: 2_000 });
    const error = await failure(closed.createRequest(payload(), { idempotencyKey: randomUUID() }));
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toContain('Nothing was sent');
  });
});

describe('time and size bounds', () => {
  it('times out a GET whose headers are slower than the timeout, without retrying past the deadline', async () => {
    // Had the deadline not fired, the sandbox would answer 200 after 3 s.
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 3_000 });
    const error = await failure(api({ timeoutMs: 400 }).listClients());
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error.message).toContain('within 400 ms');
    expect(sb.calls).toHaveLength(1);
  });

  it('times out a body that trickles past the deadline', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'trickle', intervalMs: 50, chunkBytes: 64 });
    expect(await failure(api({ timeoutMs: 500 }).listRequests())).toBeInstanceOf(TimedOutError);
  });

  it('times out a POST as "may have been sent", sending once', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 1_500 }, { after: true });
    const error = await failure(api({ timeoutMs: 300, minPostBudgetMs: 100 }).createRequest(payload(), { idempotencyKey: randomUUID() }));
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error.outcomeUnknown).toBe(true);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
  });

  it.each([true, false])('refuses a 200 MB body over the cap without reading it (length declared: %s)', async (declareLength) => {
    sb.inject('GET /api/v1/requests', { kind: 'huge', bytes: 200 * 1024 * 1024, declareLength });
    const error = await failure(api({ maxResponseBytes: 8 * 1024 * 1024 }).listRequests());
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toContain('larger than the 8.0 MB cap');
    // The connection was dropped at the cap: the service wrote a small part of the 200 MB, never all of it.
    await new Promise((r) => setTimeout(r, 100));
    expect(sb.calls[0]!.bytesWritten).toBeLessThan(40 * 1024 * 1024);
    // and the client still works afterwards
    sb.clearFaults();
    expect((await api().listRequests()).length).toBe(demo().requests.length);
  });
});

describe('sharing and caching', () => {
  it('coalesces identical concurrent GETs into one upstream call', async () => {
    const a = api();
    const results = await Promise.all(Array.from({ length: 20 }, () => a.listRequests()));
    expect(new Set(results.map((r) => r.length)).size).toBe(1);
    expect(sb.callsTo('GET', '/api/v1/requests')).toHaveLength(1);
  });

  it('reuses the client list for name resolution until a send', async () => {
    const a = api();
    await a.listClients({ reuse: true });
    await a.listClients({ reuse: true });
    expect(sb.calls).toHaveLength(1);
    await a.createRequest(payload(), { idempotencyKey: randomUUID() });
    await a.listClients({ reuse: true });
    expect(sb.callsTo('GET', '/api/v1/clients')).toHaveLength(2);
  });
});
