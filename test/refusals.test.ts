// Refusals in the shapes services commonly answer with (problem details, JSON:API, FastAPI, Rails),
// refused fields named as the person knows them, and the firm's limits told apart from rate limiting.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { DocReqApi } from '../src/api/client.js';
import { errorFromStatus, fieldPath, InputRefusedError, PlanLimitError, RateLimitedError, readErrorBody, type ApiError } from '../src/api/errors.js';
import { explain } from '../src/mcp/results.js';
import { redactor } from '../src/text/redact.js';
import { apiFailure } from './support/connect.js';

const refused = (status: number, body: unknown, retryAfterMs?: number, nameField?: (field: string) => string): ApiError =>
  errorFromStatus(status, body, true, 'application/json', retryAfterMs, undefined, nameField);

/** How the POST path names a field the service profile maps. */
const profileName = (field: string) => (field === 'due_date' ? 'dueDate (sent as "due_date", from the service profile\'s body.dueDate)' : field);

const SHAPES = {
  'RFC 7807 invalid-params': {
    type: 'https://example.test/probs/validation',
    title: 'Your request is not valid',
    status: 422,
    'invalid-params': [{ name: 'due_date', reason: 'is not a valid date' }],
  },
  'JSON:API source.pointer': {
    errors: [{ status: '422', code: 'invalid', title: 'Invalid attribute', detail: 'is not a valid date', source: { pointer: '/data/attributes/due_date' } }],
  },
  'FastAPI detail[].loc': { detail: [{ loc: ['body', 'due_date'], msg: 'is not a valid date', type: 'date_from_datetime_parsing' }] },
  'Rails errors object': { errors: { due_date: ['is not a valid date'] } },
} as const;

describe('refusals in the common shapes (422)', () => {
  it.each(Object.entries(SHAPES))('%s: names the refused field and says what the service said of it', (_, body) => {
    const error = refused(422, body);
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.details).toEqual([{ field: 'due_date', message: 'is not a valid date' }]);
    expect(error.message).toContain('The service refused the input (422).');
    expect(error.message).toContain('Fields: "due_date": "is not a valid date".');
  });

  it.each(Object.entries(SHAPES))('%s: with nameField, the field is named as the person knows it; details keep the service path', (_, body) => {
    const error = refused(422, body, undefined, profileName);
    expect(error.message).toContain('Fields: dueDate (sent as "due_date", from the service profile\'s body.dueDate): "is not a valid date".');
    expect(error.details[0]!.field).toBe('due_date');
  });

  it('a field nameField leaves as it is stays quoted', () => {
    const error = refused(422, { errors: { title: ["can't be blank"] } }, undefined, profileName);
    expect(error.message).toBe('The service refused the input (422). Fields: "title": "can\'t be blank".');
  });

  it('Rails: every field and each of its messages is named, and a message of its own beside them is kept', () => {
    const error = refused(422, { error: 'Validation failed', errors: { title: ["can't be blank", 'is too short'], client_id: ['does not exist'] } });
    expect(error.message).toBe(
      'The service refused the input (422). The service said: "Validation failed". ' +
        'Fields: "title": "can\'t be blank"; "title": "is too short"; "client_id": "does not exist".',
    );
    // Without a message of its own, the reading still names the fields (a limit or a 2xx error body shows this sentence).
    const reading = readErrorBody({ errors: { title: ["can't be blank"], client_id: ['does not exist'] } });
    expect(reading.message).toBe("title: can't be blank; client_id: does not exist");
  });

  it('JSON:API: source.parameter and nested pointers; the first code given speaks for the answer', () => {
    const error = refused(422, {
      errors: [
        { code: 'bad_item', detail: 'must not be empty', source: { pointer: '/data/attributes/items/0/name' } },
        { title: 'Unknown parameter', source: { parameter: 'sort' } },
      ],
    });
    expect(error.details).toEqual([
      { field: 'items[0].name', message: 'must not be empty' },
      { field: 'sort', message: 'Unknown parameter' },
    ]);
    expect(error.code).toBe('bad_item');
    expect(error.message).toContain('Fields: "items[0].name": "must not be empty"; "sort": "Unknown parameter".');
  });

  it('FastAPI: numbers in loc become indexes, and a detail that is text is the message', () => {
    const error = refused(422, { detail: [{ loc: ['body', 'items', 0, 'name'], msg: 'field required', type: 'missing' }] });
    expect(error.message).toContain('Fields: "items[0].name": "field required".');
    expect(refused(400, { detail: 'Malformed JSON body' }).message).toBe('The service refused the input (400). The service said: "Malformed JSON body".');
  });

  it('RFC 7807: invalid_params and errors of {detail, pointer} are read too, beside the title and detail', () => {
    const underscored = refused(422, { title: 'Invalid', invalid_params: [{ name: 'title', reason: 'too long' }] });
    expect(underscored.message).toBe('The service refused the input (422). The service said: "Invalid". Fields: "title": "too long".');
    const rfc9457 = refused(422, {
      title: 'Invalid',
      detail: 'Two fields',
      errors: [
        { detail: 'is not a valid date', pointer: '/due_date' },
        { name: 'title', reason: 'too long' },
      ],
    });
    expect(rfc9457.details).toEqual([
      { field: 'due_date', message: 'is not a valid date' },
      { field: 'title', message: 'too long' },
    ]);
  });

  it('every service string is redacted before it is capped, field paths and messages alike', () => {
    const key = 'drk_live_refusal_secret_123456';
    const body = { detail: [{ loc: ['body', `x${key}`], msg: `bad ${key} ${'y'.repeat(400)}` }, `plain ${key}`] };
    const error = errorFromStatus(422, body, true, undefined, undefined, redactor([key]));
    expect(error.message).not.toContain(key);
    expect(JSON.stringify(error.details)).not.toContain(key);
    expect(error.details[0]!.message.length).toBeLessThanOrEqual(300);
  });
});

