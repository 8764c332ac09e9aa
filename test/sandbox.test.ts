import { brotliDecompressSync, createGunzip, gunzipSync } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Fault, type Sandbox } from '../src/sandbox/service.js';
import { SANDBOX_KEYS, seedFirms } from '../src/sandbox/seed.js';
import { sandbox } from './support/sandbox.js';

// The sandbox over real HTTP (undici, which never decompresses on its own, so what is on the wire is
// what the test sees). Nothing here goes through `captured`: the echo tests handle keys on purpose.

const agent = new Agent({ keepAliveTimeout: 1_000 });
afterAll(() => agent.close());

interface Got {
  status: number;
  headers: Record<string, string>;
  /** The body as sent (compressed when it was). */
  raw: Buffer;
  ms: number;
}

async function http(
  url: string,
  options: { method?: 'GET' | 'POST'; key?: string | null; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Got> {
  const started = performance.now();
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? SANDBOX_KEYS.demo}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(url, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    dispatcher: agent,
  });
  const raw = Buffer.from(await res.body.arrayBuffer());
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode, headers: flat, raw, ms: performance.now() - started };
}

/** The body, decompressed as its Content-Encoding says. */
function text(got: Got): string {
  const encoding = got.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(got.raw).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(got.raw).toString('utf8');
  expect(encoding ?? 'identity').toBe('identity');
  return got.raw.toString('utf8');
}

const parse = <T = { data: Record<string, unknown>[] }>(got: Got) => JSON.parse(text(got)) as T;

function payload(sb: Sandbox, title: string, clientIndex = 0) {
  return { clientId: sb.demoFirm.clients[clientIndex]!.id, title, items: [{ name: 'Bank statements', required: true, type: 'file' }] };
}

