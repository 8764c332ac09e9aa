import { describe, expect, it } from 'vitest';
import {
  ApiError,
  BadResponseError,
  CancelledError,
  CertificateError,
  errorFromStatus,
  fieldPath,
  InputRefusedError,
  isErrorBody,
  KeyRejectedError,
  NotFoundServiceError,
  PlanLimitError,
  RateLimitedError,
  readErrorBody,
  RedirectedError,
  ServiceFailedError,
  TimedOutError,
  TooLargeError,
  UnreachableError,
  type FieldDetail,
} from '../src/api/errors.js';
import { ConfigurationError, UserInputError } from '../src/errors.js';

/**
 * The service's failures as typed errors (src/api/errors.ts) and the tool's own (src/errors.ts), each rule on
 * its own: which class a status becomes, the words a person reads, every error body shape read, the firm's
 * limits told apart, and every service string redacted, made one line and capped before it is shown.
 */

const SECRET = 'drk_live_units_SECRET_0123456789';
const redact = (s: string) => s.split(SECRET).join('[redacted]');

/** A JSON answer with this status and body, as the exchange hands it over. */
const answer = (status: number, body: unknown, retryAfterMs?: number, nameField?: (field: string) => string): ApiError =>
  errorFromStatus(status, body, true, 'application/json', retryAfterMs, redact, nameField);

const refusedWith = (details: unknown) => answer(422, { error: 'Invalid', details });

describe('ApiError and its classes', () => {
  const plain = [
    KeyRejectedError,
    InputRefusedError,
    RateLimitedError,
    ServiceFailedError,
    UnreachableError,
    TimedOutError,
    BadResponseError,
    CancelledError,
    TooLargeError,
    CertificateError,
  ] as const;

  it.each(plain.map((C) => [C.name, C] as const))('%s: its name is the class name; with no init, nothing else is set', (name, C) => {
    const error = new C('It failed.');
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.message).toBe('It failed.');
    expect(error.detail).toBe('It failed.');
    expect(error.status).toBeUndefined();
    expect(error.code).toBeUndefined();
    expect(error.details).toEqual([]);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.retryAfterMs).toBeUndefined();
  });

  it('every field given is kept as given', () => {
    const details = [{ field: 'title', message: 'too long' }];
    const error = new ServiceFailedError('The service failed (503).', { status: 503, code: 'down', details, retryAfterMs: 2_500 });
    expect(error.status).toBe(503);
    expect(error.code).toBe('down');
    expect(error.details).toEqual(details);
    expect(error.retryAfterMs).toBe(2_500);
    expect(error.outcomeUnknown).toBe(false);
  });

  it('an outcome not known ends the message with "The request may have been sent."; detail is without it', () => {
    const error = new UnreachableError('The connection was reset.', { outcomeUnknown: true });
    expect(error.message).toBe('The connection was reset. The request may have been sent.');
    expect(error.detail).toBe('The connection was reset.');
    expect(error.outcomeUnknown).toBe(true);
    const known = new UnreachableError('The connection was reset.', { outcomeUnknown: false });
    expect(known.message).toBe('The connection was reset.');
    expect(known.outcomeUnknown).toBe(false);
  });

  it('a too-large answer is a bad response', () => {
    const error = new TooLargeError('Over the cap.');
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.name).toBe('TooLargeError');
  });

  it('PlanLimitError names its limit, the plan when none is given', () => {
    expect(new PlanLimitError('Stopped.').limit).toBe('plan');
    expect(new PlanLimitError('Stopped.', { status: 409 }).limit).toBe('plan');
    const billing = new PlanLimitError('Stopped.', { limit: 'billing', status: 402, outcomeUnknown: true });
    expect(billing.limit).toBe('billing');
    expect(billing.status).toBe(402);
    expect(billing.name).toBe('PlanLimitError');
    expect(billing.message).toBe('Stopped. The request may have been sent.');
  });

  it('NotFoundServiceError keeps the base URL; RedirectedError the location', () => {
    const notFound = new NotFoundServiceError('No service here.', 'https://docs.example.com', { status: 404 });
    expect(notFound.baseUrl).toBe('https://docs.example.com');
    expect(notFound.status).toBe(404);
    expect(notFound.name).toBe('NotFoundServiceError');
    expect(new NotFoundServiceError('No service here.', 'https://x.example').details).toEqual([]);
    const redirected = new RedirectedError('Redirected.', 'https://other.example/login', { status: 302, outcomeUnknown: true });
    expect(redirected.location).toBe('https://other.example/login');
    expect(redirected.status).toBe(302);
    expect(redirected.name).toBe('RedirectedError');
    expect(redirected.message).toBe('Redirected. The request may have been sent.');
    expect(new RedirectedError('Redirected.', undefined).location).toBeUndefined();
  });
});

