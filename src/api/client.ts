import type { Dispatcher } from 'undici';
import { silentLogger, type Logger } from '../log.js';
import { redactor, type Redact } from '../text/redact.js';
import { ServiceExchange, type CallOptions } from './exchange.js';
import { ApiState, ListReader, type ListOptions, type ListResult } from './lists.js';
import type { ProxyEnv } from './proxy.js';
import type { ServiceProfile } from '../domain/service-profile.js';
import type { Client, RequestRecord } from './records.js';
import { RequestSender, type CreateOptions, type CreateOutcome } from './sending.js';

/**
 * DocReqApi, the Document Request Service client, put together from its parts: the exchange
 * (exchange.ts, proxy.ts), the lists (lists.ts) and sending (sending.ts). Knows nothing of MCP.
 */

export type { CallOptions } from './exchange.js';
export { ApiState, firstSentence, type ListResult } from './lists.js';
export { describeProxy, proxySettings } from './proxy.js';
export type { CreateOptions, CreateOutcome } from './sending.js';

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
  /** Proxy settings; default the process's environment. Honoured by undici's EnvHttpProxyAgent, as curl does. */
  proxyEnv?: ProxyEnv;
  /** Certificate authorities (PEM) trusted beside Node's own, as NODE_EXTRA_CA_CERTS does process-wide. */
  ca?: string | Buffer | (string | Buffer)[];
  /** A POST is not started with less than this left of its deadline (default max(1 s, 25% of timeoutMs), at most half of it). */
  minPostBudgetMs?: number;
  /** A connection pool shared by many clients (team mode: one per process, whatever the key); close() leaves it open. */
  sharedPool?: Dispatcher;
  /** The redaction of the key (redactor([apiKey])), when the caller keeps one per key; made here otherwise. */
  redactKey?: Redact;
  /** The firm's service profile: where a create's answer holds the created record (default: the defaults). */
  profile?: ServiceProfile;
}

const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The Document Request Service client. Identical concurrent GETs share one upstream call (within one
 * generation: none begun before a send is used after it); a list's last answer is kept with its
 * validators and revalidated; answers are decompressed as they stream; a POST is sent at most once.
 */
export class DocReqApi {
  private readonly http: ServiceExchange;
  private readonly lists: ListReader;
  private readonly sender: RequestSender;
  readonly state: ApiState;

  constructor(options: ApiClientOptions) {
    const { logger, state, proxyEnv, ca, minPostBudgetMs, sharedPool, redactKey, profile, ...rest } = options;
    const settings = {
      maxResponseBytes: DEFAULT_MAX_BYTES,
      maxRetries: 2,
      retryBaseDelayMs: 250,
      maxRetryAfterMs: 10_000,
      clientsCacheMs: 30_000,
      ...rest,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
    const log = logger ?? silentLogger;
    // The key redacted from everything the service sends, as it is read: before any field or message is capped.
    const redact = redactKey ?? redactor([options.apiKey]);
    this.state = state ?? new ApiState();
    this.http = new ServiceExchange({ ...settings, proxyEnv, ca, sharedPool, redact, onKeyRejected: () => this.state.forget() });
    this.lists = new ListReader(this.http, settings, this.state, log, redact);
    // max(1 s, 25%), but never more than half the timeout (a test's 800 ms timeout can still send).
    const postBudget = minPostBudgetMs ?? Math.min(Math.max(1_000, options.timeoutMs / 4), options.timeoutMs / 2);
    this.sender = new RequestSender(
      this.http,
      { timeoutMs: options.timeoutMs, minPostBudgetMs: postBudget, ...(profile ? { profile } : {}) },
      this.state,
      log,
      redact,
    );
  }

  /** Loads undici and makes the pool now (right after `initialize`), so the first call costs what a later one does. */
  warm(): void {
    this.http.warm();
  }

  get origin(): string {
    return this.http.origin;
  }

  /** Ends at once: an in-flight call fails rather than holding up shutdown (a POST is never re-sent). */
  close(): Promise<void> {
    return this.http.close();
  }

  /** Forgets cached data (as after a send). */
  invalidate(): void {
    this.state.forget();
  }

  /** `reuse`: a list fetched within `clientsCacheMs` (and since the last send) will do. */
  fetchClients(options: CallOptions & ListOptions & { reuse?: boolean } = {}): Promise<ListResult<Client>> {
    return this.lists.clients(options);
  }

  fetchRequests(options: CallOptions & ListOptions = {}): Promise<ListResult<RequestRecord>> {
    return this.lists.requests(options);
  }

  async listClients(options: CallOptions & { reuse?: boolean } = {}): Promise<Client[]> {
    return (await this.fetchClients(options)).records;
  }

  async listRequests(options: CallOptions = {}): Promise<RequestRecord[]> {
    return (await this.fetchRequests(options)).records;
  }

  /**
   * POSTs `JSON.stringify(body)` once (the body exactly as previewed), with the caller's Idempotency-Key. Never
   * retried. Once written it is not aborted by `signal`, only by the deadline; an unclear outcome is an error with
   * `outcomeUnknown` set, a definite one (refused, not written) has it unset.
   */
  createRequest(body: Record<string, unknown>, options: CreateOptions): Promise<CreateOutcome> {
    return this.sender.create(body, options);
  }
}