describe('compression', () => {
  let sb: Sandbox;
  beforeEach(async () => {
    sb = await startSandbox({ clients: 40, requests: 400 });
  });
  afterEach(() => sb.close());

  it('answers br when asked (preferred over gzip), else gzip, else identity; Vary names Accept-Encoding', async () => {
    const plain = await http(`${sb.url}/api/v1/requests`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const body = text(plain);
    expect((JSON.parse(body) as { data: unknown[] }).data).toHaveLength(400);

    for (const [asked, expected] of [
      ['gzip, br', 'br'],
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['deflate, gzip;q=0.5', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['*', 'br'],
      ['identity', undefined],
      ['gzip;q=0, br;q=0', undefined],
    ] as const) {
      const got = await http(`${sb.url}/api/v1/requests`, { headers: { 'accept-encoding': asked } });
      expect(got.headers['content-encoding'], asked).toBe(expected);
      expect(got.headers.vary).toMatch(/accept-encoding/i);
      expect(text(got)).toBe(body);
      if (expected) expect(got.raw.length).toBeLessThan(body.length / 4);
      expect(Number(got.headers['content-length'])).toBe(got.raw.length);
    }
    expect(sb.callsTo('GET', '/api/v1/requests').map((c) => c.contentEncoding)).toEqual([
      undefined,
      'br',
      'br',
      'gzip',
      'gzip',
      'gzip',
      'br',
      undefined,
      undefined,
    ]);
  });

  it('compresses each list once per body and encoding, per firm, and recompresses after a create', async () => {
    const gz = { 'accept-encoding': 'gzip' };
    const a = await http(`${sb.url}/api/v1/requests`, { headers: gz });
    const b = await http(`${sb.url}/api/v1/requests`, { headers: gz });
    expect(b.raw.equals(a.raw)).toBe(true);
    const other = await http(`${sb.url}/api/v1/requests`, { key: SANDBOX_KEYS.northwind, headers: gz });
    expect(text(other)).not.toBe(text(a));
    expect(parse(other).data).toHaveLength(sb.firms.get(SANDBOX_KEYS.northwind)!.requests.length);

    const created = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Fresh after the cache') });
    expect(created.status).toBe(201);
    expect(created.headers['content-encoding']).toBeUndefined(); // only lists are compressed
    const c = await http(`${sb.url}/api/v1/requests`, { headers: gz });
    expect(parse(c).data[0]!.title).toBe('Fresh after the cache');
    expect(parse(c).data).toHaveLength(401);
  });

  it('leaves error bodies uncompressed, and a service that never compresses (compress: false) answers identity', async () => {
    const denied = await http(`${sb.url}/api/v1/requests`, { key: SANDBOX_KEYS.revoked, headers: { 'accept-encoding': 'gzip, br' } });
    expect(denied.status).toBe(401);
    expect(denied.headers['content-encoding']).toBeUndefined();
    sb.setCompression(false);
    const plain = await http(`${sb.url}/api/v1/requests`, { headers: { 'accept-encoding': 'gzip, br' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.etag).toBeTruthy();
  });

  it('fault gzipUnasked: gzips the real answer (list, created record, error) although nothing asked for it', async () => {
    sb.inject('*', { kind: 'gzipUnasked' });
    const list = await http(`${sb.url}/api/v1/clients`);
    expect(list.headers['content-encoding']).toBe('gzip');
    expect(parse(list).data).toHaveLength(40);
    const created = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Gzipped record') });
    expect(created.status).toBe(201);
    expect(created.headers['content-encoding']).toBe('gzip');
    expect(parse<{ data: { title: string } }>(created).data.title).toBe('Gzipped record');
    const denied = await http(`${sb.url}/api/v1/clients`, { key: null });
    expect(denied.status).toBe(401);
    expect(parse<{ error: { code: string } }>(denied).error.code).toBe('unauthorized');
  });

  it('fault bomb: a small gzip body that inflates to exactly the given size of valid JSON', async () => {
    for (const bytes of [18, 1_000, 1_048_600, 3 * 1024 * 1024 + 7]) {
      const got = await http(`${sb.url}/api/v1/requests`, { headers: { 'accept-encoding': 'gzip' } }).then(async (first) => {
        expect(first.headers['content-encoding']).toBe('gzip'); // sanity: a normal answer first
        sb.inject('GET /api/v1/requests', { kind: 'bomb', bytes }, { times: 1 });
        return http(`${sb.url}/api/v1/requests`);
      });
      expect(got.status).toBe(200);
      expect(got.headers['content-encoding']).toBe('gzip');
      const inflated = gunzipSync(got.raw);
      expect(inflated.length).toBe(bytes);
      const value = JSON.parse(inflated.toString('utf8')) as { data: { a: number }[] };
      expect(value.data.length).toBeGreaterThan(0);
      expect(value.data.every((r) => r.a === 0)).toBe(true);
    }
  });

  it('fault bomb: 1 GiB of JSON in under 2 MB on the wire, built fast, streamed to a reader that may stop', async () => {
    const bytes = 1024 * 1024 * 1024;
    sb.inject('GET /api/v1/requests', { kind: 'bomb', bytes }, { times: 1 });
    const started = performance.now();
    const got = await http(`${sb.url}/api/v1/requests`);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(got.raw.length).toBeLessThan(2 * 1024 * 1024);
    expect(got.raw.length).toBe(Number(got.headers['content-length']));
    // Inflate as a stream, counting, without holding the whole: exact size, valid ends.
    let total = 0;
    let head = '';
    let tail = Buffer.alloc(0);
    const gunzip = createGunzip();
    gunzip.on('data', (chunk: Buffer) => {
      if (total === 0) head = chunk.subarray(0, 16).toString();
      total += chunk.length;
      tail = Buffer.concat([tail, chunk]).subarray(-16);
    });
    await new Promise<void>((resolve, reject) => {
      gunzip.on('end', resolve).on('error', reject);
      gunzip.end(got.raw);
    });
    expect(total).toBe(bytes);
    expect(head.startsWith('{"data":[')).toBe(true);
    expect(tail.toString().endsWith('{"a":0}]}')).toBe(true);
  });
});

describe('ETag, Last-Modified and 304', () => {
  let sb: Sandbox;
  beforeEach(async () => {
    sb = await startSandbox();
  });
  afterEach(() => sb.close());

  it('gives each list a strong ETag and Last-Modified; If-None-Match (weak compare, lists, *) answers 304 with no body', async () => {
    const first = await http(`${sb.url}/api/v1/requests`);
    const etag = first.headers.etag!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(Date.parse(first.headers['last-modified']!)).not.toBeNaN();
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const again = await http(`${sb.url}/api/v1/requests`, { headers: { 'if-none-match': inm, 'accept-encoding': 'gzip' } });
      expect(again.status, inm).toBe(304);
      expect(again.raw.length).toBe(0);
      expect(again.headers.etag).toBe(etag);
    }
    const other = await http(`${sb.url}/api/v1/requests`, { headers: { 'if-none-match': '"something-else"' } });
    expect(other.status).toBe(200);
    expect(text(other)).toBe(text(first));
    // Compressed answers carry the same validator; the clients list has its own.
    const br = await http(`${sb.url}/api/v1/requests`, { headers: { 'accept-encoding': 'br' } });
    expect(br.headers.etag).toBe(etag);
    const clients = await http(`${sb.url}/api/v1/clients`);
    expect(clients.headers.etag).not.toBe(etag);
    expect(sb.callsTo('GET', '/api/v1/requests').map((c) => c.status)).toEqual([200, 304, 304, 304, 304, 200, 200]);
    expect(sb.callsTo('GET', '/api/v1/requests')[1]!.ifNoneMatch).toBe(etag);
  });

  it('answers If-Modified-Since (when no If-None-Match) and keys are per firm', async () => {
    const first = await http(`${sb.url}/api/v1/clients`);
    const lm = first.headers['last-modified']!;
    expect((await http(`${sb.url}/api/v1/clients`, { headers: { 'if-modified-since': lm } })).status).toBe(304);
    expect((await http(`${sb.url}/api/v1/clients`, { headers: { 'if-modified-since': new Date(Date.parse(lm) - 1000).toUTCString() } })).status).toBe(200);
    // If-None-Match wins over If-Modified-Since.
    expect((await http(`${sb.url}/api/v1/clients`, { headers: { 'if-modified-since': lm, 'if-none-match': '"x"' } })).status).toBe(200);
    const harbor = await http(`${sb.url}/api/v1/clients`, { key: SANDBOX_KEYS.harbor, headers: { 'if-none-match': first.headers.etag! } });
    expect(harbor.status).toBe(200);
  });

  it('a create changes the requests list validators (ETag and a strictly later Last-Modified) but not the clients list', async () => {
    const before = await http(`${sb.url}/api/v1/requests`);
    const clients = await http(`${sb.url}/api/v1/clients`);
    for (let i = 0; i < 3; i++) {
      const created = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, `Invalidate ${i}`, i) });
      expect(created.status).toBe(201);
    }
    const stale = await http(`${sb.url}/api/v1/requests`, { headers: { 'if-none-match': before.headers.etag!, 'accept-encoding': 'gzip' } });
    expect(stale.status).toBe(200);
    expect(stale.headers.etag).not.toBe(before.headers.etag);
    expect(parse(stale).data[0]!.title).toBe('Invalidate 2');
    expect(Date.parse(stale.headers['last-modified']!)).toBeGreaterThan(Date.parse(before.headers['last-modified']!));
    expect((await http(`${sb.url}/api/v1/requests`, { headers: { 'if-modified-since': before.headers['last-modified']! } })).status).toBe(200);
    expect((await http(`${sb.url}/api/v1/clients`, { headers: { 'if-none-match': clients.headers.etag! } })).status).toBe(304);
    // A reseed changes both.
    sb.reseed({ clients: 20, requests: 30 });
    expect((await http(`${sb.url}/api/v1/clients`, { headers: { 'if-none-match': clients.headers.etag! } })).status).toBe(200);
    expect((await http(`${sb.url}/api/v1/requests`, { headers: { 'if-none-match': stale.headers.etag! } })).status).toBe(200);
  });
});

