import { rootCertificates } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { USER_AGENT } from '../version.js';
import { silentLogger, type Logger } from '../log.js';
import { redactor, type Redact } from '../text/redact.js';
import { oneLine } from '../text/render.js';
import {
  ApiError,
  BadResponseError,
  CancelledError,
  CertificateError,
  KeyRejectedError,
  NotFoundServiceError,
  RedirectedError,
  ServiceFailedError,
  TimedOutError,
  TooLargeError,
  UnreachableError,
  errorFromStatus,
  isErrorBody,
} from './errors.js';
import { ListStreamParser } from './list-stream.js';
import { CLIENT_FIELDS, REQUEST_FIELDS, createdRecord, toClient, toRequest, type Client, type CreatePayload, type RequestRecord } from './records.js';

/** Proxy settings as the environment gives them (HTTPS_PROXY, HTTP_PROXY, NO_PROXY and lower case). */
export type ProxyEnv = Record<string, string | undefined>;

export interface ApiClientOptions {
  baseUrl: string;
  apiKey: string;
  /** The default bound on one call (DOCREQ_TIMEOUT_MS) when the caller gives no `deadline`. */
  timeoutMs: number;
  /** Cap on one answer after decompression (DOCREQ_MAX_RESPONSE_MB). */
  maxResponseBytes?: number;
  maxRetries?: number;
  retryBaseDelayMs?: number;
  maxRetryAfterMs?: number;
  /** How long the client list may be reused when a caller allows it (resolving a client by name). */
  clientsCacheMs?: number;
  logger?: Logger;
  /**
   * What is kept between calls for this key (client list, revalidation copies, shared GETs): one per
   * key fingerprint, shared by every client made for that key. Without it the client makes its own.
   */
  state?: ApiState;
  /** Proxy settings; default `process.env`. Honoured by undici's EnvHttpProxyAgent, as curl does. */
  proxyEnv?: ProxyEnv;
  /** Certificate authorities (PEM) trusted beside Node's own, as NODE_EXTRA_CA_CERTS does process-wide. */
  ca?: string | Buffer | (string | Buffer)[];
  /** A POST is not started with less than this left of its deadline (default max(1 s, 25% of timeoutMs), at most half of it). */
  minPostBudgetMs?: number;
  /** A connection pool shared by many clients (team mode: one per process, whatever the key); close() leaves it open. */
  sharedPool?: Dispatcher;
}

/** Every call is bounded by an absolute `deadline` (ms since the epoch) and may be cancelled. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Default: now + timeoutMs. */
  deadline?: number | undefined;
}

export interface ListResult<T> {
  records: T[];
  /** True when the service answered 304 and the records parsed last time were reused. */
  revalidated: boolean;
}

export interface CreateOptions extends CallOptions {
  /** Derived by the caller from the confirmation: the same confirmed request always carries the same key. */
  idempotencyKey: string;
}

export interface CreateOutcome {
  /** The created request, reduced to the documented request fields, or null when none could be read. */
  record: RequestRecord | null;
  status: number;
  warnings: string[];
}

const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const PARSE_PIECE = 256 * 1024;
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const CLIENTS = '/api/v1/clients';
const REQUESTS = '/api/v1/requests';
// Errors where the connection never opened, so a POST cannot have reached the service.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
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

// undici is loaded after `initialize` (warm()) or on the first call, not at start-up; and only the
// parts this client uses (its Agent, EnvHttpProxyAgent and request): undici's index loads fetch,
// WebSocket, cookies, caches and mocks too, about three times the work before the first call.
interface Undici {
  Agent: typeof import('undici').Agent;
  EnvHttpProxyAgent: typeof import('undici').EnvHttpProxyAgent;
  /** undici's request with the dispatcher as `this` (what undici.request(url, { dispatcher }) calls). */
  request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
}
let undici: Promise<Undici> | undefined;
// CommonJS modules: their namespace's `default` is module.exports. The API methods go onto the
// Dispatcher prototype as undici's index puts them (its proxy agent calls connect on its clients).
const loadUndici = () =>
  (undici ??= Promise.all([
    import('undici/lib/dispatcher/dispatcher.js'),
    import('undici/lib/api/index.js'),
    import('undici/lib/dispatcher/agent.js'),
    import('undici/lib/dispatcher/env-http-proxy-agent.js'),
  ]).then(([dispatcher, api, agent, proxy]) => {
    Object.assign(dispatcher.default.prototype, api.default);
    return { Agent: agent.default, EnvHttpProxyAgent: proxy.default, request: api.default.request };
  }));

