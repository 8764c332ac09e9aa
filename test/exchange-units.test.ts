import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createHttpsServer } from 'node:https';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { DocReqApi } from '../src/api/client.js';
import {
  BadResponseError,
  CancelledError,
  CertificateError,
  InputRefusedError,
  KeyRejectedError,
  NotFoundServiceError,
  RateLimitedError,
  RedirectedError,
  ServiceFailedError,
  TimedOutError,
  TooLargeError,
  UnreachableError,
} from '../src/api/errors.js';
import { CLIENTS, REQUESTS, header, type RawAnswer } from '../src/api/exchange.js';
import { neverConnected } from '../src/api/no-answer.js';
import { TUNNEL_CLOSED, TUNNEL_REFUSED } from '../src/api/pool.js';
import { describeProxy } from '../src/api/proxy.js';
import { USER_AGENT } from '../src/version.js';
import { suiteFolder } from './support/folders.js';
import { sandbox } from './support/sandbox.js';
import { apiFailure } from './support/connect.js';
import { freePort } from './support/ports.js';
import { CAP, KEY, TIMEOUT_MS, answering, exchanges, get, list, pause, post, rawProxy, serve, soon } from './support/exchange.js';

/**
 * One HTTP exchange with the service (src/api/exchange.ts) on its own: the headers it sends as the service
 * receives them, the base URL's origin and path, the keep-alive pool (its own, a shared one, through a proxy),
 * decompression as the body streams, the size cap counted after decompression (both sides of the edge),
 * redirects never followed, and every failure as a typed error with the words a person reads. All over real
 * HTTP on 127.0.0.1: the sandbox, or a tiny server of the test's own where the sandbox cannot show it.
 */

const sb = await sandbox();
const failure = apiFailure;
const { exchangeTo, keyRejections } = exchanges();
const text = (answer: RawAnswer<unknown>) => answer.bytes.toString('utf8');

/** A valid list body of exactly `bytes` bytes: `{"data":[{"n":0},…]}` padded with spaces. */
function listOf(bytes: number): { body: Buffer; count: number } {
  const items: string[] = [];
  let length = '{"data":[]}'.length;
  for (let n = 0; ; n++) {
    const item = `${n === 0 ? '' : ','}{"n":${n}}`;
    if (length + item.length > bytes) break;
    items.push(item);
    length += item.length;
  }
  const body = `{"data":[${items.join('')}]${' '.repeat(bytes - length)}}`;
  return { body: Buffer.from(body), count: items.length };
}

describe('what it sends', () => {
  it('sends the bearer key, Accept, Accept-Encoding "gzip, br" and the User-Agent; a GET has no Content-Type, a POST has JSON', async () => {
    const x = exchangeTo(sb.url);
    const got = await get(x, CLIENTS);
    expect(got.status).toBe(200);
    await post(x, JSON.stringify({ clientId: 'nobody' }), { headers: { 'idempotency-key': 'units-1' } });
    const [g, p] = sb.calls;
    expect(g).toMatchObject({
      method: 'GET',
      path: CLIENTS,
      accept: 'application/json',
      acceptEncoding: 'gzip, br',
      userAgent: USER_AGENT,
      contentType: undefined,
      idempotencyKey: undefined,
    });
    expect(p).toMatchObject({
      method: 'POST',
      path: REQUESTS,
      accept: 'application/json',
      acceptEncoding: 'gzip, br',
      userAgent: USER_AGENT,
      contentType: 'application/json',
      idempotencyKey: 'units-1',
      body: '{"clientId":"nobody"}',
    });
  });

  it("sends exactly these headers as a server receives them; extra ones are added and may replace the usual ones, but never a POST's Content-Type", async () => {
    const s = await answering(200, { 'content-type': 'application/json' }, '{}');
    const x = exchangeTo(s.url);
    await get(x, REQUESTS, { headers: { 'if-none-match': '"v1"' } });
    await get(x, REQUESTS, { headers: { accept: 'text/plain' } });
    await post(x, '{"a":1}', { headers: { 'content-type': 'text/plain', 'idempotency-key': 'k-2' } });
    const [first, second, third] = s.seen;
    expect(first!.method).toBe('GET');
    expect(first!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first!.headers.accept).toBe('application/json');
    expect(first!.headers['accept-encoding']).toBe('gzip, br');
    expect(first!.headers['user-agent']).toBe(USER_AGENT);
    expect(first!.headers['if-none-match']).toBe('"v1"');
    expect(first!.headers['content-type']).toBeUndefined();
    expect(first!.body).toBe('');
    expect(second!.headers.accept).toBe('text/plain');
    expect(second!.headers['if-none-match']).toBeUndefined();
    expect(third!.method).toBe('POST');
    expect(third!.headers['content-type']).toBe('application/json');
    expect(third!.headers['idempotency-key']).toBe('k-2');
    expect(third!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(third!.body).toBe('{"a":1}');
  });

  it("calls the base URL's own path, with a query kept; names the service by its origin", async () => {
    const s = await answering(200, {}, '{}');
    const x = exchangeTo(`${s.url}/tenant/eu`);
    await get(x, `${REQUESTS}?page=2&q=a%20b`);
    await get(x, CLIENTS);
    expect(s.seen.map((c) => c.url)).toEqual(['/tenant/eu/api/v1/requests?page=2&q=a%20b', '/tenant/eu/api/v1/clients']);
    expect(x.origin).toBe(s.url);
    expect(x.url(REQUESTS)).toBe(`${s.url}/tenant/eu/api/v1/requests`);
    expect(CLIENTS).toBe('/api/v1/clients');
    expect(REQUESTS).toBe('/api/v1/requests');
  });

  it('calls each of many paths where it points (the paths worked out are remembered, a few at a time)', async () => {
    const s = await answering(200, {}, '{}');
    const x = exchangeTo(s.url);
    for (let page = 0; page < 70; page++) await get(x, `${REQUESTS}?page=${page}`);
    await get(x, `${REQUESTS}?page=0`);
    expect(s.seen).toHaveLength(71);
    expect(s.seen.map((c) => c.url)).toEqual([...Array.from({ length: 70 }, (_, p) => `/api/v1/requests?page=${p}`), '/api/v1/requests?page=0']);
  });
});

describe('the answer', () => {
  it('returns the status, the headers and the body whole, however many pieces it came in', async () => {
    const s = await serve(async (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', etag: '"e1"', 'x-twice': ['a', 'b'] });
      res.write('{"data":');
      await pause(20);
      res.write('{"id":"r1"}');
      await pause(20);
      res.end('}');
    });
    const got = await get(exchangeTo(s.url));
    expect(got.status).toBe(201);
    expect(text(got)).toBe('{"data":{"id":"r1"}}');
    expect(got.records).toBeUndefined();
    expect(header(got.headers, 'etag')).toBe('"e1"');
    expect(header(got.headers, 'x-twice')).toBe('a');
    expect(header(got.headers, 'content-type')).toBe('application/json');
    expect(header(got.headers, 'x-absent')).toBeUndefined();
  });

  it('returns an empty body as empty', async () => {
    const s = await answering(200, {}, '');
    const got = await get(exchangeTo(s.url));
    expect(got.bytes).toHaveLength(0);
  });

  it('tells its status before the body is read', async () => {
    const s = await answering(202, { 'content-type': 'application/json' }, '{"ok":true}');
    const statuses: number[] = [];
    const got = await get(exchangeTo(s.url), REQUESTS, { onStatus: (status) => statuses.push(status) });
    expect(statuses).toEqual([202]);
    expect(text(got)).toBe('{"ok":true}');
  });

  it('reads a 304 as no body', async () => {
    const s = await answering(304, { etag: '"v9"' });
    const statuses: number[] = [];
    const got = await get(exchangeTo(s.url), REQUESTS, { onStatus: (status) => statuses.push(status), headers: { 'if-none-match': '"v9"' } });
    expect(got.status).toBe(304);
    expect(got.bytes).toHaveLength(0);
    expect(got.records).toBeUndefined();
    expect(header(got.headers, 'etag')).toBe('"v9"');
    expect(statuses).toEqual([304]);
  });

  it.each([300, 301, 302, 399])('drops the body of a %i unread', async (status) => {
    const s = await answering(status, { 'content-type': 'text/html', location: '/elsewhere' }, '<html>moved</html>');
    const got = await get(exchangeTo(s.url));
    expect(got.status).toBe(status);
    expect(got.bytes).toHaveLength(0);
    expect(header(got.headers, 'location')).toBe('/elsewhere');
  });

  it.each([200, 299, 400, 404, 500])('reads the body of a %i', async (status) => {
    const s = await answering(status, { 'content-type': 'application/json' }, '{"error":"x"}');
    const got = await get(exchangeTo(s.url));
    expect(got.status).toBe(status);
    expect(text(got)).toBe('{"error":"x"}');
  });
});

describe('a list as it streams', () => {
  it('streams a 2xx list into records (200 and 299), and reads any other answer whole', async () => {
    let status = 200;
    const s = await serve((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{"data":[{"n":1},{"n":2}]}');
    });
    const x = exchangeTo(s.url);
    for (status of [200, 299]) {
      const got = await list(x);
      expect(got.records, String(status)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(got.bytes).toHaveLength(0);
    }
    status = 500;
    const failed = await list(x);
    expect(failed.records).toBeUndefined();
    expect(text(failed)).toBe('{"data":[{"n":1},{"n":2}]}');
  });

  it('reads a list sent in many small pieces, larger than one parse piece, into every record', async () => {
    const { body, count } = listOf(700 * 1024);
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < body.length; at += 4096) {
        res.write(body.subarray(at, at + 4096));
        if (at % (64 * 1024) === 0) await pause(1);
      }
      res.end();
    });
    const got = await list(exchangeTo(s.url));
    expect(got.records).toHaveLength(count);
    expect(got.records![0]).toEqual({ n: 0 });
    expect(got.records!.at(-1)).toEqual({ n: count - 1 });
  });

  it('reads a gzipped list that decompresses into whole parse pieces, nothing left over', async () => {
    const { body, count } = listOf(512 * 1024);
    const s = await answering(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(body));
    const got = await list(exchangeTo(s.url));
    expect(got.records).toHaveLength(count);
    expect(got.records!.at(-1)).toEqual({ n: count - 1 });
  });

  it('refuses a 2xx that is not a list, naming the status, the content type (key redacted, parameters dropped) and the size', async () => {
    let type: string | undefined = 'text/html; charset=utf-8';
    const s = await serve((_req, res) => {
      res.writeHead(200, type === undefined ? {} : { 'content-type': type });
      res.end('<html>hello</html>');
    });
    const x = exchangeTo(s.url);
    const html = await failure(list(x));
    expect(html).toBeInstanceOf(BadResponseError);
    expect(html.status).toBe(200);
    expect(html.message).toMatch(/^The service's requests list is not valid JSON.* It answered 200 \(text\/html\), 18 bytes\.$/);
    type = `application/${KEY}`;
    const keyed = await failure(list(x));
    expect(keyed.message).toMatch(/ It answered 200 \(application\/\[redacted\]\), 18 bytes\.$/);
    type = undefined;
    const bare = await failure(list(x));
    expect(bare.message).toMatch(/ It answered 200, 18 bytes\.$/);
  });
});

