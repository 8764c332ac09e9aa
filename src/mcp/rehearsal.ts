import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import { parseJSONRPCMessage, type JSONRPCMessage, type Server, type Transport } from '@modelcontextprotocol/server';
import { CLIENTS as CLIENTS_PATH, REQUESTS as REQUESTS_PATH } from '../api/exchange.js';
import { loadUndici, type Undici } from '../api/undici.js';
import { loadConfig, type Config, type SettingsReading } from '../config.js';
import { silentLogger } from '../log.js';
import { createServer, type ServerOptions } from './server.js';

/**
 * A rehearsal of the first list call, in the idle time after `initialize`: a private server of this
 * process (built by createServer from the same settings) answers `list_requests` over an in-memory
 * transport, and its API client reads made-up lists through undici (its request API, an Agent, its
 * pool and client, llhttp) from connections that never leave the process (MemorySocket). So the code
 * the first real call runs (the SDK's message checks, the tool call, the HTTP client, the list parser,
 * the records, the list indexes, the page, the output check and the seal) has been run, compiled and
 * optimised by V8 before that call arrives, and llhttp's WebAssembly is compiled.
 *
 * Invariants: nothing reaches the service or the network (the Agent's only connector makes a
 * MemorySocket, which answers every request itself); nothing is written to stdout or stderr (the
 * private server has its own transport and a silent logger); no answer of the real server changes (the
 * private server has its own API client, list copies and pool, and every table the tools keep is keyed
 * by the very list or answer it was made from). The rehearsal runs a step at a time (a body chunk, or
 * the work of one answer) with the event loop free between steps; a step taken while `busy()` says real
 * work is waiting or under way pauses it until `idle()` resolves, so it holds up a message by at most one
 * step. A host's listing messages right after `initialize` pause it; they do not end it. It gives up for
 * good once its pauses add up to MAX_PAUSED_MS (so constant traffic cannot keep it alive), once `moot()`
 * says a real tool call has been answered (that call ran the code), or at the first busy step when there
 * is no `idle()` to wait on.
 */

/** Made-up requests and clients per rehearsed list call, and how many calls (each on lists of its own: V8 optimises on the second). */
const REQUESTS = 1_500;
const CLIENTS = 150;
const ROUNDS = 2;
/** The made-up body is handed over in pieces of this size, as socket reads come. */
const CHUNK = 64 * 1024;
/** Time spent paused for real work, in all, after which the rehearsal gives up. */
const MAX_PAUSED_MS = 5_000;

interface RehearsalOptions {
  /** True while real work is waiting or under way: the rehearsal pauses at its next step. */
  busy: () => boolean;
  /** Resolves once no real work waits or runs: a paused rehearsal goes on then. Without it, the first busy step stops it. */
  idle?: () => Promise<void>;
  /** Time paused, in all, after which it gives up (MAX_PAUSED_MS unless a test says otherwise). */
  maxPausedMs?: number;
  /** True once the rehearsal has nothing left to give (a real tool call has been answered): it stops at its next step. */
  moot?: () => boolean;
  /** Passed to the private server (the process's once-only sending state, so it makes none of its own). */
  sending?: ServerOptions['sending'];
}

/** How a rehearsal ended: the private calls answered without error, how often real work paused it, and whether it gave up first. */
interface Rehearsed {
  answered: number;
  paused: number;
  stopped: boolean;
}

/** Stops the rehearsal: thrown into the private call when it gives up. */
class Stopped extends Error {
  constructor() {
    super('rehearsal stopped');
  }
}