describe('src/errors.ts', () => {
  it('UserInputError: its name, message and what only the page gets', () => {
    const error = new UserInputError('Say which client.', { clients: ['a', 'b'] });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('UserInputError');
    expect(error.message).toBe('Say which client.');
    expect(error.pageMeta).toEqual({ clients: ['a', 'b'] });
    expect(new UserInputError('Say which client.').pageMeta).toBeUndefined();
  });

  it('ConfigurationError: its name and message', () => {
    const error = new ConfigurationError('Set DOCREQ_API_KEY.');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigurationError');
    expect(error.message).toBe('Set DOCREQ_API_KEY.');
  });
});

describe('errorFromStatus: which class each status becomes', () => {
  it('401: the key was rejected, whatever the body says', () => {
    const error = answer(401, { error: 'Your plan is over' });
    expect(error).toBeInstanceOf(KeyRejectedError);
    expect(error.message).toBe('The service rejected the API key (401: missing, malformed, unknown or revoked). The service said: "Your plan is over".');
    expect(error.status).toBe(401);
    expect(answer(401, undefined).message).toBe('The service rejected the API key (401: missing, malformed, unknown or revoked).');
  });

  it.each([400, 403, 404, 409, 413, 422, 499])('%i: the input was refused', (status) => {
    const error = answer(status, { error: 'No.' });
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.message).toBe(`The service refused the input (${status}). The service said: "No.".`);
    expect(error.status).toBe(status);
  });

  it('402: the billing limit, whatever its words', () => {
    const error = answer(402, undefined);
    expect(error).toBeInstanceOf(PlanLimitError);
    expect((error as PlanLimitError).limit).toBe('billing');
    expect(error.message).toBe("The firm's billing limit stops this (402).");
  });

  it('429: rate limited, its Retry-After kept', () => {
    const error = answer(429, { error: 'Slow down' }, 3_000);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.message).toBe('The service is rate limiting calls (429). The service said: "Slow down".');
    expect(error.retryAfterMs).toBe(3_000);
    expect(answer(429, undefined).retryAfterMs).toBeUndefined();
  });

  it.each([500, 502, 503, 599, 600])('%i: the service failed', (status) => {
    const error = answer(status, { error: 'Boom' });
    expect(error).toBeInstanceOf(ServiceFailedError);
    expect(error.message).toBe(`The service failed (${status}). The service said: "Boom".`);
  });

  it.each([100, 200, 204, 302, 399])('%i: an unexpected status, a bad response', (status) => {
    const error = answer(status, { error: 'Odd' });
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error).not.toBeInstanceOf(TooLargeError);
    expect(error.message).toBe(`The service answered with an unexpected status ${status}. The service said: "Odd".`);
  });

  it('carries status, code, details and Retry-After; never an unknown outcome', () => {
    const error = answer(503, { error: 'Down', code: 'maintenance', details: { title: 'x' } }, 9_000);
    expect(error.status).toBe(503);
    expect(error.code).toBe('maintenance');
    expect(error.details).toEqual([{ field: 'title', message: 'x' }]);
    expect(error.retryAfterMs).toBe(9_000);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.detail).toBe(error.message);
    expect(error.message).toBe('The service failed (503). The service said: "Down" ("maintenance").');
  });
});

