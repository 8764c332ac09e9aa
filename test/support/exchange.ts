// One API exchange on its own (as a client makes it) and throwaway loopback servers, for the tests that drive src/api/exchange.ts directly.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll } from 'vitest';
import { REQUESTS, ServiceExchange, type ExchangeSettings } from '../../src/api/exchange.js';
import { ListStreamParser } from '../../src/api/list-stream.js';
import { SANDBOX_KEYS } from '../../src/sandbox/seed.js';
import { redactor } from '../../src/text/redact.js';

/**
 * What the exchange's unit files share (exchange-units, exchange-answers-units): an exchange made with the defaults
 * a client gives it (closed after the file), the calls they make, and a throwaway HTTP server on loopback.
 */

export const KEY = SANDBOX_KEYS.demo;
export const TIMEOUT_MS = 5_000;
/** The size cap of these exchanges: 1.5 MB. */
export const CAP = 1.5 * 1024 * 1024;

/** Exchanges made by `exchangeTo` (the key redacted, no proxy, the cap above), each closed after the file; `onKeyRejected` counts into `keyRejections()`. */
export function exchanges(): { exchangeTo: (baseUrl: string, options?: Partial<ExchangeSettings>) => ServiceExchange; keyRejections: () => number } {
  let rejections = 0;
  const made: ServiceExchange[] = [];
  afterAll(async () => {
    for (const x of made) await x.close();
  });
  const exchangeTo = (baseUrl: string, options: Partial<ExchangeSettings> = {}): ServiceExchange => {
    const x = new ServiceExchange({
      baseUrl,
      apiKey: KEY,
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: CAP,
      proxyEnv: {},
      ca: undefined,
      sharedPool: undefined,
      redact: redactor([KEY]),
      onKeyRejected: () => rejections++,
      ...options,
    });
    made.push(x);
    return x;
  };
  return { exchangeTo, keyRejections: () => rejections };
}

export const soon = () => Date.now() + TIMEOUT_MS;
export type More = Partial<Parameters<ServiceExchange['exchange']>[0]>;
export const get = (x: ServiceExchange, path = REQUESTS, more: More = {}) => x.exchange({ method: 'GET', path, deadline: soon(), ...more });
export const post = (x: ServiceExchange, body = '{"title":"x"}', more: More = {}) =>
  x.exchange({ method: 'POST', path: REQUESTS, deadline: soon(), body, ...more });
/** A list answer read as it streams, each element kept as it came. */
export const list = (x: ServiceExchange, more: More = {}) =>
  x.exchange<unknown>({ method: 'GET', path: REQUESTS, deadline: soon(), listParser: () => new ListStreamParser<unknown>('requests', (raw) => raw), ...more });
export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

/**
 * A throwaway HTTP server on loopback that records what it received (the handler is called once the request's body
 * is in); closed, with its connections, after the file. `connections()` counts those opened; `allClosed()` resolves
 * true once every one opened has closed, or false if that has not happened in `withinMs` (an upper bound on a wait,
 * never a measure of speed).
 */
export async function serve(
  handler: Handler,
): Promise<{ url: string; seen: Seen[]; connections: () => number; allClosed: (withinMs?: number) => Promise<boolean> }> {
  const seen: Seen[] = [];
  let opened = 0;
  let closed = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void handler(req, res, body);
    });
  });
  server.on('connection', (s: Socket) => {
    opened++;
    sockets.add(s);
    s.on('close', () => {
      closed++;
      sockets.delete(s);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  const allClosed = async (withinMs = 3_000) => {
    for (let waited = 0; closed < opened && waited < withinMs; waited += 20) await pause(20);
    return opened > 0 && closed === opened;
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, connections: () => opened, allClosed };
}

/** A server answering every call with this status, headers and body. */
export const answering = (status: number, headers: Record<string, string | string[]> = {}, body: string | Buffer = '') =>
  serve((_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  });

/** A proxy of the test's own (plain TCP): `onSocket` decides what each connection gets; `connections()` counts them. Closed after the file. */
export async function rawProxy(onSocket: (socket: Socket) => void): Promise<{ url: string; connections: () => number }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const proxy = createNetServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('error', () => undefined).on('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, connections: () => count };
}
