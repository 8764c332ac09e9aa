/** Fault injection for the sandbox: the faults, the rules that hold them per route, and answers under a fault. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { constants as zlibConstants, crc32, deflateRawSync } from 'node:zlib';
import { drained, type Answer, type Encoding, type LoggedCall, type Problem } from './answer.js';

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
  | { kind: 'huge'; bytes: number; declareLength?: boolean }
  /** The real answer, gzipped (`Content-Encoding: gzip`) even when the request did not ask for it. */
  | { kind: 'gzipUnasked' }
  /**
   * A compression bomb: a small gzip body (about bytes/670 on the wire, built in milliseconds) that expands to exactly
   * `bytes` of valid JSON, `{"data":[{"a":0},{"a":0},…]}`, for testing a decompressed-size cap.
   */
  | { kind: 'bomb'; bytes: number }
  /**
   * Answers that echo what they were sent: the Authorization header's value and the request body.
   * With `status`: that error status, echoing in `error.message` and `error.details`
   * (`{ field: 'authorization' | 'body', message }`). Without: the real answer, echoing — an error's
   * message and details as above, a created record (`data`) and every listed record with extra
   * fields `authorization` and `echo` (the body as received).
   */
  | { kind: 'echo'; status?: number }
  /** A redirect to `location` (answered without following anything; nothing is created). */
  | { kind: 'redirect'; status: 301 | 302 | 303 | 307 | 308; location: string };

export type Route = 'GET /api/v1/clients' | 'GET /api/v1/requests' | 'POST /api/v1/requests' | '*';

export interface InjectOptions {
  /** How many calls the fault applies to (default: all until cleared). */
  times?: number;
  /** Apply after the call was handled (a POST creates the request, then the answer fails). */
  after?: boolean;
}

interface Rule {
  route: Route;
  fault: Fault;
  remaining: number;
  after: boolean;
}

const REPLACING = new Set<Fault['kind']>(['status', 'html', 'reset', 'raw', 'huge', 'bomb', 'redirect']);
const DELIVERY = new Set<Fault['kind']>(['trickle', 'resetMidBody', 'truncated']);

/** What fault injection needs of the faithful service: its real answer, the way it writes one, and its refusals' shape. */
export interface FaithfulService {
  route(req: IncomingMessage, path: string, body: string | null): Answer;
  deliver(req: IncomingMessage, res: ServerResponse, answer: Answer, entry: LoggedCall, force?: Encoding): Promise<void>;
  refuse(status: number, code: string, message: string, problems?: Problem[]): Answer;
}

/** The faults injected into a sandbox, taken per call, and how a call is answered under one. */
export class FaultInjector {
  private readonly rules: Rule[] = [];
  private readonly bombs = new Map<number, { parts: Buffer[]; length: number }>();

  constructor(private readonly service: FaithfulService) {}

  inject(route: Route, fault: Fault, options: InjectOptions = {}): void {
    this.rules.push({ route, fault, remaining: options.times ?? Number.POSITIVE_INFINITY, after: options.after ?? false });
  }

  clear(): void {
    this.rules.length = 0;
  }

  /** The fault this call meets (the first rule for its route with calls left), counted as used. */
  take(route: Route): Rule | undefined {
    const rule = this.rules.find((r) => (r.route === route || r.route === '*') && r.remaining > 0);
    if (rule) rule.remaining--;
    return rule;
  }

  /** Answers a call: the service's real answer, or the fault's before, instead of or after it. */
  async answer(rule: Rule | undefined, req: IncomingMessage, res: ServerResponse, path: string, body: string | null, entry: LoggedCall): Promise<void> {
    const fault = rule?.fault;
    const after = rule?.after ?? false;
    if (fault?.kind === 'latency') {
      // Wait before handling (the client sees slow headers) or after (a POST is created, then the answer is late).
      if (!after) await sleep(fault.ms);
      const answer = this.service.route(req, path, body);
      entry.status = answer.status;
      if (after) await sleep(fault.ms);
      return this.service.deliver(req, res, answer, entry);
    }
    if (fault?.kind === 'echo') {
      const authorization = req.headers.authorization ?? '';
      const real = fault.status === undefined || after ? this.service.route(req, path, body) : undefined;
      const answer = fault.status !== undefined ? this.echoError(fault.status, authorization, body) : this.echoInto(real!, authorization, body);
      entry.status = answer.status;
      return this.service.deliver(req, res, answer, entry);
    }
    if (fault?.kind === 'gzipUnasked') {
      const answer = this.service.route(req, path, body);
      entry.status = answer.status;
      return this.service.deliver(req, res, answer, entry, 'gzip');
    }
    if (fault && !after && REPLACING.has(fault.kind)) return this.deliverFault(req, res, fault, entry);
    const answer = this.service.route(req, path, body);
    entry.status = answer.status;
    if (fault && (after || DELIVERY.has(fault.kind))) return this.deliverFault(req, res, fault, entry, answer);
    return this.service.deliver(req, res, answer, entry);
  }

