import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, ClientCapabilities, JSONRPCRequest } from '@modelcontextprotocol/server';
import type { Dispatcher } from 'undici';
import { ApiState, type ApiClientOptions } from '../api/client.js';
import type { Auth, Identity } from '../auth/index.js';
import { secretsOf, type Config } from '../config.js';
import { createLogger } from '../log.js';
import { keptRedactor } from '../mcp/context.js';
import { createServer, type ServerOptions } from '../mcp/server.js';
import type { SendStore } from '../store/index.js';
import { VERSION } from '../version.js';
import type { accessLogger } from './access-log.js';
import { worthASession, type ClientSessions } from './client-sessions.js';
import { bearerKey, CORS_HEADERS, frontDoor, hostAllowed, isLoopbackOrigin, jsonError, readBody, summarise } from './front-door.js';
import { homePage } from './home.js';
import type { KeyFingerprinter, KeyScopeStore } from './key-scope.js';
import type { Lifecycle } from './lifecycle.js';
import { nestsDeeper, requestId, TOO_DEEP } from './limits.js';
import type { Metrics } from './metrics.js';
import { answerModernCall, answerPlainCall, isPlainToolCall, modernPlainCall, PLAIN_CALL_MAX_MS } from './plain-call.js';
import { serveDiscovery } from './server-card.js';

/**
 * Team mode's routes: every request goes down one ordered table, and the first route that answers it
 * ends it. The guards in the table refuse; a request passes them only to reach the routes below them.
 */

export const MCP_PATH = '/mcp';

/** The rate limit's answer for `calls` tool calls: the wait in ms, 0 when allowed. */
export type RateWait = (key: string, fingerprint: string, calls: number, person?: string) => Promise<number>;

