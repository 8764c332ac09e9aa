import type { Readable, Writable } from 'node:stream';
import { parseJSONRPCMessage, type Transport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { nestsDeeper, requestId, TOO_DEEP } from './limits.js';

/**
 * MCP over stdio, one JSON-RPC message per line, replacing the SDK's StdioServerTransport for three
 * things it does not do (and nothing else):
 * - a line over the cap is answered with a JSON-RPC error and skipped; the server keeps serving
 *   (the SDK's transport closes, and the process exits silently);
 * - an invalid message that carries an id is answered with a JSON-RPC error (the SDK drops it);
 * - memory stays bounded however many calls a host sends while it is not reading stdout: requests
 *   are dispatched to the server only while fewer than `maxInFlight` are unanswered and the output
 *   not yet taken by the host is under `maxPendingOutput` bytes; the rest wait in order, and stdin
 *   is paused while any wait (so at most one chunk of read-ahead is held). Reading and dispatching
 *   resume when answers go out and stdout drains.
 */
const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** Pending output (bytes) above which no new request is dispatched until the host drains stdout. */
const MAX_PENDING_OUTPUT = 1024 * 1024;
/** Requests dispatched and not yet answered, at most. */
const MAX_IN_FLIGHT = 16;

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  maxLineBytes?: number;
  maxInFlight?: number;
  maxPendingOutput?: number;
}

type RequestId = string | number;

function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } {
  return 'method' in message && 'id' in message;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return 'id' in message && !('method' in message);
}

export class LineStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  private readonly stdin: Readable;
  private readonly stdout: Writable;
  private readonly maxLineBytes: number;
  private readonly maxInFlight: number;
  private readonly maxPendingOutput: number;
  /** Requests read and not yet dispatched, in order. */
  private readonly waiting: JSONRPCMessage[] = [];
  /** Requests dispatched and not yet answered, by id (a count: a careless host may reuse an id). */
  private readonly inFlight = new Map<RequestId, number>();
  private inFlightCount = 0;
  private pieces: Buffer[] = [];
  private pending = 0;
  /** Bytes of the current line dropped because it is over the cap (until its newline). */
  private skipping = false;
  private closed = false;
  /** Called once nothing is busy (see whenIdle). */
  private idleWaiters: (() => void)[] = [];

  constructor(options: StdioOptions = {}) {
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    this.maxPendingOutput = options.maxPendingOutput ?? MAX_PENDING_OUTPUT;
  }

  /** Requests waiting to be dispatched and requests dispatched but unanswered (for tests and logs). */
  get load(): { waiting: number; inFlight: number; pendingOutput: number } {
    return { waiting: this.waiting.length, inFlight: this.inFlightCount, pendingOutput: this.stdout.writableLength };
  }

  /** True while a request waits, is unanswered, or is being read (part of its line has come). */
  get busy(): boolean {
    return this.waiting.length > 0 || this.inFlightCount > 0 || this.pending > 0 || this.skipping;
  }

  /** Resolves once not `busy`: at once when it is not. Never resolves once closed. */
  whenIdle(): Promise<void> {
    if (this.closed) return new Promise(() => undefined);
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves the whenIdle waiters once not busy: after an answer, and after a read (a notification, junk, a line's end). */
  private settled(): void {
    if (!this.idleWaiters.length || this.busy) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private full(): boolean {
    return this.inFlightCount >= this.maxInFlight || this.stdout.writableLength > this.maxPendingOutput;
  }

  /** Hands waiting requests to the server while there is room; pauses stdin while any wait. */
  private pump(): void {
    while (!this.closed && this.waiting.length && !this.full()) this.dispatch(this.waiting.shift()!);
    if (this.closed) return;
    if (this.waiting.length || this.full()) this.stdin.pause();
    else this.stdin.resume();
  }

  private dispatch(message: JSONRPCMessage): void {
    if (isRequest(message)) {
      this.inFlight.set(message.id, (this.inFlight.get(message.id) ?? 0) + 1);
      this.inFlightCount++;
    }
    this.onmessage?.(message);
  }

  private answered(id: RequestId): void {
    const n = this.inFlight.get(id);
    if (n === undefined) return;
    if (n > 1) this.inFlight.set(id, n - 1);
    else this.inFlight.delete(id);
    this.inFlightCount--;
  }

  private readonly onData = (chunk: Buffer) => {
    this.read(chunk);
    this.settled();
  };

  private read(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.skipping) {
        if (this.pending + (end - start) > this.maxLineBytes) {
          this.pieces = [];
          this.pending = 0;
          this.skipping = true;
        } else if (end > start) {
          this.pieces.push(chunk.subarray(start, end));
          this.pending += end - start;
        }
      }
      if (nl === -1) return;
      if (this.skipping) {
        this.skipping = false;
        this.reply(null, PARSE_ERROR, `Message too long: a line over ${this.maxLineBytes} bytes was skipped.`);
      } else {
        const line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.pending);
        this.pieces = [];
        this.pending = 0;
        this.handleLine(line.toString('utf8').replace(/\r$/, ''));
      }
      start = nl + 1;
    }
  }

  private readonly onError = (error: Error) => this.onerror?.(error);
  private readonly onDrain = () => this.pump();

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
    this.stdout.on('drain', this.onDrain);
    return Promise.resolve();
  }

  private handleLine(line: string): void {
    if (!line.trim()) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.reply(null, PARSE_ERROR, 'Parse error: the line is not JSON.');
      return;
    }
    // JSON.parse reads any depth; the recursive readers after it (the SDK's schemas, validation) would overflow.
    const deep = nestsDeeper(line);
    let message: JSONRPCMessage | undefined;
    try {
      message = deep ? undefined : parseJSONRPCMessage(raw);
    } catch {
      message = undefined;
    }
    if (message) {
      // Answers to the server's own requests (elicitation) and notifications are not new work: they
      // go through at once, so a call waiting on an answer never waits behind the bound it holds.
      if (!isRequest(message)) return this.dispatch(message);
      this.waiting.push(message);
      this.pump();
      return;
    }
    const id = requestId(raw);
    // A message without a usable id is a notification (or junk): JSON-RPC gives it no answer.
    if (id !== null) this.reply(id, INVALID_REQUEST, deep ? TOO_DEEP : 'Invalid Request: not a valid JSON-RPC 2.0 message.');
  }

  private reply(id: string | number | null, code: number, message: string): void {
    void this.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n');
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.stdout.write(text);
    // Backpressure: no new call is dispatched, and stdin is not read, until the host takes this.
    this.pump();
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (isResponse(message)) this.answered(message.id);
    const written = this.write(JSON.stringify(message) + '\n');
    this.settled();
    return written;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    this.stdout.off('drain', this.onDrain);
    this.stdin.pause();
    this.pieces = [];
    this.waiting.length = 0;
    this.idleWaiters = [];
    this.onclose?.();
    return Promise.resolve();
  }
}
