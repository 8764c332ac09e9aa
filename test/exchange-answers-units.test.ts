import { getEventListeners } from 'node:events';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { BadResponseError, CancelledError, TimedOutError, TooLargeError, UnreachableError } from '../src/api/errors.js';
import { REQUESTS } from '../src/api/exchange.js';
import { apiFailure } from './support/connect.js';
import { TIMEOUT_MS, exchanges, get, list, pause, serve } from './support/exchange.js';

/**
 * The exchange's handling of an answer once its headers are in (src/api/exchange.ts): what happens to a
 * body it does not read (a redirect's, one over the cap, one in an encoding it cannot read), how a list's
 * body is gathered into pieces before it is parsed (seen through which refusal comes first: the cap or
 * the parser), what is left on the caller's cancel signal after a call, and the timeouts and cancels
 * that end a body part-way. All over real HTTP on 127.0.0.1 with tiny servers of the test's own.
 */

const failure = apiFailure;
const { exchangeTo } = exchanges();

/** A body far larger than what undici buffers before it stops reading the socket. */
const BIG = Buffer.alloc(4 * 1024 * 1024, 0x20);

describe('a body it does not read is dropped, freeing the service', () => {
  it("a redirect's large body: the connection is closed rather than left stalled", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(302, { location: '/elsewhere', 'content-type': 'text/html', 'content-length': String(BIG.length) });
      res.end(BIG);
    });
    const got = await get(exchangeTo(s.url));
    expect(got.status).toBe(302);
    expect(got.bytes).toHaveLength(0);
    expect(await s.allClosed()).toBe(true);
  });

  it('a declared length over the cap: refused unread, and the connection is closed rather than left stalled', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(BIG.length) });
      res.end(BIG);
    });
    const error = await failure(get(exchangeTo(s.url, { maxResponseBytes: 1024 * 1024 })));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.message).toBe("The service's answer (200) is larger than the 1.0 MB cap (4.0 MB or more); it was not read.");
    expect(await s.allClosed()).toBe(true);
  });

  it('a Content-Encoding it cannot read: refused unread, and the connection is closed rather than left stalled', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'compress' });
      res.end(BIG);
    });
    const error = await failure(get(exchangeTo(s.url)));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toBe('The service answered 200 with a Content-Encoding this client cannot read (compress).');
    expect(await s.allClosed()).toBe(true);
  });

  it.each([
    ['plain', {}, BIG],
    ['gzip', { 'content-encoding': 'gzip' }, gzipSync(BIG)],
  ] as const)('a %s body that passes the cap as it streams: refused, and the connection is closed', async (_, encoding, body) => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...encoding });
      res.end(body);
    });
    const error = await failure(get(exchangeTo(s.url, { maxResponseBytes: 1024 * 1024 })));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(await s.allClosed()).toBe(true);
  });
});

describe("the caller's cancel signal", () => {
  it('is left as it was found after each GET: no listener stays on it, however many calls it served', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const x = exchangeTo(s.url);
    const controller = new AbortController();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 12; i++) {
        const got = await get(x, REQUESTS, { signal: controller.signal });
        expect(got.bytes.toString('utf8')).toBe('{"ok":true}');
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      }
      await pause(10);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => /AbortSignal/.test(w))).toEqual([]);
  });

  it('a GET cancelled part-way through a plain body is a cancel, whatever code its reason carries', async () => {
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 40 && !res.destroyed; i++) {
        res.write(' ');
        await pause(25);
      }
      if (!res.destroyed) res.end('{}');
    });
    const x = exchangeTo(s.url);
    // Codes that only contain a zlib error's or a headers timeout's name are not those.
    for (const code of ['HOST_Z_STOP', 'HOST_ERR_BROTLI_STOP', 'HOST_UND_ERR_HEADERS_TIMEOUT']) {
      const controller = new AbortController();
      const pending = failure(get(x, REQUESTS, { signal: controller.signal }));
      await pause(100);
      controller.abort(Object.assign(new Error('the host went away'), { code }));
      const error = await pending;
      expect(error, code).toBeInstanceOf(CancelledError);
      expect(error.message).toBe('The call was cancelled before the service answered.');
    }
  });
});

describe('a list is parsed in pieces, the cap checked as it streams', () => {
  /** A list whose first element is nested deeper than a list may be (refused as soon as it is parsed), then spaces up to `bytes`. */
  const invalid = (bytes: number) => {
    const head = Buffer.from(`{"data":[${'{"a":'.repeat(80)}1${'}'.repeat(80)},`);
    return Buffer.concat([head, Buffer.alloc(bytes - head.length, 0x20)]);
  };

  it('a gzipped list invalid early is refused for its depth once its first whole piece is parsed, before the rest passes the cap', async () => {
    // Decompressed in pieces of exactly 256 KiB: the first is parsed as soon as it is whole.
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(invalid(768 * 1024)));
    });
    const error = await failure(list(exchangeTo(s.url, { maxResponseBytes: 300 * 1024 })));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error).not.toBeInstanceOf(TooLargeError);
    expect(error.message).toBe("The service's requests list holds an element nested more than 64 levels deep; no requests record is, so the list was refused.");
  });

  it('a list body over a cap smaller than one parse piece is refused as too large, however early it goes wrong', async () => {
    const body = invalid(200 * 1024);
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < body.length && !res.destroyed; at += 8 * 1024) {
        res.write(body.subarray(at, at + 8 * 1024));
        await pause(2);
      }
      if (!res.destroyed) res.end();
    });
    const error = await failure(list(exchangeTo(s.url, { maxResponseBytes: 100 * 1024 })));
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.message).toMatch(/^The service's answer \(200\) is larger than the 0\.1 MB cap/);
  });
});

describe("a shared pool's own timeouts", () => {
  /** A shared pool (team mode's) whose own interceptor sets a shorter body timeout than the exchange asks for. */
  function impatientPool(bodyTimeout: number) {
    const agent = new Agent({ keepAliveTimeout: 4_000, connections: 4 });
    afterAll(() => agent.close());
    return agent.compose((dispatch) => (options, handler) => dispatch({ ...options, bodyTimeout }, handler));
  }

  it("a body that stalls past the pool's body timeout: timed out, with the status it had", async () => {
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
      await pause(1_500);
      if (!res.destroyed) res.end('[]}');
    });
    const error = await failure(get(exchangeTo(s.url, { sharedPool: impatientPool(200) })));
    expect(error).toBeInstanceOf(TimedOutError);
    expect(error).not.toBeInstanceOf(UnreachableError);
    expect(error.message).toBe(`The service did not answer within ${TIMEOUT_MS} ms.`);
    expect(error.status).toBe(200);
  });
});
