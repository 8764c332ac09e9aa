import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Registry } from 'prom-client';
import { TOOLS } from '../tools/index.js';

/**
 * Team mode's metrics in the Prometheus text format (prom-client), served on an opt-in port bound to
 * loopback (DOCREQ_METRICS_PORT). No label holds a key, a fingerprint, a person or a client: tool
 * names come from the catalogue (anything else is "unknown"), outcomes from the tools' own enums.
 * prom-client is imported only when metrics are switched on, so stdio's start-up never loads it.
 */

/** The one place sign-in tells the metrics: `signed_in` when a session starts, `refused` when the policy or the IdP says no. */
export function countSignIn(outcome: 'signed_in' | 'refused'): void {
  signIns.set(outcome, (signIns.get(outcome) ?? 0) + 1);
}
const signIns = new Map<string, number>();

const TOOL_NAMES = new Set(TOOLS.map((t) => t.name));
const SENDING = new Set(['create_request', 'create_request_batch']);
/** An outcome word as the sending tools' schemas spell them (sent, may_have_been_sent, …); nothing else is a label. */
const OUTCOME = /^[a-z_]{1,32}$/;

export type CallOutcome = 'ok' | 'error' | 'input_required' | 'protocol_error';

export interface MetricsProbes {
  /** The send store answers (a read within a second). */
  store: () => Promise<boolean>;
  storeBackend: string;
  /** The identity provider's discovery document answers (sign-in only). */
  idp?: () => Promise<boolean>;
}

export interface Metrics {
  /** A tools/call answered (result) or failed as a protocol error (no result), and how long it took. */
  call(tool: string, result: CallToolResult | { resultType?: string } | undefined, ms: number): void;
  /** A request refused with 429: over the minute's limit, or a batch larger than it. */
  rateLimited(reason: 'limit' | 'batch'): void;
  /** The Prometheus text exposition. */
  text(): Promise<string>;
  readonly contentType: string;
}

type Prom = typeof import('prom-client');

/** Builds the registry (loads prom-client). */
export async function createMetrics(probes: MetricsProbes): Promise<Metrics> {
  const prom = await loadProm();
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, prefix: 'docreq_' });
  const calls = new prom.Counter({
    name: 'docreq_tool_calls_total',
    help: 'Tool calls answered, by tool and outcome (ok, error: an error result, input_required, protocol_error).',
    labelNames: ['tool', 'outcome'],
    registers: [registry],
  });
  const latency = new prom.Histogram({
    name: 'docreq_tool_call_duration_seconds',
    help: 'Time to answer a tool call, by tool.',
    labelNames: ['tool'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const sends = new prom.Counter({
    name: 'docreq_sends_total',
    help: 'What became of each send the sending tools handled (a batch counts each recipient), by tool and outcome.',
    labelNames: ['tool', 'outcome'],
    registers: [registry],
  });
  const limited = new prom.Counter({
    name: 'docreq_rate_limited_total',
    help: 'Requests refused with 429: over DOCREQ_RATE_LIMIT this minute (limit), or a batch larger than it (batch).',
    labelNames: ['reason'],
    registers: [registry],
  });
  registerProbes(prom, registry, probes);
  return {
    call(name, result, ms) {
      const tool = TOOL_NAMES.has(name) ? name : 'unknown';
      const outcome = callOutcome(result);
      calls.inc({ tool, outcome });
      latency.observe({ tool }, ms / 1000);
      if (!SENDING.has(tool) || outcome !== 'ok') return;
      const structured = (result as CallToolResult).structuredContent as { outcome?: unknown; recipients?: { outcome?: unknown }[] } | undefined;
      const each = tool === 'create_request_batch' ? (structured?.recipients ?? []).map((r) => r.outcome) : [structured?.outcome];
      for (const o of each) if (typeof o === 'string' && OUTCOME.test(o) && o !== 'previewed' && o !== 'will_send') sends.inc({ tool, outcome: o });
    },
    rateLimited(reason) {
      limited.inc({ reason });
    },
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

/** prom-client, loaded when metrics are switched on. */
async function loadProm(): Promise<Prom> {
  // CommonJS: bundled, its exports are the namespace's default.
  const loaded = (await import('prom-client')) as Prom & { default?: Prom };
  return loaded.default ?? loaded;
}

/** The metrics worked out when scraped: sign-ins so far, whether the send store and the identity provider answer. */
function registerProbes(prom: Prom, registry: Registry, probes: MetricsProbes): void {
  new prom.Counter({
    name: 'docreq_sign_ins_total',
    help: 'Firm sign-ins (--auth oauth), by outcome: signed_in, refused.',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, n] of signIns) this.inc({ outcome }, n);
    },
  });
  new prom.Gauge({
    name: 'docreq_send_store_up',
    help: 'The send store answers a read within a second (1) or not (0), by backend.',
    labelNames: ['backend'],
    registers: [registry],
    async collect() {
      this.set({ backend: probes.storeBackend }, (await healthy(probes.store)) ? 1 : 0);
    },
  });
  if (probes.idp) {
    const idp = probes.idp;
    new prom.Gauge({
      name: 'docreq_idp_up',
      help: "The firm's identity provider answers its discovery document (1) or not (0).",
      registers: [registry],
      async collect() {
        this.set((await healthy(idp)) ? 1 : 0);
      },
    });
  }
}

/** How a tools/call ended, as the calls counter labels it. */
function callOutcome(result: CallToolResult | { resultType?: string } | undefined): CallOutcome {
  return !result ? 'protocol_error' : result.resultType === 'input_required' ? 'input_required' : (result as CallToolResult).isError ? 'error' : 'ok';
}

async function healthy(probe: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 1_000)));
  try {
    return await Promise.race([probe().catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Serves GET /metrics on 127.0.0.1:`port` (0: any free port). Nothing else is served there. */
export async function serveMetrics(metrics: Metrics, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return void res.end('Not found: metrics are at /metrics.\n');
    }
    metrics.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => {
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end('Metrics could not be collected.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
