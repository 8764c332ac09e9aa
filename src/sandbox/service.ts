import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CORRECTNESS_MODES,
  ITEM_TYPES,
  SANDBOX_KEYS,
  isoDay,
  prng,
  seedFirms,
  uuidFrom,
  type SandboxFirm,
  type SandboxItem,
  type SandboxKeys,
  type SandboxRequest,
  type SeedOptions,
} from './seed.js';

/** Faults the sandbox can inject, per route, to test how the server copes. */
export type Fault =
  /** Wait, then answer (set longer than the client's timeout for "headers slower than the timeout"). */
  | { kind: 'latency'; ms: number }
  /** Answer this status with a JSON (or given) body instead of the real answer. */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** An HTML error page, as a proxy in front of a service would send. */
  | { kind: 'html'; status: number }
  /** Close the connection before any header. */
  | { kind: 'reset' }
  /** Send the headers and part of the real body, then close the connection. */
  | { kind: 'resetMidBody' }
  /** Send the real body a few bytes at a time. */
  | { kind: 'trickle'; intervalMs: number; chunkBytes?: number }
  /** Send half the real body, then end the response cleanly. */
  | { kind: 'truncated' }
  /** Any body at all, e.g. valid JSON of the wrong shape. */
  | { kind: 'raw'; status?: number; body: string; contentType?: string }
  /** A body of this many bytes (valid JSON), streamed. */
  | { kind: 'huge'; bytes: number; declareLength?: boolean };

export type Route = 'GET /api/v1/clients' | 'GET /api/v1/requests' | 'POST /api/v1/requests' | '*';

export interface InjectOptions {
  /** How many calls the fault applies to (default: all until cleared). */
  times?: number;
  /** Apply after the call was handled (a POST creates the request, then the answer fails). */
  after?: boolean;
}

export interface LoggedCall {
  method: string;
  path: string;
  status: number | 'fault';
  idempotencyKey: string | undefined;
  userAgent: string | undefined;
  accept: string | undefined;
  contentType: string | undefined;
  /** The body of a POST, as received. */
  body?: string;
  /** For an injected huge body: how many bytes were written before the client stopped reading. */
  bytesWritten?: number;
}

export interface SandboxOptions extends SeedOptions {
  port?: number;
  host?: string;
}

export interface SentEmail {
  to: string;
  requestId: string;
  title: string;
}

interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

interface Rule {
  route: Route;
  fault: Fault;
  remaining: number;
  after: boolean;
}

const CLOSED = new Set(['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived']);
const REPLACING = new Set<Fault['kind']>(['status', 'html', 'reset', 'raw', 'huge']);
const DELIVERY = new Set<Fault['kind']>(['trickle', 'resetMidBody', 'truncated']);
const MAX_BODY = 1024 * 1024;

const json = (status: number, value: unknown, headers?: Record<string, string>): Answer => ({ status, body: JSON.stringify(value), headers });
const failure = (status: number, code: string, message: string, details?: { field: string; message: string }[]) =>
  json(status, { error: details ? { code, message, details } : { code, message } });

function listRecord(r: SandboxRequest) {
  // The list endpoint returns the documented fields only.
  return {
    id: r.id,
    title: r.title,
    status: r.status,
    dueDate: r.dueDate,
    createdAt: r.createdAt,
    clientName: r.clientName,
    totalItems: r.totalItems,
    completedItems: r.completedItems,
  };
}

function isOpen(r: SandboxRequest): boolean {
  return !CLOSED.has(r.status.toLowerCase()) && r.completedItems < r.totalItems;
}

/**
 * The Document Request Service, in memory, on loopback: the API document plus contract section 4,
 * with the plan limits a dashboard enforces, fault injection and a log of every call for tests.
 */
export class Sandbox {
  readonly keys: SandboxKeys = SANDBOX_KEYS;
  readonly firms: Map<string, SandboxFirm>;
  readonly calls: LoggedCall[] = [];
  readonly emails: SentEmail[] = [];
  private readonly revoked = new Set<string>([SANDBOX_KEYS.revoked]);
  private readonly rules: Rule[] = [];
  private readonly bodies = new WeakMap<SandboxFirm, { clients?: string; requests?: string }>();
  private readonly idempotent = new Map<string, Answer>();
  private readonly sockets = new Set<Socket>();
  private readonly rand = prng(7);
  private server: Server | undefined;
  private baseUrl = '';

  constructor(private readonly options: SandboxOptions = {}) {
    this.firms = seedFirms(options);
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
    const fresh = seedFirms({ ...this.options, ...options }).get(SANDBOX_KEYS.demo)!;
    Object.assign(this.demoFirm, { clients: fresh.clients, requests: fresh.requests });
    this.bodies.delete(this.demoFirm);
  }

  inject(route: Route, fault: Fault, options: InjectOptions = {}): void {
    this.rules.push({ route, fault, remaining: options.times ?? Number.POSITIVE_INFINITY, after: options.after ?? false });
  }