describe('decompression', () => {
  const plain = Buffer.from(JSON.stringify({ data: [{ id: 'r1', title: 'Décompressé' }], note: 'x'.repeat(2_000) }));
  const cases: [encoding: string, body: Buffer][] = [
    ['gzip', gzipSync(plain)],
    ['x-gzip', gzipSync(plain)],
    ['br', brotliCompressSync(plain)],
    ['deflate', deflateSync(plain)],
    ['identity', plain],
    ['', plain],
    ['IDENTITY', plain],
    [' X-GZip ', gzipSync(plain)],
    ['identity, br', brotliCompressSync(plain)],
    [', gzip,', gzipSync(plain)],
    ['gzip, br', brotliCompressSync(gzipSync(plain))],
    ['br, deflate', deflateSync(brotliCompressSync(plain))],
    ['deflate, gzip, br', brotliCompressSync(gzipSync(deflateSync(plain)))],
  ];
  it.each(cases)('reads Content-Encoding %j', async (encoding, body) => {
    const s = await answering(200, { 'content-type': 'application/json', 'content-encoding': encoding }, body);
    const got = await get(exchangeTo(s.url));
    expect(got.bytes.equals(plain)).toBe(true);
  });

  it.each([
    ['compress', 200, 'compress'],
    ['gzip, compress', 200, 'gzip, compress'],
    ['zstd', 503, 'zstd'],
    [`gzip, ${KEY}`, 200, 'gzip, [redacted]'],
    ['a-very-long-encoding-name-that-goes-on-and-on', 200, 'a-very-long-encoding-name-that-goes-on-…'],
  ])('refuses Content-Encoding %j, naming it', async (encoding, status, shown) => {
    const s = await answering(status, { 'content-encoding': encoding }, 'whatever');
    const error = await failure(get(exchangeTo(s.url)));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error).not.toBeInstanceOf(TooLargeError);
    expect(error.status).toBe(status);
    expect(error.message).toBe(`The service answered ${status} with a Content-Encoding this client cannot read (${shown}).`);
  });

  it.each([
    ['gzip', 200, Buffer.from('this is not gzip at all'), 'Z_DATA_ERROR'],
    ['deflate', 200, Buffer.from('this is not deflate either'), 'Z_DATA_ERROR'],
    ['br', 200, Buffer.from('this is not brotli, no, not at all, not even a bit'), 'ERR__ERROR_FORMAT_PADDING_1'],
    ['gzip', 502, gzipSync(plain).subarray(0, 40), 'Z_BUF_ERROR'],
    ['gzip, gzip, gzip, gzip', 200, Buffer.from('corrupt'), 'Z_DATA_ERROR'],
  ])('refuses a corrupt %s body (%i) as one that could not be decompressed', async (encoding, status, body, code) => {
    const s = await answering(status, { 'content-encoding': encoding }, body);
    const error = await failure(get(exchangeTo(s.url)));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.status).toBe(status);
    const shown = encoding.length > 20 ? `${encoding.slice(0, 19)}…` : encoding;
    const m = /^The service's answer \((\d+), (.*)\) could not be decompressed \((.+)\)\.$/.exec(error.message);
    expect(m, error.message).not.toBeNull();
    expect(m![1]).toBe(String(status));
    expect(m![2]).toBe(shown);
    expect(m![3]).toBe(code);
  });
});

