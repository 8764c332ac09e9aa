import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { DocReqApi, type ApiClientOptions } from '../src/api/client.js';
import {
  BadResponseError,
  CancelledError,
  InputRefusedError,
  RedirectedError,
  ServiceFailedError,
  TimedOutError,
  TooLargeError,
  UnreachableError,
} from '../src/api/errors.js';
import { ServiceProfile, serviceProfileSchema } from '../src/domain/service-profile.js';
import { createLogger } from '../src/log.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { FAST_API, sandbox } from './support/sandbox.js';
import { apiFailure } from './support/connect.js';
import { rawProxy } from './support/exchange.js';

/**
 * Sending (src/api/sending.ts): the one POST to the Document Request Service, never retried, and what its outcome
 * means — refused, not sent, sent, or not known — each checked by what the caller sees and what the real sandbox
 * received over real HTTP on 127.0.0.1. Faults are injected in the sandbox, never in our own HTTP layer.
 */

const sb = await sandbox();
const KEY = SANDBOX_KEYS.demo;
const POSTS = () => sb.callsTo('POST', '/api/v1/requests');
const CLIENT_GETS = () => sb.callsTo('GET', '/api/v1/clients');

const apis: DocReqApi[] = [];
function api(options: Partial<ApiClientOptions> = {}): DocReqApi {
  const a = new DocReqApi({ baseUrl: sb.url, apiKey: KEY, timeoutMs: 5_000, ...FAST_API, ...options });
  apis.push(a);
  return a;
}
afterAll(async () => {
  for (const a of apis) await a.close();
});
const payload = () => ({ clientId: sb.demoFirm.clients[0]!.id, title: `Sending test ${randomUUID()}`, items: [{ name: 'W-2', required: true, type: 'file' }] });
const key = () => ({ idempotencyKey: randomUUID() });
/** A created record as the service might answer it, under `data`. */
const record = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    data: {
      id: 'req_raw_1',
      title: 'Raw title',
      status: 'pending',
      dueDate: null,
      createdAt: '2026-03-16T12:00:00Z',
      clientName: 'Raw client',
      totalItems: 1,
      completedItems: 0,
      ...extra,
    },
  });

describe('before sending: nothing is sent', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a string', 12345],
  ])('refuses a %s idempotency key with a TypeError, sending nothing', async (_, idempotencyKey) => {
    const error = (await apiFailure(api().createRequest(payload(), { idempotencyKey } as unknown as { idempotencyKey: string }))) as unknown as Error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('createRequest needs an idempotencyKey derived from the confirmation');
    expect(POSTS()).toHaveLength(0);
  });

  it('answers a signal already aborted with CancelledError (not sent), before looking at the time left, and keeps what was cached', async () => {
    const a = api();
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(1);
    const aborted = AbortSignal.abort();
    const error = await apiFailure(a.createRequest(payload(), { ...key(), signal: aborted }));
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toBe('The call was cancelled before sending. Nothing was sent.');
    expect(error.outcomeUnknown).toBe(false);
    // Cancelled and out of time at once: the cancel is what is reported.
    const both = await apiFailure(a.createRequest(payload(), { ...key(), signal: aborted, deadline: Date.now() - 1_000 }));
    expect(both).toBeInstanceOf(CancelledError);
    expect(both.message).toBe('The call was cancelled before sending. Nothing was sent.');
    expect(POSTS()).toHaveLength(0);
    // Nothing was sent, so the client list kept for reuse is still good: no new GET.
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(1);
  });

  it('refuses to start a POST whose deadline has passed: TimedOutError saying 0 ms were left, not sent', async () => {
    const error = await apiFailure(api().createRequest(payload(), { ...key(), deadline: Date.now() - 5_000 }));
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error.message).toBe("Only 0 ms of the call's time were left, too little to send and hear back. Nothing was sent.");
    expect(error.outcomeUnknown).toBe(false);
    expect(POSTS()).toHaveLength(0);
  });

  it('refuses to start a POST with less than minPostBudgetMs left, naming the time that was left', async () => {
    const error = await apiFailure(api({ minPostBudgetMs: 2_000 }).createRequest(payload(), { ...key(), deadline: Date.now() + 1_000 }));
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error.outcomeUnknown).toBe(false);
    const match = /^Only (\d+) ms of the call's time were left, too little to send and hear back\. Nothing was sent\.$/.exec(error.message);
    expect(match).not.toBeNull();
    const left = Number(match![1]);
    expect(left).toBeGreaterThan(500);
    expect(left).toBeLessThanOrEqual(1_000);
    expect(POSTS()).toHaveLength(0);
  });
});

