// npm run scale: team mode scaled out. N replicas of `docreq-mcp --transport http` on one shared
// sandbox, behind nginx round-robin (deploy/nginx.conf, docs/team-mode.md's TLS config with the replica
// and listen lines rewritten), driven by M concurrent MCP SDK clients for a fixed number of list
// calls; one replica is stopped halfway. Then one replica alone, for the ratio; then p50 of
// list_requests over HTTP against stdio at 10,000 requests.
//   SCALE_REPLICAS=3 SCALE_CLIENTS=50 SCALE_CALLS=5000 SCALE_KILL=SIGTERM|SIGKILL|none SCALE_P50_RUNS=40
//   SCALE_SENDS=1250 (the send phase on redis, one replica SIGKILLed mid-send; 4 calls a send: a read,
//   a preview, two confirmations)
//   SCALE_ONLY=sends | lists (one phase only)
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../processes.mjs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const root = new URL('../..', import.meta.url).pathname;
const REPLICAS = Number(process.env.SCALE_REPLICAS ?? 3);
const CLIENTS = Number(process.env.SCALE_CLIENTS ?? 50);
const CALLS = Number(process.env.SCALE_CALLS ?? 5000);
const KILL = process.env.SCALE_KILL ?? 'SIGTERM';
const P50_RUNS = Number(process.env.SCALE_P50_RUNS ?? 40);
const BIN = join(root, 'dist/cli.js');
const say = (line) => process.stdout.write(`${line}\n`);
const note = (line) => process.stderr.write(`  ${line}\n`);

const nginxBin = ['nginx', '/usr/sbin/nginx'].find((b) => spawnSync(b, ['-v'], { stdio: 'ignore' }).status === 0);
if (!nginxBin) {
  say('scale: nginx is not installed, so there is no load balancer to measure behind.');
  say('Install it from Debian/Ubuntu packages: sudo apt-get update && sudo apt-get install -y nginx');
  say('(macOS: brew install nginx), then run npm run scale again.');
  process.exit(process.exitCode ?? 0);
}
if (!existsSync(BIN)) {
  say('scale: dist/cli.js is missing; run npm run build (npm run scale does).');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'docreq-scale-'));
const children = new Set();
const cleanup = () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (!process.env.SCALE_KEEP) rmSync(work, { recursive: true, force: true });
  else note(`kept ${work}`);
};
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