describe('the size cap', () => {
  const over = (mb: string, more = '') => `The service's answer (200) is larger than the 1.5 MB cap (${mb} MB or more${more}); it was not read.`;

  it('refuses a declared Content-Length over the cap before reading it; exactly the cap is read', async () => {
    let size = CAP + 1;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(size) });
      res.end(Buffer.alloc(size, 0x20));
    });
    const x = exchangeTo(s.url);
    const error = await failure(get(x));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.status).toBe(200);
    expect(error.message).toBe(over('1.5'));
    size = 3 * 1024 * 1024;
    expect((await failure(get(x))).message).toBe(over('3.0'));
    size = CAP;
    const got = await get(x);
    expect(got.bytes).toHaveLength(CAP);
  });

  it('refuses an undeclared body once it passes the cap; exactly the cap is read', async () => {
    let size = CAP + 1;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.alloc(size, 0x20));
    });
    const x = exchangeTo(s.url);
    const error = await failure(get(x));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.message).toMatch(/^The service's answer \(200\) is larger than the 1\.5 MB cap \(1\.[56] MB or more\); it was not read\.$/);
    size = CAP;
    expect((await get(x)).bytes).toHaveLength(CAP);
  });

  it('counts a compressed body after decompression: over the cap is refused "once decompressed"; exactly the cap is read', async () => {
    let size = CAP + 1;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(size, 0x20)));
    });
    const x = exchangeTo(s.url);
    const error = await failure(get(x));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.message).toMatch(/^The service's answer \(200\) is larger than the 1\.5 MB cap \(1\.[5-8] MB or more once decompressed\); it was not read\.$/);
    size = CAP;
    expect((await get(x)).bytes).toHaveLength(CAP);
  });

  it("names the status of a refusal over the cap, and stops the sandbox's huge body early", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024) });
      res.end(Buffer.alloc(2 * 1024 * 1024, 0x20));
    });
    const refusal = await failure(get(exchangeTo(s.url)));
    expect(refusal).toBeInstanceOf(TooLargeError);
    expect(refusal.status).toBe(500);
    expect(refusal.message).toBe("The service's answer (500) is larger than the 1.5 MB cap (2.0 MB or more); it was not read.");

    const bytes = 64 * 1024 * 1024;
    sb.inject('GET /api/v1/requests', { kind: 'huge', bytes, declareLength: true }, { times: 1 });
    const declared = await failure(get(exchangeTo(sb.url)));
    expect(declared.message).toBe(over('64.0'));
    sb.inject('GET /api/v1/requests', { kind: 'huge', bytes }, { times: 1 });
    const streamed = await failure(get(exchangeTo(sb.url)));
    expect(streamed).toBeInstanceOf(TooLargeError);
    await pause(50);
    for (const call of sb.calls) expect(call.bytesWritten).toBeLessThan(bytes / 2);
  });

  it('a bomb from the sandbox stops at the cap, once decompressed', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'bomb', bytes: 256 * 1024 * 1024 }, { times: 1 });
    const error = await failure(get(exchangeTo(sb.url)));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.message).toContain('MB or more once decompressed); it was not read.');
  });
});

describe('redirects are never followed', () => {
  const words = (status: number, where: string, tail = '') =>
    `The service answered ${status}, redirecting${where}; redirects are not followed (the key is never sent to another address). Check the base URL.${tail}`;

  it.each([301, 302, 303, 307, 308] as const)('a %i to a GET names its target by origin and path', async (status) => {
    sb.inject('GET /api/v1/clients', { kind: 'redirect', status, location: 'https://elsewhere.example:8443/api/v1/clients?token=abc#frag' }, { times: 1 });
    const x = exchangeTo(sb.url);
    const answer = await get(x, CLIENTS);
    expect(answer.status).toBe(status);
    const error = x.statusError(answer, 'GET', CLIENTS);
    expect(error).toBeInstanceOf(RedirectedError);
    expect(error.message).toBe(words(status, ' to "https://elsewhere.example:8443/api/v1/clients"'));
    expect((error as RedirectedError).location).toBe('https://elsewhere.example:8443/api/v1/clients');
    expect(error.status).toBe(status);
    expect(error.outcomeUnknown).toBe(false);
  });

  it.each([301, 302, 307, 308] as const)('a %i to a POST says nothing was sent', async (status) => {
    sb.inject('POST /api/v1/requests', { kind: 'redirect', status, location: '/api/v2/requests' }, { times: 1 });
    const x = exchangeTo(sb.url);
    const error = x.statusError(await post(x), 'POST', REQUESTS);
    expect(error).toBeInstanceOf(RedirectedError);
    expect(error.message).toBe(words(status, ` to "${sb.url}/api/v2/requests"`, ' Nothing was sent.'));
    expect(error.outcomeUnknown).toBe(false);
  });

  it('a 303 to a POST: the outcome is not known', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'redirect', status: 303, location: '/api/v1/requests/req_9' }, { times: 1 });
    const x = exchangeTo(sb.url);
    const error = x.statusError(await post(x), 'POST', REQUESTS);
    expect(error).toBeInstanceOf(RedirectedError);
    expect(error.detail).toBe(words(303, ` to "${sb.url}/api/v1/requests/req_9"`));
    expect(error.message).toBe(`${error.detail} The request may have been sent.`);
    expect(error.outcomeUnknown).toBe(true);
  });

  it.each([
    ['no Location', undefined, undefined],
    ['an empty Location', '', undefined],
    ['an unparsable Location', 'http://[not-a-host/x', undefined],
    ['a relative Location under the base path', 'moved/here?x=1', '/tenant/moved/here'],
    ['a Location holding the key', `https://evil.example/${KEY}/x?k=${KEY}`, 'https://evil.example/[redacted]/x'],
  ] as const)('with %s', async (_, location, target) => {
    const s = await answering(302, location === undefined ? {} : { location });
    const x = exchangeTo(`${s.url}/tenant`);
    const answer = await get(x, CLIENTS);
    const forGet = x.statusError(answer, 'GET', CLIENTS);
    const forPost = x.statusError(answer, 'POST', REQUESTS);
    const shown = target === undefined ? undefined : target.startsWith('/') ? `${s.url}${target}` : target;
    const where = shown === undefined ? ' without a usable Location' : ` to ${JSON.stringify(shown)}`;
    expect(forGet.message).toBe(words(302, where));
    expect(forPost.message).toBe(words(302, where, ' Nothing was sent.'));
    expect((forGet as RedirectedError).location).toBe(shown);
    expect(forGet.message).not.toContain(KEY);
  });

  it('caps a long target, and takes the first of two Locations', async () => {
    const long = `https://far.example/${'a'.repeat(300)}`;
    const s = await answering(301, { location: [long, 'https://second.example/x'] });
    const x = exchangeTo(s.url);
    const error = x.statusError(await get(x), 'GET', REQUESTS) as RedirectedError;
    expect(error.location).toBe(`${long.slice(0, 199)}…`);
    expect(error.message).toContain(`redirecting to "${long.slice(0, 199)}…"`);
  });
});

