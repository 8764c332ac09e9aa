import { pipeline, type Readable, type Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import { BoundedCache } from '../cache.js';
import { USER_AGENT } from '../version.js';
import type { Redact } from '../text/redact.js';
import { oneLine } from '../text/render.js';
import {
  ApiError,
  BadResponseError,
  CancelledError,
  KeyRejectedError,
  NotFoundServiceError,
  RedirectedError,
  TimedOutError,
  TooLargeError,
  errorFromStatus,
} from './errors.js';
import type { ListStreamParser } from './list-stream.js';
import { noAnswer } from './no-answer.js';
import { newPool } from './pool.js';
import type { ProxyEnv } from './proxy.js';
import { loadUndici, type Undici } from './undici.js';

/**
 * One HTTP exchange with the service: undici (loaded late, only the parts used), the headers, the deadline and a
 * cancel, decompression as the body streams, the size cap after decompression, and every failure a typed error
 * (redirects never followed). The pool is pool.ts's; what no answer means is no-answer.ts's.
 */

/** Every call is bounded by an absolute `deadline` (ms since the epoch) and may be cancelled. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Default: now + timeoutMs. */
  deadline?: number | undefined;
}

/** The service's two paths. */
export const CLIENTS = '/api/v1/clients';
export const REQUESTS = '/api/v1/requests';

/** Small socket reads are gathered into pieces of this size before the list parser sees them. */
const PARSE_PIECE = 256 * 1024;

export interface RawAnswer<T = never> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body (decompressed), unless it was a successful list, which streams into `records` instead. */
  bytes: Buffer;
  records?: T[];
}

interface Exchange<T> {
  method: 'GET' | 'POST';
  path: string;
  deadline: number;
  /** GET: aborts the exchange. POST: only checked before the request is written. */
  signal?: AbortSignal | undefined;
  body?: string;
  headers?: Record<string, string>;
  /** For a list: its successful body streams into records instead of being read whole. */
  listParser?: () => ListStreamParser<T>;
  /** Called with the status before the body is read (a list drops its superseded copy here, before parsing the new one). */
  onStatus?: (status: number) => void;
}

/** A URL's origin and path (with its query), as undici asks for them: worked out once per URL (the service's few paths), not per call. */
const TARGETS = new BoundedCache<string, { origin: string; path: string }>({ maxEntries: 64 });
function target(href: string): { origin: string; path: string } {
  return TARGETS.getOrMake(href, () => {
    const url = new URL(href);
    return { origin: url.origin, path: `${url.pathname}${url.search}` };
  });
}

export function header(headers: RawAnswer['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Retry-After in milliseconds (seconds or an HTTP date), or undefined. */
function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The answer's headers, or the stop signal's reason as soon as it fires: undici hears an abort only once the
 * request has a connection, so a call still waiting for one (a proxy that never answers CONNECT) would outlive its
 * deadline. An answer that comes after the stop is let go.
 */
function untilStopped(pending: Promise<Dispatcher.ResponseData>, stop: AbortSignal): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    // Once settled, a later stop (a cancel while the body is read) rejects nothing: no listener to take off.
    stop.addEventListener('abort', () => reject(stop.reason as Error));
    if (stop.aborted) reject(stop.reason as Error);
    pending.then((res) => {
      if (!stop.aborted) resolve(res);
      else res.body.on('error', () => undefined).destroy();
    }, reject);
  });
}

/** Decoders for a Content-Encoding, outermost last; undefined when an encoding is not one we read. */
function decoders(encoding: string | undefined, { createBrotliDecompress, createGunzip, createInflate }: Undici['zlib']): Transform[] | undefined {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  const chain: Transform[] = [];
  const options = { chunkSize: PARSE_PIECE };
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') chain.push(createGunzip(options));
    else if (coding === 'br') chain.push(createBrotliDecompress(options));
    else if (coding === 'deflate') chain.push(createInflate(options));
    else return undefined;
  }
  return chain;
}

/** What one exchange needs to know; the key stays here and in the Authorization header only. */
export interface ExchangeSettings {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  maxResponseBytes: number;
  proxyEnv: ProxyEnv | undefined;
  ca: string | Buffer | (string | Buffer)[] | undefined;
  sharedPool: Dispatcher | undefined;
  /** The key redacted from everything the service sends, as it is read. */
  redact: Redact;
  /** The service refused the key: what was kept for it is forgotten. */
  onKeyRejected: () => void;
}

/** The service at one base URL, reached with one key: exchanges, and what their failures mean. */
export class ServiceExchange {
  private dispatcher: Promise<Dispatcher> | undefined;

  constructor(private readonly options: ExchangeSettings) {}

