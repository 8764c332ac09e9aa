import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Answer, ListName, LoggedCall, Problem } from './answer.js';
import { applyToSeed, createdAnswer, readCreate, refusal, resolveDialect, type DIALECTS, type ResolvedDialect, type SandboxDialect } from './dialect.js';
import { IdempotencyKeys, bodyFingerprint, newRequest, planLimit } from './create.js';
import { readPostBody } from './http-rules.js';
import { ListBodies } from './list-bodies.js';
import { deliver, encode } from './delivery.js';
import { openAtService, readOurs } from './requests.js';
import { FaultInjector, type Fault, type InjectOptions, type Route } from './faults.js';
import { SANDBOX_KEYS, prng, seedFirms, uuidFrom, type SandboxFirm, type SandboxKeys, type SandboxRequest, type SeedOptions } from './seed.js';

export type { Fault, InjectOptions, Route } from './faults.js';
export type { LoggedCall } from './answer.js';
export { DIALECTS } from './dialect.js';
export type { DateForm, ErrorShape, PagingSignal, SandboxDialect } from './dialect.js';

/** An emulated network link: added before every answer and to the pace its body is written at. */
export interface SandboxLink {
  /** Delay before each answer's headers, in ms (default 0). */
  latencyMs?: number;
  /** Cap on the rate a body is written at, in bytes per second (default: unlimited). */
  bytesPerSec?: number;
}

export interface SandboxOptions extends SeedOptions {
  port?: number;
  host?: string;
  /** Requests created within the last this-many ms are not yet shown by GET /api/v1/requests (default 0). */
  listLagMs?: number;
  /** Emulated link latency: delay before each answer, in ms (default 0). */
  latencyMs?: number;
  /** Emulated link bandwidth: bodies are written in timed slices at this rate (default: unlimited). */
  bandwidthBytesPerSec?: number;
  /** How long an Idempotency-Key is remembered, per firm (default 24 hours). */
  idempotencyWindowMs?: number;
  /** Compress list answers when the request asks (default true; false: a service that never compresses). */
  compress?: boolean;
  /** A service that ignores Idempotency-Key: every POST creates (and e-mails) anew (default false). */
  ignoreIdempotencyKey?: boolean;
  /** Play another service (its field names, spellings, statuses, date forms, answers): a dialect or a preset's name (default: ours). */
  dialect?: SandboxDialect | keyof typeof DIALECTS;
}

/** What a client was e-mailed: the request as the service kept it, which is not always what was sent. */
export interface SentEmail {
  to: string;
  requestId: string;
  title: string;
  /** The due date the service kept, as given; null: none given, or dropped. */
  dueDate: string | null;
  /** How many checklist items were e-mailed (0: an empty checklist). */
  items: number;
  /** The correctness mode the service took from the body, in our spelling; null: none given or dropped (its default applies). */
  correctnessMode: string | null;
}

/**
 * The Document Request Service, in memory, on loopback: the API document plus the decisions docs/service-profile.md lists as the defaults,
 * with the plan limits a dashboard enforces, fault injection and a log of every call for tests.
 */