describe('errorFromStatus: what the service said', () => {
  it('its code follows its message, quoted and capped at 60', () => {
    expect(answer(400, { error: 'No', code: 'bad_input' }).message).toBe('The service refused the input (400). The service said: "No" ("bad_input").');
    const code = 'c'.repeat(70);
    const error = answer(400, { error: 'No', code });
    expect(error.message).toBe(`The service refused the input (400). The service said: "No" ("${'c'.repeat(59)}…").`);
    expect(error.code).toBe(code);
  });

  it('a JSON body without words adds nothing', () => {
    expect(answer(400, {}).message).toBe('The service refused the input (400).');
    expect(answer(500, [1, 2]).message).toBe('The service failed (500).');
  });

  it('a body that was not JSON says so, with its media type and without its parameters', () => {
    expect(errorFromStatus(502, undefined, false, 'text/html; charset=utf-8', undefined).message).toBe(
      'The service failed (502). The body was not JSON (text/html).',
    );
    expect(errorFromStatus(502, undefined, false, undefined, undefined).message).toBe('The service failed (502). The body was not JSON.');
    expect(errorFromStatus(502, undefined, false, '', undefined).message).toBe('The service failed (502). The body was not JSON.');
    const long = errorFromStatus(400, undefined, false, `text/${'x'.repeat(100)}`, undefined).message;
    expect(long).toBe(`The service refused the input (400). The body was not JSON (text/${'x'.repeat(54)}…).`);
    const odd = errorFromStatus(500, undefined, false, `text/plain\n${SECRET}`, undefined, redact).message;
    expect(odd).toBe('The service failed (500). The body was not JSON (text/plain [redacted]).');
  });

  it('words read from a body win over "not JSON"', () => {
    expect(errorFromStatus(500, { error: 'Boom' }, false, 'text/plain', undefined).message).toBe('The service failed (500). The service said: "Boom".');
  });

  it('service text is capped at 300 characters, cut with an ellipsis', () => {
    expect(answer(500, { error: 'a'.repeat(300) }).message).toBe(`The service failed (500). The service said: "${'a'.repeat(300)}".`);
    expect(answer(500, { error: 'a'.repeat(301) }).message).toBe(`The service failed (500). The service said: "${'a'.repeat(299)}…".`);
  });

  it('service text is one line of data: controls become spaces, invisible characters go, quotes are escaped', () => {
    const error = answer(500, { error: 'line one\nline\u0007two \u202Eevil "quoted"\r\n' });
    expect(error.message).toBe('The service failed (500). The service said: "line one line two evil \\"quoted\\"".');
    for (const c of ['\n', '\r', '\u0007', '\u202E']) expect(error.message).not.toContain(c);
  });

  it('every service string is redacted before it is cut: no secret, nor any part of one, is left', () => {
    const body = {
      error: { message: `${'m'.repeat(290)}${SECRET}`, code: `code_${SECRET}`, details: [{ field: SECRET, message: `bad ${SECRET}` }] },
    };
    const error = answer(422, body);
    const seen = `${error.message} ${error.code} ${JSON.stringify(error.details)}`;
    expect(seen).not.toContain('drk_live');
    expect(error.code).toBe('code_[redacted]');
    expect(error.details).toEqual([{ field: '[redacted]', message: 'bad [redacted]' }]);
    expect(error.message).toContain(`The service said: "${'m'.repeat(290)}[redacted]" ("code_[redacted]").`);
  });

  it('Rails values that are not text are summarised, redacted', () => {
    const error = refusedWith({ items: { secret: SECRET, n: 1 } });
    expect(error.details).toEqual([{ field: 'items', message: '{secret: [redacted], n: 1}' }]);
  });
});

describe('errorFromStatus: refused fields', () => {
  it('each refused field named, quoted, with what the service said of it', () => {
    const error = answer(422, { error: 'Invalid', details: [{ field: 'title', message: 'too long' }, 'no items'] });
    expect(error.message).toBe('The service refused the input (422). The service said: "Invalid". Fields: "title": "too long"; "no items".');
  });

  it('at most ten fields shown; the rest counted', () => {
    const ten = Array.from({ length: 10 }, (_, i) => ({ field: `f${i}`, message: 'bad' }));
    const shownTen = refusedWith(ten).message;
    expect(shownTen).toContain('"f9": "bad".');
    expect(shownTen).not.toContain('more');
    const eleven = refusedWith([...ten, { field: 'f10', message: 'bad' }]);
    expect(eleven.message).toMatch(/"f9": "bad"; …1 more\.$/);
    expect(eleven.message).not.toContain('"f10"');
    expect(eleven.details).toHaveLength(11);
    expect(refusedWith([...ten, { field: 'f10', message: 'bad' }, { field: 'f11', message: 'bad' }]).message).toMatch(/; …2 more\.$/);
  });

  it('a field message is shown capped at 200, with or without its field', () => {
    const error = refusedWith([{ field: 'title', message: 'b'.repeat(250) }]);
    expect(error.details[0]!.message).toBe('b'.repeat(250));
    expect(error.message).toContain(`Fields: "title": "${'b'.repeat(199)}…".`);
    expect(refusedWith(['c'.repeat(250)]).message).toContain(`Fields: "${'c'.repeat(199)}…".`);
    expect(refusedWith(['c'.repeat(200)]).message).toContain(`Fields: "${'c'.repeat(200)}".`);
  });

  it('nameField names a field as the person knows it; a blank or unchanged answer leaves it quoted', () => {
    const details = [{ field: 'due_date', message: 'bad' }];
    expect(answer(422, { error: 'No', details }, undefined, () => 'dueDate (sent as "due_date")').message).toContain(
      'Fields: dueDate (sent as "due_date"): "bad".',
    );
    expect(answer(422, { error: 'No', details }, undefined, (f) => f).message).toContain('Fields: "due_date": "bad".');
    expect(answer(422, { error: 'No', details }, undefined, () => '').message).toContain('Fields: "due_date": "bad".');
    expect(answer(422, { error: 'No', details }, undefined, () => `x\n${'n'.repeat(250)}`).message).toContain(`Fields: x ${'n'.repeat(197)}…: "bad".`);
    expect(answer(422, { error: 'No', details }, undefined, () => 'dueDate').details).toEqual(details);
  });

  it('a message that only repeats the fields is left out; the service code is kept', () => {
    expect(answer(422, { errors: [{ field: 'title', message: 'too long', code: 'too_long' }] }).message).toBe(
      'The service refused the input (422). The service\'s code: "too_long". Fields: "title": "too long".',
    );
    expect(answer(422, { errors: { title: ['too long'] } }).message).toBe('The service refused the input (422). Fields: "title": "too long".');
    expect(answer(422, { errors: { title: ['too long'] }, code: 'c'.repeat(70) }).message).toBe(
      `The service refused the input (422). The service's code: "${'c'.repeat(59)}…". Fields: "title": "too long".`,
    );
  });

  it('a message of its own beside the list is said', () => {
    expect(answer(422, { message: 'Check the fields', errors: [{ field: 'title', message: 'too long' }] }).message).toBe(
      'The service refused the input (422). The service said: "Check the fields". Fields: "title": "too long".',
    );
  });

  it('a 5xx keeps its details but does not list them', () => {
    const error = answer(500, { error: 'Boom', details: { title: 'x' } });
    expect(error.details).toEqual([{ field: 'title', message: 'x' }]);
    expect(error.message).not.toContain('Fields');
  });

  it('summarised details speak for a limit', () => {
    expect(answer(402, { errors: [{ field: 'plan', message: 'over' }] }).message).toBe(
      'The firm\'s billing limit stops this (402). The service said: "plan: over".',
    );
  });
});