  /** One keep-alive pool per API client (or the one shared in team mode). */
  private pool(): Promise<Dispatcher> {
    if (this.options.sharedPool) return Promise.resolve(this.options.sharedPool);
    return (this.dispatcher ??= loadUndici().then((undici) => newPool(undici, this.options)));
  }

  /** Loads undici and makes the pool now (right after `initialize`), so the first call costs what a later one does. */
  warm(): void {
    this.pool().catch(() => undefined);
  }

  get origin(): string {
    return new URL(this.options.baseUrl).origin;
  }

  /** Ends at once: an in-flight call fails rather than holding up shutdown (a POST is never re-sent). */
  async close(): Promise<void> {
    const pool = this.dispatcher;
    this.dispatcher = undefined;
    // A pool that could not be made (a proxy setting that is not a URL) has nothing to close.
    const made = pool && (await pool.catch(() => undefined));
    if (made) await made.destroy();
  }

  url(path: string): string {
    return `${this.options.baseUrl}${path}`;
  }

  /** `nameField`: how a refused field of the body is named for a person (the POST: by the tool argument it came from). */
  statusError(answer: RawAnswer<unknown>, method: 'GET' | 'POST', path: string, nameField?: (serviceField: string) => string): ApiError {
    const { status } = answer;
    if (status >= 300 && status <= 399) return this.redirected(answer, method);
    let parsed: unknown;
    let isJson = false;
    if (answer.bytes.length > 0) {
      try {
        parsed = JSON.parse(answer.bytes.toString('utf8'));
        isJson = true;
      } catch {
        // not JSON: the message says so, and never pastes the body
      }
    }
    if (status === 404 && method === 'GET') {
      return new NotFoundServiceError(
        `There is no Document Request Service at ${this.options.baseUrl}: it answered 404 (not found) for ${path}. The base URL should be the service's address without ${path}.`,
        this.options.baseUrl,
        { status },
      );
    }
    const retryAfter = parseRetryAfter(header(answer.headers, 'retry-after'));
    const error = errorFromStatus(status, parsed, isJson, header(answer.headers, 'content-type'), retryAfter, this.options.redact, nameField);
    if (error instanceof KeyRejectedError) this.options.onKeyRejected();
    return error;
  }

  /** A redirect is never followed; the message names its target by origin and path only. */
  private redirected(answer: RawAnswer<unknown>, method: 'GET' | 'POST'): RedirectedError {
    const location = header(answer.headers, 'location');
    let target: string | undefined;
    if (location) {
      try {
        const url = new URL(location, this.url('/'));
        target = oneLine(this.options.redact(`${url.origin}${url.pathname}`), 200);
      } catch {
        target = undefined;
      }
    }
    const where = target ? ` to ${JSON.stringify(target)}` : ' without a usable Location';
    // 303 See Other is how a service answers a POST it has handled: the outcome is not known.
    const unknown = method === 'POST' && answer.status === 303;
    const sent = method === 'POST' && !unknown ? ' Nothing was sent.' : '';
    return new RedirectedError(
      `The service answered ${answer.status}, redirecting${where}; redirects are not followed (the key is never sent to another address). Check the base URL.${sent}`,
      target,
      { status: answer.status, outcomeUnknown: unknown },
    );
  }