/** What every request is answered with, built once by startHttpService. */
export interface Service {
  /** The configuration every request starts from (no key). */
  config: Config;
  baseUrl: string;
  api: Partial<ApiClientOptions> | undefined;
  allowedHosts: readonly string[];
  /** Compared with the Origin lower-cased (loadHttpSettings lower-cases them). */
  allowedOrigins: ReadonlySet<string>;
  /** Bound to loopback: a page on a loopback origin may call too. */
  loopbackBound: boolean;
  /** Tool calls a minute per key. */
  rateLimit: number;
  rateWait: RateWait;
  maxBody: number;
  deadlineMs: number;
  /** Sign-in was asked for (--auth oauth); `auth` is set once it is ready, after listen, and never changes after. */
  signIn: { asked: boolean; auth?: Auth | undefined };
  lifecycle: Lifecycle;
  sendStore: SendStore;
  reach: { shared: boolean; note: string };
  fingerprinter: KeyFingerprinter;
  store: KeyScopeStore;
  metrics: Metrics | undefined;
  sharedPool: Dispatcher;
  sending: NonNullable<ServerOptions['sending']>;
  write: (line: string) => void;
  accessLog: ReturnType<typeof accessLogger>;
  /** What a 2025 connection declared in its initialize, kept under its Mcp-Session-Id for every replica. */
  sessions: ClientSessions;
  /** The SDK's entry: answers with the server `req.auth` carries the way to build. */
  mcpEntry: (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>;
}

/** One request as the routes see it: its path, its access-log line, what is kept out of that line, and sign-in as the request found it. */
interface RequestScope {
  path: string;
  entry: Record<string, unknown>;
  secrets: string[];
  auth: Auth | undefined;
}

/** Answers the request, or returns false to pass it to the next route (a guard letting it through, a module whose path it is not). */
type Handler = (svc: Service, req: IncomingMessage, res: ServerResponse, scope: RequestScope) => void | boolean | Promise<void | boolean>;

interface Route {
  /** The methods it takes; any when absent. */
  methods?: readonly string[];
  /** The path it takes; any when absent. */
  path?: string;
  handler: Handler;
}

const GET_OR_HEAD = ['GET', 'HEAD'];
/** The access log's status for a request whose client closed the connection before the answer was sent whole. */
const CLIENT_CLOSED = 499;

/** In order: each guard stands in front of every route after it. */
const ROUTES: readonly Route[] = [
  // Answers any Host: load balancers and orchestrators probe by address.
  { methods: GET_OR_HEAD, path: '/healthz', handler: serveHealth },
  { handler: refuseForeignHost },
  // Says how to connect even while sign-in is starting.
  { methods: GET_OR_HEAD, path: '/', handler: serveHome },
  { handler: refuseUntilSignInReady },
  // Public, for any origin: before the Origin check.
  { handler: serveServerCard },
  { handler: serveSignIn },
  { handler: checkOrigin },
  { path: MCP_PATH, handler: serveMcp },
  { handler: serveNotFound },
];

/** The HTTP server's request listener: the access-log line when the answer ends, the front door, then the routes; a route that throws is a 500. */
export function answerRequest(svc: Service, req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now();
  const entry: Record<string, unknown> = { method: req.method, path: undefined };
  const secrets: string[] = svc.config.tokenSecret ? [svc.config.tokenSecret] : [];
  svc.lifecycle.track(res);
  // An answer the client left before it was sent whole is logged 499 (as nginx does), not the status it would have had.
  res.on('close', () => {
    const status = res.writableFinished ? res.statusCode : CLIENT_CLOSED;
    svc.accessLog({ ...entry, status, ms: Math.round((performance.now() - started) * 10) / 10 }, keptRedactor(secrets));
  });
  const refused = frontDoor(req);
  if (refused) {
    entry.refused = refused.why;
    return jsonError(res, refused.status, refused.message, { Connection: 'close' });
  }
  route(svc, req, res, entry, secrets).catch((error: unknown) => {
    entry.error = error instanceof Error ? error.message : 'failed';
    jsonError(res, 500, 'Internal error while handling the request.', {}, -32603);
  });
}

async function route(svc: Service, req: IncomingMessage, res: ServerResponse, entry: Record<string, unknown>, secrets: string[]): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  // Whatever the Authorization header holds (a key, well-formed or not) is kept out of the access log.
  secrets.push(...(req.headers.authorization ?? '').split(/\s+/).filter((part) => part.length >= 8));
  entry.path = path;
  const scope: RequestScope = { path, entry, secrets, auth: svc.signIn.auth };
  for (const { methods, path: only, handler } of ROUTES) {
    if (methods && !methods.includes(req.method ?? '')) continue;
    if (only !== undefined && only !== path) continue;
    const answered = handler(svc, req, res, scope);
    // A handler that answers at once is not awaited: the routes after a passing guard run in the same turn.
    if ((answered instanceof Promise ? await answered : answered) !== false) return;
  }
}

function serveHealth(svc: Service, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(svc.lifecycle.draining ? 503 : 200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  const storeInfo = { backend: svc.sendStore.backend, shared: svc.reach.shared, onceOnly: svc.reach.note };
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ status: svc.lifecycle.draining ? 'draining' : 'ok', version: VERSION, store: storeInfo }));
}

function refuseForeignHost(svc: Service, req: IncomingMessage, res: ServerResponse): void | false {
  if (hostAllowed(req.headers.host, svc.allowedHosts)) return false;
  return jsonError(res, 403, 'Forbidden: this Host is not accepted (DOCREQ_ALLOWED_HOSTS).');
}

function serveHome(_svc: Service, req: IncomingMessage, res: ServerResponse, { auth }: RequestScope): void {
  homePage(req, res, { mcpPath: MCP_PATH, ...(auth ? { signInResource: auth.resource } : {}) });
}

function refuseUntilSignInReady(svc: Service, _req: IncomingMessage, res: ServerResponse, { auth }: RequestScope): void | false {
  if (!svc.signIn.asked || auth) return false;
  return jsonError(res, 503, 'Starting: sign-in is not ready yet.', { 'Retry-After': '1' });
}

/** The Server Card and the catalogue pointing at it. */
function serveServerCard(svc: Service, req: IncomingMessage, res: ServerResponse, { path, auth }: RequestScope): boolean {
  return serveDiscovery(req, res, path, { mcpPath: MCP_PATH, readOnly: svc.config.readOnly, ...(auth ? { signIn: auth } : {}) });
}