export class Sandbox {
  readonly keys: SandboxKeys = SANDBOX_KEYS;
  readonly firms: Map<string, SandboxFirm>;
  readonly calls: LoggedCall[] = [];
  readonly emails: SentEmail[] = [];
  /** The sandbox's clock (ms since the epoch): Idempotency-Key windows, list lag, createdAt, Last-Modified. Replace it in tests. */
  clock: () => number = () => Date.now();
  private readonly revoked = new Set<string>([SANDBOX_KEYS.revoked]);
  private readonly faults = new FaultInjector({
    route: (req, path, body) => this.route(req, path, body),
    deliver: (req, res, answer, entry, force) => deliver(req, res, answer, entry, { compress: this.compress, bytesPerSec: this.link.bytesPerSec }, force),
    refuse: (status, code, message, problems) => this.fail(status, code, message, problems),
  });
  /** Serialized lists per firm, by list and page. */
  private readonly lists: ListBodies;
  /** Calls per Authorization value, for the dialect's rate limit. */
  private readonly rateCounts = new Map<string, { count: number; since: number }>();
  /** Idempotency-Keys, scoped by firm: `${firm.id} ${key}`. */
  private readonly idempotent = new IdempotencyKeys();
  /** When each request created through the API becomes visible in the list, by the sandbox's clock (list lag). */
  private readonly visibleAt = new WeakMap<SandboxRequest, number>();
  private readonly sockets = new Set<Socket>();
  private readonly rand = prng(7);
  private server: Server | undefined;
  private baseUrl = '';
  private listLagMs: number;
  private link: Required<SandboxLink>;
  private compress: boolean;
  /** Fault switch: Idempotency-Key is ignored, as some services do. */
  ignoreIdempotencyKey: boolean;
  /** The service the sandbox plays, every default filled in (`reads: 'ours'`: no dialect was given). */
  readonly dialect: ResolvedDialect;

  constructor(private readonly options: SandboxOptions = {}) {
    this.dialect = resolveDialect(options.dialect);
    this.lists = new ListBodies(this.dialect, () => this.baseUrl);
    this.firms = this.seed(options);
    this.listLagMs = options.listLagMs ?? 0;
    this.link = { latencyMs: options.latencyMs ?? 0, bytesPerSec: options.bandwidthBytesPerSec ?? 0 };
    this.compress = options.compress ?? true;
    this.ignoreIdempotencyKey = options.ignoreIdempotencyKey ?? false;
  }

  get url(): string {
    return this.baseUrl;
  }