describe("the firm's limits, told apart", () => {
  const limitOf = (error: ApiError) => (error instanceof PlanLimitError ? error.limit : error.constructor.name);

  it.each([
    ['active requests', 'active-requests'],
    ['5 active request allowed', 'active-requests'],
    ['Active limit reached', 'active-requests'],
    ['active per client limit', 'active-requests'],
    ['active one two limit', 'active-requests'],
    ['active one two three limit', 'InputRefusedError'],
    ['limit active', 'InputRefusedError'],
    ['Requests: active', 'InputRefusedError'],
    ['active requester', 'InputRefusedError'],
    ['active prerequests', 'InputRefusedError'],
    ['Too many requests', 'InputRefusedError'],
    ['inactive requests', 'InputRefusedError'],
    ['the client is not active, so this request cannot be made', 'InputRefusedError'],
  ])('409 saying "%s": %s', (said, limit) => {
    expect(limitOf(answer(409, { error: said }))).toBe(limit);
  });

  it('409: active requests named by the code alone, camelCase or snake_case, count', () => {
    expect(limitOf(answer(409, { error: 'Conflict', code: 'activeRequestLimit' }))).toBe('active-requests');
    expect(limitOf(answer(409, { error: 'Conflict', code: 'active_requests' }))).toBe('active-requests');
    expect(limitOf(answer(409, { error: 'Conflict', code: 'ACTIVEREQUESTS' }))).toBe('InputRefusedError');
    const error = answer(409, { error: 'Starter allows 5 active requests', code: 'conflict' });
    expect(error.message).toBe('The firm\'s active-request limit stops this (409). The service said: "Starter allows 5 active requests" ("conflict").');
  });

  it('"active requests" at any other status is not the active-request limit', () => {
    expect(limitOf(answer(400, { error: 'active requests' }))).toBe('InputRefusedError');
    expect(limitOf(answer(403, { error: 'active requests' }))).toBe('InputRefusedError');
    expect(limitOf(answer(429, { error: 'active requests' }))).toBe('RateLimitedError');
  });

  it.each(['plan', 'plans', 'billing', 'subscription', 'subscriptions', 'quota', 'quotas'])('403 naming "%s" is the plan limit', (word) => {
    const error = answer(403, { error: `Over the ${word} now` });
    expect(limitOf(error)).toBe('plan');
    expect(error.message).toBe(`The firm's plan limit stops this (403). The service said: "Over the ${word} now".`);
  });

  it('403 naming a plan in its code alone is the plan limit; words inside other words do not count', () => {
    expect(limitOf(answer(403, { error: 'Forbidden', code: 'planExceeded' }))).toBe('plan');
    expect(limitOf(answer(403, { error: 'Forbidden', code: 'over_quota' }))).toBe('plan');
    expect(limitOf(answer(403, { error: 'See the explanation' }))).toBe('InputRefusedError');
    expect(limitOf(answer(403, { error: 'Forbidden' }))).toBe('InputRefusedError');
  });

  it.each(['plan', 'plans', 'billing', 'subscription', 'subscriptions'])('429 naming "%s" is the plan limit, its Retry-After kept', (word) => {
    const error = answer(429, { error: `The ${word} allows no more` }, 4_000);
    expect(limitOf(error)).toBe('plan');
    expect(error.retryAfterMs).toBe(4_000);
    expect(error.status).toBe(429);
    expect(error.message).toBe(`The firm's plan limit stops this (429). The service said: "The ${word} allows no more".`);
  });

  it.each(['quota', 'quotas', 'rate limit'])('429 naming only "%s" is rate limiting', (word) => {
    expect(limitOf(answer(429, { error: `Over the ${word}` }))).toBe('RateLimitedError');
  });

  it('plan words at other statuses are refused input or a failure', () => {
    expect(limitOf(answer(400, { error: 'Your plan' }))).toBe('InputRefusedError');
    expect(limitOf(answer(409, { error: 'Your plan' }))).toBe('InputRefusedError');
    expect(limitOf(answer(500, { error: 'Your plan' }))).toBe('ServiceFailedError');
  });

  it('a limit keeps the code, details and status', () => {
    const error = answer(402, { error: 'Pay', code: 'payment', details: { plan: 'starter' } }, 1_000);
    expect(error.code).toBe('payment');
    expect(error.details).toEqual([{ field: 'plan', message: 'starter' }]);
    expect(error.status).toBe(402);
    expect(error.retryAfterMs).toBe(1_000);
    expect(error.message).toBe('The firm\'s billing limit stops this (402). The service said: "Pay" ("payment").');
  });
});

