// Team-mode throughput against a same-run reference: this build's server and a minimal stateless server
// on the official SDK with one trivial tool (scripts/bench/reference-server.mjs), side by side, driven by
// autocannon over HTTP on loopback with 2025-11-25 stateless tools/call POSTs; this build's server talks
// to one sandbox of 10,000 requests (list_requests is revalidated: each call's conditional GET gets a 304).
// Workloads: list_templates repeated, list_requests repeated (the same question: mostly the answer
// cache), and list_requests varied: a different question each call (pages, open and overdue, groupBy
// with each sort, title and client search, due ranges), from a seeded generator so runs compare. Every
// server runs throughout; the load alternates between them in rounds (ref, this, then this, ref, …), so
// what else the machine does weighs on all alike. Prints, per workload and server: calls/s, p50/p99, the
// server process's CPU time per call, and the ratio to the reference; writes the same rows to
// .bench/throughput.md, which scripts/readme.mjs puts in docs/performance.md's throughput block.
//
//   npm run build && node scripts/bench/throughput.mjs
//   THROUGHPUT_BEFORE=/path/to/a/built/copy node scripts/bench/throughput.mjs   # adds that build's rows (and checks its answers match)
//   THROUGHPUT_CALLS=6000 THROUGHPUT_ROUNDS=4 THROUGHPUT_CONNECTIONS=20 THROUGHPUT_SEED=31 node scripts/bench/throughput.mjs
//   THROUGHPUT_ONLY=varied node scripts/bench/throughput.mjs                   # one workload (WORKLOADS' ids below)
//
// What a client sends decides the path a call takes, so the "-2025" and "-2026" workloads send what the official
// SDK clients send, captured from the clients themselves: a 2025-11-25 client (SDK v1) initializes first and then
// sends every call with the Mcp-Session-Id it was given, if any (neither server gives one to a client that declares
// no capability, the SDK client's default), and a
// 2026-07-28 client (SDK v2) sends its envelope. The bare workloads send a call with no initialize and no session.
// Each server keeps its state in a fresh folder of its own, so sessions left by earlier runs weigh on no figure.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort, sandboxKey } from '../processes.mjs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const root = new URL('../..', import.meta.url).pathname;
/** Calls measured per workload and server, split over the rounds. */
const CALLS = Number(process.env.THROUGHPUT_CALLS ?? 6000);
const ROUNDS = Math.max(2, Number(process.env.THROUGHPUT_ROUNDS ?? 4));
const CONNECTIONS = Number(process.env.THROUGHPUT_CONNECTIONS ?? 20);
const SEED = Number(process.env.THROUGHPUT_SEED ?? 31);
const WARM_UP = 500;
/** Questions of the varied workload checked for an answer (and, with a before build, for the same answer) before timing. */
const CHECKED = Number(process.env.THROUGHPUT_CHECKED ?? 300);