describe('Idempotency-Key', () => {
  let sb: Sandbox;
  beforeEach(async () => {
    sb = await startSandbox();
  });
  afterEach(() => sb.close());

  const post = (sb: Sandbox, body: unknown, key: string, firmKey: string = SANDBOX_KEYS.demo) =>
    http(`${sb.url}/api/v1/requests`, { method: 'POST', key: firmKey, body, headers: { 'idempotency-key': key } });

  it('a repeated key returns the first answer and sends no second e-mail; a different key sends again', async () => {
    const body = payload(sb, 'Once only');
    const first = await post(sb, body, 'key-1');
    const second = await post(sb, body, 'key-1');
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(text(second)).toBe(text(first));
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(sb.emails).toHaveLength(1);
    expect(sb.demoFirm.requests.filter((r) => r.title === 'Once only')).toHaveLength(1);
    await post(sb, body, 'key-2');
    expect(sb.emails).toHaveLength(2);
  });

  it('a key reused with a different body is refused (422), nothing sent', async () => {
    await post(sb, payload(sb, 'First body'), 'key-x');
    const reused = await post(sb, payload(sb, 'Second body'), 'key-x');
    expect(reused.status).toBe(422);
    expect(parse<{ error: { code: string } }>(reused).error.code).toBe('idempotency_key_reused');
    expect(sb.emails).toHaveLength(1);
  });

  it('keys are scoped by firm', async () => {
    await post(sb, payload(sb, 'Scoped'), 'shared-key');
    // The same key from another firm is that firm's own request: Harbor's active-request limit answers, not a replay of the demo firm's record.
    const harbor = await post(sb, payload(sb, 'Scoped'), 'shared-key', SANDBOX_KEYS.harbor);
    expect(harbor.status).not.toBe(201);
    expect(text(harbor)).not.toContain(sb.emails[0]!.requestId);
    expect(sb.emails).toHaveLength(1);
  });

  it('remembers a key for 24 hours by the sandbox clock, then treats it as new', async () => {
    const body = payload(sb, 'Window');
    const start = Date.now();
    sb.clock = () => start;
    await post(sb, body, 'key-w');
    sb.clock = () => start + 24 * 3_600_000 - 1_000;
    expect((await post(sb, body, 'key-w')).headers['idempotent-replayed']).toBe('true');
    expect(sb.emails).toHaveLength(1);
    sb.clock = () => start + 24 * 3_600_000 + 1;
    const late = await post(sb, body, 'key-w');
    expect(late.status).toBe(201);
    expect(late.headers['idempotent-replayed']).toBeUndefined();
    expect(sb.emails).toHaveLength(2);
  });

  it('a POST handled and then answered 502 (gateway after handling) is replayed as its 201 under the same key', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'status', status: 502 }, { times: 1, after: true });
    const body = payload(sb, 'Gateway then retry');
    const failed = await post(sb, body, 'key-g');
    expect(failed.status).toBe(502);
    expect(sb.emails).toHaveLength(1);
    const retried = await post(sb, body, 'key-g');
    expect(retried.status).toBe(201);
    expect(sb.emails).toHaveLength(1);
  });
});