  clearFaults(): void {
    this.rules.length = 0;
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

  private takeRule(route: Route): Rule | undefined {
    const rule = this.rules.find((r) => (r.route === route || r.route === '*') && r.remaining > 0);
    if (rule) rule.remaining--;
    return rule;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = `${req.method} ${path}` as Route;
    const entry: LoggedCall = {
      method: req.method ?? '',
      path,
      status: 'fault',
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      userAgent: req.headers['user-agent'],
      accept: req.headers.accept,
      contentType: req.headers['content-type'],
    };
    this.calls.push(entry);
    const rule = this.takeRule(route);
    const body = req.method === 'POST' ? await readBody(req) : '';
    if (req.method === 'POST') entry.body = body ?? undefined;

    const fault = rule?.fault;
    const after = rule?.after ?? false;
    if (fault?.kind === 'latency') {
      // Wait before handling (the client sees slow headers) or after (a POST is created, then the answer is late).
      if (!after) await sleep(fault.ms);
      const answer = this.route(req, path, body);
      entry.status = answer.status;
      if (after) await sleep(fault.ms);
      return send(res, answer);
    }
    if (fault && !after && REPLACING.has(fault.kind)) return this.deliverFault(res, fault, entry);
    const answer = this.route(req, path, body);
    entry.status = answer.status;
    if (fault && (after || DELIVERY.has(fault.kind))) return this.deliverFault(res, fault, entry, answer);
    send(res, answer);
  }

  private route(req: IncomingMessage, path: string, body: string | null): Answer {
    const firm = this.authenticate(req.headers.authorization);
    const known = path === '/api/v1/clients' || path === '/api/v1/requests';
    if (!known) return failure(404, 'not_found', `No route for ${req.method} ${path}.`);
    if (!firm) return failure(401, 'unauthorized', 'The bearer key is missing, malformed, unknown or revoked.');
    if (req.method === 'GET' && path === '/api/v1/clients') return this.listBody(firm, 'clients');
    if (req.method === 'GET' && path === '/api/v1/requests') return this.listBody(firm, 'requests');
    if (req.method === 'POST' && path === '/api/v1/requests') return this.create(firm, body, req.headers['idempotency-key'] as string | undefined);
    return failure(405, 'method_not_allowed', `${req.method} is not allowed on ${path}.`);
  }

  private authenticate(header: string | undefined): SandboxFirm | undefined {
    const match = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header ?? '');
    if (!match || this.revoked.has(match[1]!)) return undefined;
    return this.firms.get(match[1]!);
  }

  /** Lists are serialized once per change: large seeded firms answer at the speed of the socket. */
  private listBody(firm: SandboxFirm, what: 'clients' | 'requests'): Answer {
    const cache = this.bodies.get(firm) ?? {};
    this.bodies.set(firm, cache);
    cache[what] ??= JSON.stringify({ data: what === 'clients' ? firm.clients : firm.requests.map(listRecord) });
    return { status: 200, body: cache[what] };
  }

  private create(firm: SandboxFirm, text: string | null, idempotencyKey: string | undefined): Answer {
    if (idempotencyKey && this.idempotent.has(idempotencyKey)) return this.idempotent.get(idempotencyKey)!;
    if (text === null) return failure(413, 'body_too_large', 'The request body is larger than 1 MB.');
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch {
      return failure(400, 'malformed_json', 'The request body is not valid JSON.');
    }
    const details = validateCreate(input, firm);
    if (details.length > 0) return failure(422, 'validation_failed', 'The request could not be created: some fields are invalid.', details);
    const body = input as { clientId: string; title: string; dueDate?: string; items: Partial<SandboxItem>[]; correctnessMode?: string };
    const active = firm.requests.filter(isOpen).length;
    if (active >= firm.activeRequestLimit) {
      return failure(409, 'active_request_limit_reached', `The ${firm.plan} plan allows ${firm.activeRequestLimit} active requests and the firm has ${active}. Complete or archive requests, or upgrade the plan.`);
    }
    if (firm.createdThisMonth >= firm.monthlyRequestLimit) {
      return failure(402, 'billing_limit_reached', `The ${firm.plan} plan's monthly billing limit of ${firm.monthlyRequestLimit} requests has been reached. Upgrade the plan or wait for the next billing period.`);
    }
    const client = firm.clients.find((c) => c.id === body.clientId)!;
    const items = body.items.map((i) => ({ name: String(i.name).trim(), required: i.required ?? true, type: i.type ?? 'file' }));
    const record: SandboxRequest = {
      id: uuidFrom(this.rand),
      title: body.title.trim(),
      status: 'sent',
      dueDate: body.dueDate ?? null,
      createdAt: new Date().toISOString(),
      clientId: client.id,
      clientName: client.displayName,
      totalItems: items.length,
      completedItems: 0,
      items,
      correctnessMode: body.correctnessMode ?? 'advisory',
    };
    firm.requests.unshift(record);
    firm.createdThisMonth++;
    this.bodies.delete(firm);
    this.emails.push({ to: client.email, requestId: record.id, title: record.title });
    const answer = json(201, { data: record });
    if (idempotencyKey) this.idempotent.set(idempotencyKey, answer);
    return answer;
  }