function run(args, env = {}, stdio = ['ignore', 'pipe', 'pipe']) {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

async function waitFor(child, stream, pattern) {
  let text = '';
  return new Promise((resolve, reject) => {
    child[stream].on('data', (d) => {
      text += d;
      const m = pattern.exec(text);
      if (m) resolve(m);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before ${pattern}: ${text}`)));
  });
}

async function startSandbox(extra = []) {
  const port = await freePort();
  const child = run(['sandbox', '--port', String(port), ...extra]);
  const m = await waitFor(child, 'stdout', /DOCREQ_API_KEY=(\S+)/);
  return { child, url: `http://127.0.0.1:${port}`, key: m[1] };
}

const TOKEN_SECRET = randomBytes(32).toString('hex');
async function startReplica(baseUrl, env = {}, rateLimit = 1_000_000_000) {
  const port = await freePort();
  // Every replica serves its metrics (DOCREQ_METRICS_PORT): the script checks their counts against its own.
  const metricsPort = await freePort();
  const child = run(
    ['--transport', 'http', '--port', String(port), '--rate-limit', String(rateLimit), '--log-level', 'info', '--metrics-port', String(metricsPort)],
    { DOCREQ_BASE_URL: baseUrl, DOCREQ_TOKEN_SECRET: TOKEN_SECRET, ...(env.DOCREQ_STORE_URL ? {} : { DOCREQ_STORE: 'memory' }), ...env },
    ['ignore', 'ignore', openSync(join(work, `replica-${port}.log`), 'w')],
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`replica exited with ${child.exitCode}`);
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { child, port, url, metrics: `http://127.0.0.1:${metricsPort}/metrics` };
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('replica did not come up');
}

async function startNginx(ports) {
  const port = await freePort();
  let site = readFileSync(join(root, 'deploy/nginx.conf'), 'utf8');
  const servers = ports.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n');
  site = site.replace(/( {4}server 127\.0\.0\.1:\d+ [^\n]*\n)+/, `${servers}\n`);
  site = site.replace(/listen 443 ssl http2;[^\n]*/, `listen 127.0.0.1:${port};`).replace(/^\s*ssl_[^\n]*\n/gm, '');
  if (!site.includes(`listen 127.0.0.1:${port};`) || site.includes('ssl_certificate'))
    throw new Error('deploy/nginx.conf no longer has the lines npm run scale rewrites');
  writeFileSync(join(work, 'site.conf'), site);
  writeFileSync(
    join(work, 'nginx.conf'),
    [
      'worker_processes 1;',
      `pid ${work}/nginx.pid;`,
      `error_log ${work}/error.log warn;`,
      'events { worker_connections 4096; }',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${work}/${t};`),
      `  include ${work}/site.conf;`,
      '}',
    ].join('\n'),
  );
  const child = spawn(nginxBin, ['-p', work, '-c', join(work, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${err}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) return { child, url: `http://127.0.0.1:${port}` };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not come up: ${err}`);
}

async function mcpClient(url, key) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: 'scale', version: '1' });
  await client.connect(transport);
  return client;
}

/** The samples of one metric family from a replica's /metrics (Prometheus text format), each with its labels. */
async function scrape(metricsUrl, name) {
  const text = await (await fetch(metricsUrl)).text();
  const out = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m && m[1] === name)
      out.push({ labels: Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]])), value: Number(m[3]) });
  }
  return out;
}
const sum = (samples, labels = {}) => samples.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** M clients, CALLS list calls in all; `halfway` runs once when half have been issued. */
async function drive(url, key, { halfway, calls = CALLS } = {}) {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => mcpClient(url, key)));
  const latencies = [];
  const errors = [];
  const ok = { list_requests: 0, list_clients: 0 };
  let issued = 0;
  const tools = ['list_requests', 'list_clients'];
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (issued < calls) {
        const n = issued++;
        if (n === Math.floor(calls / 2)) halfway?.();
        const t = performance.now();
        try {
          const result = await client.callTool({ name: tools[n % 2], arguments: {} });
          if (result.isError) errors.push(`tool error: ${JSON.stringify(result.content).slice(0, 200)}`);
          else {
            latencies.push(performance.now() - t);
            ok[tools[n % 2]]++;
          }
        } catch (error) {
          errors.push(String(error?.message ?? error).slice(0, 200));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  return { calls, seconds, perSecond: calls / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), errors, ok };
}

