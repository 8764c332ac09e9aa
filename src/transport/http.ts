import { createHash, createHmac } from 'node:crypto';
import { proxySettings } from '../api/client.js';
import { loadUndici } from '../api/undici.js';
import { SendLedger } from '../send/ledger.js';
import { Confirmations } from '../send/token.js';
import { openStore, storeFingerprint, storeReach, type SendStore } from '../store/index.js';
import { sandboxStateDir } from '../sandbox-state.js';
import { createServer as createHttpServer, type Server } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import type { Dispatcher } from 'undici';
import type { ApiClientOptions } from '../api/client.js';
import { checkBaseUrl, isLoopbackHost, loadConfig, secretsOf, startMode, type Config, type SettingsReading } from '../config.js';
import { createLogger } from '../log.js';
import type { Sandbox, SandboxOptions } from '../sandbox/service.js';
import type { createServer } from '../mcp/server.js';
import { VERSION } from '../version.js';
import { KeyFingerprinter, KeyScopeStore, RateBucket } from './key-scope.js';
import { loadHttpSettings, type HttpSettings } from './front-door.js';
import { boundConnections, CONNECTION_TIMEOUTS, Lifecycle, type ConnectionTimeouts } from './lifecycle.js';
import { statelessEntry } from './mcp-entry.js';
import { ClientSessions } from './client-sessions.js';
import { accessLogger } from './access-log.js';
import { answerRequest, MCP_PATH, type RateWait, type Service } from './routes.js';

export { bearerKey, frontDoor, loadHttpSettings, type HttpSettings } from './front-door.js';
export { boundConnections, CONNECTION_TIMEOUTS, type ConnectionTimeouts } from './lifecycle.js';
export { statelessEntry } from './mcp-entry.js';
import type { Auth, AuthStore } from '../auth/index.js';
import { authStoreOf } from '../auth/store.js';

/**
 * Team mode (docs/team-mode.md): MCP over Streamable HTTP at /mcp, stateless. Every HTTP request carries
 * the firm's key as a bearer token and gets a fresh MCP server and SDK transport built with that
 * key, so any replica answers any request and nothing of the key outlives the request. What is
 * kept between requests (rate-limit buckets; later the API client's caches) lives in a bounded
 * store keyed by the key's fingerprint. The routes, in their order, are in ./routes.ts.
 */

export interface HttpServiceOptions extends HttpSettings {
  /** The configuration every request starts from (no key: each request brings its own). */
  config: Config;
  /** The service's base URL (checked). */
  baseUrl: string;
  /** Cap on one request body (default 1 MiB): beyond it 413. */
  maxBodyBytes?: number;
  /** Bound on one HTTP request, end to end (default the tool timeout + 5 s): beyond it 504. */
  deadlineMs?: number;
  /** Firms whose per-key state is kept at once (default 1,000; least recently used dropped). */
  maxKeyScopes?: number;
  /** Extra API client options (tests). */
  api?: Partial<ApiClientOptions>;
  /** Where access-log lines and server logs go (default stderr). */
  write?: (line: string) => void;
  /** Bounds on slow and idle connections (default CONNECTION_TIMEOUTS; tests use small ones). */
  timeouts?: Partial<ConnectionTimeouts>;
  /** Firm sign-in (--auth oauth, src/auth/): built once the address is known; the key then comes from the service, the person from the token. */
  auth?: (url: string, shared?: AuthStore) => Promise<Auth>;
  /** The send store (default: opened from config.store); closed with the service. */
  sendStore?: SendStore;
  /** For the metrics: whether the firm's identity provider answers (sign-in only). */
  idpProbe?: () => Promise<boolean>;
}

export interface HttpService {
  /** http://host:port, as bound. */
  url: string;
  port: number;
  /** Per-key state, by fingerprint; the API client's caches can be kept here. */
  store: KeyScopeStore;
  /** The send store and what once-only and the rate limit hold across with it. */
  sendStore: { store: SendStore; reach: { shared: boolean; note: string } };
  fingerprint(key: string): string;
  /** Requests being served now. */
  readonly inflight: number;
  /** Where the Prometheus metrics are served (metricsPort set), e.g. http://127.0.0.1:9464/metrics. */
  metricsUrl?: string;
  /** Stops accepting, lets requests in flight finish (at most `drainMs`), then closes every connection. Resolves true when all finished. */
  close(drainMs?: number): Promise<boolean>;
}

const DEFAULT_MAX_BODY = 1024 * 1024;