describe('isErrorBody', () => {
  it.each([
    [{ error: 'x' }, true],
    [{ error: { message: 'x' } }, true],
    [{ error: true }, true],
    [{ error: 0 }, true],
    [{ errors: [{ detail: 'x' }] }, true],
    [{ errors: ['x'], error: '' }, true],
    [{ error: '' }, false],
    [{ error: false }, false],
    [{ error: null }, false],
    [{ error: undefined }, false],
    [{ errors: [] }, false],
    [{ errors: { title: ['x'] } }, false],
    [{ data: [] }, false],
    [{}, false],
    [[{ error: 'x' }], false],
    [null, false],
    ['error', false],
    [undefined, false],
  ])('%j: %s', (body, is) => {
    expect(isErrorBody(body)).toBe(is);
  });
});

describe('fieldPath', () => {
  it.each([
    [3, '3'],
    [0, '0'],
    [Number.NaN, ''],
    [Number.POSITIVE_INFINITY, ''],
    [true, ''],
    [null, ''],
    [{ a: 1 }, ''],
    ['', ''],
    ['due_date', 'due_date'],
    ['items[0].name', 'items[0].name'],
    [['items', 0, 'name'], 'items[0].name'],
    [[0, 'name'], '[0].name'],
    [['a', 'b'], 'a.b'],
    [['body', 'title'], 'title'],
    [['query', 'limit'], 'limit'],
    [['path', 'id'], 'id'],
    [['header', 'x'], 'x'],
    [['cookie', 'sid'], 'sid'],
    [['body'], 'body'],
    [['form', 'title'], 'form.title'],
    [['items', 'body'], 'items.body'],
    [['a', null, true, Number.NaN, {}, 'b'], 'a.b'],
    [[], ''],
    ['/data/attributes/due_date', 'due_date'],
    ['/data/attributes', ''],
    ['/data/title', 'title'],
    ['/data', ''],
    ['/data/attributes/data/x', 'data.x'],
    ['/data/attributes/data', 'data'],
    ['/data/data', 'data'],
    ['/data/attributesX/y', 'attributesX.y'],
    ['/database/x', 'database.x'],
    ['/x/data/attributes/y', 'x.data.attributes.y'],
    ['/items/0/name', 'items[0].name'],
    ['/items/7', 'items[7]'],
    ['/items/12/name', 'items[12].name'],
    ['/items/123456789', 'items[123456789]'],
    ['/items/1234567890', 'items.1234567890'],
    ['/items/01', 'items.01'],
    ['/items/1a', 'items.1a'],
    ['/items/a1', 'items.a1'],
    ['/a~1b~1c/d~0e~0f', 'a/b/c.d~e~f'],
    ['/a~01', 'a~1'],
  ])('%j → %j', (raw, path) => {
    expect(fieldPath(raw)).toBe(path);
  });

  it('an array path is read to its twentieth part', () => {
    const parts = Array.from({ length: 25 }, (_, i) => `p${i}`);
    expect(fieldPath(parts)).toBe(parts.slice(0, 20).join('.'));
  });
});