describe('plan limits', () => {
  it('setActiveRequestRoom: exactly that many more creates, then 409 active_request_limit_reached', async () => {
    const sb = await startSandbox();
    try {
      const previous = sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 2);
      expect(previous).toBe(1_000_000);
      const post = (n: number) => http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, `Room ${n}`, n) });
      expect((await post(1)).status).toBe(201);
      expect((await post(2)).status).toBe(201);
      const third = await post(3);
      expect(third.status).toBe(409);
      expect(parse<{ error: { code: string } }>(third).error.code).toBe('active_request_limit_reached');
      expect(sb.emails).toHaveLength(2);
      expect(sb.activeRequests(SANDBOX_KEYS.demo)).toBe(sb.demoFirm.activeRequestLimit);
    } finally {
      await sb.close();
    }
  });
});

describe('list lag', () => {
  it('hides requests created within the lag from GET /api/v1/requests, then shows them (option and setter)', async () => {
    const sb = await sandbox({ listLagMs: 400 });
    const before = await http(`${sb.url}/api/v1/requests`);
    const created = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Lagging behind') });
    const id = parse<{ data: { id: string } }>(created).data.id;
    const during = await http(`${sb.url}/api/v1/requests`, { headers: { 'if-none-match': before.headers.etag! } });
    expect(during.status).toBe(304); // the list has not changed yet
    const plain = await http(`${sb.url}/api/v1/requests`);
    expect(parse(plain).data.some((r) => r.id === id)).toBe(false);
    expect(sb.demoFirm.requests[0]!.id).toBe(id); // the service has it
    await sleep(450);
    const after = await http(`${sb.url}/api/v1/requests`, { headers: { 'if-none-match': before.headers.etag!, 'accept-encoding': 'gzip' } });
    expect(after.status).toBe(200);
    expect(parse(after).data[0]!.id).toBe(id);

    sb.setListLag(0);
    const next = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'No lag') });
    expect(parse(await http(`${sb.url}/api/v1/requests`)).data[0]!.id).toBe(parse<{ data: { id: string } }>(next).data.id);
    sb.setListLag(60_000);
    const hidden = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Hidden for a minute') });
    const listed = parse(await http(`${sb.url}/api/v1/requests`)).data;
    expect(listed.some((r) => r.id === parse<{ data: { id: string } }>(hidden).data.id)).toBe(false);
    expect(listed[0]!.title).toBe('No lag'); // created without lag: it keeps being shown
    sb.setListLag(0);
    expect(parse(await http(`${sb.url}/api/v1/requests`)).data[0]!.title).toBe('No lag'); // each request keeps its own lag
    sb.clock = () => Date.now() + 61_000;
    expect(parse(await http(`${sb.url}/api/v1/requests`)).data[0]!.title).toBe('Hidden for a minute');
  });
});