  /** The demo firm, as seeded. */
  get demoFirm(): SandboxFirm {
    return this.firms.get(SANDBOX_KEYS.demo)!;
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch(() => res.destroy());
    });
    server.keepAliveTimeout = 5_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    await this.pause();
  }

  /** Stops accepting connections (callers see "connection refused") until resume(). */
  async pause(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  async resume(): Promise<void> {
    const port = Number(new URL(this.baseUrl).port);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, this.options.host ?? '127.0.0.1', () => resolve());
    });
  }

  /** Replaces the demo firm's clients and requests with a fresh seed of the given sizes (benchmarks). */
  reseed(options: Pick<SeedOptions, 'clients' | 'requests'>): void {
    const fresh = this.seed({ ...this.options, ...options }).get(SANDBOX_KEYS.demo)!;
    Object.assign(this.demoFirm, { clients: fresh.clients, requests: fresh.requests });
    this.invalidateLists();
  }

  /** Forgets the calls counted towards the dialect's rate limit. */
  resetRateLimits(): void {
    this.rateCounts.clear();
  }

  /** Marks every cached list body stale, e.g. after a test changed a firm's records directly. */
  invalidateLists(): void {
    for (const firm of this.firms.values()) this.markStale(firm, 'clients', 'requests');
  }

  /**
   * Requests created from now on are shown by GET /api/v1/requests only `ms` after their creation
   * (0: at once). Each request keeps the lag that held when it was created.
   */
  setListLag(ms: number): void {
    this.listLagMs = Math.max(0, ms);
  }

  /** Emulates a link: `latencyMs` before each answer, bodies written at `bytesPerSec` (omitted: 0 / unlimited). */
  setLink(link: SandboxLink): void {
    this.link = { latencyMs: Math.max(0, link.latencyMs ?? 0), bytesPerSec: Math.max(0, link.bytesPerSec ?? 0) };
  }

  /** Whether list answers are compressed when asked (the `gzipUnasked` and `bomb` faults compress regardless). */
  setCompression(on: boolean): void {
    this.compress = on;
  }

  /** Builds and compresses (gzip and br) both lists of every firm now, so the first GET costs no more than a later one. */
  async warmLists(): Promise<void> {
    const now = this.clock();
    for (const firm of this.firms.values()) {
      for (const what of ['clients', 'requests'] as const) {
        const list = this.listBody(firm, what, now).list!;
        await Promise.all([encode(list, 'gzip'), encode(list, 'br')]);
      }
    }
  }

  /** The requests that count towards a firm's active-request limit (open ones). */
  activeRequests(key: string): number {
    return this.firms.get(key)!.requests.filter((r) => openAtService(r, this.dialect.statuses.closed)).length;
  }

  /**
   * Sets a firm's active-request limit so that exactly `room` more requests can be created before
   * the plan limit (`409 active_request_limit_reached`) stops them; returns the previous limit.
   */
  setActiveRequestRoom(key: string, room: number): number {
    const firm = this.firms.get(key)!;
    const previous = firm.activeRequestLimit;
    firm.activeRequestLimit = this.activeRequests(key) + Math.max(0, room);
    return previous;
  }

  inject(route: Route, fault: Fault, options: InjectOptions = {}): void {
    this.faults.inject(route, fault, options);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  revoke(key: string): void {
    this.revoked.add(key);
  }

  restore(key: string): void {
    this.revoked.delete(key);
  }

  callsTo(method: string, path: string): LoggedCall[] {
    return this.calls.filter((c) => c.method === method && c.path === path);
  }

  private seed(options: SeedOptions): Map<string, SandboxFirm> {
    const firms = seedFirms(options);
    applyToSeed(firms, this.dialect, (options.now ?? new Date()).getTime());
    return firms;
  }

  private markStale(firm: SandboxFirm, ...lists: ListName[]): void {
    this.lists.markStale(firm, ...lists);
  }

  /** A list's answer, as it stands at `now` (a lagging list leaves out what it does not show yet). */
  private listBody(firm: SandboxFirm, what: ListName, now: number, page = 1): Answer {
    return this.lists.answer(firm, what, page, what === 'requests' ? this.hiddenIndexes(firm, now) : [], now);
  }

  /** A refusal, in the shape of the service the sandbox plays. */
  private fail(status: number, code: string, message: string, problems?: Problem[], headers?: Record<string, string>): Answer {
    return refusal(this.dialect.errorShape, status, code, message, problems, headers);
  }

  /** The dialect's rate limit: a refusal once this Authorization value has made more calls than it allows. */
  private rateLimited(authorization: string | undefined): Answer | undefined {
    const limit = this.dialect.rateLimit;
    if (!limit) return undefined;
    const now = this.clock();
    let counted = this.rateCounts.get(authorization ?? '');
    if (!counted || (limit.windowMs !== undefined && now - counted.since >= limit.windowMs)) {
      counted = { count: 0, since: now };
      this.rateCounts.set(authorization ?? '', counted);
    }
    if (++counted.count <= limit.afterCalls) return undefined;
    return this.fail(429, limit.code ?? 'rate_limited', limit.words, undefined, { 'retry-after': '1' });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path = '/', query] = (req.url ?? '/').split('?');
    const route = `${req.method} ${path}` as Route;
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const entry: LoggedCall = {
      method: req.method ?? '',
      path,
      status: 'fault',
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      userAgent: req.headers['user-agent'],
      accept: req.headers.accept,
      contentType: req.headers['content-type'],
      acceptEncoding: header('accept-encoding'),
      ifNoneMatch: header('if-none-match'),
      ifModifiedSince: header('if-modified-since'),
    };
    if (query !== undefined) entry.query = query;
    this.calls.push(entry);
    const rule = this.faults.take(route);
    const body = req.method === 'POST' ? await readPostBody(req) : '';
    if (req.method === 'POST') entry.body = body ?? undefined;
    if (this.link.latencyMs > 0) await sleep(this.link.latencyMs);
    return this.faults.answer(rule, req, res, path, body, entry);
  }

  private route(req: IncomingMessage, path: string, body: string | null): Answer {
    const limited = this.rateLimited(req.headers.authorization);
    if (limited) return limited;
    const firm = this.authenticate(req.headers.authorization);
    const known = path === '/api/v1/clients' || path === '/api/v1/requests';
    if (!known) return this.fail(404, 'not_found', `No route for ${req.method} ${path}.`);
    if (!firm) return this.fail(401, 'unauthorized', 'The bearer key is missing, malformed, unknown or revoked.');
    if (req.method === 'GET') {
      // Only a paging service reads ?page=; ours takes no query parameters and ignores them.
      const asked = this.dialect.paging ? new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('page') : null;
      if (asked !== null && !/^[1-9]\d{0,8}$/.test(asked)) {
        return this.fail(400, 'invalid_page', 'page must be a positive whole number.', [{ path: ['page'], message: 'must be a positive whole number' }]);
      }
      const page = asked === null ? 1 : Number(asked);
      if (path === '/api/v1/clients') return this.listBody(firm, 'clients', this.clock(), page);
      return this.listBody(firm, 'requests', this.clock(), page);
    }
    if (req.method === 'POST' && path === '/api/v1/requests') return this.create(firm, body, req.headers['idempotency-key'] as string | undefined);
    return this.fail(405, 'method_not_allowed', `${req.method} is not allowed on ${path}.`);
  }

  private authenticate(header: string | undefined): SandboxFirm | undefined {
    const match = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header ?? '');
    if (!match || this.revoked.has(match[1]!)) return undefined;
    return this.firms.get(match[1]!);
  }

  /** Indexes of the requests a lagging list does not show yet (created through the API, newest first, so a prefix holds them all). */
  private hiddenIndexes(firm: SandboxFirm, now: number): number[] {
    const hidden: number[] = [];
    for (let i = 0; i < firm.requests.length; i++) {
      const at = this.visibleAt.get(firm.requests[i]!);
      if (at === undefined) break;
      if (now < at) hidden.push(i);
    }
    return hidden;
  }

  private create(firm: SandboxFirm, text: string | null, idempotencyKey: string | undefined): Answer {
    const now = this.clock();
    const scope = idempotencyKey && !this.ignoreIdempotencyKey ? `${firm.id} ${idempotencyKey}` : undefined;
    const fingerprint = bodyFingerprint(text);
    const first = scope ? this.idempotent.recall(scope, fingerprint, now, this.options.idempotencyWindowMs) : undefined;
    if (first === 'reused') {
      return this.fail(422, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request body.', [
        { path: ['Idempotency-Key'], message: 'already used with a different body', in: 'header' },
      ]);
    }
    if (first) return first;
    if (text === null) return this.fail(413, 'body_too_large', 'The request body is larger than 1 MB.');
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch {
      return this.fail(400, 'malformed_json', 'The request body is not valid JSON.');
    }
    const { kept, problems } = this.dialect.reads === 'ours' ? readOurs(input, firm) : readCreate(input, firm, this.dialect);
    if (problems.length > 0) return this.fail(422, 'validation_failed', 'The request could not be created: some fields are invalid.', problems);
    const limited = planLimit(firm, this.dialect.statuses.closed);
    if (limited) return this.fail(limited.status, limited.code, limited.message);
    const client = firm.clients.find((c) => c.id === kept.clientId)!;
    const record = newRequest(uuidFrom(this.rand), kept, client, this.dialect.statuses.rename.sent ?? 'sent', now);
    firm.requests.unshift(record);
    this.visibleAt.set(record, now + this.listLagMs);
    firm.createdThisMonth++;
    this.markStale(firm, 'requests');
    const { dueDate, items, correctnessMode } = kept;
    this.emails.push({ to: client.email, requestId: record.id, title: record.title, dueDate, items: items.length, correctnessMode });
    const answer = createdAnswer(record, this.dialect);
    if (scope) this.idempotent.remember(scope, fingerprint, answer, now);
    return answer;
  }
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = new Sandbox(options);
  await sandbox.start();
  return sandbox;
}
