import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.js';
import type { Redact } from '../text/redact.js';
import { ApiError, BadResponseError, CancelledError, TimedOutError, UnreachableError } from './errors.js';
import { CLIENTS, REQUESTS, header, type CallOptions, type ServiceExchange } from './exchange.js';
import { ListStreamParser, surveyOf, type ListSurvey } from './list-stream.js';
import { CLIENT_FIELDS, REQUEST_FIELDS, toClient, toRequest, type Client, type RequestRecord } from './records.js';
import { linkPaging } from './unreadable.js';

/**
 * The lists: GETs with retries inside one deadline, revalidation (ETag / Last-Modified → 304 reuses
 * the records), identical calls sharing one GET per send generation, and what one key keeps.
 */

export interface ListResult<T> {
  records: T[];
  /** True when the service answered 304 and the records parsed last time were reused. */
  revalidated: boolean;
  /**
   * The answer's sign that the service holds more of the list than it gave (the documented lists have
   * no pages), as one sentence naming it, e.g. `the answer's "has_more" is true`; undefined when it
   * gives none. A reused list (304, or the clients kept for reuse) keeps the sign of the answer it came from.
   */
  paging: string | undefined;
  /** Only when asked for (`survey`): the records' fields beyond the ones read, each with how many records carry it. */
  survey?: ListSurvey;
}

/** What a list call may ask beyond the call's own options. */
export interface ListOptions {
  /**
   * Also survey the records' fields beyond the ones read (for a check of the service's answer). Such a
   * call neither shares a GET with nor reuses the copy of a call without it, and keeps no copy itself.
   */
  survey?: boolean;
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

interface ListCopy {
  etag: string | undefined;
  lastModified: string | undefined;
  records: unknown[];
  paging: string | undefined;
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
  clients: { at: number; generation: number; records: Client[]; paging: string | undefined } | undefined;
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

/** The first sentence of a message: up to a full stop that ends a sentence (not the dots of a URL, a host or a number). */
export function firstSentence(message: string): string {
  const end = /\.(?=\s|$)/.exec(message);
  return end ? message.slice(0, end.index) : message;
}

/** How hard a list GET tries, and how long a client list may be reused. */
export interface ListSettings {
  timeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  maxRetryAfterMs: number;
  clientsCacheMs: number;
}

/** The two lists of one key's service, read through its exchange and kept in its state. */
export class ListReader {
  constructor(
    private readonly http: ServiceExchange,
    private readonly options: ListSettings,
    private readonly state: ApiState,
    private readonly logger: Logger,
    private readonly redact: Redact,
  ) {}

  /** `reuse`: a list fetched within `clientsCacheMs` (and since the last send) will do. */
  async clients(options: CallOptions & ListOptions & { reuse?: boolean } = {}): Promise<ListResult<Client>> {
    const state = this.state;
    const cached = state.clients;
    // A survey is never answered from the list kept (it holds no survey); its own answer may be kept for later calls.
    if (cached && options.reuse && !options.survey && cached.generation === state.generation && Date.now() - cached.at <= this.options.clientsCacheMs) {
      return { records: cached.records, revalidated: false, paging: cached.paging };
    }
    const generation = state.generation;
    const result = await this.sharedList(CLIENTS, 'clients', (raw) => toClient(raw, this.redact), options);
    if (generation === state.generation) state.clients = { at: Date.now(), generation, records: result.records, paging: result.paging };
    return result;
  }

  async requests(options: CallOptions & ListOptions = {}): Promise<ListResult<RequestRecord>> {
    return this.sharedList(REQUESTS, 'requests', (raw) => toRequest(raw, this.redact), options);
  }