describe('what a refusal means', () => {
  it('a 404 to a GET: there is no Document Request Service at the base URL', async () => {
    const x = exchangeTo(`${sb.url}/wrong`);
    const answer = await get(x, CLIENTS);
    expect(answer.status).toBe(404);
    const error = x.statusError(answer, 'GET', CLIENTS);
    expect(error).toBeInstanceOf(NotFoundServiceError);
    expect(error.message).toBe(
      `There is no Document Request Service at ${sb.url}/wrong: it answered 404 (not found) for /api/v1/clients. The base URL should be the service's address without /api/v1/clients.`,
    );
    expect((error as NotFoundServiceError).baseUrl).toBe(`${sb.url}/wrong`);
    expect(error.status).toBe(404);
  });

  it('a 404 to a POST is a refusal of the input, with what the service said', async () => {
    const s = await answering(404, { 'content-type': 'application/json' }, '{"error":{"message":"No such client.","code":"not_found"}}');
    const x = exchangeTo(s.url);
    const error = x.statusError(await post(x), 'POST', REQUESTS);
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.message).toBe('The service refused the input (404). The service said: "No such client." ("not_found").');
  });

  it('a refusal whose body is not JSON never pastes it, and names its content type (key redacted)', async () => {
    const s = await answering(502, { 'content-type': `text/html; ${KEY}` }, '<html>bad gateway</html>');
    const x = exchangeTo(s.url);
    const error = x.statusError(await get(x), 'GET', REQUESTS);
    expect(error).toBeInstanceOf(ServiceFailedError);
    expect(error.message).toBe('The service failed (502). The body was not JSON (text/html).');
  });

  it('names a refused field as the caller names it', async () => {
    const s = await answering(422, { 'content-type': 'application/json' }, '{"error":"Invalid","details":[{"field":"clientId","message":"unknown"}]}');
    const x = exchangeTo(s.url);
    const error = x.statusError(await post(x), 'POST', REQUESTS, (field) => (field === 'clientId' ? 'client' : field));
    expect(error).toBeInstanceOf(InputRefusedError);
    expect(error.message).toBe('The service refused the input (422). The service said: "Invalid". Fields: client: "unknown".');
  });

  it('a 401 forgets what was kept for the key; no other status does', async () => {
    const s = await answering(401, { 'content-type': 'application/json' }, '{"error":"Revoked."}');
    const x = exchangeTo(s.url);
    const answer = await get(x);
    const before = keyRejections();
    expect(x.statusError({ ...answer, status: 403 }, 'GET', REQUESTS)).not.toBeInstanceOf(KeyRejectedError);
    expect(keyRejections()).toBe(before);
    const error = x.statusError(answer, 'GET', REQUESTS);
    expect(error).toBeInstanceOf(KeyRejectedError);
    expect(keyRejections()).toBe(before + 1);
  });

  it('a 299 and a 399 are told apart from a redirect at the edges', async () => {
    const s = await answering(299, { 'content-type': 'application/json' }, '{}');
    const x = exchangeTo(s.url);
    const answer = await get(x);
    expect(x.statusError(answer, 'GET', REQUESTS)).toBeInstanceOf(BadResponseError);
    expect(x.statusError(answer, 'GET', REQUESTS).message).toBe('The service answered with an unexpected status 299.');
    expect(x.statusError({ ...answer, status: 300 }, 'GET', REQUESTS)).toBeInstanceOf(RedirectedError);
    expect(x.statusError({ ...answer, status: 399 }, 'GET', REQUESTS)).toBeInstanceOf(RedirectedError);
    expect(x.statusError({ ...answer, status: 400 }, 'GET', REQUESTS)).toBeInstanceOf(InputRefusedError);
  });
});

describe('Retry-After', () => {
  const retryAfter = async (status: number, value: string | string[] | undefined) => {
    const s = await answering(
      status,
      { 'content-type': 'application/json', ...(value === undefined ? {} : { 'retry-after': value }) },
      '{"error":"Slow down."}',
    );
    const x = exchangeTo(s.url);
    return x.statusError(await get(x), 'GET', REQUESTS);
  };

  it.each([
    ['3', 3_000],
    ['12', 12_000],
    [' 2 ', 2_000],
    ['1.5', 1_500],
    ['1.25', 1_250],
    ['0', 0],
    ['0.0004', 0],
  ])('reads %j seconds on a 429', async (value, ms) => {
    const error = await retryAfter(429, value);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(ms);
  });

  it('reads seconds on a 503 too, and the first of two', async () => {
    const error = await retryAfter(503, '7');
    expect(error).toBeInstanceOf(ServiceFailedError);
    expect(error.retryAfterMs).toBe(7_000);
    expect((await retryAfter(429, ['4', '9'])).retryAfterMs).toBe(4_000);
  });

  it('reads an HTTP date as the time until it; a date passed as no wait', async () => {
    const later = await retryAfter(429, new Date(Date.now() + 60_000).toUTCString());
    expect(later.retryAfterMs).toBeGreaterThan(50_000);
    expect(later.retryAfterMs).toBeLessThanOrEqual(60_000);
    const past = await retryAfter(503, new Date(Date.now() - 60_000).toUTCString());
    expect(past.retryAfterMs).toBe(0);
  });

  it.each([[undefined], [''], ['soon'], ['5 s'], ['1e3']])('reads %j as no wait given', async (value) => {
    const error = await retryAfter(429, value);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBeUndefined();
  });

  it.each([['in 5'], ['1.'], ['.5'], ['-5'], ['5 seconds']])('never reads %j as a wait', async (value) => {
    const error = await retryAfter(503, value);
    expect(error).toBeInstanceOf(ServiceFailedError);
    // Not seconds; read as a date, if at all (a lenient date parser may find one long past): never a wait, never NaN.
    expect(error.retryAfterMs ?? 0).toBe(0);
  });
});

