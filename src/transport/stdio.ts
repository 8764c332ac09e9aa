import type { Readable, Writable } from 'node:stream';
import { parseJSONRPCMessage, type Transport, type JSONRPCMessage } from '@modelcontextprotocol/server';

/**
 * MCP over stdio, one JSON-RPC message per line, replacing the SDK's StdioServerTransport for three
 * things it does not do (and nothing else):
 * - a line over the cap is answered with a JSON-RPC error and skipped; the server keeps serving
 *   (the SDK's transport closes, and the process exits silently);
 * - an invalid message that carries an id is answered with a JSON-RPC error (the SDK drops it);
 * - when stdout is not drained, stdin is paused until it is, so memory stays bounded however many
 *   calls a host sends while it is not reading.
 */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** Pending output (bytes) above which reading stops until the host drains stdout. */
const HIGH_WATER = 1024 * 1024;

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  maxLineBytes?: number;
}

export class LineStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  private readonly stdin: Readable;
  private readonly stdout: Writable;
  private readonly maxLineBytes: number;
  private pieces: Buffer[] = [];
  private pending = 0;
  /** Bytes of the current line dropped because it is over the cap (until its newline). */
  private skipping = false;
  private closed = false;

  constructor(options: StdioOptions = {}) {
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  }

  private readonly onData = (chunk: Buffer) => {
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
  };

  private readonly onError = (error: Error) => this.onerror?.(error);
  private readonly onDrain = () => {
    if (!this.closed) this.stdin.resume();
  };

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
    let message: JSONRPCMessage | undefined;
    try {
      message = parseJSONRPCMessage(raw);
    } catch {
      message = undefined;
    }
    if (message) {
      this.onmessage?.(message);
      return;
    }
    const id = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as { id?: unknown }).id : undefined;
    // A message without a usable id is a notification (or junk): JSON-RPC gives it no answer.
    if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) {
      this.reply(id, INVALID_REQUEST, 'Invalid Request: not a valid JSON-RPC 2.0 message.');
    }
  }

  private reply(id: string | number | null, code: number, message: string): void {
    void this.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n');
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    const ok = this.stdout.write(text);
    // Backpressure: stop taking new calls until the host reads what we wrote.
    if (!ok || this.stdout.writableLength > HIGH_WATER) this.stdin.pause();
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(JSON.stringify(message) + '\n');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    this.stdout.off('drain', this.onDrain);
    this.stdin.pause();
    this.pieces = [];
    this.onclose?.();
    return Promise.resolve();
  }
}
