import { pipeline, type Readable, type Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import { USER_AGENT } from '../version.js';
import type { Redact } from '../text/redact.js';
import { oneLine } from '../text/render.js';
import {
  ApiError,
  BadResponseError,
  CancelledError,
  CertificateError,
  KeyRejectedError,
  NotFoundServiceError,
  RedirectedError,
  TimedOutError,
  TooLargeError,
  UnreachableError,
  errorFromStatus,
} from './errors.js';
import type { ListStreamParser } from './list-stream.js';
import { proxyRoute, proxySettings, type ProxyEnv } from './proxy.js';
import { loadUndici, type Undici } from './undici.js';

/**
 * One HTTP exchange with the service: undici (loaded late, only the parts used), the keep-alive pool
 * and its proxy and certificate authorities, the headers, decompression as the body streams, the
 * size cap after decompression, and every failure mapped to a typed error (redirects never followed).
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

// The TLS handshake refused the service's certificate: a setup mistake, never retried.
const CERTIFICATE_CODES = new Set([
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
]);

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
const TARGETS = new Map<string, { origin: string; path: string }>();
function target(href: string): { origin: string; path: string } {
  let found = TARGETS.get(href);
  if (!found) {
    const url = new URL(href);
    found = { origin: url.origin, path: `${url.pathname}${url.search}` };
    if (TARGETS.size >= 64) TARGETS.delete(TARGETS.keys().next().value!);
    TARGETS.set(href, found);
  }
  return found;
}

export function header(headers: RawAnswer['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function errorCode(error: unknown): string {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    e = (e as { cause?: unknown }).cause;
  }
  // A code that is not a string (a DOMException's is a number) names nothing a person can act on.
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'network error';
}

/** The status a proxy refused a tunnel with, found as errorCode finds the code. */
function proxyStatus(error: unknown): number | string {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const status = (e as { proxyStatus?: unknown }).proxyStatus;
    if (typeof status === 'number') return status;
    e = (e as { cause?: unknown }).cause;
  }
  return 'no tunnel';
}

/** Retry-After in milliseconds (seconds or an HTTP date), or undefined. */
function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Failures of the connection itself (not of an answer): where the fix is the address that was dialled. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** The proxy closed its connection, or answered other than 200, when asked for a tunnel (CONNECT): the service was not reached. */
export const TUNNEL_CLOSED = 'PROXY_CLOSED_TUNNEL';
export const TUNNEL_REFUSED = 'PROXY_REFUSED_TUNNEL';

/**
 * The pool a proxy agent keeps to its proxy, with two differences, both for a tunnel that was never made (so nothing
 * reached the service): a proxy that closes the connection instead of answering CONNECT fails the call (undici reads a
 * closed socket while connecting as worth another try and dials again at once, without end and past the call's
 * deadline: tens of thousands of connections a minute), and a refusal says so with the proxy's status.
 */