  /** One HTTP exchange, bounded by the deadline from connecting to the last byte; decompressed as it streams, capped. */
  async exchange<T = never>({ method, path, deadline, signal, body, headers: extra, listParser, onStatus }: Exchange<T>): Promise<RawAnswer<T>> {
    const isPost = method === 'POST';
    const budgetMs = Math.floor(deadline - Date.now());
    if (budgetMs <= 0) throw new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`);
    // One controller for the deadline and, for a GET, the caller's cancel (AbortSignal.timeout and .any
    // cost more than the 304 a revalidation usually gets). A POST, once written, is bounded by the
    // deadline only: a host's cancel does not abort it.
    const stop = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    }, budgetMs);
    timer.unref(); // as AbortSignal.timeout's: the exchange itself keeps the process running
    const cancel = signal && !isPost ? () => stop.abort(signal.reason) : undefined;
    if (cancel) signal!.addEventListener('abort', cancel, { once: true });
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: 'application/json',
      'accept-encoding': 'gzip, br',
      'user-agent': USER_AGENT,
      ...extra,
    };
    if (isPost) headers['content-type'] = 'application/json';
    let status = 0;
    let written = false;
    try {
      const [{ request, zlib }, dispatcher] = await Promise.all([loadUndici(), this.pool()]);
      const url = target(this.url(path));
      if (signal?.aborted) throw new CancelledError(isPost ? 'The call was cancelled before sending. Nothing was sent.' : 'The call was cancelled.');
      written = true;
      const res = await untilStopped(
        request.call(dispatcher, {
          origin: url.origin,
          path: url.path,
          method,
          headers,
          body,
          signal: stop.signal,
          headersTimeout: budgetMs,
          bodyTimeout: budgetMs,
        }),
        stop.signal,
      );
      status = res.statusCode;
      // Errors are seen through iteration; a body dropped early must not raise an unhandled 'error' later.
      res.body.on('error', () => undefined);
      onStatus?.(status);
      // A 304 has no body: it ends by itself (destroying it would build an abort error, stack and all, each revalidation).
      if (status === 304) {
        res.body.resume();
        return { status, headers: res.headers, bytes: Buffer.alloc(0) };
      }
      if (status >= 300 && status <= 399) {
        res.body.destroy();
        return { status, headers: res.headers, bytes: Buffer.alloc(0) };
      }
      return await this.readAnswer(res, status, zlib, listParser);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw noAnswer(error, { isPost, written, timedOut, status, cancelled: !isPost && signal?.aborted === true }, this.options);
    } finally {
      clearTimeout(timer);
      if (cancel) signal!.removeEventListener('abort', cancel);
    }
  }

  /**
   * An answer's body, decompressed as it streams and counted after decompression against the cap: a
   * successful list streams into records, anything else is read whole (it is small or refused).
   */
  private async readAnswer<T>(
    res: Dispatcher.ResponseData,
    status: number,
    zlib: Undici['zlib'],
    listParser: Exchange<T>['listParser'],
  ): Promise<RawAnswer<T>> {
    const max = this.options.maxResponseBytes;
    const declared = Number(header(res.headers, 'content-length'));
    if (Number.isFinite(declared) && declared > max) {
      res.body.destroy();
      throw this.tooLarge(status, declared);
    }
    const chain = decoders(header(res.headers, 'content-encoding'), zlib);
    if (!chain) {
      res.body.destroy();
      throw new BadResponseError(
        `The service answered ${status} with a Content-Encoding this client cannot read (${oneLine(this.options.redact(header(res.headers, 'content-encoding') ?? ''), 40)}).`,
        { status },
      );
    }
    let decodeError: Error | undefined;
    const source: Readable =
      chain.length === 0
        ? res.body
        : (pipeline([res.body as unknown as Readable, ...chain], (error) => {
            // A decoder's own failure. What comes down from the body (the network, the deadline, a cancel) is not the data's fault.
            if (error && error !== res.body.errored && chain.some((d) => d.errored === error)) decodeError = error;
          }) as unknown as Readable);
    const parser = listParser && status >= 200 && status <= 299 ? listParser() : undefined;
    const chunks: Buffer[] = [];
    const pending: Buffer[] = [];
    let pendingBytes = 0;
    let size = 0;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > max) {
          // Counted after decompression: a bomb stops here, having cost at most the cap.
          source.destroy();
          res.body.destroy();
          throw this.tooLarge(status, size, chain.length > 0);
        }
        if (parser) {
          // Small socket reads are gathered into larger pieces: the parser's cost is per piece.
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes >= PARSE_PIECE) {
            parser.write(pendingBytes === chunk.length ? chunk : Buffer.concat(pending, pendingBytes));
            pending.length = 0;
            pendingBytes = 0;
          }
        } else chunks.push(chunk);
      }
      if (parser && pendingBytes > 0) parser.write(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes));
    } catch (error) {
      if (error instanceof ApiError) throw error;
      const zlibCode = (error as { code?: string }).code ?? '';
      if (decodeError || /^Z_|^ERR_BROTLI|ERR__ERROR|ERR_ZLIB/.test(zlibCode)) {
        throw new BadResponseError(
          `The service's answer (${status}, ${oneLine(this.options.redact(header(res.headers, 'content-encoding') ?? ''), 20)}) could not be decompressed (${zlibCode || 'corrupt data'}).`,
          { status },
        );
      }
      throw error;
    }
    if (parser) {
      try {
        return { status, headers: res.headers, bytes: Buffer.alloc(0), records: parser.end() };
      } catch (error) {
        const type = this.options.redact(header(res.headers, 'content-type') ?? '').split(';')[0];
        throw new BadResponseError(`${(error as Error).message} It answered ${status}${type ? ` (${oneLine(type, 40)})` : ''}, ${size} bytes.`, { status });
      }
    }
    return { status, headers: res.headers, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
  }

  private tooLarge(status: number, bytes: number, decompressed = false): TooLargeError {
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    return new TooLargeError(
      `The service's answer (${status}) is larger than the ${mb(this.options.maxResponseBytes)} cap (${mb(bytes)} or more${decompressed ? ' once decompressed' : ''}); it was not read.`,
      { status },
    );
  }
}