// ── the varied workload: a different list_requests question each call, from a seeded generator ──────────
/** mulberry32: a small seeded generator, so every run (and every server in a run) asks the same questions. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const REQUEST_SORTS = ['newest', 'oldest', 'due_soonest', 'least_complete'];
const GROUP_SORTS = [...REQUEST_SORTS, 'most_open', 'most_overdue', 'most_outstanding'];
const TITLE_WORDS = ['tax', 'return', 'payroll', 'trust', 'kyc', 'documents', 'onboarding', 'estate', 'mortgage', 'litigation', '1120', 'annual'];
const CLIENT_PARTS = ['Nguyen', 'Patel', 'Olivia', 'Müller', 'Tomasz Haddad', 'Bakery', 'Trust', 'Siobhan', 'smith', 'Rossi'];
const STATUSES = [['sent'], ['in_progress'], ['completed'], ['sent', 'in_progress'], ['cancelled', 'archived']];

/** Question `i` of the varied workload (the sandbox's days lie from ~500 days ago to ~50 days ahead of today). */
export function questions(count, seed = SEED, today = new Date()) {
  const rand = seeded(seed);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const day = (offset) => new Date(today.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  const out = [];
  for (let i = 0; i < count; i++) {
    const q = {};
    const kind = i % 6;
    if (kind === 0) {
      // a page of the whole list, in some order
      q.sort = pick(REQUEST_SORTS);
      q.offset = Math.floor(rand() * 400) * 25;
      if (rand() < 0.5) q.limit = pick([10, 25, 50, 100]);
    } else if (kind === 1) {
      // open and overdue
      if (rand() < 0.7) q.state = 'open';
      q.overdue = rand() < 0.8;
      q.sort = pick(REQUEST_SORTS);
      q.offset = Math.floor(rand() * 20) * 25;
      if (rand() < 0.3) q.status = pick(STATUSES);
    } else if (kind === 2) {
      // one row per client name
      q.groupBy = 'client';
      q.sort = pick(GROUP_SORTS);
      q.limit = pick([3, 5, 10, 25, 50]);
      q.offset = rand() < 0.6 ? 0 : Math.floor(rand() * 30) * 10;
      if (rand() < 0.3) q.state = pick(['open', 'closed']);
    } else if (kind === 3) {
      // title search
      q.search = pick(TITLE_WORDS);
      if (rand() < 0.4) q.state = 'open';
      if (rand() < 0.4) q.sort = pick(REQUEST_SORTS);
      q.offset = Math.floor(rand() * 10) * 25;
    } else if (kind === 4) {
      // due ranges
      const from = Math.floor(rand() * 540) - 500;
      q.dueAfter = day(from);
      q.dueBefore = day(from + 1 + Math.floor(rand() * 60));
      if (rand() < 0.5) q.sort = pick(['due_soonest', 'least_complete', 'newest']);
      if (rand() < 0.3) q.state = 'open';
      q.offset = Math.floor(rand() * 4) * 25;
    } else {
      // a client, by part of a name or the whole of one
      q.client = pick(CLIENT_PARTS);
      if (rand() < 0.4) q.groupBy = 'client';
      q.sort = pick(q.groupBy ? GROUP_SORTS : REQUEST_SORTS);
      if (rand() < 0.4) q.overdue = rand() < 0.5;
      if (rand() < 0.3) q.hasDueDate = rand() < 0.7;
    }
    out.push(q);
  }
  return out;
}

const children = new Set();
const folders = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

function start(bin, args, env = {}) {
  const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc; undefined elsewhere). */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks, USER_HZ = 100
  } catch {
    return undefined;
  }
}

async function startSandbox(bin) {
  const port = await freePort();
  const child = start(bin, ['sandbox', '--port', String(port), '--requests', '10000']);
  const key = await sandboxKey(child);
  return { url: `http://127.0.0.1:${port}`, key, child };
}

async function ready(url, child, what) {
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`${url}/healthz`)
        .then((r) => r.ok)
        .catch(() => false)
    )
      return { url, child };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start`);
}

async function startService(bin, baseUrl) {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), 'docreq-throughput-'));
  folders.add(state);
  const child = start(bin, ['--transport', 'http', '--port', String(port), '--rate-limit', '1000000000', '--log-level', 'error'], {
    DOCREQ_BASE_URL: baseUrl,
    DOCREQ_STATE_DIR: state,
    ...(process.env.THROUGHPUT_NODE_OPTIONS ? { NODE_OPTIONS: process.env.THROUGHPUT_NODE_OPTIONS } : {}),
  });
  return ready(`http://127.0.0.1:${port}`, child, bin);
}

async function startReference() {
  const port = await freePort();
  const child = start(join(root, 'scripts/bench/reference-server.mjs'), [String(port)], { REFERENCE_SDK: process.env.REFERENCE_SDK ?? 'v1' });
  return { ...(await ready(`http://127.0.0.1:${port}`, child, 'the reference server')), reference: true };
}