  /**
   * Identical concurrent calls share one upstream GET and its records (which nobody mutates), but
   * only within a generation. Each caller may leave (cancel, or its own deadline); the GET is aborted
   * when the last one leaves.
   */
  private sharedList<T>(path: string, what: string, toRecord: (raw: unknown) => T, options: CallOptions & ListOptions): Promise<ListResult<T>> {
    const { signal } = options;
    const survey = options.survey === true;
    if (signal?.aborted) return Promise.reject(new CancelledError('The call was cancelled.'));
    const deadline = options.deadline ?? Date.now() + this.options.timeoutMs;
    const state = this.state;
    // Surveys share GETs only with each other: a survey's key ends in " survey", any other in the list's path.
    const key = survey ? `${this.http.url(path)} survey` : this.http.url(path);
    let shared = state.inflight.get(key);
    if (!shared || shared.generation !== state.generation) {
      const controller = new AbortController();
      const fresh: SharedGet = { controller, waiters: 0, generation: state.generation, promise: undefined as never };
      const settled = () => {
        if (state.inflight.get(key) === fresh) state.inflight.delete(key);
      };
      // Calls share an answer in progress, not a failure being retried: a call made meanwhile starts afresh.
      fresh.promise = this.getList(path, what, toRecord, deadline, controller.signal, fresh.generation, survey, settled);
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
      const timer = setTimeout(
        () => leave(new TimedOutError(`The service did not answer within ${this.options.timeoutMs} ms.`)),
        Math.max(0, deadline - Date.now()) + 50,
      );
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

  /**
   * GET a list with retries inside one deadline; the body streams into records; a 304 reuses the last copy.
   * `survey`: the records' other fields are counted too, and the copy is left alone: not asked about, dropped nor replaced.
   */
  private async getList<T>(
    path: string,
    what: string,
    toRecord: (raw: unknown) => T,
    deadline: number,
    signal: AbortSignal,
    generation: number,
    survey: boolean,
    onRetry: () => void = () => undefined,
  ): Promise<ListResult<T>> {
    const { maxRetries, retryBaseDelayMs, maxRetryAfterMs } = this.options;
    const state = this.state;
    const key = this.http.url(path);
    for (let attempt = 0; ; attempt++) {
      let delay: number | undefined;
      let failure: ApiError;
      const conditional: Record<string, string> = {};
      // Only the validators are held while the GET runs, not the copy: a 200 drops it before the new body is parsed.
      const held = !survey && state.generation === generation ? state.copies.get(key) : undefined;
      const etag = held?.etag;
      if (held?.etag) conditional['if-none-match'] = held.etag;
      if (held?.lastModified) conditional['if-modified-since'] = held.lastModified;
      const asked = held !== undefined;
      try {
        const started = Date.now();
        const dropSuperseded = (status: number) => {
          if (status >= 200 && status <= 299 && state.copies.get(key)?.etag === etag) state.copies.delete(key);
        };
        // The parser made for this attempt, if its answer was a list: it knows the body's paging signs and the survey.
        const made: { parser?: ListStreamParser<T> } = {};
        const fields = what === 'clients' ? CLIENT_FIELDS : REQUEST_FIELDS;
        const listParser = () => (made.parser = new ListStreamParser(what, toRecord, { fields, survey }));
        const onStatus = survey ? undefined : dropSuperseded;
        const answer = await this.http.exchange({ method: 'GET', path, deadline, signal, headers: conditional, listParser, onStatus });
        this.logger.debug(`GET ${path} → ${answer.status} in ${Date.now() - started} ms (attempt ${attempt + 1})`);
        const copy = asked && answer.status === 304 ? state.copies.get(key) : undefined;
        if (copy && copy.etag === etag) return { records: copy.records as T[], revalidated: true, paging: copy.paging };
        if (answer.records) {
          const newTag = header(answer.headers, 'etag');
          const lastModified = header(answer.headers, 'last-modified');
          const paging = made.parser?.paging ?? linkPaging(answer.headers.link);
          if (state.generation === generation && !survey) {
            if (newTag || lastModified) state.copies.set(key, { etag: newTag, lastModified, records: answer.records, paging });
            else state.copies.delete(key);
          }
          const surveyed = made.parser?.surveyed;
          const result: ListResult<T> = { records: answer.records, revalidated: false, paging };
          if (surveyed) result.survey = surveyOf(surveyed, this.redact);
          return result;
        }
        if (answer.status === 304) {
          // A 304 to a call without validators (or whose copy was dropped meanwhile): ask again, unconditionally.
          if (!survey) state.copies.delete(key);
          failure = new BadResponseError(`The service answered 304 (not modified) to ${path} without being asked.`, { status: 304 });
          if (attempt >= maxRetries) throw failure;
          continue;
        }
        failure = this.http.statusError(answer, 'GET', path);
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
}