interface ListCopy {
  etag: string | undefined;
  lastModified: string | undefined;
  records: unknown[];
}

interface SharedGet {
  promise: Promise<ListResult<unknown>>;
  controller: AbortController;
  waiters: number;
  generation: number;
}

/**
 * What one key keeps between calls. It never holds the key itself: team mode keeps one per key
 * fingerprint (in the send store's scope for it, transport/http.ts), stdio one for the process.
 */
export class ApiState {
  /** Bumped when a send starts and when it ends: no read begun before a send is used after it. */
  generation = 0;
  clients: { at: number; generation: number; records: Client[] } | undefined;
  /** The last answer of each list with its validators: at most one copy per list. */
  readonly copies = new Map<string, ListCopy>();
  /** GETs under way, shared by identical calls of the same generation. */
  readonly inflight = new Map<string, SharedGet>();

  /** Forgets every answer kept (after a send, or when the key was rejected). */
  forget(): void {
    this.generation++;
    this.clients = undefined;
    this.copies.clear();
  }
}

interface RawAnswer<T = never> {
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

function header(headers: RawAnswer['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The first sentence of a message: up to a full stop that ends a sentence (not the dots of a URL, a host or a number). */
export function firstSentence(message: string): string {
  const end = /\.(?=\s|$)/.exec(message);
  return end ? message.slice(0, end.index) : message;
}

function errorCode(error: unknown): string {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return (error as { code?: string } | undefined)?.code ?? 'network error';
}

/** Retry-After in milliseconds (seconds or an HTTP date), or undefined. */
function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The proxy settings, read as curl reads them: lower case first; HTTPS_PROXY for https, HTTP_PROXY for http. */
export function proxySettings(env: ProxyEnv = process.env): { httpProxy: string; httpsProxy: string; noProxy: string } {
  const pick = (name: string) => env[name.toLowerCase()] ?? env[name.toUpperCase()] ?? '';
  const httpProxy = pick('http_proxy');
  return { httpProxy, httpsProxy: pick('https_proxy') || httpProxy, noProxy: pick('no_proxy') };
}

/**
 * Which proxy a call to `baseUrl` goes through, for `docreq-mcp check`: the proxy's origin only
 * (never its credentials), the variable it came from, or why it goes direct. Mirrors the rules of
 * undici's EnvHttpProxyAgent, which is what actually routes the calls.
 */
export function describeProxy(baseUrl: string, env: ProxyEnv = process.env): string {
  const route = proxyRoute(baseUrl, env);
  if (route.kind === 'direct') return route.why;
  if (route.kind === 'invalid') return `a proxy setting that is not a URL (check ${route.variable})`;
  return `through the proxy ${route.origin} (from ${route.variable})`;
}

type ProxyRoute =
  | { kind: 'direct'; why: string }
  | { kind: 'proxy'; origin: string; variable: string }
  | { kind: 'invalid'; variable: string };

/** How a call to `baseUrl` is routed: direct, through a proxy (its origin and variable, never its credentials), or a proxy setting that is not a URL. */
function proxyRoute(baseUrl: string, env: ProxyEnv = process.env): ProxyRoute {
  const url = new URL(baseUrl);
  const { httpProxy, httpsProxy, noProxy } = proxySettings(env);
  const proxy = url.protocol === 'https:' ? httpsProxy : httpProxy;
  if (!proxy) return { kind: 'direct', why: 'direct (no HTTPS_PROXY or HTTP_PROXY set)' };
  const host = url.hostname.toLowerCase();
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const entries = noProxy.split(/[,\s]/).filter(Boolean);
  const covered =
    noProxy.trim() === '*' ||
    entries.some((entry) => {
      const m = /^(.+):(\d+)$/.exec(entry);
      const name = (m ? m[1]! : entry).replace(/^\*?\./, '').toLowerCase();
      if (m && Number(m[2]) !== port) return false;
      return host === name || host.endsWith(`.${name}`);
    });
  if (covered) return { kind: 'direct', why: `direct (NO_PROXY covers ${host})` };
  const variable = url.protocol === 'https:' && (env.https_proxy ?? env.HTTPS_PROXY) ? (env.https_proxy !== undefined ? 'https_proxy' : 'HTTPS_PROXY') : env.http_proxy !== undefined ? 'http_proxy' : 'HTTP_PROXY';
  try {
    return { kind: 'proxy', origin: new URL(proxy).origin, variable };
  } catch {
    return { kind: 'invalid', variable };
  }
}

/** Failures of the connection itself (not of an answer): where the fix is the address that was dialled. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Decoders for a Content-Encoding, outermost last; undefined when an encoding is not one we read. */
function decoders(encoding: string | undefined): Transform[] | undefined {
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

/**
 * The Document Request Service client. Identical concurrent GETs share one upstream call (within one
 * generation: none begun before a send is used after it); a list's last answer is kept with its
 * validators and revalidated; answers are decompressed as they stream; a POST is sent at most once.
 */
export class DocReqApi {
  private readonly options: Required<Omit<ApiClientOptions, 'logger' | 'state' | 'proxyEnv' | 'ca' | 'minPostBudgetMs' | 'sharedPool'>>;
  private readonly sharedPool: Dispatcher | undefined;
  private readonly proxyEnv: ProxyEnv | undefined;
  private readonly ca: ApiClientOptions['ca'];
  private readonly minPostBudgetMs: number;
  private dispatcher: Promise<Dispatcher> | undefined;
  private readonly logger: Logger;
  /** The key redacted from everything the service sends, as it is read: before any field or message is capped. */
  private readonly redact: Redact;
  readonly state: ApiState;

  constructor(options: ApiClientOptions) {
    const { logger, state, proxyEnv, ca, minPostBudgetMs, sharedPool, ...rest } = options;
    this.options = {
      maxResponseBytes: DEFAULT_MAX_BYTES,
      maxRetries: 2,
      retryBaseDelayMs: 250,
      maxRetryAfterMs: 10_000,
      clientsCacheMs: 30_000,
      ...rest,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
    this.logger = logger ?? silentLogger;
    this.redact = redactor([options.apiKey]);
    this.state = state ?? new ApiState();
    this.proxyEnv = proxyEnv;
    this.ca = ca;
    // max(1 s, 25%), but never more than half the timeout (a test's 800 ms timeout can still send).
    this.minPostBudgetMs = minPostBudgetMs ?? Math.min(Math.max(1_000, options.timeoutMs / 4), options.timeoutMs / 2);
    this.sharedPool = sharedPool;
  }

  /** One keep-alive pool per API client, routed through the environment's proxy when one is set. */
  private pool(): Promise<Dispatcher> {
    if (this.sharedPool) return Promise.resolve(this.sharedPool);
    return (this.dispatcher ??= loadUndici().then(({ Agent, EnvHttpProxyAgent }) => {
      const ca = this.ca === undefined ? undefined : [...rootCertificates, ...(Array.isArray(this.ca) ? this.ca : [this.ca])];
      const tls = ca ? { ca } : {};
      const common = { keepAliveTimeout: 4_000, connections: 16, connect: tls };
      const proxies = proxySettings(this.proxyEnv ?? process.env);
      if (!proxies.httpProxy && !proxies.httpsProxy) return new Agent(common);
      const route = proxyRoute(this.options.baseUrl, this.proxyEnv ?? process.env);
      if (route.kind === 'invalid') {
        throw new UnreachableError(`${route.variable} is not a URL, so nothing could be sent through it: set it to the proxy's address (e.g. http://proxy.example.com:3128) or unset it.`, { code: 'ERR_INVALID_URL' });
      }
      return new EnvHttpProxyAgent({ ...common, ...proxies, requestTls: tls });
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

  /** Forgets cached data (as after a send). */
  invalidate(): void {
    this.state.forget();
  }

  /** `reuse`: a list fetched within `clientsCacheMs` (and since the last send) will do. */
  async fetchClients(options: CallOptions & { reuse?: boolean } = {}): Promise<ListResult<Client>> {
    const state = this.state;
    const cached = state.clients;
    if (cached && options.reuse && cached.generation === state.generation && Date.now() - cached.at <= this.options.clientsCacheMs) {
      return { records: cached.records, revalidated: false };
    }
    const generation = state.generation;
    const result = await this.sharedList(CLIENTS, 'clients', (raw) => toClient(raw, this.redact), options);
    if (generation === state.generation) state.clients = { at: Date.now(), generation, records: result.records };
    return result;
  }

  async fetchRequests(options: CallOptions = {}): Promise<ListResult<RequestRecord>> {
    return this.sharedList(REQUESTS, 'requests', (raw) => toRequest(raw, this.redact), options);
  }

  async listClients(options: CallOptions & { reuse?: boolean } = {}): Promise<Client[]> {
    return (await this.fetchClients(options)).records;
  }

  async listRequests(options: CallOptions = {}): Promise<RequestRecord[]> {
    return (await this.fetchRequests(options)).records;
  }

  /**
   * POSTs `JSON.stringify(payload)` once, with the caller's Idempotency-Key. Never retried. Once
   * written it is not aborted by `signal`, only by the deadline; an unclear outcome is an error with
   * `outcomeUnknown` set, a definite one (refused, not written) has it unset.
   */
  async createRequest(payload: CreatePayload, options: CreateOptions): Promise<CreateOutcome> {
    const { idempotencyKey, signal } = options;
    if (typeof idempotencyKey !== 'string' || !idempotencyKey) throw new TypeError('createRequest needs an idempotencyKey derived from the confirmation');
    const deadline = options.deadline ?? Date.now() + this.options.timeoutMs;
    if (signal?.aborted) throw new CancelledError('The call was cancelled before sending. Nothing was sent.');
    const left = deadline - Date.now();
    if (left < this.minPostBudgetMs) {
      throw new TimedOutError(`Only ${Math.max(0, Math.round(left))} ms of the call's time were left, too little to send and hear back. Nothing was sent.`);
    }
    const started = Date.now();
    let answer: RawAnswer;
    this.state.forget();
    try {
      answer = await this.exchange({ method: 'POST', path: REQUESTS, deadline, signal, body: JSON.stringify(payload), headers: { 'idempotency-key': idempotencyKey } });
    } catch (error) {
      if (error instanceof BadResponseError && error.status !== undefined && error.status >= 200 && error.status <= 299) {
        return { record: null, status: error.status, warnings: [`Sent, but the service's answer was unreadable (${error.message})`] };
      }
      throw this.postFailure(error);
    } finally {
      this.state.forget();
    }
    this.logger.debug(`POST ${REQUESTS} → ${answer.status} in ${Date.now() - started} ms`);
    const { status } = answer;
    if (status < 200 || status > 299) {
      const error = this.statusError(answer, 'POST', REQUESTS);
      if (status >= 500) {
        throw new ServiceFailedError(error.message, {
          status,
          code: error.code,
          details: error.details,
          retryAfterMs: error.retryAfterMs,
          outcomeUnknown: true,
        });
      }
      throw error;
    }
    if (answer.bytes.length === 0) {
      return { record: null, status, warnings: [`The service answered ${status} with an empty body, so the new request's id is not known yet.`] };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.bytes.toString('utf8'));
    } catch {
      return { record: null, status, warnings: [`The service answered ${status} (sent) with a body that is not JSON.`] };
    }
    if (isErrorBody(parsed)) {
      const said = errorFromStatus(status, parsed, true, undefined, undefined, this.redact).message.replace(/^[^.]*\.\s*/, '');
      throw new BadResponseError(`The service answered ${status} (success) with an error body.${said ? ` ${said}` : ''}`, { status, outcomeUnknown: true });
    }
    const raw = createdRecord(parsed);
    const record = raw ? toRequest(raw, this.redact) : null;
    return { record, status, warnings: record ? [] : ['The service answered without a record of the created request.'] };
  }

  /** Says whether a failed POST can have reached the service (`outcomeUnknown`). */
  private postFailure(error: unknown): ApiError {
    if (error instanceof ApiError && !error.outcomeUnknown && (error instanceof CertificateError || error instanceof RedirectedError || error instanceof CancelledError)) return error;
    if (error instanceof TimedOutError) return new TimedOutError(error.detail, { outcomeUnknown: true });
    if (error instanceof UnreachableError) {
      if (error.code && NOT_SENT_CODES.has(error.code)) return new UnreachableError(`${error.message} Nothing was sent.`, { code: error.code });
      return new UnreachableError(`The connection to ${this.origin} failed (${error.code ?? 'network error'}) while sending.`, {
        code: error.code,
        outcomeUnknown: true,
      });
    }
    if (error instanceof ApiError) return error;
    return new UnreachableError('Sending failed unexpectedly.', { outcomeUnknown: true });
  }

  private url(path: string): string {
    return `${this.options.baseUrl}${path}`;
  }

  /**
   * Identical concurrent calls share one upstream GET and its records (which nobody mutates), but
   * only within a generation. Each caller may leave (cancel, or its own deadline); the GET is aborted
   * when the last one leaves.
   */
  private sharedList<T>(path: string, what: string, toRecord: (raw: unknown) => T, options: CallOptions): Promise<ListResult<T>> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new CancelledError('The call was cancelled.'));
    const deadline = options.deadline ?? Date.now() + this.options.timeoutMs;
    const state = this.state;
    const key = this.url(path);
    let shared = state.inflight.get(key);
    if (!shared || shared.generation !== state.generation) {
      const controller = new AbortController();
      const fresh: SharedGet = { controller, waiters: 0, generation: state.generation, promise: undefined as never };
      const settled = () => {
        if (state.inflight.get(key) === fresh) state.inflight.delete(key);
      };
      // Calls share an answer in progress, not a failure being retried: a call made meanwhile starts afresh.
      fresh.promise = this.getList(path, what, toRecord, deadline, controller.signal, fresh.generation, settled);
      fresh.promise.then(settled, settled);
      state.inflight.set(key, fresh);
      shared = fresh;
    }
    return this.waitFor(key, shared, signal, deadline) as Promise<ListResult<T>>;
  }

  private waitFor(key: string, shared: SharedGet, signal: AbortSignal | undefined, deadline: number): Promise<ListResult<unknown>> {
    shared.waiters++;
    return new Promise((resolve, reject) => {
      let done = false;
      const leave = (error: ApiError | undefined, value?: ListResult<unknown>) => {
        if (done) return;
        done = true;
        shared.waiters--;
        signal?.removeEventListener('abort', onAbort);
        clearTimeout(timer);
        if (error) {
          if (shared.waiters === 0 && !shared.controller.signal.aborted) {
            // Nobody waits any more: stop the upstream GET, and let no new caller join it.
            if (this.state.inflight.get(key) === shared) this.state.inflight.delete(key);
            shared.controller.abort();
          }
          reject(error);
        } else resolve(value!);
      };
      const onAbort = () => leave(new CancelledError('The call was cancelled.'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => leave(new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`)), Math.max(0, deadline - Date.now()) + 50);
      shared.promise.then(
        (value) => {
          if (done) return;
          done = true;
          shared.waiters--;
          signal?.removeEventListener('abort', onAbort);
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (done) return;
          done = true;
          shared.waiters--;
          signal?.removeEventListener('abort', onAbort);
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** GET a list with retries inside one deadline; the body streams into records; a 304 reuses the last copy. */
  private async getList<T>(
    path: string,
    what: string,
    toRecord: (raw: unknown) => T,
    deadline: number,
    signal: AbortSignal,
    generation: number,
    onRetry: () => void = () => undefined,
  ): Promise<ListResult<T>> {
    const { maxRetries, retryBaseDelayMs, maxRetryAfterMs } = this.options;
    const state = this.state;
    const key = this.url(path);
    for (let attempt = 0; ; attempt++) {
      let delay: number | undefined;
      let failure: ApiError;
      const conditional: Record<string, string> = {};
      // Only the validators are held while the GET runs, not the copy: a 200 drops it before the new body is parsed.
      const held = state.generation === generation ? state.copies.get(key) : undefined;
      const etag = held?.etag;
      if (held?.etag) conditional['if-none-match'] = held.etag;
      if (held?.lastModified) conditional['if-modified-since'] = held.lastModified;
      const asked = held !== undefined;
      try {
        const started = Date.now();
        const dropSuperseded = (status: number) => {
          if (status >= 200 && status <= 299 && state.copies.get(key)?.etag === etag) state.copies.delete(key);
        };
        const answer = await this.exchange({ method: 'GET', path, deadline, signal, headers: conditional, listParser: () => new ListStreamParser(what, toRecord, { fields: what === 'clients' ? CLIENT_FIELDS : REQUEST_FIELDS }), onStatus: dropSuperseded });
        this.logger.debug(`GET ${path} → ${answer.status} in ${Date.now() - started} ms (attempt ${attempt + 1})`);
        const copy = asked && answer.status === 304 ? state.copies.get(key) : undefined;
        if (copy && copy.etag === etag) return { records: copy.records as T[], revalidated: true };
        if (answer.records) {
          const newTag = header(answer.headers, 'etag');
          const lastModified = header(answer.headers, 'last-modified');
          if (state.generation === generation) {
            if (newTag || lastModified) state.copies.set(key, { etag: newTag, lastModified, records: answer.records });
            else state.copies.delete(key);
          }
          return { records: answer.records, revalidated: false };
        }
        if (answer.status === 304) {
          // A 304 to a call without validators (or whose copy was dropped meanwhile): ask again, unconditionally.
          state.copies.delete(key);
          failure = new BadResponseError(`The service answered 304 (not modified) to ${path} without being asked.`, { status: 304 });
          if (attempt >= maxRetries) throw failure;
          continue;
        }
        failure = this.statusError(answer, 'GET', path);
        if (!RETRY_STATUSES.has(answer.status)) throw failure;
        if (answer.status === 429 && failure.retryAfterMs !== undefined) {
          if (failure.retryAfterMs > maxRetryAfterMs) throw failure;
          delay = failure.retryAfterMs;
        }
      } catch (error) {
        if (!(error instanceof UnreachableError)) throw error;
        failure = error;
      }
      if (attempt >= maxRetries) throw failure;
      delay ??= Math.random() * retryBaseDelayMs * 2 ** attempt + retryBaseDelayMs / 4;
      if (Date.now() + delay >= deadline) throw failure;
      onRetry();
      this.logger.info(`GET ${path}: ${firstSentence(failure.message)}; retry ${attempt + 1} of ${maxRetries} in ${Math.round(delay)} ms`);
      await sleep(delay, undefined, { signal }).catch(() => {
        throw new CancelledError('The call was cancelled.');
      });
    }
  }

  private statusError(answer: RawAnswer<unknown>, method: 'GET' | 'POST', path: string): ApiError {
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
    const error = errorFromStatus(status, parsed, isJson, header(answer.headers, 'content-type'), parseRetryAfter(header(answer.headers, 'retry-after')), this.redact);
    if (error instanceof KeyRejectedError) this.state.forget();
    return error;
  }

  /** A redirect is never followed; the message names its target by origin and path only. */
  private redirected(answer: RawAnswer<unknown>, method: 'GET' | 'POST'): RedirectedError {
    const location = header(answer.headers, 'location');
    let target: string | undefined;
    if (location) {
      try {
        const url = new URL(location, this.url('/'));
        target = oneLine(this.redact(`${url.origin}${url.pathname}`), 200);
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
  private async exchange<T = never>({ method, path, deadline, signal, body, headers: extra, listParser, onStatus }: Exchange<T>): Promise<RawAnswer<T>> {
    const isPost = method === 'POST';
    const budgetMs = Math.floor(deadline - Date.now());
    if (budgetMs <= 0) throw new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`);
    const timeout = AbortSignal.timeout(budgetMs);
    // A POST, once written, is bounded by the deadline only: a host's cancel does not abort it.
    const combined = signal && !isPost ? AbortSignal.any([timeout, signal]) : timeout;
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
      const [{ request }, dispatcher] = await Promise.all([loadUndici(), this.pool()]);
      const url = new URL(this.url(path));
      if (signal?.aborted) throw new CancelledError(isPost ? 'The call was cancelled before sending. Nothing was sent.' : 'The call was cancelled.');
      written = true;
      const res = await request.call(dispatcher, { origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body, signal: combined, headersTimeout: budgetMs, bodyTimeout: budgetMs });
      status = res.statusCode;
      // Errors are seen through iteration; a body dropped early must not raise an unhandled 'error' later.
      res.body.on('error', () => undefined);
      onStatus?.(status);
      if (status === 304 || (status >= 300 && status <= 399)) {
        res.body.destroy();
        return { status, headers: res.headers, bytes: Buffer.alloc(0) };
      }
      const max = this.options.maxResponseBytes;
      const declared = Number(header(res.headers, 'content-length'));
      if (Number.isFinite(declared) && declared > max) {
        res.body.destroy();
        throw this.tooLarge(status, declared);
      }
      const chain = decoders(header(res.headers, 'content-encoding'));
      if (!chain) {
        res.body.destroy();
        throw new BadResponseError(`The service answered ${status} with a Content-Encoding this client cannot read (${oneLine(this.redact(header(res.headers, 'content-encoding') ?? ''), 40)}).`, { status });
      }
      let decodeError: Error | undefined;
      const source: Readable =
        chain.length === 0
          ? (res.body)
          : (pipeline([res.body as unknown as Readable, ...chain], (error) => {
              if (error && chain.some((d) => d.errored === error)) decodeError = error;
            }) as unknown as Readable);
      // A successful list streams into records; anything else is read whole (it is small or refused).
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
          throw new BadResponseError(`The service's answer (${status}, ${oneLine(this.redact(header(res.headers, 'content-encoding') ?? ''), 20)}) could not be decompressed (${zlibCode || 'corrupt data'}).`, { status });
        }
        throw error;
      }
      if (parser) {
        try {
          return { status, headers: res.headers, bytes: Buffer.alloc(0), records: parser.end() };
        } catch (error) {
          const type = this.redact(header(res.headers, 'content-type') ?? '').split(';')[0];
          throw new BadResponseError(`${(error as Error).message} It answered ${status}${type ? ` (${oneLine(type, 40)})` : ''}, ${size} bytes.`, { status });
        }
      }
      return { status, headers: res.headers, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      const code = errorCode(error);
      if (CERTIFICATE_CODES.has(code)) {
        throw new CertificateError(
          `The TLS certificate of ${this.origin} is not trusted (${code}).${isPost ? ' Nothing was sent.' : ''} If the service or a company proxy uses a private certificate authority, point NODE_EXTRA_CA_CERTS at that CA's certificate file (PEM) and restart; otherwise check the base URL's host name and this machine's clock.`,
          { code },
        );
      }
      if (timeout.aborted || code.startsWith('UND_ERR_HEADERS_TIMEOUT') || code === 'UND_ERR_BODY_TIMEOUT') {
        throw new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`, { outcomeUnknown: isPost && written, status: status || undefined });
      }
      if (!isPost && signal?.aborted) throw new CancelledError('The call was cancelled before the service answered.');
      throw new UnreachableError(this.unreachable(code), { code, status: status || undefined });
    }
  }

  /** Why no answer came, naming what to fix: the proxy when the call goes through one, else DOCREQ_BASE_URL. */
  private unreachable(code: string): string {
    const shown = oneLine(code, 40);
    const route = proxyRoute(this.options.baseUrl, this.proxyEnv ?? process.env);
    if (route.kind === 'proxy') {
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