describe('what a send forgets', () => {
  it('forgets the kept lists when the POST starts and again when it ends: a list read with reuse after a send is read anew and shows the new request', async () => {
    const a = api();
    await a.listClients({ reuse: true });
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(1); // reused
    const before = await a.listRequests();
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 800 }, { after: true });
    const body = payload();
    const sending = a.createRequest(body, key());
    // The send has begun (the POST is slow to answer): what was kept is forgotten already.
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(2);
    // Read during the send and kept: forgotten again when the send ends.
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(2);
    const outcome = await sending;
    expect(outcome.status).toBe(201);
    expect(outcome.record?.title).toBe(body.title);
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(3);
    const after = await a.listRequests();
    expect(after.length).toBe(before.length + 1);
    expect(after.some((r) => r.id === outcome.record?.id && r.title === body.title)).toBe(true);
  });

  it('times out a POST whose answer comes after the deadline as "may have been sent", and still forgets what was read during it', async () => {
    const a = api({ timeoutMs: 1_000, minPostBudgetMs: 100 });
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(1);
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 2_500 }, { after: true });
    const body = payload();
    const sending = apiFailure(a.createRequest(body, key()));
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(2);
    const error = await sending;
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toBe('The service did not answer within 1000 ms. The request may have been sent.');
    expect(POSTS()).toHaveLength(1);
    // It was in fact created: the outcome really was unknown.
    expect(sb.demoFirm.requests.some((r) => r.title === body.title)).toBe(true);
    await a.listClients({ reuse: true });
    expect(CLIENT_GETS()).toHaveLength(3);
  });
});

