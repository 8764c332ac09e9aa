import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { USER_AGENT } from '../version.js';
import { silentLogger, type Logger } from '../log.js';
import {
  ApiError,
  BadResponseError,
  CancelledError,
  KeyRejectedError,
  TimedOutError,
  UnreachableError,
  errorFromStatus,
} from './errors.js';
import { ListStreamParser } from './list-stream.js';
import { createdRecord, toClient, toRequest, type Client, type RequestRecord } from './records.js';

export interface ApiClientOptions {
  baseUrl: string;
  apiKey: string;
  /** One deadline per API call, from connecting to the last byte, retries included. */
  timeoutMs: number;
  maxResponseBytes?: number;
  maxRetries?: number;
  retryBaseDelayMs?: number;
  maxRetryAfterMs?: number;
  /** How long the client list is reused for resolving a client by name. */
  clientsCacheMs?: number;
  logger?: Logger;
  /** A connection pool shared by many clients (team mode: one per process, whatever the key); close() leaves it open. */
  sharedPool?: Dispatcher;
}

/** The create body, with the field names contract section 4 decides. */
export interface CreatePayload {
  clientId: string;
  title: string;
  dueDate?: string;
  items: { name: string; required: boolean; type: string }[];
  correctnessMode?: string;
}

export interface CreateOutcome {
  /** The created request as the service returned it, or null when it returned none we could read. */
  record: Record<string, unknown> | null;
  status: number;
  warnings: string[];
}

const DEFAULT_MAX_BYTES = 128 * 1024 * 1024;
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
// Errors where the connection never opened, so a POST cannot have reached the service.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

// undici is loaded on the first call, not at start-up: listing tools never needs it.
type Undici = typeof import('undici');
let undici: Promise<Undici> | undefined;
// undici is CommonJS: bundled, its namespace has only `default` (module.exports); Node's own import has both.
const loadUndici = () => (undici ??= import('undici').then((m) => (m as Undici & { default?: Undici }).default ?? m));

interface RawAnswer<T = never> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body, unless it was a successful list, which streams into `records` instead. */
  bytes: Buffer;
  records?: T[];
}

function header(headers: RawAnswer['headers'], name: string): string | undefined {
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
  return (error as { code?: string } | undefined)?.code ?? 'network error';
}

/** Retry-After in milliseconds (seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The Document Request Service client. GETs are coalesced (identical concurrent calls share one
 * upstream call) and retried on transient failures; a POST is sent exactly once, whatever happens.
 */
export class DocReqApi {
  private readonly options: Required<Omit<ApiClientOptions, 'logger' | 'sharedPool'>>;
  private readonly sharedPool: Dispatcher | undefined;
  private dispatcher: Promise<Dispatcher> | undefined;
  private readonly logger: Logger;
  private readonly inflight = new Map<string, Promise<unknown>>();
  private clientsCache: { at: number; clients: Client[] } | undefined;
  private generation = 0;

