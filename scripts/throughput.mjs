// Team-mode throughput, before and after, in one run: one server process (this build, and a build of
// `main` — the code before SDK v2 — made in a temporary directory) against one sandbox of 10,000
// requests, driven by autocannon over HTTP on loopback with the same 2025-11-25 stateless tools/call
// POSTs. Prints calls/s and p50/p99 per call, side by side, and the ratio.
//
//   node scripts/throughput.mjs                 # builds `main` into a temp dir first
//   THROUGHPUT_BEFORE=/path/to/built/copy node scripts/throughput.mjs
//   THROUGHPUT_CALLS=5000 THROUGHPUT_CONNECTIONS=16 node scripts/throughput.mjs
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const root = new URL('..', import.meta.url).pathname;
const CALLS = Number(process.env.THROUGHPUT_CALLS ?? 3000);
const CONNECTIONS = Number(process.env.THROUGHPUT_CONNECTIONS ?? 10);
const CASES = [
  ['list_templates', {}],
  ['list_requests', {}],
];

const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function start(bin, args, env = {}) {
  const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** A copy of `main` with this checkout's node_modules (it still has SDK v1 as a devDependency), built. */
function buildBefore() {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-before-'));
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${root}" archive main | tar -x -C "${dir}"`]);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, [join(dir, 'scripts/build.mjs')], { cwd: dir, stdio: 'ignore' });
  return dir;
}

async function startSandbox(bin) {
  const port = await freePort();
  const child = start(bin, ['sandbox', '--port', String(port), '--requests', '10000']);
  const key = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      const m = /DOCREQ_API_KEY=(\S+)/.exec(text);
      if (m) resolve(m[1]);
    });
    child.on('exit', () => reject(new Error('sandbox exited')));
  });
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

async function measure(url, key, name, args) {
  // One call first: it must answer, and not as an error.
  const text = await (await fetch(`${url}/mcp`, { method: 'POST', headers: headers(key), body: body(name, args) })).text();
  if (!text.includes('"result"') || text.includes('"isError":true')) throw new Error(`${name} did not answer: ${text.slice(0, 300)}`);
  const opts = { url: `${url}/mcp`, method: 'POST', headers: headers(key), body: body(name, args), connections: CONNECTIONS };
  await autocannon({ ...opts, amount: Math.min(500, CALLS) }); // warm-up
  const r = await autocannon({ ...opts, amount: CALLS });
  const perSecond = (r.requests.total / r.duration) * 1;
  return { perSecond: r.requests.total / ((r.finish - r.start) / 1000) || perSecond, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

export async function run() {
  const afterBin = join(root, 'dist/cli.js');
  if (!existsSync(afterBin)) throw new Error('run npm run build first');
  const beforeDir = process.env.THROUGHPUT_BEFORE ?? buildBefore();
  const beforeBin = join(beforeDir, 'dist/cli.js');
  const sb = await startSandbox(afterBin);
  const rows = [];
  const results = {};
  for (const [label, bin] of [
    ['before (main)', beforeBin],
    ['after (this branch)', afterBin],
  ]) {
    const svc = await startService(bin, sb.url);
    for (const [name, args] of CASES) results[`${label}|${name}`] = await measure(svc.url, sb.key, name, args);
    svc.child.kill('SIGTERM');
  }
  sb.child.kill('SIGTERM');
  for (const [name] of CASES) {
    const b = results[`before (main)|${name}`];
    const a = results[`after (this branch)|${name}`];
    const fmt = (m) => `${m.perSecond.toFixed(0)} calls/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.non2xx || m.errors ? ` (${m.non2xx} non-2xx, ${m.errors} errors)` : ''}`;
    rows.push({ row: `team mode ${name}: before`, figure: fmt(b) });
    rows.push({ row: `team mode ${name}: after`, figure: fmt(a) });
    rows.push({ row: `team mode ${name}: ratio`, figure: `${(a.perSecond / b.perSecond).toFixed(2)}×`, note: 'target ≥ 2×' });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await run();
  process.stdout.write(`one process each, ${CALLS} calls per row over ${CONNECTIONS} connections, sandbox of 10,000 requests, node ${process.version}\n`);
  for (const r of rows) process.stdout.write(`| ${r.row} | ${r.figure} |${r.note ? ` ${r.note} |` : ''}\n`);
  process.exit(0);
}