/** The next turn of the event loop, after any I/O that has come in. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const pad = (n: number) => String(n).padStart(2, '0');
const dayOf = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
};

const STATUSES = ['sent', 'in_progress', 'viewed', 'completed', 'cancelled', 'sent', 'in_progress'];
const TITLES = ['Annual tax return', 'Q3 payroll reconciliation', 'KYC identity verification', 'Bookkeeping onboarding', 'Mortgage pre-approval documents'];
const FIRST = ['Aisha', 'Sam', 'Grace', 'Liam', 'François', 'Lucía', 'Ewan', 'Mia', 'Noah', 'Zoë'];
const LAST = [
  'Müller',
  'Taylor',
  'Patel',
  "O'Brien",
  'Haddad',
  'Rossi',
  'Tanaka',
  'Nguyen',
  'Okafor',
  'Schmidt',
  'Larsen',
  'Kowalski',
  'Silva',
  'Dubois',
  'Ivanova',
];
const clientName = (i: number) => `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`;

/** A made-up id shaped as the service's (a UUID), distinct per list (`round`) and record. */
const uuid = (round: number, i: number) => `${(round * 1e7 + i).toString(16).padStart(8, '0')}-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

/** The documented requests list, varied as a real one is: open and closed, overdue, due soon, undated, names repeated. */
function requestsBody(round: number, now: number): Buffer {
  const data = [];
  for (let i = 0; i < REQUESTS; i++) {
    const total = 1 + (i % 6);
    const status = STATUSES[i % STATUSES.length]!;
    data.push({
      id: uuid(round, i),
      title: TITLES[i % TITLES.length]!,
      status,
      dueDate: i % 9 === 4 ? null : dayOf(now + ((i % 61) - 30) * 86_400_000),
      createdAt: new Date(now - (i + 1) * 3_600_000).toISOString(),
      clientName: clientName(i % CLIENTS),
      totalItems: total,
      completedItems: status === 'completed' ? total : i % total,
    });
  }
  return Buffer.from(JSON.stringify({ data }));
}

/** The documented clients list, some with fields beyond the documented four, as services add. */
function clientsBody(round: number): Buffer {
  const data = [];
  for (let i = 0; i < CLIENTS; i++) {
    const client: Record<string, unknown> = { id: uuid(round, i), displayName: clientName(i), email: `client${i}@mail.example`, status: 'active' };
    if (i % 3 === 0) client.phone = `+1-555-${1000 + i}`;
    if (i % 5 === 0) client.tags = ['priority'];
    if (i % 7 === 0) client.metadata = { source: 'import', externalRef: `CRM-${i}` };
    data.push(client);
  }
  return Buffer.from(JSON.stringify({ data }));
}

/**
 * A connection that never leaves this process: what undici writes is read here as HTTP/1.1 requests, and each is
 * answered from `bodies` by path (status line and headers, then the body a chunk per turn of the event loop, each
 * only while nothing real is waiting), keeping the connection open for the next one as a service would.
 */
class MemorySocket extends Duplex {
  private request = '';
  private wanted: (() => void) | undefined;

  constructor(
    private readonly bodies: () => Map<string, Buffer>,
    private readonly step: () => Promise<void>,
  ) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.request += chunk.toString('latin1');
    const end = this.request.indexOf('\r\n\r\n');
    if (end >= 0) {
      const path = /^[A-Z]+ ([^ ?]*)/.exec(this.request)?.[1] ?? '';
      this.request = this.request.slice(end + 4);
      this.answer(path).catch((error: unknown) => this.destroy(error as Error));
    }
    done();
  }

  override _read(): void {
    const wanted = this.wanted;
    this.wanted = undefined;
    wanted?.();
  }

  /** Pushes `bytes`, then waits while the reader holds back. */
  private async give(bytes: Buffer): Promise<void> {
    if (!this.push(bytes)) await new Promise<void>((resolve) => (this.wanted = resolve));
  }

  private async answer(path: string): Promise<void> {
    await this.step();
    // By the list's own path (the exchange's), whatever the base URL puts before it.
    const body = [...this.bodies()].find(([list]) => path.endsWith(list))?.[1] ?? Buffer.from('{"data":[]}');
    await this.give(
      Buffer.from(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n`,
        'latin1',
      ),
    );
    for (let at = 0; at < body.length; at += CHUNK) {
      await this.step();
      if (this.destroyed) return;
      await this.give(body.subarray(at, at + CHUNK));
    }
  }
}

/** An undici Agent whose every connection is a MemorySocket: the request API, the pool, the client and llhttp run as for the service. */
function memoryAgent(Agent: Undici['Agent'], bodies: () => Map<string, Buffer>, step: () => Promise<void>): Dispatcher {
  return new Agent({
    // Connected on a later turn, as a socket is (undici writes the request only after its connector calls back).
    connect: (_options, callback) => {
      const socket = new MemorySocket(bodies, step) as unknown as Socket;
      setImmediate(() => callback(null, socket));
    },
  });
}

/**
 * The rehearsal's pace: each step waits a turn of the event loop, then goes on only once nothing real waits or runs
 * (paused until `idle()` says so, within MAX_PAUSED_MS in all), and stops for good when given up or moot.
 */
class Pace {
  paused = 0;
  stopped = false;
  private pausedMs = 0;

  constructor(private readonly options: RehearsalOptions) {}

  /** Waits for `idle()`, within what is left of MAX_PAUSED_MS; false when there is nothing to wait on or no time left. */
  private async resumed(): Promise<boolean> {
    const left = (this.options.maxPausedMs ?? MAX_PAUSED_MS) - this.pausedMs;
    if (!this.options.idle || left <= 0) return false;
    this.paused++;
    const began = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), left);
      // A pause never keeps the process alive.
      timer.unref();
    });
    try {
      return await Promise.race([this.options.idle().then(() => true as const), late]);
    } finally {
      clearTimeout(timer);
      this.pausedMs += performance.now() - began;
    }
  }

  private over(): boolean {
    return this.stopped || (this.options.moot?.() ?? false);
  }

  /** One step: the next turn of the event loop, then on once nothing real waits or runs (paused until then), or Stopped. */
  readonly step = async (): Promise<void> => {
    await nextTurn();
    while (!this.over() && this.options.busy()) {
      if (!(await this.resumed())) this.stopped = true;
      else await nextTurn();
    }
    if (this.over()) {
      this.stopped = true;
      throw new Stopped();
    }
  };
}

