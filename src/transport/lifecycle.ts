import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';

/**
 * Team mode's lifecycle: bounds on slow and idle connections, what is in flight, and stopping (no new
 * connections, requests in flight finish, open connections used up with Connection: close, then closed).
 */

/**
 * How long a connection may be idle or slow before it is closed (README, team mode). A connection
 * that sends nothing is closed after `firstByteMs`; one whose headers are not complete after
 * `headersMs` gets 408; one whose request (headers and body) is not complete after `requestMs` gets
 * 408; an idle keep-alive connection is closed after `keepAliveMs` (longer than a proxy's 60 s, so
 * the proxy closes first). Expiry is checked every `checkMs`.
 */
export interface ConnectionTimeouts {
  firstByteMs: number;
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  checkMs: number;
}

export const CONNECTION_TIMEOUTS: ConnectionTimeouts = { firstByteMs: 10_000, headersMs: 10_000, requestMs: 30_000, keepAliveMs: 65_000, checkMs: 1_000 };

/**
 * Slow and idle connections end within CONNECTION_TIMEOUTS: Node bounds headers, whole requests and
 * keep-alive itself, but not a connection that never sends a byte, so that one gets a socket timer
 * until its first request arrives.
 */
export function boundConnections(server: Server, timeouts: ConnectionTimeouts): void {
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  const waitingFirst = new WeakSet<Socket>();
  server.on('connection', (socket: Socket) => {
    waitingFirst.add(socket);
    // Node's server destroys a socket whose timer fires (it has no 'timeout' listener of its own).
    socket.setTimeout(timeouts.firstByteMs);
  });
  server.on('request', (req: IncomingMessage) => {
    if (waitingFirst.delete(req.socket)) req.socket.setTimeout(0);
  });
}

/** While draining: how long without a new request before open connections are closed. */
const QUIET_MS = 250;

/** Requests in flight and open connections of one HTTP server, and the way to stop it gently. */
export class Lifecycle {
  private readonly active = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private lastRequestAt = 0;
  private listener: NetServer | undefined;
  /** Stopping: no new connections; every answer says Connection: close. */
  draining = false;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /**
   * Listens on a socket of its own and hands each connection to the HTTP server (its documented
   * 'connection' injection), so that stopping closes the listener alone: the HTTP server's close()
   * would also close its idle keep-alive connections, resetting a request a proxy is sending on one.
   */
  async listen(port: number, host: string): Promise<AddressInfo> {
    const listener = createNetServer((socket) => this.server.emit('connection', socket));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, host, () => resolve());
    });
    this.listener = listener;
    // The HTTP server starts its connection bookkeeping (header, request and keep-alive timeouts) on 'listening'.
    this.server.emit('listening');
    return listener.address() as AddressInfo;
  }

  /**
   * A request arrived: in flight until its response closes. While draining, every answer says
   * Connection: close, so a proxy stops reusing connections here without a race: set here for a
   * request that arrives while draining, by drain() for one whose answer has not begun, and by
   * `closing` for the SDK's own answers (which name Connection themselves).
   */
  track(res: ServerResponse): void {
    this.active.add(res);
    this.lastRequestAt = Date.now();
    if (this.draining) res.setHeader('Connection', 'close');
    res.on('close', () => this.active.delete(res));
  }

  /** A web Response about to be written: while draining, the same answer saying Connection: close. */
  closing(response: Response): Response {
    if (!this.draining) return response;
    const headers = new Headers(response.headers);
    headers.set('Connection', 'close');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }

  /** Not waited for when stopping (a 2026 client's subscriptions/listen stream: it listens again elsewhere). */
  release(res: ServerResponse): void {
    this.active.delete(res);
  }

  get inflight(): number {
    return this.active.size;
  }

  /** Stops accepting and waits (at most `drainMs`) until nothing is in flight and nothing new has come for a moment. True when all finished. */
  async drain(drainMs: number): Promise<boolean> {
    if (!this.draining) {
      this.draining = true;
      // Stop listening, but keep open connections: a request already on its way over one is
      // served (with Connection: close), rather than reset under a proxy that cannot retry a POST.
      this.listener?.close();
      for (const res of this.active) if (!res.headersSent) res.setHeader('Connection', 'close');
    }
    // A proxy's idle connections here are used up (each answered with Connection: close) before they are closed.
    const deadline = Date.now() + drainMs;
    while (Date.now() < deadline && (this.active.size > 0 || Date.now() - this.lastRequestAt < QUIET_MS)) {
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.active.size === 0;
  }

  /** Closes every connection still open. */
  closeConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }
}