  /** An error answer that echoes the Authorization header and the body it was sent. */
  private echoError(status: number, authorization: string, body: string | null): Answer {
    const got = `got ${authorization || '(no Authorization header)'} and a body of ${Buffer.byteLength(body ?? '')} bytes`;
    return this.service.refuse(status, 'echo', `Request refused: ${got}.`, echoed(authorization, body));
  }

  /** The real answer, echoing what was sent into its refusal, its created record or its listed records. */
  private echoInto(answer: Answer, authorization: string, body: string | null): Answer {
    const refused = answer.problem;
    if (refused) {
      const again = this.service.refuse(answer.status, refused.code, `${refused.message} (got ${authorization || 'no Authorization header'})`, [
        ...(refused.details ?? []),
        ...echoed(authorization, body),
      ]);
      return { ...again, headers: { ...answer.headers, ...again.headers } };
    }
    if (answer.body === '') return answer;
    const value = JSON.parse(answer.body) as Record<string, unknown>;
    const extra = { authorization, echo: body ?? '' };
    // The record sits where the service puts it: listed under data, or created under data, request, result or bare.
    const at = ['data', 'request', 'result'].find((k) => value[k] && typeof value[k] === 'object');
    const inner = at === undefined ? undefined : value[at];
    if (Array.isArray(inner)) value[at!] = inner.map((r: Record<string, unknown>) => ({ ...r, ...extra }));
    else if (inner) value[at!] = { ...inner, ...extra };
    else Object.assign(value, extra);
    return { ...answer, body: JSON.stringify(value), list: undefined };
  }

  /** The bomb's gzip body, built once per size from one compressed block repeated. */
  private bomb(bytes: number): { parts: Buffer[]; length: number } {
    const known = this.bombs.get(bytes);
    if (known) return known;
    const made = gzipBomb(bytes);
    this.bombs.set(bytes, made);
    return made;
  }

  /** A fault's answer in place of the real one, or the real one (`answer`) spoilt on the wire. */
  private async deliverFault(
    req: IncomingMessage,
    res: ServerResponse,
    fault: Exclude<Fault, { kind: 'latency' | 'echo' | 'gzipUnasked' }>,
    entry: LoggedCall,
    answer?: Answer,
  ): Promise<void> {
    const real = answer?.body ?? '{"data":[]}';
    switch (fault.kind) {
      case 'status':
      case 'html':
      case 'redirect':
      case 'raw': {
        const replaced = this.replacement(fault);
        entry.status = replaced.status;
        return this.service.deliver(req, res, replaced, entry);
      }
      case 'reset':
        res.socket?.destroy();
        return;
      case 'resetMidBody':
        return resetMidBody(res, answer?.status ?? 200, real);
      case 'truncated': {
        const half = real.slice(0, Math.max(1, Math.floor(real.length / 2)));
        return this.service.deliver(req, res, { status: answer?.status ?? 200, body: half }, entry);
      }
      case 'trickle':
        return trickle(res, answer?.status ?? 200, real, fault);
      case 'huge':
        entry.status = 200;
        return writeHuge(res, fault, entry);
      case 'bomb':
        entry.status = 200;
        entry.contentEncoding = 'gzip';
        return writeParts(res, this.bomb(fault.bytes), entry);
    }
  }