describe('fieldPath', () => {
  it.each([
    ['/data/attributes/due_date', 'due_date'],
    ['/data/attributes/items/0/name', 'items[0].name'],
    ['/data/items/12/type', 'items[12].type'],
    ['/items/0/name', 'items[0].name'],
    ['/a~1b/c~0d', 'a/b.c~d'],
    [['body', 'items', 0, 'name'], 'items[0].name'],
    [['query', 'limit'], 'limit'],
    ['items[0].name', 'items[0].name'],
    [undefined, ''],
  ])('%j → %j', (raw, path) => {
    expect(fieldPath(raw)).toBe(path);
  });
});

describe('limits, told apart from rate limiting', () => {
  it('402 is the billing limit, whatever its words, with advice for that limit only', () => {
    const error = refused(402, { error: 'Payment required' });
    expect(error).toBeInstanceOf(PlanLimitError);
    expect((error as PlanLimitError).limit).toBe('billing');
    expect(error.message).toBe('The firm\'s billing limit stops this (402). The service said: "Payment required".');
    expect(explain(error)).toBe(`${error.message} What the firm can do: wait for the next billing period, or upgrade the plan in the dashboard.`);
  });

  it.each([
    ['the code', { errors: [{ status: '409', code: 'active_request_limit_reached', title: 'Conflict', detail: 'Too many.' }] }],
    ['the message', { error: { message: 'The Starter plan allows 5 active requests.' } }],
    ['camelCase code', { message: 'Conflict', code: 'activeRequestLimit' }],
  ])('409 naming active requests (in %s) is the active-request limit', (_, body) => {
    const error = refused(409, body);
    expect(error).toBeInstanceOf(PlanLimitError);
    expect(error.message).toMatch(/^The firm's active-request limit stops this \(409\)\./);
    expect(explain(error)).toContain('What the firm can do: complete or archive open requests, or upgrade the plan in the dashboard.');
  });

  it.each([
    ['a duplicate', { error: { code: 'duplicate', message: 'A request with this title exists; limit one per client.' } }],
    ['a client who is not active', { error: 'The client is not active, so this request cannot be created.' }],
  ])('any other 409 (%s) is refused input, with no plan advice', (_, body) => {
    const error = refused(409, body);
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.message).toMatch(/^The service refused the input \(409\)\./);
    expect(explain(error)).not.toMatch(/archive|upgrade/);
  });

  it.each([
    ['plan', { error: { code: 'forbidden', message: 'Your plan does not include API access.' } }],
    ['quota', { error: { code: 'quota_exceeded', message: 'Forbidden' } }],
    ['subscription', { message: 'Subscription expired' }],
    ['billing', { error: 'Billing account suspended' }],
  ])('403 naming a %s is a plan limit', (_, body) => {
    const error = refused(403, body);
    expect(error).toBeInstanceOf(PlanLimitError);
    expect(error.message).toMatch(/^The firm's plan limit stops this \(403\)\./);
    expect(explain(error)).toContain('upgrade the plan');
  });

  it('any other 403 is refused input ("explanation" does not name a plan)', () => {
    const error = refused(403, { error: 'Forbidden: see the explanation in the docs' });
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.message).toBe('The service refused the input (403). The service said: "Forbidden: see the explanation in the docs".');
  });

  it.each([
    ['rate limit words', { error: { code: 'rate_limit_exceeded', message: 'Rate limit exceeded' } }],
    ['too many requests', { error: 'Too many requests' }],
    ['a quota', { error: { code: 'quota', message: 'Request quota exceeded, slow down' } }],
    ['no body words', undefined],
  ])('429 with %s is rate limiting: wait as Retry-After says, never archive or upgrade', (_, body) => {
    const error = refused(429, body, 30_000);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(30_000);
    expect(error.message).toMatch(/^The service is rate limiting calls \(429\)\./);
    const words = explain(error)!;
    expect(words.endsWith(' The service asked to wait (Retry-After). Try again in 30 s.')).toBe(true);
    expect(words).not.toMatch(/archive|upgrade|billing/);
  });

  it('429 without Retry-After says to try again shortly', () => {
    expect(explain(refused(429, { error: 'Too many requests' }))).toBe(
      'The service is rate limiting calls (429). The service said: "Too many requests". Try again shortly.',
    );
  });

  it.each([
    ['billing', { error: { code: 'billing_limit', message: 'Monthly billing limit reached' } }],
    ['a plan', { error: 'Your plan allows 100 calls a day' }],
    ['a subscription', { errors: [{ code: 'subscription_inactive', detail: 'Renew to continue' }] }],
  ])('429 naming %s is a plan limit, its Retry-After kept', (_, body) => {
    const error = refused(429, body, 5_000);
    expect(error).toBeInstanceOf(PlanLimitError);
    expect(error.retryAfterMs).toBe(5_000);
    expect(error.message).toMatch(/^The firm's plan limit stops this \(429\)\./);
    expect(explain(error)).toContain('or upgrade the plan in the dashboard.');
  });
});

describe('through the API client, from a service answering POST /api/v1/requests', () => {
  let answer: { status: number; body: unknown; headers?: Record<string, string> } = { status: 500, body: {} };
  const posts: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') posts.push(req.url ?? '');
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  const listening = new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apis: DocReqApi[] = [];
  afterAll(async () => {
    await Promise.all(apis.map((a) => a.close()));
    await new Promise((resolve) => server.close(resolve));
  });
  const post = async (status: number, body: unknown, headers?: Record<string, string>): Promise<ApiError> => {
    await listening;
    answer = { status, body, headers };
    const api = new DocReqApi({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'drk_test_refusals_0123456789',
      timeoutMs: 5_000,
      retryBaseDelayMs: 5,
      proxyEnv: {},
    });
    apis.push(api);
    const payload = { clientId: 'c1', title: 'Refusal', items: [{ name: 'W-2', required: true, type: 'file' as const }] };
    return apiFailure(api.createRequest(payload, { idempotencyKey: randomUUID() }));
  };

  it.each(Object.entries(SHAPES))('%s (422): the person reads the refused field and what was wrong with it', async (_, body) => {
    const error = await post(422, body);
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.message).toContain('"due_date": "is not a valid date"');
    expect(posts.at(-1)).toBe('/api/v1/requests');
  });

  it('429 "rate limit exceeded" with Retry-After: rate limited, one POST, no plan advice', async () => {
    const before = posts.length;
    const error = await post(429, { error: { code: 'rate_limit_exceeded', message: 'Rate limit exceeded' } }, { 'retry-after': '7' });
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(7_000);
    expect(posts.length - before).toBe(1);
    expect(explain(error)).toContain('Try again in 7 s.');
    expect(explain(error)).not.toMatch(/archive|upgrade/);
  });

  it('402, 409 naming active requests, and 429 naming billing are limits of the plan', async () => {
    expect((await post(402, { detail: 'Payment required' })).message).toMatch(/^The firm's billing limit stops this \(402\)\./);
    expect((await post(409, { errors: [{ code: 'active_request_limit_reached', detail: 'Starter allows 5 active requests' }] })).message).toMatch(
      /^The firm's active-request limit stops this \(409\)\. The service said: "Starter allows 5 active requests" \("active_request_limit_reached"\)\./,
    );
    expect(await post(429, { error: { code: 'billing_cap', message: 'Monthly billing cap reached' } })).toBeInstanceOf(PlanLimitError);
  });
});