/** A real redis-server on a port of its own: the send store every replica shares. */
async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const { createClient } = await import('redis');
  for (let i = 0; i < 200; i++) {
    const c = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
    c.on('error', () => undefined);
    const ok = await c.connect().then(
      () => true,
      () => false,
    );
    if (ok) {
      await c.close();
      return { child, url: `redis://127.0.0.1:${port}/0` };
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('redis-server did not come up');
}

/**
 * Sends mixed with reads across N replicas sharing redis, behind nginx; one replica SIGKILLed while
 * sends are in flight. The sandbox runs in this process (it counts every POST) and is the hard case:
 * it ignores Idempotency-Key and lists new requests 5 s late, and each POST takes 150 ms. Every send
 * is previewed on one replica and confirmed twice (a retry, routed wherever nginx sends it).
 */
async function sendPhase() {
  const { startSandbox } = await import('../../dist/index.js');
  const sb = await startSandbox({ listLagMs: 5_000, ignoreIdempotencyKey: true, clients: 1_500 });
  sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 150 });
  const redis = await startRedis();
  const env = { DOCREQ_STORE_URL: redis.url };
  const replicas = await Promise.all(Array.from({ length: REPLICAS }, () => startReplica(sb.url, env)));
  const lb = await startNginx(replicas.map((r) => r.port));
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => mcpClient(lb.url, sb.keys.demo)));
  sb.demoFirm.monthlyRequestLimit = 1e9;
  sb.demoFirm.activeRequestLimit = 1e9;
  const ids = sb.demoFirm.clients.filter((c) => c.status === 'active').map((c) => c.id);
  const SENDS = Math.min(Number(process.env.SCALE_SENDS ?? 1_250), ids.length);
  const outcome = new Map(); // title -> outcomes of its two confirmations
  const errors = [];
  let next = 0;
  let reads = 0;
  let killed = false;
  const victim = replicas[0];
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (next < SENDS) {
        const n = next++;
        if (!killed && n === Math.floor(SENDS / 2)) {
          killed = true;
          // Mid-send: wait until a POST is in flight at the service, then kill.
          const before = sb.callsTo('POST', '/api/v1/requests').length;
          void (async () => {
            while (sb.callsTo('POST', '/api/v1/requests').length === before) await new Promise((r) => setTimeout(r, 1));
            victim.child.kill('SIGKILL');
          })();
        }
        const title = `Scale send ${n}`;
        const args = { client: ids[n], title, items: [{ name: 'W-2' }] };
        try {
          await client.callTool({ name: n % 2 ? 'list_requests' : 'list_clients', arguments: {} });
          reads++;
          const preview = await client.callTool({ name: 'create_request', arguments: args });
          const token = preview.structuredContent?.confirmation?.token;
          if (!token) throw new Error(`no token: ${JSON.stringify(preview.content).slice(0, 200)}`);
          const results = [];
          for (let k = 0; k < 2; k++) {
            try {
              const r = await client.callTool({ name: 'create_request', arguments: { ...args, confirmationToken: token } });
              results.push(r.structuredContent?.outcome ?? (r.isError ? 'refused' : 'unknown'));
            } catch (error) {
              results.push('error');
              errors.push(`confirm: ${String(error?.message ?? error).slice(0, 160)}`);
            }
          }
          outcome.set(title, results);
        } catch (error) {
          errors.push(String(error?.message ?? error).slice(0, 160));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 400)); // POSTs in flight land
  const postsPer = new Map();
  for (const c of sb.callsTo('POST', '/api/v1/requests')) {
    const title = JSON.parse(c.body ?? '{}').title;
    postsPer.set(title, (postsPer.get(title) ?? 0) + 1);
  }
  const posted = [...postsPer.values()];
  const totalPosts = posted.reduce((a, b) => a + b, 0);
  const confirmedSent = [...outcome.values()].filter((o) => o.includes('sent')).length;
  const unclear = [...outcome.values()].filter((o) => !o.includes('sent')).length;
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));

  // The rate limit across the replicas: a limit of 60 a minute for one key, 120 calls spread over all.
  for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGTERM');
  lb.child.kill('SIGQUIT');
  await Promise.all([
    ...replicas.map((r) => (r.child.exitCode === null && r.child.signalCode === null ? once(r.child, 'exit') : undefined)),
    once(lb.child, 'exit'),
  ]);
  // A database of its own, so the send phase's calls (counted, under a huge limit) do not count here.
  const limited = await Promise.all(Array.from({ length: REPLICAS }, () => startReplica(sb.url, { DOCREQ_STORE_URL: redis.url.replace(/\/0$/, '/1') }, 60)));
  const lb2 = await startNginx(limited.map((r) => r.port));
  const rl = await mcpClient(lb2.url, sb.keys.demo);
  let allowed = 0;
  let refused = 0;
  for (let i = 0; i < 120; i++) {
    try {
      await rl.callTool({ name: 'list_templates', arguments: {} });
      allowed++;
    } catch (error) {
      if (/429|Rate limited/.test(String(error?.message ?? error))) refused++;
      else errors.push(`rate: ${String(error?.message ?? error).slice(0, 120)}`);
    }
  }
  await rl.close().catch(() => undefined);
  // What the replicas' metrics say they refused, summed: it must be what this script was refused.
  let refusedByMetrics = 0;
  for (const r of limited) refusedByMetrics += sum(await scrape(r.metrics, 'docreq_rate_limited_total'));
  for (const r of limited) r.child.kill('SIGTERM');
  lb2.child.kill('SIGQUIT');
  await Promise.all([...limited.map((r) => once(r.child, 'exit')), once(lb2.child, 'exit')]);
  redis.child.kill('SIGTERM');
  await sb.close();
  return {
    seconds,
    sends: SENDS,
    reads,
    totalPosts,
    maxPosts: Math.max(0, ...posted),
    sendsPosted: posted.length,
    confirmedSent,
    unclear,
    errors,
    allowed,
    refused,
    refusedByMetrics,
  };
}