describe('faults: echo, redirect, 2xx error body, gateway after handling', () => {
  let sb: Sandbox;
  beforeEach(async () => {
    sb = await startSandbox();
  });
  afterEach(() => sb.close());
  const key = SANDBOX_KEYS.demo;

  it('error-echo: the given status, with the Authorization header and the body in message and details', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'echo', status: 500 });
    const body = payload(sb, 'Echo me');
    const got = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body });
    expect(got.status).toBe(500);
    const error = parse<{ error: { message: string; details: { field: string; message: string }[] } }>(got).error;
    expect(error.message).toContain(`Bearer ${key}`);
    expect(error.details).toContainEqual({ field: 'authorization', message: `Bearer ${key}` });
    expect(error.details).toContainEqual({ field: 'body', message: JSON.stringify(body) });
    expect(sb.emails).toHaveLength(0);
    sb.clearFaults();
    sb.inject('GET /api/v1/clients', { kind: 'echo', status: 401 });
    const denied = await http(`${sb.url}/api/v1/clients`);
    expect(denied.status).toBe(401);
    expect(text(denied)).toContain(key);
  });

  it('success-echo: a created record with extra fields authorization and echo; real errors and lists echo too', async () => {
    sb.inject('*', { kind: 'echo' });
    const body = payload(sb, 'Echo record');
    const created = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body });
    expect(created.status).toBe(201);
    const record = parse<{ data: Record<string, unknown> }>(created).data;
    expect(record.title).toBe('Echo record');
    expect(record.authorization).toBe(`Bearer ${key}`);
    expect(record.echo).toBe(JSON.stringify(body));
    expect(sb.emails).toHaveLength(1);
    const invalid = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: { title: '' } });
    expect(invalid.status).toBe(422);
    expect(parse<{ error: { message: string } }>(invalid).error.message).toContain(key);
    const revoked = await http(`${sb.url}/api/v1/clients`, { key: SANDBOX_KEYS.revoked });
    expect(revoked.status).toBe(401);
    expect(text(revoked)).toContain(SANDBOX_KEYS.revoked);
    const list = parse(await http(`${sb.url}/api/v1/clients`));
    expect(list.data.every((c) => c.authorization === `Bearer ${key}`)).toBe(true);
  });

  it('error-echo after handling: created, then the echoing error', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'echo', status: 502 }, { after: true, times: 1 });
    const got = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Created then echoed') });
    expect(got.status).toBe(502);
    expect(text(got)).toContain(key);
    expect(sb.emails).toHaveLength(1);
  });

  it('redirect: the status and Location, nothing handled', async () => {
    for (const status of [301, 302, 307, 308] as const) {
      const location = `https://elsewhere.example/api/v1/requests?from=${status}`;
      sb.inject('*', { kind: 'redirect', status, location }, { times: 2 });
      const get = await http(`${sb.url}/api/v1/requests`);
      expect(get.status).toBe(status);
      expect(get.headers.location).toBe(location);
      const post = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Not sent') });
      expect(post.status).toBe(status);
      expect(post.headers.location).toBe(location);
    }
    expect(sb.emails).toHaveLength(0);
  });

  it('raw: a 200 whose body is an error, before (nothing created) or after handling (created)', async () => {
    const errorBody = '{"error":{"code":"x","message":"failed"}}';
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 200, body: errorBody }, { times: 1 });
    const before = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Raw before') });
    expect(before.status).toBe(200);
    expect(text(before)).toBe(errorBody);
    expect(sb.emails).toHaveLength(0);
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 200, body: errorBody }, { times: 1, after: true });
    const after = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Raw after') });
    expect(after.status).toBe(200);
    expect(text(after)).toBe(errorBody);
    expect(sb.emails.map((e) => e.title)).toEqual(['Raw after']);
  });

  it.each([502, 504])('gateway %i after handling: the request is created, then the gateway error answered', async (status) => {
    sb.inject('POST /api/v1/requests', { kind: 'status', status } satisfies Fault, { times: 1, after: true });
    const got = await http(`${sb.url}/api/v1/requests`, { method: 'POST', body: payload(sb, `Gateway ${status}`) });
    expect(got.status).toBe(status);
    expect(sb.callsTo('POST', '/api/v1/requests')[0]!.status).toBe(status);
    expect(sb.emails.map((e) => e.title)).toEqual([`Gateway ${status}`]);
    expect(parse(await http(`${sb.url}/api/v1/requests`)).data[0]!.title).toBe(`Gateway ${status}`);
  });
});