describe('deadlines and cancels', () => {
  it.each(['GET', 'POST'] as const)('a %s whose deadline has passed is not started', async (method) => {
    const s = await answering(200, {}, '{}');
    const x = exchangeTo(s.url);
    const error = await failure(x.exchange({ method, path: REQUESTS, deadline: Date.now() - 1, body: method === 'POST' ? '{}' : undefined }));
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error.message).toBe('The service did not answer within 5000 ms.');
    expect(error.outcomeUnknown).toBe(false);
    await pause(30);
    expect(s.seen).toHaveLength(0);
  });

  it('a GET whose headers come after the deadline times out; a POST then may have been sent', async () => {
    const s = await serve(async (_req, res) => {
      await pause(1_500);
      if (!res.destroyed) res.end('{}');
    });
    const x = exchangeTo(s.url);
    const slowGet = await failure(get(x, REQUESTS, { deadline: Date.now() + 200 }));
    expect(slowGet).toBeInstanceOf(TimedOutError);
    expect(slowGet.message).toBe('The service did not answer within 5000 ms.');
    expect(slowGet.outcomeUnknown).toBe(false);
    expect(slowGet.status).toBeUndefined();
    const slowPost = await failure(post(x, '{}', { deadline: Date.now() + 200 }));
    expect(slowPost).toBeInstanceOf(TimedOutError);
    expect(slowPost.outcomeUnknown).toBe(true);
    expect(slowPost.message).toBe('The service did not answer within 5000 ms. The request may have been sent.');
    expect(s.seen.map((c) => c.method)).toEqual(['GET', 'POST']);
  });

  it('a body that trickles past the deadline times out, naming the status it had', async () => {
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 40 && !res.destroyed; i++) {
        res.write(' ');
        await pause(50);
      }
      if (!res.destroyed) res.end('{}');
    });
    const error = await failure(get(exchangeTo(s.url), REQUESTS, { deadline: Date.now() + 300 }));
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error.status).toBe(200);
  });

  it('a GET cancelled before it starts sends nothing: "The call was cancelled."', async () => {
    const s = await answering(200, {}, '{}');
    const controller = new AbortController();
    controller.abort();
    const error = await failure(get(exchangeTo(s.url), REQUESTS, { signal: controller.signal }));
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toBe('The call was cancelled.');
    await pause(30);
    expect(s.seen).toHaveLength(0);
  });

  it('a POST cancelled before it starts: "Nothing was sent."', async () => {
    const s = await answering(201, {}, '{}');
    const controller = new AbortController();
    controller.abort();
    const error = await failure(post(exchangeTo(s.url), '{}', { signal: controller.signal }));
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toBe('The call was cancelled before sending. Nothing was sent.');
    expect(error.outcomeUnknown).toBe(false);
    await pause(30);
    expect(s.seen).toHaveLength(0);
  });

  it('a GET cancelled while it waits is abandoned: "cancelled before the service answered"', async () => {
    const s = await serve(async (_req, res) => {
      await pause(1_500);
      if (!res.destroyed) res.end('{}');
    });
    const controller = new AbortController();
    const pending = failure(get(exchangeTo(s.url), REQUESTS, { signal: controller.signal }));
    await pause(100);
    controller.abort(new Error('the host went away'));
    const error = await pending;
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toBe('The call was cancelled before the service answered.');
    expect(s.seen).toHaveLength(1);
  });

  it("a GET cancelled with the signal's default reason (a DOMException, whose code is a number) says the same words", async () => {
    const s = await serve(async (_req, res) => {
      await pause(1_500);
      if (!res.destroyed) res.end('{}');
    });
    const controller = new AbortController();
    const pending = failure(get(exchangeTo(s.url), REQUESTS, { signal: controller.signal }));
    await pause(100);
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toBe('The call was cancelled before the service answered.');
  });

  it('a POST once written is not abandoned when cancelled: its answer comes back', async () => {
    const s = await serve(async (_req, res) => {
      await pause(300);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"data":{"id":"r1"}}');
    });
    const controller = new AbortController();
    const pending = post(exchangeTo(s.url), '{}', { signal: controller.signal });
    await pause(100);
    controller.abort();
    const got = await pending;
    expect(got.status).toBe(201);
    expect(text(got)).toBe('{"data":{"id":"r1"}}');
  });

  it('a signal cancelled after the call ended changes nothing', async () => {
    const s = await answering(200, {}, '{"ok":1}');
    const controller = new AbortController();
    const got = await get(exchangeTo(s.url), REQUESTS, { signal: controller.signal });
    controller.abort();
    expect(text(got)).toBe('{"ok":1}');
  });

  it('a call whose deadline is this very millisecond is not started either: a POST sends nothing and says so', async () => {
    const s = await answering(201, {}, '{}');
    const x = exchangeTo(s.url);
    // Several tries: each is made within the millisecond of its deadline nearly always (a budget of exactly 0 ms).
    for (let i = 0; i < 5; i++) {
      const error = await failure(post(x, '{}', { deadline: Date.now() }));
      expect(error).toBeInstanceOf(TimedOutError);
      expect(error.message).toBe('The service did not answer within 5000 ms.');
      expect(error.outcomeUnknown).toBe(false);
    }
    await pause(30);
    expect(s.seen).toHaveLength(0);
    expect(s.connections()).toBe(0);
  });

  it.each([
    ['a string', () => 'the host went away'],
    ['an Error whose cause is null', () => new Error('the host went away', { cause: null })],
    ['an Error caused by an Error without a code', () => new Error('the host went away', { cause: new Error('its pipe closed') })],
  ])('a GET cancelled while it waits, with %s as the reason, says the same words', async (_, reason) => {
    const s = await serve(async (_req, res) => {
      await pause(1_500);
      if (!res.destroyed) res.end('{}');
    });
    const controller = new AbortController();
    const pending = failure(get(exchangeTo(s.url), REQUESTS, { signal: controller.signal }));
    await pause(100);
    controller.abort(reason());
    const error = await pending;
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toBe('The call was cancelled before the service answered.');
  });
});