describe('a 2xx answer', () => {
  it('returns the created record, sends the key and the body once, and logs the POST at debug level', async () => {
    const lines: string[] = [];
    const logger = createLogger('debug', [KEY], (line) => void lines.push(line));
    const body = payload();
    const idempotencyKey = randomUUID();
    const outcome = await api({ logger }).createRequest(body, { idempotencyKey });
    expect(outcome.status).toBe(201);
    expect(outcome.accepted).toBe(false);
    expect(outcome.warnings).toEqual([]);
    expect(outcome.record).toMatchObject({ title: body.title, totalItems: 1 });
    expect(outcome.kept).toMatchObject({ clientId: body.clientId, title: body.title, items: 1 });
    expect(POSTS()).toHaveLength(1);
    expect(POSTS()[0]).toMatchObject({ idempotencyKey, contentType: 'application/json', body: JSON.stringify(body), status: 201 });
    const logged = lines.filter((l) => l.includes('POST'));
    expect(logged).toHaveLength(1);
    const match = /^docreq-mcp debug: POST \/api\/v1\/requests → 201 in (\d+) ms\n$/.exec(logged[0]!);
    expect(match).not.toBeNull();
    expect(Number(match![1])).toBeLessThan(60_000);
  });

  it.each([200, 201, 299])('takes a %i with a record as sent (not accepted)', async (status) => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status, body: record() });
    const outcome = await api().createRequest(payload(), key());
    expect(outcome).toEqual({
      record: {
        id: 'req_raw_1',
        title: 'Raw title',
        status: 'pending',
        dueDate: null,
        createdAt: '2026-03-16T12:00:00Z',
        clientName: 'Raw client',
        totalItems: 1,
        completedItems: 0,
      },
      status,
      accepted: false,
      kept: { clientName: 'Raw client', title: 'Raw title', dueDate: null, items: 1 },
      warnings: [],
    });
  });

  it('takes a 202 as accepted (queued)', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 202, body: JSON.stringify({ id: 'req_q', status: 'queued' }) });
    const outcome = await api().createRequest(payload(), key());
    expect(outcome.status).toBe(202);
    expect(outcome.accepted).toBe(true);
    expect(outcome.record).toMatchObject({ id: 'req_q', status: 'queued' });
    expect(outcome.warnings).toEqual([]);
  });

  it.each([
    [201, 'The service answered 201 (sent) with a body that is not JSON.', false],
    [202, 'The service answered 202 (accepted) with a body that is not JSON.', true],
  ] as const)('returns a %i whose body is not JSON with a warning, not an error', async (status, warning, accepted) => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status, body: 'Created!', contentType: 'text/plain' });
    const outcome = await api().createRequest(payload(), key());
    expect(outcome).toEqual({ record: null, status, accepted, kept: null, warnings: [warning] });
    expect(POSTS()).toHaveLength(1);
  });

  it('returns a 201 with an empty body with a warning', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 201, body: '' });
    const outcome = await api().createRequest(payload(), key());
    expect(outcome).toEqual({
      record: null,
      status: 201,
      accepted: false,
      kept: null,
      warnings: ['The service answered 201 with an empty body (no record of the new request).'],
    });
  });

  it('returns a 2xx JSON answer with no record in it with a warning', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 201, body: '{}' });
    const outcome = await api().createRequest(payload(), key());
    expect(outcome).toEqual({
      record: null,
      status: 201,
      accepted: false,
      kept: null,
      warnings: ['The service answered without a record of the created request.'],
    });
  });

  it('throws a 2xx with an error body as BadResponseError whose outcome is unknown, with what the service said', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 201, body: '{"error":{"code":"x","message":"Something failed."}}' }, { times: 1 });
    const error = await apiFailure(api().createRequest(payload(), key()));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.status).toBe(201);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toBe(
      'The service answered 201 (success) with an error body. The service said: "Something failed." ("x"). The request may have been sent.',
    );
    // An error body that says nothing: the first sentence alone.
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 202, body: '{"error":true}' }, { times: 1 });
    const bare = await apiFailure(api().createRequest(payload(), key()));
    expect(bare).toBeInstanceOf(BadResponseError);
    expect(bare.message).toBe('The service answered 202 (success) with an error body. The request may have been sent.');
    expect(POSTS()).toHaveLength(2);
  });

  it('keeps what the record says the service kept: numbers, booleans and null as they are, texts redacted then capped at 2,000, other values as JSON', async () => {
    const longTitle = `${'x'.repeat(1_990)}${KEY}${'y'.repeat(100)}`;
    sb.inject('POST /api/v1/requests', {
      kind: 'raw',
      status: 201,
      body: record({ title: longTitle, clientId: { ref: KEY, n: 1 }, clientName: true, dueDate: null, correctnessMode: 3, totalItems: 4 }),
    });
    const outcome = await api().createRequest(payload(), key());
    expect(outcome.kept).toEqual({
      clientId: '{"ref":"[redacted]","n":1}',
      clientName: true,
      title: `${'x'.repeat(1_990)}[redacted]`,
      dueDate: null,
      items: 4,
      correctnessMode: 3,
    });
    expect(JSON.stringify(outcome)).not.toContain(KEY);
    // A title without a secret is capped at exactly 2,000 characters; a text field is kept as text.
    sb.clearFaults();
    sb.inject('POST /api/v1/requests', {
      kind: 'raw',
      status: 201,
      body: record({ title: 'z'.repeat(2_500), dueDate: '2026-04-01', correctnessMode: 'strict', clientName: false }),
    });
    const capped = await api().createRequest(payload(), key());
    expect(capped.kept).toEqual({ clientName: false, title: 'z'.repeat(2_000), dueDate: '2026-04-01', items: 1, correctnessMode: 'strict' });
  });
});