// With `meta`, the call carries `_meta` with a progress token, as SDK clients send a call that asks for
// progress (team mode answers it on its plain-call path too, src/transport/plain-call.ts).
const body = (name, args, meta = false) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: { progressToken: 1 } } : {}) } });
const headers = (key) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${key}`,
  'mcp-protocol-version': '2025-11-25',
});

/**
 * A 2026-07-28 tools/call as the official SDK v2 client sends it (its headers and body, the request's
 * envelope in `_meta`), captured once from the client itself and then sent as it is.
 */
async function modernCall(url, key, name, args) {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  let seen;
  const tap = async (target, init) => {
    if (init?.method === 'POST' && String(init.body).includes('"tools/call"'))
      seen = { headers: Object.fromEntries(new Headers(init.headers)), body: String(init.body) };
    return fetch(target, init);
  };
  const client = new Client({ name: 'throughput', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { fetch: tap, requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  await client.callTool({ name, arguments: args });
  await client.close();
  if (!seen) throw new Error('the 2026 client sent no tools/call');
  return seen;
}

/**
 * A 2025-11-25 tools/call as the official SDK v1 client sends it after its initialize: its headers (with the
 * Mcp-Session-Id the server gave it, if any) and body, captured once from the client itself. The client is left
 * open: closing it would end the session the captured call names.
 */
async function legacyCall(url, key, name, args) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  let seen;
  const tap = async (target, init) => {
    if (init?.method === 'POST' && String(init.body).includes('"tools/call"'))
      seen = { headers: Object.fromEntries(new Headers(init.headers)), body: String(init.body) };
    return fetch(target, init);
  };
  const client = new Client({ name: 'throughput', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { fetch: tap, requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  await client.callTool({ name, arguments: args });
  if (!seen) throw new Error('the 2025 client sent no tools/call');
  return seen;
}

/** What one call answers (the JSON-RPC result, SSE framing taken off), checked to be a result and not a tool error. */
async function answer(svc, key, name, args, meta = false, raw = undefined) {
  const text = await (
    await fetch(`${svc.url}/mcp`, { method: 'POST', headers: raw?.headers ?? headers(key), body: raw?.body ?? body(name, args, meta) })
  ).text();
  const json = text.startsWith('{')
    ? text
    : (text
        .split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6) ?? text);
  if (!json.includes('"result"') || json.includes('"isError":true')) throw new Error(`${name} ${JSON.stringify(args)} did not answer: ${json.slice(0, 300)}`);
  return json;
}

/**
 * One burst of `amount` calls: elapsed ms, each call's latency (ms), the server's CPU ms, and failures.
 * `next()` gives each call's [tool, arguments]: the same for a repeated workload, the next question for the varied one.
 */
function burst(svc, key, next, amount) {
  const latencies = [];
  const cpuBefore = cpuMs(svc.child.pid);
  const started = performance.now();
  // The burst ends at its last answer: autocannon reports a finished run only at its next sampling tick
  // (whole seconds), so timing to its callback quantised calls/s (1,500 calls in 1.0 s or 2.0 s, never 1.4).
  let last = started;
  const [name0, args0] = next.peek();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${svc.url}/mcp`,
        method: 'POST',
        headers: next.raw?.headers ?? headers(key),
        body: next.raw?.body ?? body(name0, args0, next.meta),
        connections: CONNECTIONS,
        amount,
        ...(next.varies ? { requests: [{ setupRequest: (req) => ({ ...req, body: body(...next(), next.meta) }) }] } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        const cpuAfter = cpuMs(svc.child.pid);
        resolve({
          ms: last - started,
          latencies,
          calls: result.requests.total,
          cpu: cpuBefore === undefined ? undefined : cpuAfter - cpuBefore,
          failed: result.non2xx + result.errors,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      latencies.push(responseTime);
      last = performance.now();
    });
  });
}