const rows = [];
const row = (...cells) => {
  rows.push(cells);
  note(cells.join(' · '));
};
const fmt = (r) => [`${r.perSecond.toFixed(0)} calls/s`, `p50 ${r.p50.toFixed(1)} ms`, `p99 ${r.p99.toFixed(1)} ms`, `${r.errors.length} errors`];

note(
  `scale: ${REPLICAS} replicas behind ${nginxBin} round-robin, ${CLIENTS} clients, ${CALLS} list calls, ${KILL} one replica halfway; node ${process.version}`,
);
const ONLY_SENDS = process.env.SCALE_ONLY === 'sends';
const sandbox = await startSandbox();
let scaled = { errors: [] };
let single = { errors: [] };
let killedAt = ONLY_SENDS ? 0 : undefined;
if (!ONLY_SENDS) {
  // ── N replicas behind nginx, one stopped halfway ─────────────────────────────────────────────
  const replicas = await Promise.all(Array.from({ length: REPLICAS }, () => startReplica(sandbox.url)));
  const lb = await startNginx(replicas.map((r) => r.port));
  await drive(lb.url, sandbox.key, { calls: Math.ceil(CALLS / 5) }).catch(() => undefined); // warm-up: JIT, connections
  const victim = replicas[0];
  const victimExit = once(victim.child, 'exit');
  scaled = await drive(lb.url, sandbox.key, {
    halfway: () => {
      if (KILL === 'none') return;
      killedAt = performance.now();
      victim.child.kill(KILL);
    },
  });
  const [victimCode, victimSignal] = KILL === 'none' ? [null, null] : await victimExit;
  row(
    `${REPLICAS} replicas behind nginx`,
    ...fmt(scaled),
    KILL === 'none' ? 'none stopped' : `replica on :${victim.port} ${KILL} halfway (exit ${victimCode ?? victimSignal})`,
  );
  for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGTERM');
  lb.child.kill('SIGQUIT');
  await Promise.all([
    ...replicas.map((r) => (r.child.exitCode === null && r.child.signalCode === null ? once(r.child, 'exit') : undefined)),
    once(lb.child, 'exit'),
  ]);

  // ── one replica alone ──────────────────────────────────────────────────────────────────────
  const alone = await startReplica(sandbox.url);
  const warm = await drive(alone.url, sandbox.key, { calls: Math.ceil(CALLS / 5) }).catch(() => undefined);
  single = await drive(alone.url, sandbox.key);
  row('1 replica alone (no nginx)', ...fmt(single));
  // The replica's own metrics, scraped: answered calls by tool must be what this script counted.
  {
    const calls = await scrape(alone.metrics, 'docreq_tool_calls_total');
    const timed = await scrape(alone.metrics, 'docreq_tool_call_duration_seconds_count');
    const agree = ['list_requests', 'list_clients'].map((tool) => {
      const ours = (warm?.ok[tool] ?? 0) + single.ok[tool];
      return { tool, ours, scraped: sum(calls, { tool, outcome: 'ok' }), timed: sum(timed, { tool }) };
    });
    const same = agree.every((a) => a.ours === a.scraped) && sum(timed) === sum(calls);
    row(
      'metrics (1 replica, scraped)',
      agree.map((a) => `${a.tool} ok: ${a.scraped} scraped, ${a.ours} counted here`).join('; '),
      `latency histogram counts ${sum(timed)} calls of ${sum(calls)}`,
      same ? 'agree' : 'DISAGREE',
    );
    if (!same) process.exitCode = 1;
  }
  row('throughput ratio', `${(scaled.perSecond / single.perSecond).toFixed(2)}× (${REPLICAS} behind nginx, one stopped halfway / 1 alone)`, 'target ≥ 0.9×');
  alone.child.kill('SIGTERM');
  await once(alone.child, 'exit');
}
sandbox.child.kill('SIGTERM');