  private async deliverFault(res: ServerResponse, fault: Exclude<Fault, { kind: 'latency' }>, entry: LoggedCall, answer?: Answer): Promise<void> {
    const real = answer?.body ?? '{"data":[]}';
    switch (fault.kind) {
      case 'status':
        entry.status = fault.status;
        return send(res, {
          status: fault.status,
          body: typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body ?? { error: { code: 'injected', message: `Injected ${fault.status}.` } }),
          headers: fault.headers,
        });
      case 'html':
        entry.status = fault.status;
        return send(res, {
          status: fault.status,
          body: `<!DOCTYPE html><html><head><title>${fault.status} Error</title></head><body><h1>${fault.status}</h1><p>upstream proxy error</p>${'<div>padding</div>'.repeat(200)}</body></html>`,
          headers: { 'content-type': 'text/html; charset=utf-8' },
        });
      case 'reset':
        res.socket?.destroy();
        return;
      case 'resetMidBody':
        res.writeHead(answer?.status ?? 200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(real)) });
        res.write(real.slice(0, Math.max(1, Math.floor(real.length / 2))));
        await sleep(20);
        res.socket?.destroy();
        return;
      case 'truncated': {
        const half = real.slice(0, Math.max(1, Math.floor(real.length / 2)));
        return send(res, { status: answer?.status ?? 200, body: half });
      }
      case 'trickle': {
        res.writeHead(answer?.status ?? 200, { 'content-type': 'application/json' });
        const step = fault.chunkBytes ?? 16;
        for (let i = 0; i < real.length && !res.destroyed; i += step) {
          res.write(real.slice(i, i + step));
          await sleep(fault.intervalMs);
        }
        res.end();
        return;
      }
      case 'raw':
        entry.status = fault.status ?? 200;
        return send(res, { status: fault.status ?? 200, body: fault.body, headers: { 'content-type': fault.contentType ?? 'application/json' } });
      case 'huge': {
        entry.status = 200;
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (fault.declareLength) headers['content-length'] = String(fault.bytes);
        res.writeHead(200, headers);
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        res.write('{"data":[');
        let sent = 9;
        while (sent < fault.bytes - 2 && !res.destroyed) {
          const n = Math.min(chunk.length, fault.bytes - 2 - sent);
          const ok = res.write(n === chunk.length ? chunk : chunk.subarray(0, n));
          sent += n;
          entry.bytesWritten = sent;
          if (!ok) await drained(res);
        }
        res.end(']}');
        return;
      }
    }
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(answer.body)), ...answer.headers });
  res.end(answer.body);
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Validation as the API document states it, with field details. */
function validateCreate(input: unknown, firm: SandboxFirm): { field: string; message: string }[] {
  const details: { field: string; message: string }[] = [];
  if (!input || typeof input !== 'object' || Array.isArray(input)) return [{ field: '', message: 'the body must be a JSON object' }];
  const b = input as Record<string, unknown>;
  if (typeof b.clientId !== 'string' || !b.clientId) details.push({ field: 'clientId', message: 'is required' });
  else if (!firm.clients.some((c) => c.id === b.clientId)) details.push({ field: 'clientId', message: 'no such client in this firm' });
  if (typeof b.title !== 'string' || !b.title.trim()) details.push({ field: 'title', message: 'is required' });
  if (b.dueDate !== undefined && b.dueDate !== null && (typeof b.dueDate !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(b.dueDate) || isoDay(Date.parse(b.dueDate)) !== b.dueDate)) {
    details.push({ field: 'dueDate', message: 'must be a date YYYY-MM-DD' });
  }
  if (b.correctnessMode !== undefined && !(CORRECTNESS_MODES as readonly unknown[]).includes(b.correctnessMode)) {
    details.push({ field: 'correctnessMode', message: `must be one of ${CORRECTNESS_MODES.join(', ')}` });
  }
  if (!Array.isArray(b.items) || b.items.length === 0) {
    details.push({ field: 'items', message: 'must be a non-empty array' });
  } else {
    b.items.forEach((raw: unknown, i) => {
      const item = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
      if (typeof item.name !== 'string' || !item.name.trim()) details.push({ field: `items[${i}].name`, message: 'must be a non-empty string' });
      if (item.required !== undefined && typeof item.required !== 'boolean') details.push({ field: `items[${i}].required`, message: 'must be a boolean' });
      if (item.type !== undefined && !(ITEM_TYPES as readonly unknown[]).includes(item.type)) {
        details.push({ field: `items[${i}].type`, message: `must be one of ${ITEM_TYPES.join(', ')}` });
      }
    });
  }
  return details;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = new Sandbox(options);
  await sandbox.start();
  return sandbox;
}