/** A call source: the reference always calls its trivial tool; a repeated workload one call; a varied one its questions in turn, from the start for every server. */
function source(svc, workload, varied) {
  const meta = Boolean(workload.meta);
  const raw = workload.raw?.[svc.url];
  if (svc.reference) return Object.assign(() => ['ping', {}], { peek: () => ['ping', {}], varies: false, meta, raw });
  if (!workload.varied) return Object.assign(() => [workload.tool, workload.args], { peek: () => [workload.tool, workload.args], varies: false, meta, raw });
  let i = 0;
  const next = () => ['list_requests', varied[i++ % varied.length]];
  // A client's captured headers (and its session, had it one) go with every question; each question is its own body.
  return Object.assign(next, { peek: () => ['list_requests', varied[i % varied.length]], varies: true, meta, raw: raw && { headers: raw.headers } });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** The workloads, each with its target against the reference (issue 31). */
export const WORKLOADS = [
  { id: 'templates', label: 'list_templates, repeated', tool: 'list_templates', args: {}, target: 0.8 },
  // The same call as SDK clients send it when they ask for progress (`_meta` with a progress token).
  { id: 'templates-meta', label: 'list_templates, repeated, with _meta (a progress token)', tool: 'list_templates', args: {}, meta: true, target: undefined },
  // As the official SDK v2 client sends it in the 2026-07-28 era (headers and `_meta` envelope, no initialize); the reference is asked in 2025 as ever.
  { id: 'templates-2026', label: 'list_templates, repeated, a 2026-07-28 client', tool: 'list_templates', args: {}, era: '2026', target: undefined },
  { id: 'repeated', label: 'list_requests @ 10,000, repeated', tool: 'list_requests', args: {}, target: undefined },
  { id: 'varied', label: 'list_requests @ 10,000, varied (a different question each call)', tool: 'list_requests', varied: true, target: 0.6 },
  // As the official SDK v1 client sends them after its initialize (with the Mcp-Session-Id it was given, if any: this server
  // gives one only to a client that declares capabilities); the reference gets what the same client sends it.
  {
    id: 'templates-2025',
    label: 'list_templates, repeated, a 2025-11-25 client (SDK v1, as it sends a call)',
    tool: 'list_templates',
    args: {},
    era: '2025',
    target: 1.5,
  },
  {
    id: 'varied-2025',
    label: 'list_requests @ 10,000, varied, a 2025-11-25 client (SDK v1, as it sends a call)',
    tool: 'list_requests',
    varied: true,
    era: '2025',
    target: 1.0,
  },
];

export async function run() {
  const afterBin = join(root, 'dist/cli.js');
  if (!existsSync(afterBin)) throw new Error('run npm run build first');
  const beforeDir = process.env.THROUGHPUT_BEFORE;
  const sb = await startSandbox(afterBin);
  const servers = {
    reference: await startReference(),
    ...(beforeDir ? { before: await startService(join(beforeDir, 'dist/cli.js'), sb.url) } : {}),
    after: await startService(afterBin, sb.url),
  };
  const load = [loadavg()[0]];
  const rows = [];
  const perRound = Math.ceil(CALLS / ROUNDS);
  // Questions enough for every timed call of every round and the warm-up, all different.
  const varied = questions(WARM_UP + perRound * ROUNDS + CONNECTIONS * ROUNDS);
  const only = process.env.THROUGHPUT_ONLY?.split(',');
  let checked = 0;
  for (const workload of WORKLOADS.filter((w) => !only || only.includes(w.id))) {
    // A 2026 workload's call, as the SDK v2 client sends it to each server.
    if (workload.era === '2026') {
      workload.raw = {};
      for (const svc of Object.values(servers)) if (!svc.reference) workload.raw[svc.url] = await modernCall(svc.url, sb.key, workload.tool, workload.args);
    }
    // A 2025 workload's call, as the SDK v1 client sends it to each server, the reference included.
    if (workload.era === '2025') {
      workload.raw = {};
      for (const svc of Object.values(servers))
        workload.raw[svc.url] = await legacyCall(svc.url, sb.key, svc.reference ? 'ping' : workload.tool, svc.reference ? {} : (workload.args ?? varied[0]));
    }
    // Every question first answers, and not as an error; with a before build, the same answer byte for byte.
    const sample = workload.varied ? varied.slice(0, CHECKED) : [workload.args];
    for (const args of sample) {
      const answers = {};
      for (const [which, svc] of Object.entries(servers))
        if (!svc.reference)
          answers[which] = await answer(
            svc,
            sb.key,
            workload.tool,
            args,
            workload.meta,
            workload.varied ? workload.raw?.[svc.url] && { headers: workload.raw[svc.url].headers } : workload.raw?.[svc.url],
          );
      if (answers.before !== undefined && answers.before !== answers.after)
        throw new Error(`before and after answer ${workload.tool} ${JSON.stringify(args)} differently`);
      checked++;
    }
    await answer(servers.reference, sb.key, 'ping', {});
    const sources = {};
    const totals = {};
    for (const [which, svc] of Object.entries(servers)) {
      sources[which] = source(svc, workload, varied);
      await burst(svc, sb.key, sources[which], WARM_UP); // not counted
      totals[which] = { ms: 0, calls: 0, cpu: 0, latencies: [], failed: 0 };
    }
    const order = Object.keys(servers);
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 === 0 ? order : [...order].reverse()) {
        const r = await burst(servers[which], sb.key, sources[which], perRound);
        const t = totals[which];
        t.ms += r.ms;
        t.calls += r.calls;
        t.cpu = t.cpu === undefined || r.cpu === undefined ? undefined : t.cpu + r.cpu;
        t.latencies.push(...r.latencies);
        t.failed += r.failed;
      }
    }
    const figures = {};
    for (const [which, t] of Object.entries(totals)) {
      const sorted = t.latencies.sort((a, b) => a - b);
      figures[which] = {
        perSecond: (t.calls / t.ms) * 1000,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        cpuPerCall: t.cpu === undefined ? undefined : t.cpu / t.calls,
        failed: t.failed,
      };
    }
    const fmt = (m) =>
      `${m.perSecond.toFixed(0)} calls/s, p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms` +
      `${m.cpuPerCall === undefined ? '' : `, server CPU ${m.cpuPerCall.toFixed(2)} ms/call`}${m.failed ? ` (${m.failed} failed)` : ''}`;
    const ref = figures.reference;
    const target = workload.target === undefined ? '' : `≥ ${workload.target}× the reference`;
    const verdict = (ratio) => (workload.target === undefined ? '' : ratio >= workload.target ? '' : ' · missed');
    rows.push({ row: `${workload.label}: reference (minimal SDK server, one trivial tool)`, figure: fmt(ref) });
    for (const which of ['before', 'after']) {
      const m = figures[which];
      if (!m) continue;
      const ratio = m.perSecond / ref.perSecond;
      const cpu = m.cpuPerCall && ref.cpuPerCall ? `, server CPU per call ${(m.cpuPerCall / ref.cpuPerCall).toFixed(2)}× the reference's` : '';
      rows.push({
        row: `${workload.label}: ${which === 'after' ? 'this build' : `before (${beforeLabel(beforeDir)})`}`,
        figure: `${fmt(m)}; **${ratio.toFixed(2)}×** the reference's calls/s${cpu}`,
        note: `${target}${verdict(ratio)}`,
      });
    }
  }
  load.push(loadavg()[0]);
  for (const svc of Object.values(servers)) svc.child.kill('SIGTERM');
  sb.child.kill('SIGTERM');
  process.stderr.write(`throughput: ${checked} questions answered${beforeDir ? ', the same by both builds' : ''} before timing\n`);
  return { rows, load, servers: Object.keys(servers) };
}