  constructor(options: ApiClientOptions) {
    this.options = {
      maxResponseBytes: DEFAULT_MAX_BYTES,
      maxRetries: 2,
      retryBaseDelayMs: 250,
      maxRetryAfterMs: 10_000,
      clientsCacheMs: 30_000,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
    this.logger = options.logger ?? silentLogger;
    this.sharedPool = options.sharedPool;
  }

  /** One keep-alive pool per API client (so per key), made on first use. */
  private pool(): Promise<Dispatcher> {
    if (this.sharedPool) return Promise.resolve(this.sharedPool);
    return (this.dispatcher ??= loadUndici().then(({ Agent }) => new Agent({ keepAliveTimeout: 4_000, connections: 16 })));
  }

  get origin(): string {
    return new URL(this.options.baseUrl).origin;
  }

  /** Ends at once: an in-flight call fails rather than holding up shutdown (a POST is never re-sent). */
  async close(): Promise<void> {
    const pool = this.dispatcher;
    this.dispatcher = undefined;
    if (pool) await (await pool).destroy();
  }

  /** Forgets cached data, e.g. after a send. */
  invalidate(): void {
    this.generation++;
    this.clientsCache = undefined;
  }

  async listClients(options: { maxAgeMs?: number; signal?: AbortSignal } = {}): Promise<Client[]> {
    const cached = this.clientsCache;
    if (cached && options.maxAgeMs !== undefined && Date.now() - cached.at <= Math.min(options.maxAgeMs, this.options.clientsCacheMs)) {
      return cached.clients;
    }
    const generation = this.generation;
    const clients = await this.sharedList('/api/v1/clients', 'clients', toClient, options.signal);
    if (generation === this.generation) this.clientsCache = { at: Date.now(), clients };
    return clients;
  }

  async listRequests(options: { signal?: AbortSignal } = {}): Promise<RequestRecord[]> {
    return this.sharedList('/api/v1/requests', 'requests', toRequest, options.signal);
  }

  /** POSTs once. Never retried: an unclear outcome is an error with `outcomeUnknown` set. */
  async createRequest(payload: CreatePayload, signal?: AbortSignal): Promise<CreateOutcome> {
    this.invalidate();
    const started = Date.now();
    let answer: RawAnswer;
    try {
      answer = await this.once('POST', '/api/v1/requests', this.options.timeoutMs, signal, JSON.stringify(payload));
    } catch (error) {
      if (error instanceof BadResponseError && error.status !== undefined && error.status >= 200 && error.status <= 299) {
        return { record: null, status: error.status, warnings: [`Sent, but the service's answer was unreadable (${error.message}); list_requests shows the created request.`] };
      }
      throw this.postFailure(error);
    } finally {
      this.invalidate();
    }
    this.logger.debug(`POST /api/v1/requests → ${answer.status} in ${Date.now() - started} ms`);
    if (answer.status < 200 || answer.status > 299) throw this.statusError(answer);
    if (answer.bytes.length === 0) {
      return { record: null, status: answer.status, warnings: [`The service answered ${answer.status} with an empty body, so the new request's id is not known yet; list_requests shows it.`] };
    }
    let record: Record<string, unknown> | null;
    try {
      record = createdRecord(JSON.parse(answer.bytes.toString('utf8')));
    } catch {
      return { record: null, status: answer.status, warnings: [`The service answered ${answer.status} (sent) with a body that is not JSON; list_requests shows the created request.`] };
    }
    return { record, status: answer.status, warnings: record ? [] : ['The service answered without a record of the created request; list_requests shows it.'] };
  }

  /** Says whether a failed POST can have reached the service; never suggests sending again blindly. */
  private postFailure(error: unknown): ApiError {
    const mayHaveBeenSent = ' The request may have been sent: check with list_requests before sending again.';
    if (error instanceof TimedOutError) return new TimedOutError(`${error.message}${mayHaveBeenSent}`, { outcomeUnknown: true });
    if (error instanceof CancelledError) return new CancelledError(`${error.message}${mayHaveBeenSent}`, { outcomeUnknown: true });
    if (error instanceof UnreachableError) {
      if (error.code && NOT_SENT_CODES.has(error.code)) return new UnreachableError(`${error.message} Nothing was sent.`, { code: error.code });
      return new UnreachableError(`The connection to ${this.origin} failed (${error.code ?? 'network error'}) while sending.${mayHaveBeenSent}`, {
        code: error.code,
        outcomeUnknown: true,
      });
    }
    return error instanceof ApiError ? error : new UnreachableError(`Sending failed unexpectedly.${mayHaveBeenSent}`, { outcomeUnknown: true });
  }

  /** Identical concurrent calls share one upstream GET and its records (which nobody mutates). */
  private sharedList<T>(path: string, what: string, toRecord: (raw: unknown) => T, signal: AbortSignal | undefined): Promise<T[]> {
    let shared = this.inflight.get(path) as Promise<T[]> | undefined;
    if (!shared) {
      const fresh = this.getList(path, what, toRecord);
      const settled = () => {
        if (this.inflight.get(path) === fresh) this.inflight.delete(path);
      };
      fresh.then(settled, settled);
      this.inflight.set(path, fresh);
      shared = fresh;
    }
    return signal ? raceAbort(shared, signal) : shared;
  }

  /** GET a list with retries inside one deadline; the body streams into records. */
  private async getList<T>(path: string, what: string, toRecord: (raw: unknown) => T): Promise<T[]> {
    const deadline = Date.now() + this.options.timeoutMs;
    const { maxRetries, retryBaseDelayMs, maxRetryAfterMs } = this.options;
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - Date.now();
      let delay: number | undefined;
      let failure: ApiError;
      try {
        const started = Date.now();
        const answer = await this.once('GET', path, remaining, undefined, undefined, () => new ListStreamParser(what, toRecord));
        this.logger.debug(`GET ${path} → ${answer.status} in ${Date.now() - started} ms (attempt ${attempt + 1})`);
        if (answer.records) return answer.records;
        failure = this.statusError(answer);
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
      this.logger.info(`GET ${path}: ${failure.message.split('.')[0]}; retry ${attempt + 1} of ${maxRetries} in ${Math.round(delay)} ms`);
      await sleep(delay);
    }
  }

  private statusError(answer: RawAnswer<unknown>): ApiError {
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
    const error = errorFromStatus(answer.status, parsed, isJson, header(answer.headers, 'content-type'), parseRetryAfter(header(answer.headers, 'retry-after')));
    if (error instanceof KeyRejectedError) this.invalidate();
    return error;
  }

  /** One HTTP exchange, bounded by `budgetMs` from connecting to the last byte, body size capped. */
  private async once<T = never>(
    method: 'GET' | 'POST',
    path: string,
    budgetMs: number,
    signal: AbortSignal | undefined,
    body?: string,
    listParser?: () => ListStreamParser<T>,
  ): Promise<RawAnswer<T>> {
    const isPost = method === 'POST';
    if (budgetMs <= 0) throw new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`);
    const timeout = AbortSignal.timeout(budgetMs);
    const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    if (isPost) {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = randomUUID();
    }
    try {
      const [{ request }, dispatcher] = await Promise.all([loadUndici(), this.pool()]);
      const res = await request(`${this.options.baseUrl}${path}`, {
        method,
        headers,
        body,
        signal: combined,
        dispatcher,
        headersTimeout: budgetMs,
        bodyTimeout: budgetMs,
      });
      const declared = Number(header(res.headers, 'content-length'));
      if (Number.isFinite(declared) && declared > this.options.maxResponseBytes) {
        res.body.destroy();
        throw this.tooLarge(res.statusCode, declared);
      }
      // A successful list streams into records; anything else is read whole (it is small or refused).
      const parser = listParser && res.statusCode >= 200 && res.statusCode <= 299 ? listParser() : undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > this.options.maxResponseBytes) {
          res.body.destroy();
          throw this.tooLarge(res.statusCode, size);
        }
        if (parser) parser.write(chunk);
        else chunks.push(chunk);
      }
      if (parser) {
        try {
          return { status: res.statusCode, headers: res.headers, bytes: Buffer.alloc(0), records: parser.end() };
        } catch (error) {
          const type = header(res.headers, 'content-type')?.split(';')[0];
          throw new BadResponseError(`${(error as Error).message} It answered ${res.statusCode}${type ? ` (${type})` : ''}, ${size} bytes.`, { status: res.statusCode });
        }
      }
      return { status: res.statusCode, headers: res.headers, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (timeout.aborted || errorCode(error).startsWith('UND_ERR_HEADERS_TIMEOUT') || errorCode(error) === 'UND_ERR_BODY_TIMEOUT') {
        throw new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`, { outcomeUnknown: isPost });
      }
      if (signal?.aborted) throw new CancelledError('The call was cancelled before the service answered.', { outcomeUnknown: isPost });
      const code = errorCode(error);
      throw new UnreachableError(`Could not reach the service at ${this.origin} (${code}).`, { code });
    }
  }

  private tooLarge(status: number, bytes: number): BadResponseError {
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    return new BadResponseError(`The service's answer (${status}) is larger than the ${mb(this.options.maxResponseBytes)} cap (${mb(bytes)} or more); it was not read.`, { status });
  }
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new CancelledError('The call was cancelled.'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new CancelledError('The call was cancelled.'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