/** Sign-in's own routes and pages (OAuth metadata, registration, authorize, token, revoke, the identity provider's callback). */
function serveSignIn(_svc: Service, req: IncomingMessage, res: ServerResponse, { auth }: RequestScope): boolean | Promise<boolean> {
  return auth ? auth.handle(req, res) : false;
}

/** A foreign Origin is refused; an allowed one gets the CORS headers on whatever answers after. No Origin passes as it is. */
function checkOrigin(svc: Service, req: IncomingMessage, res: ServerResponse): void | false {
  const origin = req.headers.origin;
  const originOk = origin !== undefined && (svc.allowedOrigins.has(origin.toLowerCase()) || (svc.loopbackBound && isLoopbackOrigin(origin)));
  if (origin !== undefined && !originOk) return jsonError(res, 403, 'Forbidden: this Origin is not allowed (DOCREQ_ALLOWED_ORIGINS).');
  if (originOk) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', 'Mcp-Session-Id, WWW-Authenticate, Retry-After');
  }
  return false;
}

function serveNotFound(_svc: Service, _req: IncomingMessage, res: ServerResponse): void {
  jsonError(res, 404, `Not found: MCP is served at ${MCP_PATH}.`);
}

/** Who calls: the key, its fingerprint, and the signed-in person when there is sign-in. */
interface Caller {
  key: string;
  fingerprint: string;
  actor: Identity | undefined;
}

/** The MCP endpoint: preflight; then, in this order, the caller, POST only, the message, the rate limit, and this request's own server. */
async function serveMcp(svc: Service, req: IncomingMessage, res: ServerResponse, scope: RequestScope): Promise<void> {
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { 'Access-Control-Allow-Methods': 'POST, GET, DELETE', 'Access-Control-Allow-Headers': CORS_HEADERS, 'Access-Control-Max-Age': '600' });
    return void res.end();
  }
  const caller = await identify(svc, req, res, scope);
  if (!caller) return;
  const sessionId = req.headers['mcp-session-id'];
  const owner = `${caller.fingerprint}${caller.actor ? `:${caller.actor.sub}` : ''}`;
  // A 2025 connection ends its session with DELETE; there is no standalone SSE stream (GET).
  if (req.method === 'DELETE' && typeof sessionId === 'string') {
    const ended = await svc.sessions.end(sessionId, owner).catch(() => undefined);
    if (ended === undefined) return jsonError(res, 503, 'The shared store that keeps sessions cannot be reached; try again.', { 'Retry-After': '5' });
    if (!ended) return jsonError(res, 404, SESSION_ENDED, {}, -32001);
    return void res.writeHead(204).end();
  }
  if (req.method !== 'POST') return jsonError(res, 405, 'Method not allowed: this server takes POST (and DELETE to end a session).', { Allow: 'POST, DELETE' });
  const message = await readMessage(svc, req, res, scope.entry);
  if (!message) return;
  if (!(await admitToolCalls(svc, res, caller, message.toolCalls))) return;
  const session = await sessionOf(svc, req, res, owner, message.body);
  if (!session) return;
  await answerMcp(svc, req, res, scope.entry, caller, message.body, session);
}

const SESSION_ENDED =
  "Session not found: this connection's session has ended (closed, or unused for 24 hours) or belongs to another key or person. Reconnect (initialize again); nothing was called or sent.";

/** Why a request of a session whose host cannot be known sends nothing (reads are still answered). */
const HOST_UNKNOWN = "the send store, which keeps what this connection's host can show, cannot be reached; try again shortly";

/**
 * A 2025 connection's session (./client-sessions.ts): a request naming one gets the capabilities its
 * initialize declared (an ended one is told to reconnect: 404); an initialize whose host shows pages
 * opens one (any other has nothing to keep, and its requests read nothing from the store). While the store
 * cannot be read, the host is never guessed (a host that shows pages must never be handed a token meant
 * for the model): a session's request is answered with sending disabled, and an initialize that opens one with 503.
 * undefined once answered.
 */