describe('link emulation in the sandbox', () => {
  it('adds latency before each answer and writes bodies at the capped rate', async () => {
    const sb = await sandbox({ clients: 200, requests: 600 });
    const fast = await http(`${sb.url}/api/v1/requests`);
    const size = fast.raw.length;
    expect(size).toBeGreaterThan(100_000);
    sb.setLink({ latencyMs: 150 });
    const slow = await http(`${sb.url}/api/v1/clients`);
    expect(slow.ms).toBeGreaterThanOrEqual(145);
    const rate = 500_000;
    sb.setLink({ bytesPerSec: rate });
    const capped = await http(`${sb.url}/api/v1/requests`);
    expect(capped.raw.equals(fast.raw)).toBe(true);
    expect(capped.ms).toBeGreaterThanOrEqual((size / rate) * 1000 * 0.9);
    expect(capped.ms).toBeLessThan((size / rate) * 1000 * 3 + 500);
    sb.setLink({});
    expect((await http(`${sb.url}/api/v1/requests`)).ms).toBeLessThan(((size / rate) * 1000) / 2);
  });

  it('takes the link from the options too', async () => {
    const sb = await sandbox({ latencyMs: 120, bandwidthBytesPerSec: 1e9 });
    expect((await http(`${sb.url}/api/v1/clients`)).ms).toBeGreaterThanOrEqual(115);
  });
});

interface LinkProxy {
  url: string;
  close(): Promise<void>;
  stats: { requests: number; bytesIn: number; bytesOut: number; bytesUp: number; gzipped: number; notModified: number };
}
type LinkProxyModule = { startLinkProxy: (options: { upstream: string; rttMs?: number; mbit?: number; gzip?: boolean }) => Promise<LinkProxy> };
const linkProxy = async () => (await import(pathToFileURL(`${process.cwd()}/test/fixtures/link-proxy.mjs`).href)) as LinkProxyModule;