describe('no answer', () => {
  it('a refused connection names the address and DOCREQ_BASE_URL; nothing about a proxy', async () => {
    const port = await freePort();
    const x = exchangeTo(`http://127.0.0.1:${port}/tenant`);
    for (const call of [() => get(x), () => post(x)]) {
      const error = await failure(call());
      expect(error).toBeInstanceOf(UnreachableError);
      expect(error.code).toBe('ECONNREFUSED');
      expect(error.status).toBeUndefined();
      expect(error.outcomeUnknown).toBe(false);
      expect(error.message).toBe(
        `Could not reach the service at http://127.0.0.1:${port} (ECONNREFUSED): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address.`,
      );
    }
  });

  it('a host name that does not resolve names the address and DOCREQ_BASE_URL', async () => {
    const error = await failure(get(exchangeTo('http://docreq-exchange-units.invalid:8080/x')));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.code).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/);
    expect(error.message).toBe(
      `Could not reach the service at http://docreq-exchange-units.invalid:8080 (${error.code}): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address.`,
    );
  });

  it('a connection closed before any header: the service could not be reached, with the code', async () => {
    const s = await serve((req) => void req.socket.destroy());
    const error = await failure(get(exchangeTo(s.url)));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.code).toBe('UND_ERR_SOCKET');
    expect(error.message).toBe(`Could not reach the service at ${s.url} (UND_ERR_SOCKET).`);
    expect(error.status).toBeUndefined();
  });

  it('a connection closed mid-body: unreachable, keeping the status it had', async () => {
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"data":[');
      await pause(20);
      res.socket?.destroy();
    });
    const error = await failure(get(exchangeTo(s.url)));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.status).toBe(200);
    expect(error.message).toBe(`Could not reach the service at ${s.url} (UND_ERR_SOCKET).`);
  });

  it('a gzip body whose connection closes mid-way is the network failing, with the status it had: not too large, not "could not be decompressed"', async () => {
    const zipped = gzipSync(Buffer.alloc(200_000, 0x41));
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(zipped.length * 2) });
      res.write(zipped.subarray(0, 100));
      await pause(20);
      res.socket?.destroy();
    });
    const error = await failure(get(exchangeTo(s.url)));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.message).toContain('(UND_ERR_SOCKET)');
    expect(error.message).not.toContain('decompressed');
    expect(error.status).toBe(200);
  });

  it('a gzip body still arriving when the deadline passes, or when a GET is cancelled, is timed out or cancelled: not "could not be decompressed"', async () => {
    const zipped = gzipSync(Buffer.alloc(200_000, 0x41));
    const trickle = () =>
      serve(async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.write(zipped.subarray(0, 100));
        await pause(3_000);
        if (!res.destroyed) res.end(zipped.subarray(100));
      });
    const late = await failure(exchangeTo((await trickle()).url).exchange({ method: 'GET', path: REQUESTS, deadline: Date.now() + 300 }));
    expect(late).toBeInstanceOf(TimedOutError);
    expect(late.message).not.toContain('decompressed');
    const controller = new AbortController();
    const pending = failure(get(exchangeTo((await trickle()).url), REQUESTS, { signal: controller.signal }));
    await pause(150);
    controller.abort();
    const cancelled = await pending;
    expect(cancelled).toBeInstanceOf(CancelledError);
    expect(cancelled.message).toBe('The call was cancelled before the service answered.');
  });

  describe('what a failure that is not an answer is named: its code, or the code of what caused it', () => {
    /** An error with this code (none when undefined), caused by `cause` when one is given. */
    const coded = (code: string | undefined, cause?: Error): Error =>
      Object.assign(new Error('failed', cause ? { cause } : undefined), code === undefined ? {} : { code });
    /** An error whose code is `depth` causes below it. */
    const wrapped = (depth: number): Error => (depth === 0 ? coded('EPIPE') : coded(undefined, wrapped(depth - 1)));
    it.each([
      ['its own code', coded('EPIPE'), 'EPIPE'],
      ["its cause's code, when it has none", coded(undefined, coded('EPIPE')), 'EPIPE'],
      ["its cause's code, when its own is the bare UND_ERR_SOCKET", coded('UND_ERR_SOCKET', coded('ECONNRESET')), 'ECONNRESET'],
      ['UND_ERR_SOCKET, when nothing below it names more', coded('UND_ERR_SOCKET', coded(undefined)), 'UND_ERR_SOCKET'],
      ['a code four errors down', wrapped(3), 'EPIPE'],
      ['"network error", when the code is further down than that', wrapped(4), 'network error'],
      ['"network error", when nothing names one', coded(undefined, coded(undefined)), 'network error'],
    ])('%s', async (_, thrown, code) => {
      const s = await answering(200, { 'content-type': 'application/json' }, '{}');
      // What the exchange's own steps may throw once the status is known (here: what is told of the status).
      const onStatus = () => {
        throw thrown;
      };
      const error = await failure(get(exchangeTo(s.url), REQUESTS, { onStatus }));
      expect(error).toBeInstanceOf(UnreachableError);
      expect(error.code).toBe(code);
      expect(error.message).toBe(`Could not reach the service at ${s.url} (${code}).`);
      expect(error.status).toBe(200);
    });

    /** The failure an exchange step throws with this code, once the status is known. */
    const failingWith = async (code: string) => {
      const s = await answering(200, { 'content-type': 'application/json' }, '{}');
      const onStatus = () => {
        throw coded(code);
      };
      return { url: s.url, error: await failure(get(exchangeTo(s.url), REQUESTS, { onStatus })) };
    };

    it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])(
      'a failure to connect (%s) names the address to check',
      async (code) => {
        const { url, error } = await failingWith(code);
        expect(error).toBeInstanceOf(UnreachableError);
        expect(error.message).toBe(
          `Could not reach the service at ${url} (${code}): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address.`,
        );
      },
    );

    it('a send reads the same list: a connection that never opened (to the service or through the tunnel) sent nothing', () => {
      for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', TUNNEL_CLOSED, TUNNEL_REFUSED]) {
        expect([code, neverConnected(code)]).toEqual([code, true]);
      }
      // Once open, a POST may have been written: a reset, a closed socket, a broken pipe or no code at all may have sent it.
      for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_HEADERS_TIMEOUT', 'network error', undefined]) {
        expect([code, neverConnected(code)]).toEqual([code, false]);
      }
    });

    it.each([
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'UNABLE_TO_GET_ISSUER_CERT',
      'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'CERT_HAS_EXPIRED',
      'CERT_NOT_YET_VALID',
      'CERT_UNTRUSTED',
      'CERT_REVOKED',
      'CERT_SIGNATURE_FAILURE',
      'CERT_REJECTED',
      'INVALID_CA',
      'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'HOSTNAME_MISMATCH',
    ])('a certificate refused by TLS (%s) is named as such, with what to do', async (code) => {
      const { url, error } = await failingWith(code);
      expect(error).toBeInstanceOf(CertificateError);
      expect(error.message).toContain(`The TLS certificate of ${url} is not trusted (${code}).`);
      expect(error.message).toContain('NODE_EXTRA_CA_CERTS');
    });
  });
});