function tunnelPool(pool: Dispatcher): Dispatcher {
  // Bound before it is replaced below: the proxy agent calls `connect` on this pool.
  const connect: (options: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData> = pool.connect.bind(pool);
  const tunnel = async (options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> => {
    let made: Dispatcher.ConnectData;
    try {
      made = await connect(options);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'UND_ERR_SOCKET') throw error;
      throw Object.assign(new Error('The proxy closed the connection instead of opening a tunnel.', { cause: error }), { code: TUNNEL_CLOSED });
    }
    if (made.statusCode === 200) return made;
    made.socket.on('error', () => undefined).destroy();
    throw Object.assign(new Error(`The proxy answered ${made.statusCode} instead of opening a tunnel.`), {
      code: TUNNEL_REFUSED,
      proxyStatus: made.statusCode,
    });
  };
  return Object.assign(pool, { connect: tunnel });
}

/**
 * The answer's headers, or the stop signal's reason as soon as it fires: undici hears an abort only once the
 * request has a connection, so a call still waiting for one (a proxy that never answers CONNECT) would outlive its
 * deadline. An answer that comes after the stop is let go.
 */
function untilStopped(pending: Promise<Dispatcher.ResponseData>, stop: AbortSignal): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    const stopped = () => reject(stop.reason as Error);
    if (stop.aborted) stopped();
    stop.addEventListener('abort', stopped, { once: true });
    pending.then(
      (res) => {
        stop.removeEventListener('abort', stopped);
        if (stop.aborted) res.body.on('error', () => undefined).destroy();
        else resolve(res);
      },
      (error: Error) => {
        stop.removeEventListener('abort', stopped);
        reject(error);
      },
    );
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

  /** One keep-alive pool per API client, routed through the environment's proxy when one is set. */
  private pool(): Promise<Dispatcher> {
    if (this.options.sharedPool) return Promise.resolve(this.options.sharedPool);
    return (this.dispatcher ??= loadUndici().then(({ Agent, EnvHttpProxyAgent, Pool, tls: { rootCertificates } }) => {
      const ca = this.options.ca === undefined ? undefined : [...rootCertificates, ...(Array.isArray(this.options.ca) ? this.options.ca : [this.options.ca])];
      const tls = ca ? { ca } : {};
      const common = { keepAliveTimeout: 4_000, connections: 16, connect: tls };
      const proxies = proxySettings(this.options.proxyEnv);
      if (!proxies.httpProxy && !proxies.httpsProxy) return new Agent(common);
      const route = proxyRoute(this.options.baseUrl, this.options.proxyEnv);
      if (route.kind === 'invalid') {
        throw new UnreachableError(
          `${route.variable} is not a URL, so nothing could be sent through it: set it to the proxy's address (e.g. http://proxy.example.com:3128) or unset it.`,
          { code: 'ERR_INVALID_URL' },
        );
      }
      return new EnvHttpProxyAgent({ ...common, ...proxies, requestTls: tls, clientFactory: (origin, options) => tunnelPool(new Pool(origin, options)) });
    }));
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
      throw this.failure(error, { isPost, written, timedOut, status, cancelled: !isPost && signal?.aborted === true });
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

  /** What a failure other than an answer means: an untrusted certificate, the deadline, a cancel, or no answer at all. */
  private failure(error: unknown, at: { isPost: boolean; written: boolean; timedOut: boolean; status: number; cancelled: boolean }): ApiError {
    // The person's cancel is what happened, whatever the connection was doing when it came.
    if (at.cancelled && !at.timedOut) return new CancelledError('The call was cancelled before the service answered.');
    const code = errorCode(error);
    if (CERTIFICATE_CODES.has(code)) {
      return new CertificateError(
        `The TLS certificate of ${this.origin} is not trusted (${code}).${at.isPost ? ' Nothing was sent.' : ''} If the service or a company proxy uses a private certificate authority, point NODE_EXTRA_CA_CERTS at that CA's certificate file (PEM) and restart; otherwise check the base URL's host name and this machine's clock.`,
        { code },
      );
    }
    if (at.timedOut || code.startsWith('UND_ERR_HEADERS_TIMEOUT') || code === 'UND_ERR_BODY_TIMEOUT') {
      return new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`, {
        outcomeUnknown: at.isPost && at.written,
        status: at.status || undefined,
      });
    }
    return new UnreachableError(this.unreachable(code, error), { code, status: at.status || undefined });
  }

  /** Why no answer came, naming what to fix: the proxy when the call goes through one, else DOCREQ_BASE_URL. */
  private unreachable(code: string, error: unknown): string {
    const shown = oneLine(code, 40);
    const route = proxyRoute(this.options.baseUrl, this.options.proxyEnv);
    if (route.kind === 'proxy') {
      if (code === TUNNEL_CLOSED || code === TUNNEL_REFUSED) {
        const did = code === TUNNEL_CLOSED ? 'closed the connection' : `answered ${proxyStatus(error)}`;
        return `The proxy ${route.origin} (from ${route.variable}) ${did} instead of opening a tunnel to the service at ${this.origin}, so the service was not reached: check that the proxy lets this machine reach that host and port, or add the service's host to NO_PROXY.`;
      }
      return CONNECT_CODES.has(code)
        ? `Could not reach the proxy ${route.origin} (${shown}; from ${route.variable}), so the service at ${this.origin} was not reached: check that the proxy runs and ${route.variable} names it, or add the service's host to NO_PROXY.`
        : `Could not reach the service at ${this.origin} through the proxy ${route.origin} (${shown}; from ${route.variable}).`;
    }
    return CONNECT_CODES.has(code)
      ? `Could not reach the service at ${this.origin} (${shown}): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address.`
      : `Could not reach the service at ${this.origin} (${shown}).`;
  }

  private tooLarge(status: number, bytes: number, decompressed = false): TooLargeError {
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    return new TooLargeError(
      `The service's answer (${status}) is larger than the ${mb(this.options.maxResponseBytes)} cap (${mb(bytes)} or more${decompressed ? ' once decompressed' : ''}); it was not read.`,
      { status },
    );
  }
}