  /** The answer a replacing fault gives instead of the real one, written as the service writes any answer. */
  private replacement(fault: Extract<Fault, { kind: 'status' | 'html' | 'redirect' | 'raw' }>): Answer {
    switch (fault.kind) {
      case 'status': {
        // Without a body of its own, the service's refusal in its own shape.
        const refused = fault.body === undefined ? this.service.refuse(fault.status, 'injected', `Injected ${fault.status}.`) : undefined;
        return {
          status: fault.status,
          body: refused ? refused.body : typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body),
          headers: { ...refused?.headers, ...fault.headers },
        };
      }
      case 'html':
        return {
          status: fault.status,
          body: `<!DOCTYPE html><html><head><title>${fault.status} Error</title></head><body><h1>${fault.status}</h1><p>upstream proxy error</p>${'<div>padding</div>'.repeat(200)}</body></html>`,
          headers: { 'content-type': 'text/html; charset=utf-8' },
        };
      case 'redirect':
        return {
          status: fault.status,
          body: `<html><head><title>${fault.status}</title></head><body>Moved: <a href="${fault.location}">here</a></body></html>`,
          headers: { 'content-type': 'text/html; charset=utf-8', location: fault.location },
        };
      case 'raw':
        return { status: fault.status ?? 200, body: fault.body, headers: { 'content-type': fault.contentType ?? 'application/json' } };
    }
  }
}

/** Headers and half the body, then the connection closed under it. */
async function resetMidBody(res: ServerResponse, status: number, real: string): Promise<void> {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(real)) });
  res.write(real.slice(0, Math.max(1, Math.floor(real.length / 2))));
  await sleep(20);
  res.socket?.destroy();
}

/** The real body a few bytes at a time, until it is all written or the connection is gone. */
async function trickle(res: ServerResponse, status: number, real: string, fault: Extract<Fault, { kind: 'trickle' }>): Promise<void> {
  res.writeHead(status, { 'content-type': 'application/json' });
  const step = fault.chunkBytes ?? 16;
  for (let i = 0; i < real.length && !res.destroyed; i += step) {
    res.write(real.slice(i, i + step));
    await sleep(fault.intervalMs);
  }
  res.end();
}

/** `{"data":[` and spaces up to the size asked, streamed with backpressure, the bytes written kept in the call log. */
async function writeHuge(res: ServerResponse, fault: Extract<Fault, { kind: 'huge' }>, entry: LoggedCall): Promise<void> {
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
}

/** A gzip body already made (the bomb), written part by part with backpressure, the bytes written kept in the call log. */
async function writeParts(res: ServerResponse, { parts, length }: { parts: Buffer[]; length: number }, entry: LoggedCall): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(length) });
  let sent = 0;
  for (const part of parts) {
    if (res.destroyed) break;
    const ok = res.write(part);
    sent += part.length;
    entry.bytesWritten = sent;
    if (!ok) await drained(res);
  }
  res.end();
}

/** What an echoing refusal adds to its details: the Authorization header and the body, as received. */
function echoed(authorization: string, body: string | null): Problem[] {
  return [
    { path: ['authorization'], message: authorization, in: 'header' },
    { path: ['body'], message: body ?? '' },
  ];
}

/**
 * A gzip member whose deflate stream is a few independently compressed segments, the middle one
 * repeated: tiny to build and to send, it inflates to exactly `bytes` bytes of valid JSON.
 */
function gzipBomb(bytes: number): { parts: Buffer[]; length: number } {
  const TAIL = '{"a":0}]}';
  const HEAD = '{"data":[';
  const UNIT = '{"a":0},';
  const total = Math.max(bytes, HEAD.length + TAIL.length);
  const middle = total - HEAD.length - TAIL.length;
  const pad = middle % UNIT.length;
  const units = (middle - pad) / UNIT.length;
  const BLOCK_UNITS = 128 * 1024; // 1 MiB of JSON per repeated block
  const segment = (text: string) => deflateRawSync(Buffer.from(text), { level: 9, finishFlush: zlibConstants.Z_FULL_FLUSH });
  const head = Buffer.from(HEAD + ' '.repeat(pad));
  const block = Buffer.from(UNIT.repeat(Math.min(BLOCK_UNITS, units)));
  const rest = Buffer.from(UNIT.repeat(units % BLOCK_UNITS));
  const full = Math.floor(units / BLOCK_UNITS);
  const parts: Buffer[] = [Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]), segment(head.toString())];
  let crc = crc32(head);
  if (full > 0) {
    const compressed = segment(block.toString());
    for (let i = 0; i < full; i++) {
      parts.push(compressed);
      crc = crc32(block, crc);
    }
  }
  if (rest.length > 0) {
    parts.push(segment(rest.toString()));
    crc = crc32(rest, crc);
  }
  parts.push(deflateRawSync(Buffer.from(TAIL), { level: 9 }));
  crc = crc32(TAIL, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(total % 2 ** 32, 4);
  parts.push(trailer);
  return { parts, length: parts.reduce((n, p) => n + p.length, 0) };
}