async function sessionOf(
  svc: Service,
  req: IncomingMessage,
  res: ServerResponse,
  owner: string,
  body: unknown,
): Promise<{ capabilities?: ClientCapabilities; unknown?: string } | undefined> {
  const sessionId = req.headers['mcp-session-id'];
  const message = body as { method?: unknown; params?: { capabilities?: ClientCapabilities } } | null;
  try {
    if (typeof sessionId === 'string') {
      const found = await svc.sessions.find(sessionId, owner);
      if (!found.ok) return void jsonError(res, 404, SESSION_ENDED, {}, -32001, requestId(body));
      res.setHeader('Mcp-Session-Id', sessionId);
      return { capabilities: found.capabilities };
    }
    const declared = message?.method === 'initialize' ? (message.params?.capabilities ?? {}) : undefined;
    if (declared && worthASession(declared)) res.setHeader('Mcp-Session-Id', await svc.sessions.open(owner, declared));
    return {};
  } catch (error) {
    svc.write(`docreq-mcp error: sessions: ${(error as Error).message}\n`);
    // Named as the store names itself (never its password), as every refusal during an outage is.
    if (typeof sessionId === 'string') return { unknown: `${HOST_UNKNOWN}: ${(error as Error).message.replace(/^Nothing was sent: /, '')}` };
    return void jsonError(res, 503, 'The shared store that keeps sessions cannot be reached; try again.', { 'Retry-After': '5' }, -32000, requestId(body));
  }
}

/** The caller, from the sign-in token or the bearer key (its fingerprint and person go to the access log); undefined once refused. */
async function identify(svc: Service, req: IncomingMessage, res: ServerResponse, { auth, entry }: RequestScope): Promise<Caller | undefined> {
  let actor: Identity | undefined;
  const who = auth && (await auth.authenticate(req));
  if (who && !who.ok) return void jsonError(res, who.status, who.message, { 'WWW-Authenticate': who.wwwAuthenticate });
  if (who?.ok) actor = who.identity;
  const bearer = who?.ok ? { key: who.apiKey } : bearerKey(req.headers.authorization);
  if ('missing' in bearer) {
    const challenge =
      bearer.missing === 'absent'
        ? 'Bearer realm="docreq-mcp"'
        : 'Bearer realm="docreq-mcp", error="invalid_request", error_description="malformed bearer token"';
    return void jsonError(res, 401, "Unauthorized: send the firm's API key as Authorization: Bearer <key>.", { 'WWW-Authenticate': challenge });
  }
  const key = bearer.key;
  const fingerprint = svc.fingerprinter.fingerprint(key);
  entry.key = fingerprint;
  if (actor) entry.user = actor.sub.slice(0, 100);
  return { key, fingerprint, actor };
}

/** The body, parsed and summarised into the access log; undefined once refused (too large, not JSON, nested too deep). */
async function readMessage(
  svc: Service,
  req: IncomingMessage,
  res: ServerResponse,
  entry: Record<string, unknown>,
): Promise<{ body: unknown; toolCalls: number } | undefined> {
  const text = await readBody(req, svc.maxBody);
  if (text === undefined) return void jsonError(res, 413, `Request body larger than ${svc.maxBody} bytes.`, { Connection: 'close' });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return void jsonError(res, 400, 'Parse error: invalid JSON.', {}, -32700);
  }
  // JSON.parse reads any depth; the recursive readers after it (the SDK's schemas, validation) would overflow.
  if (nestsDeeper(text)) return void jsonError(res, 400, TOO_DEEP, {}, -32600, requestId(body));
  const summary = summarise(body);
  if (summary.rpc.length) entry.rpc = summary.rpc.join(',');
  // A 2026 client's subscriptions/listen stream stays open while it listens: it does not hold a drain
  // up (it ends with the connections, and the client listens again elsewhere).
  if (summary.rpc.length === 1 && summary.rpc[0] === 'subscriptions/listen') svc.lifecycle.release(res);
  if (summary.tools.length) entry.tool = summary.tools.join(',');
  return { body, toolCalls: summary.toolCalls };
}