describe("the firm's service profile", () => {
  const profile = new ServiceProfile(serviceProfileSchema.parse({ body: { title: 'name' }, created: { record: 'result.request' } }));

  it('names a refused field by the tool argument it came from', async () => {
    sb.inject('POST /api/v1/requests', {
      kind: 'status',
      status: 422,
      body: { error: { code: 'invalid', message: 'Bad input.', details: [{ field: 'name', message: 'too long' }] } },
    });
    const error = await apiFailure(api({ profile }).createRequest(payload(), key()));
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(
      'The service refused the input (422). The service said: "Bad input." ("invalid"). Fields: title (sent as "name", named by body.title in the service profile): "too long".',
    );
  });

  it("reads the created record where the profile says, and what it kept by the service's own names", async () => {
    sb.inject('POST /api/v1/requests', {
      kind: 'raw',
      status: 201,
      body: JSON.stringify({
        data: { id: 'req_wrong', title: 'Not this one' },
        result: { request: { id: 'req_profiled', name: 'Profiled title', totalItems: 2 } },
      }),
    });
    const outcome = await api({ profile }).createRequest(payload(), key());
    expect(outcome.record?.id).toBe('req_profiled');
    expect(outcome.kept).toEqual({ title: 'Profiled title', items: 2 });
    expect(outcome.warnings).toEqual([]);
  });
});

describe('a 2xx whose answer cannot be read', () => {
  it('returns a 201 over the size cap as sent, with the reason as a warning', async () => {
    const body = payload();
    const outcome = await api({ maxResponseBytes: 16 }).createRequest(body, key());
    expect(outcome.record).toBeNull();
    expect(outcome.kept).toBeNull();
    expect(outcome.status).toBe(201);
    expect(outcome.accepted).toBe(false);
    expect(outcome.warnings).toHaveLength(1);
    expect(outcome.warnings[0]).toMatch(
      /^Sent, but the service's answer was unreadable \(The service's answer \(201\) is larger than the 0\.0 MB cap \(0\.0 MB or more\); it was not read\.\)$/,
    );
    expect(POSTS()).toHaveLength(1);
    expect(sb.demoFirm.requests.some((r) => r.title === body.title)).toBe(true);
  });

  it('returns a 200 that decompresses past the cap (a bomb) as sent', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'bomb', bytes: 4 * 1024 * 1024 }, { after: true });
    const outcome = await api({ maxResponseBytes: 1024 * 1024 }).createRequest(payload(), key());
    expect(outcome).toMatchObject({ record: null, status: 200, accepted: false, kept: null });
    expect(outcome.warnings).toHaveLength(1);
    expect(outcome.warnings[0]).toMatch(
      /^Sent, but the service's answer was unreadable \(The service's answer \(200\) is larger than the 1\.0 MB cap \(\d+\.\d MB or more once decompressed\); it was not read\.\)$/,
    );
  });

  it.each([202, 299])('returns an unreadable %i as sent, accepted only for 202', async (status) => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status, body: record() });
    const outcome = await api({ maxResponseBytes: 16 }).createRequest(payload(), key());
    expect(outcome.record).toBeNull();
    expect(outcome.status).toBe(status);
    expect(outcome.accepted).toBe(status === 202);
    expect(outcome.warnings).toEqual([
      `Sent, but the service's answer was unreadable (The service's answer (${status}) is larger than the 0.0 MB cap (0.0 MB or more); it was not read.)`,
    ]);
  });

  it('throws a refusal over the size cap (not a 2xx) as it is', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 422, body: record() });
    const error = await apiFailure(api({ maxResponseBytes: 16 }).createRequest(payload(), key()));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.status).toBe(422);
    expect(error.outcomeUnknown).toBe(false);
  });

  it('throws a 201 whose connection broke mid-body as unreachable, outcome unknown', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'resetMidBody' }, { after: true });
    const error = await apiFailure(api().createRequest(payload(), key()));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toMatch(
      new RegExp(`^The connection to ${sb.url.replace(/[.]/g, '\\.')} failed \\([A-Z_]+\\) while sending\\. The request may have been sent\\.$`),
    );
  });
});