function beforeLabel(dir) {
  try {
    return readFileSync(join(dir, 'REF'), 'utf8').trim();
  } catch {
    return dir;
  }
}

/** The rows as the README's throughput block shows them (scripts/readme.mjs copies this file in). */
export function table(rows, load, when = new Date()) {
  const lines = [
    '| workload: server | figure | target |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.row} | ${r.figure} | ${r.note ?? ''} |`),
    '',
    `Written by \`node scripts/bench/throughput.mjs\` on ${when.toISOString().slice(0, 10)}: one process each, ${CALLS.toLocaleString('en')} calls per row ` +
      `in ${ROUNDS} alternating rounds over ${CONNECTIONS} connections, sandbox of 10,000 requests, varied questions seeded ${SEED}, ` +
      `reference on SDK ${process.env.REFERENCE_SDK ?? 'v1'}, node ${process.version}, ` +
      `${cpus().length} CPUs, load average ${load.map((l) => l.toFixed(2)).join(' → ')} (start → end). A ratio below its target is marked missed.`,
  ];
  return `${lines.join('\n')}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rows, load } = await run();
  const text = table(rows, load);
  process.stdout.write(text);
  if (!process.env.THROUGHPUT_ONLY) {
    mkdirSync(join(root, '.bench'), { recursive: true });
    writeFileSync(join(root, '.bench/throughput.md'), text);
    process.stderr.write('throughput: rows written to .bench/throughput.md (node scripts/readme.mjs puts them in the README)\n');
  }
  process.exit(0);
}