// ── sends mixed with reads on redis, one replica SIGKILLed mid-send ─────────────────────────
if (process.env.SCALE_ONLY === 'lists') {
  // the list phase only
} else if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
  row('sends across replicas', 'n/a: redis-server is not installed (sudo apt-get install -y redis-server)');
} else {
  const s = await sendPhase();
  row(
    `sends: ${REPLICAS} replicas on one redis behind nginx, ${CLIENTS} clients`,
    `${s.sends} sends (each previewed, confirmed twice) mixed with ${s.reads} reads`,
    `${((s.sends * 3 + s.reads) / s.seconds).toFixed(0)} calls/s`,
    `one replica SIGKILLed mid-send`,
  );
  row(
    'POSTs per confirmed send',
    `${(s.totalPosts / Math.max(1, s.sendsPosted)).toFixed(3)}`,
    `${s.totalPosts} POSTs for ${s.sendsPosted} sends; at most ${s.maxPosts} for any one`,
    `${s.confirmedSent} answered sent, ${s.unclear} "may have been sent"/in progress/refused (a POST in flight on the killed replica: check with list_requests)`,
  );
  row('send-phase errors', `${s.errors.length}`, 'calls in flight on the killed replica (nginx does not resend a POST it already passed on)');
  row(
    'rate limit across replicas',
    `limit 60/min for one key, 120 calls over ${REPLICAS} replicas: ${s.allowed} allowed, ${s.refused} refused (429)`,
    `the replicas' metrics count ${s.refusedByMetrics} refused: ${s.refusedByMetrics === s.refused ? 'agree' : 'DISAGREE'}`,
  );
  if (s.refusedByMetrics !== s.refused) process.exitCode = 1;
  if (s.errors.length) note(`send-phase errors (first): ${[...new Set(s.errors)].slice(0, 3).join(' | ')}`);
}

// ── p50 over HTTP against stdio, list_requests at 10,000 requests ────────────────────────────
if (!ONLY_SENDS) {
  const big = await startSandbox(['--requests', '10000']);
  const http = await startReplica(big.url);
  const overHttp = await mcpClient(http.url, big.key);
  const stdioTransport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--log-level', 'error'],
    env: { PATH: process.env.PATH, DOCREQ_API_KEY: big.key, DOCREQ_BASE_URL: big.url },
  });
  const overStdio = new Client({ name: 'scale', version: '1' });
  await overStdio.connect(stdioTransport);
  const times = { http: [], stdio: [] };
  for (let i = 0; i < P50_RUNS + 3; i++) {
    for (const [name, client] of [
      ['http', overHttp],
      ['stdio', overStdio],
    ]) {
      const t = performance.now();
      const result = await client.callTool({ name: 'list_requests', arguments: {} });
      if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
      if (i >= 3) times[name].push(performance.now() - t);
    }
  }
  const p50Http = pct(times.http, 50);
  const p50Stdio = pct(times.stdio, 50);
  row(
    'list_requests @ 10,000, p50',
    `HTTP ${p50Http.toFixed(1)} ms`,
    `stdio ${p50Stdio.toFixed(1)} ms`,
    `ratio ${(p50Http / p50Stdio).toFixed(2)}× (HTTP adds ${(p50Http - p50Stdio).toFixed(1)} ms a call)`,
    'target ≤ 1.3×',
  );
  await overStdio.close();
  await overHttp.close();
  http.child.kill('SIGTERM');
  big.child.kill('SIGTERM');
}

say('');
for (const r of rows) say(`| ${r.join(' | ')} |`);
const errorSamples = [...new Set(scaled.errors.concat(single.errors))].slice(0, 5);
if (errorSamples.length) say(`\nerrors (first distinct): \n${errorSamples.map((e) => `  ${e}`).join('\n')}`);
if (killedAt === undefined && KILL !== 'none') say('(the replica was never stopped: fewer calls than expected?)');
const stamp = `${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${spawnSync(nginxBin, ['-v'], { encoding: 'utf8' }).stderr.trim()}, ${cpus().length} cores, load average ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')} at the end`;
say(`\n${stamp}`);
// docs/performance.md's scale block is written from this (node scripts/readme.mjs), never by hand.
if (!process.env.SCALE_ONLY) {
  mkdirSync(join(root, '.bench'), { recursive: true });
  const table = ['| measure | result |', '|---|---|', ...rows.map(([first, ...rest]) => `| ${first} | ${rest.join(' · ')} |`)];
  writeFileSync(
    join(root, '.bench/scale.md'),
    `${table.join('\n')}\n\n${REPLICAS} replicas, ${CLIENTS} clients, ${CALLS.toLocaleString('en')} list calls, ${KILL} one replica halfway; ${stamp}\n`,
  );
  note('wrote .bench/scale.md (node scripts/readme.mjs puts it in docs/performance.md)');
}
process.exit(process.exitCode ?? 0);