describe('scripts/link-proxy.mjs', () => {
  it('adds the round trip, counts bytes, gzips when asked and the upstream did not, passes validators and 304 through', async () => {
    const sb = await sandbox({ compress: false, clients: 40, requests: 300 });
    const { startLinkProxy } = await linkProxy();
    const proxy = await startLinkProxy({ upstream: sb.url, rttMs: 60, mbit: 50 });
    try {
      const direct = await http(`${sb.url}/api/v1/requests`);
      const plain = await http(`${proxy.url}/api/v1/requests`);
      expect(plain.ms).toBeGreaterThanOrEqual(55);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.raw.equals(direct.raw)).toBe(true);
      expect(plain.headers.etag).toBe(direct.headers.etag);
      expect(proxy.stats.bytesOut).toBe(direct.raw.length);

      const gz = await http(`${proxy.url}/api/v1/requests`, { headers: { 'accept-encoding': 'gzip, br' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(text(gz)).toBe(direct.raw.toString());
      expect(gz.headers.etag).toBe(`W/${direct.headers.etag}`);
      expect(proxy.stats.bytesOut).toBe(direct.raw.length + gz.raw.length);
      expect(proxy.stats.gzipped).toBe(1);
      // The key and validators reach the service; the 304 comes back with no body.
      const revalidated = await http(`${proxy.url}/api/v1/requests`, { headers: { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag! } });
      expect(revalidated.status).toBe(304);
      expect(revalidated.raw.length).toBe(0);
      expect(proxy.stats.notModified).toBe(1);
      expect(sb.calls.at(-1)!.ifNoneMatch).toBe(gz.headers.etag);
      // A POST's body goes up; an error comes back as it was.
      const created = await http(`${proxy.url}/api/v1/requests`, { method: 'POST', body: payload(sb, 'Via the link') });
      expect(created.status).toBe(201);
      expect(sb.emails.map((e) => e.title)).toEqual(['Via the link']);
      expect(proxy.stats.bytesUp).toBeGreaterThan(50);
      expect((await http(`${proxy.url}/api/v1/clients`, { key: SANDBOX_KEYS.revoked })).status).toBe(401);
      // When the service compresses, the proxy passes its encoding through untouched.
      sb.setCompression(true);
      const br = await http(`${proxy.url}/api/v1/requests`, { headers: { 'accept-encoding': 'gzip, br' } });
      expect(br.headers['content-encoding']).toBe('br');
      expect(parse(br).data).toHaveLength(301);
      expect(proxy.stats.gzipped).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('caps throughput', async () => {
    const sb = await sandbox({ compress: false, clients: 200, requests: 600 });
    const { startLinkProxy } = await linkProxy();
    const proxy = await startLinkProxy({ upstream: sb.url, rttMs: 0, mbit: 4 });
    try {
      const got = await http(`${proxy.url}/api/v1/requests`);
      const expected = ((got.raw.length * 8) / 4_000_000) * 1000;
      expect(got.raw.length).toBeGreaterThan(100_000);
      expect(got.ms).toBeGreaterThanOrEqual(expected * 0.9);
      expect(got.ms).toBeLessThan(expected * 3 + 500);
    } finally {
      await proxy.close();
    }
  });
});

describe('seed', () => {
  it('has a non-active client, two clients named Sam Taylor, and Tomasz Haddad / Tomasz Haddad B. with requests each', () => {
    for (const sizes of [{}, { clients: 100, requests: 100 }, { clients: 30, requests: 40 }]) {
      const demo = seedFirms({ ...sizes, now: new Date('2026-11-22T00:00:00Z') }).get(SANDBOX_KEYS.demo)!;
      expect(demo.clients.some((c) => c.status !== 'active')).toBe(true);
      expect(demo.clients.filter((c) => c.displayName === 'Sam Taylor')).toHaveLength(2);
      const tomasz = demo.clients.filter((c) => c.displayName === 'Tomasz Haddad');
      const tomaszB = demo.clients.filter((c) => c.displayName === 'Tomasz Haddad B.');
      expect(tomasz).toHaveLength(1);
      expect(tomaszB).toHaveLength(1);
      expect(tomasz[0]!.id).not.toBe(tomaszB[0]!.id);
      expect(tomasz[0]!.email).not.toBe(tomaszB[0]!.email);
      for (const c of [...tomasz, ...tomaszB]) {
        const theirs = demo.requests.filter((r) => r.clientId === c.id);
        expect(theirs.length).toBeGreaterThanOrEqual(2);
        expect(theirs.every((r) => r.clientName === c.displayName)).toBe(true);
      }
      const emails = demo.clients.map((c) => c.email);
      expect(new Set(emails).size).toBe(emails.length);
    }
  });
});