describe('readErrorBody: the shapes read', () => {
  it('not an object: nothing said', () => {
    for (const body of [undefined, null, 'Boom', 42, [{ error: 'x' }]]) expect(readErrorBody(body)).toStrictEqual({ details: [] });
    expect(readErrorBody({ data: 1 })).toStrictEqual({ details: [] });
  });

  it('{"error": "..."}: its code, and details from `details` or else Rails\' `errors`', () => {
    expect(readErrorBody({ error: 'Bad', code: 'bad', details: [{ field: 'a', message: 'x' }], errors: { b: 'y' } })).toStrictEqual({
      message: 'Bad',
      code: 'bad',
      details: [{ field: 'a', message: 'x' }],
    });
    expect(readErrorBody({ error: 'Bad', errors: { b: 'y' } }).details).toEqual([{ field: 'b', message: 'y' }]);
    expect(readErrorBody({ error: 'Bad', code: 'k'.repeat(100) }).code).toBe(`${'k'.repeat(79)}…`);
    expect(readErrorBody({ error: 'Bad', code: 7 }).code).toBe('7');
  });

  it('{"error": ""} or blank: no message, and nothing else is read', () => {
    expect(readErrorBody({ error: '', message: 'Other' })).toStrictEqual({ message: undefined, code: undefined, details: [] });
    expect(readErrorBody({ error: ' \n ' }).message).toBeUndefined();
  });

  it('{"error": {...}}: its message, code and details, fields, or the details beside it', () => {
    expect(readErrorBody({ error: { message: 'Bad', code: 'bad', details: { a: 'x' }, fields: { b: 'y' } }, details: { c: 'z' } })).toStrictEqual({
      message: 'Bad',
      code: 'bad',
      details: [{ field: 'a', message: 'x' }],
    });
    expect(readErrorBody({ error: { message: 'Bad', fields: { b: 'y' } }, details: { c: 'z' } }).details).toEqual([{ field: 'b', message: 'y' }]);
    expect(readErrorBody({ error: { message: 'Bad' }, details: { c: 'z' } }).details).toEqual([{ field: 'c', message: 'z' }]);
    expect(readErrorBody({ error: { message: 42 } }).message).toBe('42');
    expect(readErrorBody({ error: { code: 'c'.repeat(90) } }).code).toBe(`${'c'.repeat(79)}…`);
  });

  it('an error that is null or a number is not read as an object', () => {
    expect(readErrorBody({ error: null, message: 'Fallback' }).message).toBe('Fallback');
    expect(readErrorBody({ error: 5, message: 'Fallback' }).message).toBe('Fallback');
  });

  it('RFC 7807: title and detail joined; code from `code` or else `type`; invalid-params, invalid_params or errors', () => {
    expect(readErrorBody({ title: 'Invalid', detail: 'Two fields', type: 'https://x.test/p', 'invalid-params': [{ name: 'a', reason: 'r' }] })).toStrictEqual({
      message: 'Invalid: Two fields',
      code: 'https://x.test/p',
      details: [{ field: 'a', message: 'r' }],
    });
    expect(readErrorBody({ title: 'Invalid', code: 'inv', type: 't' }).code).toBe('inv');
    expect(readErrorBody({ title: 'Invalid', code: 'i'.repeat(100) }).code).toBe(`${'i'.repeat(79)}…`);
    expect(readErrorBody({ title: 'Invalid', type: 't'.repeat(100) }).code).toBe(`${'t'.repeat(79)}…`);
    expect(readErrorBody({ detail: 'Only detail' }).message).toBe('Only detail');
    expect(readErrorBody({ title: 'Only title' }).message).toBe('Only title');
    expect(readErrorBody({ title: ' ', detail: 'Detail' }).message).toBe('Detail');
    expect(readErrorBody({ detail: 404 }).message).toBe('404');
    expect(readErrorBody({ title: 'T', invalid_params: [{ name: 'b', reason: 's' }], errors: [{ field: 'c', message: 'e' }] }).details).toEqual([
      { field: 'b', message: 's' },
    ]);
    expect(readErrorBody({ title: 'T', errors: [{ field: 'c', message: 'e' }] }).details).toEqual([{ field: 'c', message: 'e' }]);
    expect(readErrorBody({ title: 'T', 'invalid-params': [{ name: 'a', reason: 'r' }], invalid_params: [{ name: 'b', reason: 's' }] }).details).toEqual([
      { field: 'a', message: 'r' },
    ]);
  });

  it('{"errors": [...]}: the details, summarised as the message; the first code given speaks', () => {
    expect(
      readErrorBody({ errors: [{ detail: 'First' }, { code: 'second', source: { pointer: '/data/attributes/title' } }, { code: 'third' }] }),
    ).toStrictEqual({
      message: 'First; title: second; third',
      code: 'second',
      details: [
        { field: '', message: 'First' },
        { field: 'title', message: 'second' },
        { field: '', message: 'third' },
      ],
      fromDetails: true,
    });
    expect(readErrorBody({ errors: [{ code: 'own' }], code: 'top' }).code).toBe('top');
    expect(readErrorBody({ errors: [null, 'text', { code: 9 }] }).code).toBe('9');
    expect(readErrorBody({ errors: [{ detail: 'x', code: 'e'.repeat(100) }] }).code).toBe(`${'e'.repeat(79)}…`);
    expect(readErrorBody({ errors: [{ detail: 'x' }], code: 't'.repeat(100) }).code).toBe(`${'t'.repeat(79)}…`);
  });

  it('{"errors": [...]} with a message of its own: that message, not from the details', () => {
    expect(readErrorBody({ message: 'Own', errors: ['x'] })).toStrictEqual({
      message: 'Own',
      code: undefined,
      details: [{ field: '', message: 'x' }],
      fromDetails: false,
    });
  });

  it('errors that are null or text are not a list: the message beside them is read', () => {
    for (const errors of [null, 'Oops']) {
      expect(readErrorBody({ errors, message: 'Own', details: { a: 'x' } })).toStrictEqual({
        message: 'Own',
        code: undefined,
        details: [{ field: 'a', message: 'x' }],
      });
    }
  });

  it('{"errors": []}: nothing said, not from the details', () => {
    expect(readErrorBody({ errors: [] })).toStrictEqual({ message: undefined, code: undefined, details: [], fromDetails: false });
  });

  it('only the first fifty errors give a code', () => {
    const list = [...Array.from({ length: 50 }, () => ({ detail: 'x' })), { detail: 'x', code: 'late' }];
    expect(readErrorBody({ errors: list }).code).toBeUndefined();
    const fifty = [...Array.from({ length: 49 }, () => ({ detail: 'x' })), { detail: 'x', code: 'last' }];
    expect(readErrorBody({ errors: fifty }).code).toBe('last');
  });

  it('Rails {"errors": {field: [messages]}}: read as details, summarised', () => {
    expect(readErrorBody({ errors: { title: ['blank', 'short'], code: 'x' } })).toStrictEqual({
      message: 'title: blank; title: short; code: x',
      code: undefined,
      details: [
        { field: 'title', message: 'blank' },
        { field: 'title', message: 'short' },
        { field: 'code', message: 'x' },
      ],
      fromDetails: true,
    });
  });

  it('FastAPI {"detail": [...]}: read as a list; {"detail": "..."} as the message', () => {
    expect(readErrorBody({ detail: [{ loc: ['body', 'items', 0], msg: 'required' }], code: 'val' })).toStrictEqual({
      message: 'items[0]: required',
      code: 'val',
      details: [{ field: 'items[0]', message: 'required' }],
      fromDetails: true,
    });
    expect(readErrorBody({ detail: 'Not found' }).message).toBe('Not found');
  });

  it('{"message": ...}: the message, its code and details', () => {
    expect(readErrorBody({ message: 'Nope', code: 'n', details: { a: 'x' } })).toStrictEqual({
      message: 'Nope',
      code: 'n',
      details: [{ field: 'a', message: 'x' }],
    });
    expect(readErrorBody({ message: 12 }).message).toBe('12');
    expect(readErrorBody({ message: 'Nope', code: 'n'.repeat(100) }).code).toBe(`${'n'.repeat(79)}…`);
    expect(readErrorBody({ message: Number.NaN })).toStrictEqual({ details: [] });
    expect(readErrorBody({ message: Number.POSITIVE_INFINITY })).toStrictEqual({ details: [] });
    expect(readErrorBody({ message: '   ' })).toStrictEqual({ details: [] });
    expect(readErrorBody({ message: true })).toStrictEqual({ details: [] });
  });

  it('a summary of the details is capped at 300', () => {
    const reading = readErrorBody({ errors: Array.from({ length: 20 }, (_, i) => ({ field: `field${i}`, message: 'm'.repeat(30) })) });
    expect(reading.message).toHaveLength(300);
    expect(reading.message!.endsWith('…')).toBe(true);
    expect(reading.message!.startsWith(`field0: ${'m'.repeat(30)}; field1: `)).toBe(true);
  });

  it('the redaction given is applied to every string read', () => {
    const reading = readErrorBody({ title: `T ${SECRET}`, detail: SECRET, code: SECRET, 'invalid-params': [{ name: SECRET, reason: SECRET }] }, redact);
    expect(reading).toStrictEqual({
      message: 'T [redacted]: [redacted]',
      code: '[redacted]',
      details: [{ field: '[redacted]', message: '[redacted]' }],
    });
  });
});