/** Starts the team-mode HTTP service. */
export async function startHttpService(options: HttpServiceOptions): Promise<HttpService> {
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const fingerprinter = keyFingerprinter(options.config.tokenSecret);
  const store = new KeyScopeStore(options.maxKeyScopes ?? 1_000);
  const sharedPool = await sharedApiPool();
  // Once-only sending for every firm this process serves: the ledger is keyed by key fingerprint,
  // and tokens verify under DOCREQ_TOKEN_SECRET, which replicas must share.
  // The ledger lives in the send store: with redis, shared by every replica (docs/sending.md, "The send store").
  const sendStore = options.sendStore ?? openStore(options.config.store, (message) => write(`docreq-mcp error: ${message}\n`));
  const reach = storeReach(sendStore, true);
  const sending = { ledger: new SendLedger(sendStore), confirmations: new Confirmations(options.config.tokenSecret) };
  // Metrics only when asked for (DOCREQ_METRICS_PORT): prom-client is loaded then, and only then.
  const metrics =
    options.metricsPort === undefined
      ? undefined
      : await (
          await import('./metrics.js')
        ).createMetrics({ store: () => sendStore.get('health:probe').then(() => true), storeBackend: sendStore.backend, idp: options.idpProbe });
  const mcpEntry = perRequestEntry(options.config.templatesFile);
  const timeouts = { ...CONNECTION_TIMEOUTS, ...options.timeouts };
  const server: Server = createHttpServer({ connectionsCheckingInterval: timeouts.checkMs }, (req, res) => answerRequest(service, req, res));
  boundConnections(server, timeouts);
  const lifecycle = new Lifecycle(server);
  const service: Service = {
    config: options.config,
    baseUrl: options.baseUrl,
    api: options.api,
    allowedHosts: options.allowedHosts,
    allowedOrigins: new Set(options.allowedOrigins),
    // Bound to loopback, only this machine reaches the port: a page it serves on a loopback origin may too
    // (what the MCP conformance suite expects); a rebinding attacker's page has its own, foreign origin.
    loopbackBound: isLoopbackHost(options.host.replace(/^\[|\]$/g, '')),
    rateLimit: options.rateLimit,
    rateWait: rateLimiter(sendStore, store, options, write),
    maxBody: options.maxBodyBytes ?? DEFAULT_MAX_BODY,
    deadlineMs: options.deadlineMs ?? options.config.timeoutMs + 5_000,
    signIn: { asked: Boolean(options.auth) },
    sessions: new ClientSessions(sendStore),
    lifecycle,
    sendStore,
    reach,
    fingerprinter,
    store,
    metrics,
    sharedPool,
    sending,
    write,
    accessLog: accessLogger(write),
    // While draining, the SDK's answers (SSE ones name Connection: keep-alive) say Connection: close.
    mcpEntry: toNodeHandler({
      fetch: async (request: Request, extra?: Parameters<McpHttpHandler['fetch']>[1]) => lifecycle.closing(await mcpEntry.handler.fetch(request, extra)),
    }),
  };

  const { port } = await lifecycle.listen(options.port, options.host);
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  // Sign-in state (codes, refresh tokens, revocations) lives in the send store, under its own namespace:
  // shared by every replica when the store is redis, by this user's processes when it is a file.
  const { signIn } = service;
  signIn.auth = await options.auth?.(url, authStoreOf(sendStore));
  const metricsServer = metrics && (await (await import('./metrics.js')).serveMetrics(metrics, options.metricsPort!));
  if (metrics && signIn.auth) signIn.auth.onSignIn = (await import('./metrics.js')).countSignIn;

  return handleOf(service, url, port, mcpEntry, metricsServer);
}

/** What the caller holds: the address, the per-key state, and the way to stop (drain, then close everything opened at start). */
function handleOf(
  service: Service,
  url: string,
  port: number,
  mcpEntry: { stop(): void },
  metricsServer: { url: string; close(): Promise<void> } | undefined,
): HttpService {
  const { lifecycle, store, sendStore, reach, fingerprinter, sharedPool } = service;
  return {
    url,
    port,
    store,
    sendStore: { store: sendStore, reach },
    fingerprint: (key) => fingerprinter.fingerprint(key),
    ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
    get inflight() {
      return lifecycle.inflight;
    },
    async close(drainMs = 10_000) {
      const finished = await lifecycle.drain(drainMs);
      mcpEntry.stop();
      await metricsServer?.close();
      lifecycle.closeConnections();
      await sharedPool.close().catch(() => undefined);
      await sendStore.close().catch(() => undefined);
      return finished;
    },
  };
}

/**
 * Replicas that share DOCREQ_TOKEN_SECRET fingerprint a key alike, so one firm's access-log lines can be followed across
 * them; the fingerprint's own secret is derived from it (never the token secret itself). Without one: random per process.
 */
function keyFingerprinter(tokenSecret: string | undefined): KeyFingerprinter {
  return new KeyFingerprinter(tokenSecret ? createHmac('sha256', tokenSecret).update('docreq-mcp key fingerprints').digest() : undefined);
}

