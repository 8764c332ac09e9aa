// Team-mode throughput, before and after, in one run: two server processes (this build, and a build of
// the code before SDK v2 made in a temporary directory) against one sandbox of 10,000 requests, driven by
// autocannon over HTTP on loopback with the same 2025-11-25 stateless tools/call POSTs (list_requests is
// revalidated: each call's conditional GET gets a 304). Both servers run throughout; for each call the
// load alternates between them in rounds (before, after, then after, before, …), so what else the machine
// does at the time weighs on both alike. Prints, per call and server: calls/s, p50/p99 over every call of
// every round, the server process's CPU time per call, and the ratios; writes the same rows to
// .bench/throughput.md, which scripts/readme.mjs puts in docs/performance.md's throughput block.
//
//   node scripts/throughput.mjs                 # builds the pre-v2 commit (BEFORE_REF) into a temp dir first
//   THROUGHPUT_BEFORE=/path/to/built/copy node scripts/throughput.mjs
//   THROUGHPUT_CALLS=6000 THROUGHPUT_ROUNDS=4 THROUGHPUT_CONNECTIONS=16 node scripts/throughput.mjs
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { freePort, sandboxKey } from './processes.mjs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const root = new URL('..', import.meta.url).pathname;
/** Calls measured per call and server, split over the rounds. */
const CALLS = Number(process.env.THROUGHPUT_CALLS ?? 6000);
const ROUNDS = Math.max(2, Number(process.env.THROUGHPUT_ROUNDS ?? 4));
const CONNECTIONS = Number(process.env.THROUGHPUT_CONNECTIONS ?? 10);
const WARM_UP = 500;
const CASES = [
  ['list_templates', {}],
  ['list_requests', {}],
];

const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
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

/**
 * The code before SDK v2: the last `main` before the protocol merge (main now carries v2, so `main`
 * itself is no longer "before"). THROUGHPUT_BEFORE_REF picks another commit.
 */
const BEFORE_REF = process.env.THROUGHPUT_BEFORE_REF ?? 'f92e51a';

/** A copy of BEFORE_REF with this checkout's node_modules (it still has SDK v1 as a devDependency), built. */
function buildBefore() {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-before-'));
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${root}" archive ${BEFORE_REF} | tar -x -C "${dir}"`]);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, [join(dir, 'scripts/build.mjs')], { cwd: dir, stdio: 'ignore' });
  return dir;
}

async function startSandbox(bin) {
  const port = await freePort();
  const child = start(bin, ['sandbox', '--port', String(port), '--requests', '10000']);
  const key = await sandboxKey(child);
  return { url: `http://127.0.0.1:${port}`, key, child };
}

async function startService(bin, baseUrl) {
  const port = await freePort();
  const child = start(bin, ['--transport', 'http', '--port', String(port), '--rate-limit', '1000000000', '--log-level', 'error'], { DOCREQ_BASE_URL: baseUrl });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok).catch(() => false)) return { url, child };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${bin} did not start`);
}

const body = (name, args) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const headers = (key) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${key}`,
  'mcp-protocol-version': '2025-11-25',
});

/** One burst of `amount` calls: elapsed ms, each call's latency (ms), the server's CPU ms, and failures. */
function burst(svc, key, name, args, amount) {
  const latencies = [];
  const cpuBefore = cpuMs(svc.child.pid);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: `${svc.url}/mcp`, method: 'POST', headers: headers(key), body: body(name, args), connections: CONNECTIONS, amount },
      (error, result) => {
        if (error) return reject(error);
        const cpuAfter = cpuMs(svc.child.pid);
        resolve({ ms: performance.now() - started, latencies, calls: result.requests.total, cpu: cpuBefore === undefined ? undefined : cpuAfter - cpuBefore, failed: result.non2xx + result.errors });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

export async function run() {
  const afterBin = join(root, 'dist/cli.js');
  if (!existsSync(afterBin)) throw new Error('run npm run build first');
  const beforeDir = process.env.THROUGHPUT_BEFORE ?? buildBefore();
  const beforeBin = join(beforeDir, 'dist/cli.js');
  const sb = await startSandbox(afterBin);
  const servers = { before: await startService(beforeBin, sb.url), after: await startService(afterBin, sb.url) };
  const load = [loadavg()[0]];
  const rows = [];
  const perRound = Math.ceil(CALLS / ROUNDS);
  for (const [name, args] of CASES) {
    const totals = {};
    for (const [which, svc] of Object.entries(servers)) {
      // One call first: it must answer, and not as an error. Then a warm-up burst, not counted.
      const text = await (await fetch(`${svc.url}/mcp`, { method: 'POST', headers: headers(sb.key), body: body(name, args) })).text();
      if (!text.includes('"result"') || text.includes('"isError":true')) throw new Error(`${which}: ${name} did not answer: ${text.slice(0, 300)}`);
      await burst(svc, sb.key, name, args, WARM_UP);
      totals[which] = { ms: 0, calls: 0, cpu: 0, latencies: [], failed: 0 };
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
        const r = await burst(servers[which], sb.key, name, args, perRound);
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
      figures[which] = { perSecond: (t.calls / t.ms) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99), cpuPerCall: t.cpu === undefined ? undefined : t.cpu / t.calls, failed: t.failed };
    }
    const fmt = (m) =>
      `${m.perSecond.toFixed(0)} calls/s, p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms` +
      `${m.cpuPerCall === undefined ? '' : `, server CPU ${m.cpuPerCall.toFixed(2)} ms/call`}${m.failed ? ` (${m.failed} failed)` : ''}`;
    const b = figures.before;
    const a = figures.after;
    rows.push({ row: `team mode ${name}: before (${BEFORE_REF})`, figure: fmt(b) });
    rows.push({ row: `team mode ${name}: after (this build)`, figure: fmt(a) });
    const cpuRatio = a.cpuPerCall && b.cpuPerCall ? `; server CPU per call ${(b.cpuPerCall / a.cpuPerCall).toFixed(2)}× less` : '';
    rows.push({ row: `team mode ${name}: after ÷ before`, figure: `${(a.perSecond / b.perSecond).toFixed(2)}× calls/s${cpuRatio}`, note: 'target ≥ 2× calls/s' });
  }
  load.push(loadavg()[0]);
  for (const svc of Object.values(servers)) svc.child.kill('SIGTERM');
  sb.child.kill('SIGTERM');
  return { rows, load };
}

/** The rows as docs/performance.md's throughput block shows them (scripts/readme.mjs copies this file in). */
export function table(rows, load, when = new Date()) {
  const lines = [
    '| measure | figure | target |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.row} | ${r.figure} | ${r.note ?? ''} |`),
    '',
    `Written by \`node scripts/throughput.mjs\` on ${when.toISOString().slice(0, 10)}: one process each, ${CALLS.toLocaleString('en')} calls per row ` +
      `in ${ROUNDS} alternating rounds over ${CONNECTIONS} connections, sandbox of 10,000 requests, node ${process.version}, ` +
      `${cpus().length} CPUs, load average ${load.map((l) => l.toFixed(2)).join(' → ')} (start → end).`,
  ];
  return `${lines.join('\n')}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rows, load } = await run();
  const text = table(rows, load);
  process.stdout.write(text);
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(join(root, '.bench/throughput.md'), text);
  process.stderr.write('throughput: rows written to .bench/throughput.md (node scripts/readme.mjs puts them in docs/performance.md)\n');
  process.exit(0);
}