describe('readErrorBody: each entry of a details list', () => {
  const details = (list: unknown): FieldDetail[] => readErrorBody({ error: 'x', details: list }).details;

  it('a text entry is a message without a field; a blank one an empty message', () => {
    expect(details(['Title is blank', '  '])).toEqual([
      { field: '', message: 'Title is blank' },
      { field: '', message: '' },
    ]);
  });

  it('entries that are neither text nor objects are left out', () => {
    expect(details([null, 3, true, { message: 'kept' }])).toEqual([{ field: '', message: 'kept' }]);
  });

  it('an entry with neither a field nor a message is left out; either alone is kept', () => {
    expect(details([{ other: 1 }, { field: 'f' }, { message: 'm' }])).toEqual([
      { field: 'f', message: '' },
      { field: '', message: 'm' },
    ]);
  });

  it.each([
    [{ field: 'f', path: 'p' }, 'f'],
    [{ path: 'p', pointer: '/q' }, 'p'],
    [{ pointer: '/q/0', param: 'r' }, 'q[0]'],
    [{ param: 'r', name: 's' }, 'r'],
    [{ name: 's', loc: ['body', 't'] }, 's'],
    [{ loc: ['query', 't'], source: { pointer: '/u' } }, 't'],
    [{ source: { pointer: '/data/attributes/u', parameter: 'v' } }, 'u'],
    [{ source: { parameter: 'v' } }, 'v'],
    [{ field: '', path: 'p' }, 'p'],
    [{ field: [], path: 'p' }, 'p'],
    [{ field: Number.NaN, path: 'p' }, 'p'],
    [{ field: null, path: 'p' }, 'p'],
    [{ field: 4, path: 'p' }, '4'],
    [{ field: ['items', 2] }, 'items[2]'],
    [{ source: null, field: 'f' }, 'f'],
    [{ source: 'text', field: 'f' }, 'f'],
  ])('%j: the field is %j', (entry, field) => {
    expect(details([{ ...entry, message: 'm' }])).toEqual([{ field, message: 'm' }]);
  });

  it.each([
    [{ message: 'a', msg: 'b' }, 'a'],
    [{ msg: 'b', detail: 'c' }, 'b'],
    [{ detail: 'c', reason: 'd' }, 'c'],
    [{ reason: 'd', title: 'e' }, 'd'],
    [{ title: 'e', code: 'f' }, 'e'],
    [{ code: 'f' }, 'f'],
    [{ message: ' ', msg: 'b' }, 'b'],
    [{ message: 7 }, '7'],
  ])('%j: the message is %j', (entry, message) => {
    expect(details([{ field: 'x', ...entry }])).toEqual([{ field: 'x', message }]);
  });

  it('a field is capped at 80, a message at 300, a code as message at 80', () => {
    const [long] = details([{ field: 'f'.repeat(100), message: 'm'.repeat(400) }]);
    expect(long).toEqual({ field: `${'f'.repeat(79)}…`, message: `${'m'.repeat(299)}…` });
    expect(details([{ field: 'f'.repeat(80), message: 'm'.repeat(300) }])).toEqual([{ field: 'f'.repeat(80), message: 'm'.repeat(300) }]);
    expect(details([{ code: 'c'.repeat(100) }])).toEqual([{ field: '', message: `${'c'.repeat(79)}…` }]);
  });

  it('at most fifty entries are read', () => {
    expect(details(Array.from({ length: 51 }, (_, i) => `m${i}`))).toHaveLength(50);
    expect(details(Array.from({ length: 50 }, (_, i) => `m${i}`)).at(-1)).toEqual({ field: '', message: 'm49' });
  });

  it('Rails objects: each message of a field, at most ten a field and fifty fields; paths read as paths', () => {
    expect(details({ '/data/attributes/title': 'blank' })).toEqual([{ field: 'title', message: 'blank' }]);
    expect(details({ title: Array.from({ length: 11 }, (_, i) => `m${i}`) })).toHaveLength(10);
    expect(details({ title: Array.from({ length: 10 }, (_, i) => `m${i}`) }).at(-1)).toEqual({ field: 'title', message: 'm9' });
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, 'x']));
    expect(details(many)).toHaveLength(50);
    expect(details({ ['n'.repeat(100)]: 'x' })).toEqual([{ field: `${'n'.repeat(79)}…`, message: 'x' }]);
    expect(details({ a: null, b: 5, c: [true], d: { e: [1, 2] } })).toEqual([
      { field: 'a', message: 'null' },
      { field: 'b', message: '5' },
      { field: 'c', message: 'true' },
      { field: 'd', message: '{e: [1, 2]}' },
    ]);
  });

  it('Rails objects: a key that names no field (empty, or the JSON:API wrapper alone) gives an empty field', () => {
    expect(details({ '': 'The body is wrong', '/data': 'Not a resource' })).toEqual([
      { field: '', message: 'The body is wrong' },
      { field: '', message: 'Not a resource' },
    ]);
  });

  it('details that are text or a number are not read', () => {
    expect(details('Title is blank')).toEqual([]);
    expect(details(5)).toEqual([]);
  });
});