describe('proxies', () => {
  it.each(['HTTP_PROXY', 'http_proxy'])('a proxy (%s) that is not listening is named, with the variable it came from', async (variable) => {
    const proxyPort = await freePort();
    const proxy = `http://127.0.0.1:${proxyPort}`;
    const s = await answering(200, {}, '{}');
    const x = exchangeTo(s.url, { proxyEnv: { [variable]: `http://user:s3cret@127.0.0.1:${proxyPort}` } });
    const error = await failure(get(x));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.code).toBe('ECONNREFUSED');
    expect(error.message).toBe(
      `Could not reach the proxy ${proxy} (ECONNREFUSED; from ${variable}), so the service at ${s.url} was not reached: check that the proxy runs and ${variable} names it, or add the service's host to NO_PROXY.`,
    );
    expect(s.seen).toHaveLength(0);
  });

  it('a proxy that refuses the tunnel: the service was not reached through it', async () => {
    const proxy = await rawProxy((socket) => socket.once('data', () => socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n')));
    const proxyUrl = proxy.url;
    const s = await answering(200, {}, '{}');
    const error = await failure(get(exchangeTo(s.url, { proxyEnv: { HTTP_PROXY: proxyUrl } })));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.code).toBe('PROXY_REFUSED_TUNNEL');
    expect(error.message).toBe(
      `The proxy ${proxyUrl} (from HTTP_PROXY) answered 403 instead of opening a tunnel to the service at ${s.url}, so the service was not reached: check that the proxy lets this machine reach that host and port, or add the service's host to NO_PROXY.`,
    );
    expect(proxy.connections()).toBe(1);
    expect(s.seen).toHaveLength(0);
  });

  // Closed at once (a FIN before the CONNECT is read), or reset once the CONNECT is in (an RST: ECONNRESET or EPIPE here).
  const closing: [string, (socket: Socket) => void][] = [
    ['closes', (socket) => socket.destroy()],
    ['resets', (socket) => socket.once('data', () => socket.resetAndDestroy())],
  ];
  it.each(closing.flatMap(([how, onSocket]) => ['http', 'https'].map((scheme) => [how, scheme, onSocket] as const)))(
    'a proxy that %s every connection instead of a tunnel (%s service): the call fails at once, dialled once, and says what the proxy did',
    async (_how, scheme, onSocket) => {
      const proxy = await rawProxy(onSocket);
      const s = await answering(200, {}, '{}');
      const baseUrl = scheme === 'http' ? s.url : s.url.replace('http:', 'https:');
      const variable = scheme === 'http' ? 'HTTP_PROXY' : 'HTTPS_PROXY';
      const x = exchangeTo(baseUrl, { proxyEnv: { [variable]: proxy.url } });
      for (const call of [() => get(x), () => post(x)]) {
        const before = proxy.connections();
        const error = await failure(call());
        expect(error).toBeInstanceOf(UnreachableError);
        expect(error.code).toBe('PROXY_CLOSED_TUNNEL');
        expect(error.outcomeUnknown).toBe(false);
        expect(error.message).toBe(
          `The proxy ${proxy.url} (from ${variable}) closed the connection instead of opening a tunnel to the service at ${baseUrl}, so the service was not reached: check that the proxy lets this machine reach that host and port, or add the service's host to NO_PROXY.`,
        );
        // undici alone dials such a proxy again at once, without end: tens of thousands of connections.
        expect(proxy.connections() - before).toBe(1);
      }
      expect(s.seen).toHaveLength(0);
    },
  );

  it('a tunnel the proxy opens and then drops: the service was not reached through it, with the code', async () => {
    const proxy = await rawProxy((socket) => socket.once('data', () => socket.end('HTTP/1.1 200 Connection established\r\n\r\n')));
    const s = await answering(200, {}, '{}');
    const error = await failure(get(exchangeTo(s.url, { proxyEnv: { HTTP_PROXY: proxy.url } })));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.message).toBe(`Could not reach the service at ${s.url} through the proxy ${proxy.url} (${error.code}; from HTTP_PROXY).`);
    expect(error.code).toMatch(/^[A-Z_]+$/);
    expect(s.seen).toHaveLength(0);
  });

  it('a proxy that takes the connection and never answers CONNECT: the deadline ends the call (a GET, and a POST as "may have been sent")', async () => {
    const proxy = await rawProxy(() => undefined);
    const s = await answering(200, {}, '{}');
    const x = exchangeTo(s.url, { proxyEnv: { HTTP_PROXY: proxy.url }, timeoutMs: 300 });
    const slowGet = await failure(x.exchange({ method: 'GET', path: REQUESTS, deadline: Date.now() + 300 }));
    expect(slowGet).toBeInstanceOf(TimedOutError);
    expect(slowGet.message).toBe('The service did not answer within 300 ms.');
    const slowPost = await failure(x.exchange({ method: 'POST', path: REQUESTS, deadline: Date.now() + 300, body: '{}' }));
    expect(slowPost).toBeInstanceOf(TimedOutError);
    expect(slowPost.outcomeUnknown).toBe(true);
    const cancel = new AbortController();
    const cancelled = failure(x.exchange({ method: 'GET', path: REQUESTS, deadline: soon(), signal: cancel.signal }));
    setTimeout(() => cancel.abort(), 50);
    const error = await cancelled;
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toBe('The call was cancelled before the service answered.');
    expect(s.seen).toHaveLength(0);
  });

  it('goes direct when NO_PROXY covers the host, or only HTTPS_PROXY is set for an http service; a refusal then names DOCREQ_BASE_URL', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const s = await answering(200, {}, '{"direct":true}');
    expect(text(await get(exchangeTo(s.url, { proxyEnv: { HTTP_PROXY: dead, NO_PROXY: '127.0.0.1' } })))).toBe('{"direct":true}');
    expect(text(await get(exchangeTo(s.url, { proxyEnv: { HTTPS_PROXY: dead } })))).toBe('{"direct":true}');
    const port = await freePort();
    const error = await failure(get(exchangeTo(`http://127.0.0.1:${port}`, { proxyEnv: { HTTP_PROXY: dead, NO_PROXY: '127.0.0.1' } })));
    expect(error.message).toBe(
      `Could not reach the service at http://127.0.0.1:${port} (ECONNREFUSED): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address.`,
    );
  });

  it.each([
    ['HTTP_PROXY', 'http'],
    ['http_proxy', 'http'],
    ['HTTPS_PROXY', 'https'],
    ['https_proxy', 'https'],
  ])('a %s that is not a URL (%s service): nothing is sent, every call says so, and close() has nothing to close', async (variable, scheme) => {
    const s = await answering(200, {}, '{}');
    const baseUrl = scheme === 'http' ? s.url : s.url.replace('http:', 'https:');
    const x = exchangeTo(baseUrl, { proxyEnv: { [variable]: 'not a url' } });
    x.warm();
    for (const call of [() => get(x), () => post(x)]) {
      const error = await failure(call());
      expect(error).toBeInstanceOf(UnreachableError);
      expect(error.code).toBe('ERR_INVALID_URL');
      expect(error.status).toBeUndefined();
      expect(error.message).toBe(
        `${variable} is not a URL, so nothing could be sent through it: set it to the proxy's address (e.g. http://proxy.example.com:3128) or unset it.`,
      );
    }
    await x.close();
    await x.close();
    expect(s.seen).toHaveLength(0);
  });

  it('check says the same as a call: a broken proxy variable beside a service it does not route is named', () => {
    expect(describeProxy('http://127.0.0.1:9', { HTTPS_PROXY: 'not a url' })).toBe('a proxy setting that is not a URL (check HTTPS_PROXY)');
    expect(describeProxy('http://127.0.0.1:9', { HTTPS_PROXY: 'bad one', HTTP_PROXY: 'bad two' })).toBe('a proxy setting that is not a URL (check HTTP_PROXY)');
    expect(describeProxy('http://127.0.0.1:9', { HTTPS_PROXY: 'http://proxy.example:3128' })).toBe('direct (no HTTPS_PROXY or HTTP_PROXY set)');
  });

  it("with both variables not URLs, the one for the service's scheme is named", async () => {
    const s = await answering(200, {}, '{}');
    const error = await failure(get(exchangeTo(s.url, { proxyEnv: { HTTPS_PROXY: 'bad one', HTTP_PROXY: 'bad two' } })));
    expect(error.message).toMatch(/^HTTP_PROXY is not a URL/);
    expect(s.seen).toHaveLength(0);
  });

  it.each([
    ['HTTPS_PROXY', { HTTPS_PROXY: 'not a url' }],
    ['https_proxy', { https_proxy: 'not a url', HTTP_PROXY: '' }],
    ['HTTP_PROXY', { HTTP_PROXY: 'not a url', NO_PROXY: '127.0.0.1' }],
  ] as const)('a %s that is not a URL beside a service it does not route: nothing is sent, and the words name it', async (variable, proxyEnv) => {
    const s = await answering(200, {}, '{}');
    const baseUrl = variable.toLowerCase() === 'http_proxy' ? s.url.replace('http:', 'https:') : s.url;
    const x = exchangeTo(baseUrl, { proxyEnv });
    const error = await failure(get(x));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.code).toBe('ERR_INVALID_URL');
    expect(error.message).toBe(
      `${variable} is not a URL, so nothing could be sent through it: set it to the proxy's address (e.g. http://proxy.example.com:3128) or unset it.`,
    );
    await x.close();
    expect(s.seen).toHaveLength(0);
  });
});