describe('a refusal or failure answer', () => {
  it('throws a 4xx refusal as it is: refused, so definitely not created', async () => {
    const error = await apiFailure(api().createRequest({ ...payload(), items: [{ name: ' ', required: true, type: 'file' }] }, key()));
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.status).toBe(422);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(
      'The service refused the input (422). The service said: "The request could not be created: some fields are invalid." ("validation_failed"). Fields: "items[0].name": "must be a non-empty string".',
    );
    expect(POSTS()).toHaveLength(1);
  });

  it.each([500, 503])('throws a %i as ServiceFailedError whose outcome is unknown, keeping its code, details and Retry-After', async (status) => {
    sb.inject('POST /api/v1/requests', {
      kind: 'status',
      status,
      headers: { 'retry-after': '7' },
      body: { error: { code: 'down', message: 'Down for maintenance.', details: [{ field: 'title', message: 'not now' }] } },
    });
    const error = await apiFailure(api().createRequest(payload(), key()));
    expect(error).toBeInstanceOf(ServiceFailedError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.status).toBe(status);
    expect(error.code).toBe('down');
    expect(error.details).toEqual([{ field: 'title', message: 'not now' }]);
    expect(error.retryAfterMs).toBe(7_000);
    expect(error.message).toBe(`The service failed (${status}). The service said: "Down for maintenance." ("down"). The request may have been sent.`);
    expect(POSTS()).toHaveLength(1); // never retried
  });

  it('throws a 307 redirect as RedirectedError: not followed, nothing sent', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'redirect', status: 307, location: 'https://elsewhere.example/api/v1/requests' });
    const error = await apiFailure(api().createRequest(payload(), key()));
    expect(error).toBeInstanceOf(RedirectedError);
    expect(error.status).toBe(307);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toMatch(/ Nothing was sent\.$/);
    expect(POSTS()).toHaveLength(1);
  });

  it('throws a 303 redirect (how a handled POST may be answered) as outcome unknown', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'redirect', status: 303, location: '/api/v1/requests/req_1' });
    const error = await apiFailure(api().createRequest(payload(), key()));
    expect(error).toBeInstanceOf(RedirectedError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toMatch(/The request may have been sent\.$/);
  });
});

describe('no answer', () => {
  it.each([
    ['closes the connection', 'closed the connection', (socket: Socket) => socket.destroy()],
    [
      'answers 407',
      'answered 407',
      (socket: Socket) => socket.once('data', () => socket.end('HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n')),
    ],
  ])('a proxy that %s instead of a tunnel: not sent, and the words say so', async (_, did, onSocket) => {
    const proxy = await rawProxy(onSocket);
    const error = await apiFailure(api({ proxyEnv: { HTTP_PROXY: proxy.url } }).createRequest(payload(), key()));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(
      `The proxy ${proxy.url} (from HTTP_PROXY) ${did} instead of opening a tunnel to the service at ${sb.url}, so the service was not reached: check that the proxy lets this machine reach that host and port, or add the service's host to NO_PROXY. Nothing was sent.`,
    );
    expect(proxy.connections()).toBe(1);
    expect(POSTS()).toHaveLength(0);
  });

  it('reports a connection reset before any header as unreachable, outcome unknown (the POST was written)', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'reset' });
    const error = await apiFailure(api().createRequest(payload(), key()));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.code).toMatch(/^[A-Z_]+$/);
    expect(error.message).toBe(`The connection to ${sb.url} failed (${error.code}) while sending. The request may have been sent.`);
    expect(POSTS()).toHaveLength(1);
  });

  it('reports a refused connection as unreachable, not sent, keeping its code', async () => {
    const a = api();
    await sb.pause();
    let error;
    try {
      error = await apiFailure(a.createRequest(payload(), key()));
    } finally {
      await sb.resume();
    }
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.code).toBe('ECONNREFUSED');
    expect(error.message).toBe(
      `Could not reach the service at ${sb.url} (ECONNREFUSED): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address. Nothing was sent.`,
    );
    expect(POSTS()).toHaveLength(0);
  });
});