/**
 * One connection pool to the service for the whole process, whatever the key: connections carry
 * no credentials (the key is a header of each API call), and warm connections answer faster.
 */
async function sharedApiPool(): Promise<Dispatcher> {
  const { Agent, EnvHttpProxyAgent } = await loadUndici();
  const proxies = proxySettings();
  const poolOptions = { keepAliveTimeout: 4_000, connections: 64 };
  return proxies.httpProxy || proxies.httpsProxy ? new EnvHttpProxyAgent({ ...poolOptions, ...proxies }) : new Agent(poolOptions);
}

/**
 * The rate limit: with a shared store, a fixed one-minute window per key fingerprint counted in
 * the store (INCRBY), so it holds across replicas; otherwise, or while the store cannot be
 * reached (reads must keep working), this process's bucket. The wait in ms, 0 when allowed.
 * Per key; with sign-in, per person (the IdP subject, hashed like everything the store keeps).
 */
function rateLimiter(sendStore: SendStore, store: KeyScopeStore, options: HttpServiceOptions, write: (line: string) => void): RateWait {
  let storeRateWarned = false;
  return async (key, fingerprint, calls, person) => {
    const who = person === undefined ? '' : `:${createHash('sha256').update(person).digest('hex').slice(0, 24)}`;
    if (sendStore.scope === 'replicas') {
      // A sliding window over two fixed ones: this minute's count plus the last minute's, weighted by how much of it is still in the window.
      const now = Date.now();
      const window = Math.floor(now / 60_000);
      const firm = `${storeFingerprint(key, options.baseUrl)}:rate${who}`;
      try {
        const [count, previous] = await Promise.all([sendStore.incr(`${firm}:${window}`, 121_000, calls), sendStore.get(`${firm}:${window - 1}`)]);
        const estimate = count + Number(previous ?? 0) * (1 - (now - window * 60_000) / 60_000);
        if (estimate <= options.rateLimit) return 0;
        await sendStore.incr(`${firm}:${window}`, 121_000, -calls); // refused calls do not count
        return Math.max(1_000, (window + 1) * 60_000 - now);
      } catch (error) {
        if (!storeRateWarned)
          write(`docreq-mcp warn: rate limit: ${(error as Error).message.replace(/^Nothing was sent: /, '')}; counting per process until it is back\n`);
        storeRateWarned = true;
      }
    }
    return store
      .scope(`${fingerprint}${who}`)
      .ensure('rate', () => new RateBucket(options.rateLimit))
      .take(calls);
  };
}

/**
 * One SDK v2 entry for the whole process (both protocol revisions, 2025-11-25 and 2026-07-28): it answers 2026-07-28 requests (envelope,
 * Mcp-Method / Mcp-Name headers checked against the body) and 2025-11-25 requests (stateless) alike,
 * each with the server this request built with its own key (handed over as the request's authInfo).
 */
function perRequestEntry(templatesFile: string | undefined): ReturnType<typeof statelessEntry> {
  return statelessEntry((ctx) => {
    const build = ctx.authInfo?.extra?.build as (() => ReturnType<typeof createServer>) | undefined;
    if (!build) throw new Error('no per-request server');
    return build();
  }, templatesFile);
}

/**
 * `docreq-mcp --transport http`: reads the team-mode settings, refuses what would be unsafe,
 * starts the sandbox when asked, serves, and drains on SIGTERM / SIGINT.
 */