describe('the pool', () => {
  it('keeps its connections alive across calls; close() ends them, and a later call opens another', async () => {
    const s = await answering(200, { 'content-type': 'application/json' }, '{}');
    const x = exchangeTo(s.url);
    x.warm();
    for (let i = 0; i < 6; i++) await get(x);
    await post(x);
    expect(s.connections()).toBeLessThan(s.seen.length);
    const before = s.connections();
    await x.close();
    expect((await get(x)).status).toBe(200);
    expect(s.connections()).toBe(before + 1);
  });

  it('close() while idle, and twice, is quiet', async () => {
    const x = exchangeTo(sb.url);
    await x.close();
    await x.close();
    x.warm();
    await x.close();
    expect((await get(x, CLIENTS)).status).toBe(200);
    await x.close();
    await x.close();
  });

  it('close() ends a call in flight rather than waiting for it', async () => {
    const s = await serve(() => undefined); // never answers
    const x = exchangeTo(s.url);
    const pending = failure(get(x, REQUESTS, { deadline: Date.now() + 10_000 }));
    await pause(100);
    await x.close();
    const error = await pending;
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.code).toBe('UND_ERR_DESTROYED');
    expect(error.message).toBe(`Could not reach the service at ${s.url} (UND_ERR_DESTROYED).`);
  });

  it('a shared pool is used by every client and left open by close()', async () => {
    const agent = new Agent({ keepAliveTimeout: 4_000, connections: 4 });
    afterAll(() => agent.close());
    // The shared pool marks what it carries, so the service can tell it was used.
    const shared = agent.compose(
      (dispatch) => (options, handler) => dispatch({ ...options, headers: { ...(options.headers as Record<string, string>), 'x-pool': 'shared' } }, handler),
    );
    const s = await answering(200, { 'content-type': 'application/json' }, '{}');
    const one = exchangeTo(s.url, { sharedPool: shared });
    const two = exchangeTo(s.url, { sharedPool: shared });
    one.warm();
    await get(one);
    await one.close();
    await get(two);
    await get(one);
    await post(two);
    expect(s.seen.map((c) => c.headers['x-pool'])).toEqual(['shared', 'shared', 'shared', 'shared']);
    expect(agent.destroyed).toBe(false);
    expect(agent.closed).toBe(false);
  });

  it('through the client: warm() then a call, close() twice', async () => {
    const a = new DocReqApi({ baseUrl: `${sb.url}/`, apiKey: KEY, timeoutMs: TIMEOUT_MS, proxyEnv: {} });
    a.warm();
    expect(a.origin).toBe(sb.url);
    expect(await a.listClients()).toHaveLength(sb.demoFirm.clients.length);
    await a.close();
    await a.close();
  });
});

/** Self-signed certificates for 127.0.0.1 (and one for localhost only), made with openssl in a temporary folder. */
function certificates(): { ip: { key: Buffer; cert: Buffer }; named: { key: Buffer; cert: Buffer } } | undefined {
  if (spawnSync('openssl', ['version']).status !== 0) return undefined;
  const dir = mkdtempSync(join(suiteFolder(), 'exchange-tls-'));
  const make = (name: string, san: string) => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.pem`,
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=${san}`,
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, `${name}.key`)), cert: readFileSync(join(dir, `${name}.pem`)) };
  };
  return { ip: make('ip', 'IP:127.0.0.1'), named: make('named', 'DNS:localhost') };
}

describe('TLS', () => {
  const pki = certificates();

  async function httpsServer(pair: { key: Buffer; cert: Buffer }): Promise<{ url: string; seen: string[] }> {
    const seen: string[] = [];
    const server = createHttpsServer(pair, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"tls":true}');
    });
    const sockets = new Set<Socket>();
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    afterAll(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    );
    return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
  }

  const advice =
    " If the service or a company proxy uses a private certificate authority, point NODE_EXTRA_CA_CERTS at that CA's certificate file (PEM) and restart; otherwise check the base URL's host name and this machine's clock.";

  it.skipIf(!pki)('an untrusted certificate is refused, naming its code; a POST says nothing was sent', async () => {
    const s = await httpsServer(pki!.ip);
    const x = exchangeTo(s.url);
    const refused = await failure(get(x));
    expect(refused).toBeInstanceOf(CertificateError);
    expect(refused.code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(refused.message).toBe(`The TLS certificate of ${s.url} is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT).${advice}`);
    const posted = await failure(post(x));
    expect(posted).toBeInstanceOf(CertificateError);
    expect(posted.outcomeUnknown).toBe(false);
    expect(posted.message).toBe(`The TLS certificate of ${s.url} is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT). Nothing was sent.${advice}`);
    expect(s.seen).toEqual([]);
  });

  it.skipIf(!pki)('trusts a certificate given as a CA (one PEM string, or a list of Buffers), beside the usual ones', async () => {
    const s = await httpsServer(pki!.ip);
    expect(text(await get(exchangeTo(s.url, { ca: pki!.ip.cert.toString('utf8') })))).toBe('{"tls":true}');
    expect(text(await get(exchangeTo(s.url, { ca: [pki!.named.cert, pki!.ip.cert] })))).toBe('{"tls":true}');
    expect(s.seen).toEqual(['GET /api/v1/requests', 'GET /api/v1/requests']);
  });

  it.skipIf(!pki)('an https service goes through HTTPS_PROXY, trusting the CA given inside the tunnel; a proxy not listening is named', async () => {
    const s = await httpsServer(pki!.ip);
    const tunnels: string[] = [];
    const proxy = createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = netConnect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
      afterAll(() => {
        upstream.destroy();
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const through = exchangeTo(s.url, { ca: pki!.ip.cert, proxyEnv: { HTTPS_PROXY: proxyUrl } });
    expect(text(await get(through))).toBe('{"tls":true}');
    expect(tunnels).toEqual([new URL(s.url).host]);

    const dead = `http://127.0.0.1:${await freePort()}`;
    const error = await failure(get(exchangeTo(s.url, { ca: pki!.ip.cert, proxyEnv: { HTTPS_PROXY: dead } })));
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.message).toBe(
      `Could not reach the proxy ${dead} (ECONNREFUSED; from HTTPS_PROXY), so the service at ${s.url} was not reached: check that the proxy runs and HTTPS_PROXY names it, or add the service's host to NO_PROXY.`,
    );
    expect(s.seen).toEqual(['GET /api/v1/requests']);
  });

  it.skipIf(!pki)('a trusted certificate for another name is refused for its name', async () => {
    const s = await httpsServer(pki!.named);
    const error = await failure(get(exchangeTo(s.url, { ca: pki!.named.cert })));
    expect(error).toBeInstanceOf(CertificateError);
    expect(error.message).toBe(`The TLS certificate of ${s.url} is not trusted (ERR_TLS_CERT_ALTNAME_INVALID).${advice}`);
    expect(s.seen).toEqual([]);
  });
});