/** The rate limit on tool calls; false once refused (429). */
async function admitToolCalls(svc: Service, res: ServerResponse, { key, fingerprint, actor }: Caller, toolCalls: number): Promise<boolean> {
  if (toolCalls > svc.rateLimit) {
    // Waiting would never help: no minute holds this many calls. No Retry-After, so no client waits for nothing.
    svc.metrics?.rateLimited('batch');
    jsonError(
      res,
      429,
      `Rate limited: this batch holds ${toolCalls} tool calls, more than the ${svc.rateLimit} a minute allowed per key (DOCREQ_RATE_LIMIT); send them in smaller batches.`,
    );
    return false;
  }
  if (toolCalls > 0) {
    const waitMs = await svc.rateWait(key, fingerprint, toolCalls, actor?.sub);
    if (waitMs > 0) {
      svc.metrics?.rateLimited('limit');
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      jsonError(res, 429, `Rate limited: at most ${svc.rateLimit} tool calls a minute per key (DOCREQ_RATE_LIMIT); retry after ${seconds} s.`, {
        'Retry-After': String(seconds),
      });
      return false;
    }
  }
  return true;
}

/** Answers with a server built for this request with its key, within the deadline; closed when the answer ends. */
async function answerMcp(
  svc: Service,
  req: IncomingMessage,
  res: ServerResponse,
  entry: Record<string, unknown>,
  { key, fingerprint, actor }: Caller,
  body: unknown,
  session: { capabilities?: ClientCapabilities; unknown?: string },
): Promise<void> {
  const { metrics, write, deadlineMs } = svc;
  const clientCapabilities = session.capabilities;
  // A reader's session is read-only mode: the sending tools are not listed and cannot be called.
  const config: Config = {
    ...svc.config,
    api: { apiKey: key, baseUrl: svc.baseUrl },
    readOnly: svc.config.readOnly || actor?.role === 'reader',
    sendingDisabled: svc.config.sendingDisabled ?? session.unknown,
  };
  const logger = createLogger(config.logLevel, [key, ...secretsOf(config)], write);
  // What the API client keeps between calls (client list, revalidation copies) lives with the key's fingerprint, bounded.
  const state = svc.store.scope(fingerprint).ensure('api', () => new ApiState());
  let mcp: ReturnType<typeof createServer> | undefined;
  const build = (modernRevision?: string) =>
    (mcp = createServer(config, {
      modernRevision,
      logger,
      api: { ...svc.api, sharedPool: svc.sharedPool, state },
      sending: svc.sending,
      stateless: true,
      clientCapabilities,
      keyFrom: actor ? 'env' : 'header',
      actor,
      audit: (line) => write(`${line}\n`),
      onCall: metrics && ((tool, result, ms) => metrics.call(tool, result, ms)),
    }));
  const deadline = setTimeout(() => {
    entry.deadline = true;
    jsonError(res, 504, `The request took longer than ${deadlineMs} ms and was stopped; if it was a send, check list_requests before trying again.`);
    void mcp?.close();
  }, deadlineMs);
  res.on('close', () => {
    clearTimeout(deadline);
    void mcp?.close().catch(() => undefined);
  });
  // A call is answered whole, without the SDK's HTTP layer, only under a deadline a proxy's idle timeout cannot
  // cut (PLAIN_CALL_MAX_MS); longer deadlines and anything that may stream go to the entry and its keep-alives.
  const plain = deadlineMs <= PLAIN_CALL_MAX_MS;
  if (plain && isPlainToolCall(req, body)) return answerPlainCall(build(), body, res);
  const modern = plain ? modernPlainCall(req, body) : undefined;
  if (modern) return answerModernCall(build(modern.revision), modern, body as JSONRPCRequest, res);
  // The key never travels in authInfo: only its fingerprint and the way to build this request's server.
  const perRequest: AuthInfo = { token: fingerprint, clientId: fingerprint, scopes: [], extra: { build } };
  (req as IncomingMessage & { auth?: AuthInfo }).auth = perRequest;
  await svc.mcpEntry(req, res, body);
}