/**
 * A private server of `config` whose API client reads through `agent`, on a transport of its own: `ask(id)` makes one
 * `list_requests` call, checked as the stdio transport checks each line it reads, and resolves with its answer.
 */
function privateServer(config: Config, agent: Dispatcher, sending: RehearsalOptions['sending']) {
  const server = createServer(config, {
    logger: silentLogger,
    stateless: true,
    api: { sharedPool: agent, maxRetries: 0 },
    ...(sending ? { sending } : {}),
  });
  const answers = new Map<number, (message: JSONRPCMessage) => void>();
  const transport: Transport = {
    start: () => Promise.resolve(),
    send: (message) => {
      if ('id' in message && ('result' in message || 'error' in message)) answers.get(Number(message.id))?.(message);
      return Promise.resolve();
    },
    close: () => {
      transport.onclose?.();
      return Promise.resolve();
    },
  };
  return {
    connect: () => server.connect(transport),
    close: () => server.close(),
    ask(id: number): Promise<JSONRPCMessage> {
      const answer = new Promise<JSONRPCMessage>((resolve) => answers.set(id, resolve));
      transport.onmessage?.(parseJSONRPCMessage({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_requests', arguments: {} } }));
      return answer;
    },
  };
}

/**
 * Rehearses `list_requests` (ROUNDS calls, each on new made-up lists) on a private server, paused while real work
 * waits or runs; resolves when done or given up. Does nothing without a configured service (no tool would reach one).
 */
export async function rehearseFirstCall(config: Config, options: RehearsalOptions): Promise<Rehearsed> {
  if (!config.api) return { answered: 0, paused: 0, stopped: false };
  const pace = new Pace(options);
  let answered = 0;
  const result = (): Rehearsed => ({ answered, paused: pace.paused, stopped: pace.stopped });
  // undici is loaded after initialize anyway (the API client's warm-up).
  const { Agent } = await loadUndici();
  try {
    await pace.step();
  } catch {
    return result();
  }
  let bodies = new Map<string, Buffer>();
  const agent = memoryAgent(Agent, () => bodies, pace.step);
  const server = privateServer(config, agent, options.sending);
  try {
    await server.connect();
    for (let round = 1; round <= ROUNDS; round++) {
      await pace.step();
      const now = Date.now();
      bodies = new Map([
        [REQUESTS_PATH, requestsBody(round, now)],
        [CLIENTS_PATH, clientsBody(round)],
      ]);
      await pace.step();
      const message = await server.ask(round);
      if ('result' in message && !(message.result as { isError?: boolean }).isError) answered++;
    }
  } catch (error) {
    if (!(error instanceof Stopped)) throw error;
  } finally {
    await server.close();
    await agent.destroy();
  }
  return result();
}

/**
 * `server`, which rehearses the first list call (rehearseFirstCall) after the client's `initialized`, once `idle()`
 * resolves (the messages sent with it answered), pausing for the messages that come after (a host's listings) until
 * `idle()` resolves again. Its own handler for `initialized` runs first, as before.
 */
export function rehearsingAfterInitialize(
  server: Server,
  config: Config,
  options: RehearsalOptions & { idle: () => Promise<void>; onError?: (error: Error) => void },
): Server {
  const initialized = server.oninitialized;
  let started = false;
  server.oninitialized = () => {
    initialized?.();
    if (started) return;
    started = true;
    void options
      .idle()
      .then(() => rehearseFirstCall(config, options))
      .catch((error: unknown) => options.onError?.(error as Error));
  };
  return server;
}

/** While a team-mode rehearsal is paused: how often it looks whether the requests in flight have finished. */
const TEAM_IDLE_POLL_MS = 10;

/**
 * Team mode, once listening: the first list call is rehearsed (rehearseFirstCall) while no request is in flight,
 * and pauses while one is (looked at every TEAM_IDLE_POLL_MS, only while paused). The process holds no key, so the
 * private server gets a made-up one, and an address that is never connected to (its API client's only connections
 * are the rehearsal's own, in memory). Its private server has no access log, audit or metrics: it is built without
 * them, and its calls never pass through the HTTP routes.
 */
export function rehearseTeamMode(reading: SettingsReading, busy: () => boolean): void {
  const idle = () =>
    new Promise<void>((resolve) => {
      const look = () => (busy() ? setTimeout(look, TEAM_IDLE_POLL_MS).unref() : resolve());
      look();
    });
  setImmediate(() => {
    // Nothing here may stop a start that has succeeded: a rehearsal that cannot run is skipped.
    try {
      const env = { ...reading.env, DOCREQ_API_KEY: `rehearsal-${randomUUID()}`, DOCREQ_API_KEY_FILE: undefined, DOCREQ_BASE_URL: 'http://127.0.0.1' };
      void rehearseFirstCall(loadConfig(reading.flags, env), { busy, idle }).catch(() => undefined);
    } catch {
      // skipped
    }
  });
}