export async function serveHttp(reading: SettingsReading, options: { sandbox?: SandboxOptions } = {}): Promise<HttpService> {
  const { flags, env } = reading;
  const fail = (message: string): never => {
    process.stderr.write(`docreq-mcp: ${message}\n`);
    process.exit(2);
  };
  const { oauth } = startMode(reading);
  if (reading.text('apiKey')?.trim() || (reading.text('apiKeyFile')?.trim() && !oauth)) {
    fail(
      "DOCREQ_API_KEY (or DOCREQ_API_KEY_FILE) is set, but team mode (--transport http) takes the key from each request's Authorization header: a key of the service's own would let anyone who reaches the port act as the firm. Unset it and start again.",
    );
  }
  const { settings, problems } = loadHttpSettings(flags, env);
  if (problems.length) fail(`team mode cannot start:\n${problems.map((p) => `- ${p}`).join('\n')}`);

  const { sandbox, baseUrl } = await serviceAddress(reading, options.sandbox, oauth, fail);

  const signIn = await (await import('../auth/settings.js')).loadAuthSetup(flags, env, { sandboxApiKey: sandbox?.keys.demo });
  if (signIn.problems.length) fail(`sign-in (--auth oauth) cannot start:\n${signIn.problems.map((p) => `- ${p}`).join('\n')}`);
  for (const note of signIn.notes) process.stderr.write(`docreq-mcp info: ${note}\n`);
  // The sandbox's sends are kept apart from the person's own, unless a state folder is named.
  const apart = sandbox && reading.text('stateDir') === undefined ? { DOCREQ_STATE_DIR: sandboxStateDir(env) } : {};
  const config = loadConfig(flags, { ...env, ...apart, DOCREQ_API_KEY: undefined, DOCREQ_API_KEY_FILE: undefined, DOCREQ_BASE_URL: baseUrl });
  config.problems = config.problems.filter((p) => !p.startsWith('DOCREQ_API_KEY is not set'));
  const logger = createLogger(config.logLevel, secretsOf(config));
  for (const problem of config.problems) logger.warn(`configuration: ${problem}`);
  // Replicas that share a store are behind one address: a preview on one and its send on another need the same secret.
  if (config.store.backend === 'redis' && !reading.text('tokenSecret')?.trim()) {
    logger.warn(
      'DOCREQ_STORE_URL is set (a store replicas share) but DOCREQ_TOKEN_SECRET is not: a confirmation token issued by another replica will be refused: set DOCREQ_TOKEN_SECRET, the same on every replica (openssl rand -hex 32).',
    );
  }
  if (
    !isLoopbackHost(settings.host.replace(/^\[|\]$/g, '')) &&
    settings.allowedHosts.every((h) => isLoopbackHost(h.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')))
  ) {
    logger.warn(
      `listening on ${settings.host}, but DOCREQ_ALLOWED_HOSTS accepts only loopback names: set it to the host names clients use, or every request gets 403.`,
    );
  }

  const probe = signIn.probe;
  const idpProbe = probe ? () => probe.discover().then(() => true) : undefined;
  const service = await startHttpService({
    ...settings,
    config,
    baseUrl,
    ...(signIn.create ? { auth: signIn.create } : {}),
    ...(idpProbe ? { idpProbe } : {}),
  });
  if (service.metricsUrl) logger.info(`metrics (Prometheus text format) at ${service.metricsUrl}`);
  if (service.sendStore.reach.shared) logger.info(`send store: ${service.sendStore.reach.note}`);
  else logger.warn(`send store: ${service.sendStore.reach.note}`);
  logger.info(
    `docreq-mcp ${VERSION} serving MCP over HTTP at ${service.url}${MCP_PATH} for ${new URL(baseUrl).origin} (stateless; ${signIn.mode === 'oauth' ? 'staff sign in with OAuth; the key stays in the service' : 'the key comes with each request'})${config.readOnly ? ', read-only' : ''}`,
  );

  stopOnSignals(service, logger, async () => {
    await sandbox?.close();
    await signIn.close();
  });
  return service;
}

/** The service every request goes to: the embedded sandbox (its keys named on stderr), or DOCREQ_BASE_URL, checked. */
async function serviceAddress(
  reading: SettingsReading,
  sandboxOptions: SandboxOptions | undefined,
  oauth: boolean,
  fail: (message: string) => never,
): Promise<{ sandbox?: Sandbox; baseUrl: string }> {
  if (sandboxOptions) {
    const sandbox = await (await import('../sandbox/service.js')).startSandbox(sandboxOptions);
    const k = sandbox.keys;
    process.stderr.write(
      `docreq-mcp info: sandbox API on ${sandbox.url} (${sandbox.demoFirm.name}); nothing reaches a real service\n` +
        (oauth
          ? "docreq-mcp info: sign-in (--auth oauth): the service holds the demo firm's key; staff sign in at the demo identity provider below\n"
          : `docreq-mcp info: sandbox keys (send one as Authorization: Bearer <key>): demo ${k.demo}; harbor ${k.harbor}; northwind ${k.northwind}; revoked ${k.revoked}\n`),
    );
    return { sandbox, baseUrl: sandbox.url };
  }
  const text = reading.text('baseUrl');
  if (!text?.trim()) fail('team mode needs DOCREQ_BASE_URL (or --base-url): the service every request is sent to. To try it, add --sandbox.');
  const checked = checkBaseUrl(text.trim());
  if (!checked.ok) fail(`DOCREQ_BASE_URL (or --base-url) ${checked.reason}.`);
  return { baseUrl: (checked as { url: string }).url };
}

/** SIGTERM or SIGINT: no new connections, requests in flight finish (at most 10 s), then what else runs is closed and the process exits. */
function stopOnSignals(service: HttpService, logger: ReturnType<typeof createLogger>, closeRest: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: no new connections; letting ${service.inflight} request(s) in flight finish (at most 10 s)`);
    void service.close(10_000).then(async (finished) => {
      if (!finished) logger.warn(`stopped with ${service.inflight} request(s) still in flight`);
      await closeRest();
      process.exit(finished ? 0 : 1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
