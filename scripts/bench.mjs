// npm run bench: one table, measured in one run on this machine, medians over repeated runs.
// Figures, not assertions: targets are printed beside them.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { request } from 'undici';
import { startSandbox } from '../dist/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const SIZES = (process.env.BENCH_SIZES ?? '100,10000,100000').split(',').map(Number);
const root = new URL('..', import.meta.url).pathname;
const rows = [];
const row = (group, measure, value, reference = '', ratio = '', target = '') => {
  rows.push([group, measure, value, reference, ratio, target]);
  process.stderr.write(`  ${group} · ${measure}: ${value}${reference ? ` (ref ${reference})` : ''}\n`);
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const status = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kb = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status(pid))[1]) * 1024;

// ── cold start: spawn → initialize answered → tools/list answered ──────────────────────────────
async function coldStart(args) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { PATH: process.env.PATH } });
  let out = '';
  const answered = (id) => new Promise((resolve) => {
    const check = () => (out.includes(`"id":${id}`) ? resolve() : child.stdout.once('data', (d) => ((out += d), check())));
    check();
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`);
  await answered(1);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
  await answered(2);
  const elapsed = performance.now() - started;
  child.kill();
  await once(child, 'exit');
  return elapsed;
}
async function bareNode() {
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', '0']);
  await once(child, 'exit');
  return performance.now() - started;
}
async function repeat(fn) {
  await fn(); // warm the file cache
  const xs = [];
  for (let i = 0; i < RUNS; i++) xs.push(await fn());
  return median(xs);
}

process.stderr.write(`bench: ${RUNS} runs per figure, node ${process.version}\n`);
// The unbundled build (tsc output resolving node_modules), for comparison only; not shipped.
const unbundled = `${root}.bench/unbundled`;
mkdirSync(unbundled, { recursive: true });
execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', `${root}tsconfig.build.json`, '--emitDeclarationOnly', 'false', '--declaration', 'false', '--outDir', unbundled]);
writeFileSync(`${root}.bench/package.json`, '{"type":"module","version":"0.0.0-bench"}');
if (!existsSync(`${root}bundle/server/index.js`)) execFileSync('npm', ['run', '-s', 'bundle'], { cwd: root, stdio: 'ignore' });

const bare = await repeat(bareNode);
row('cold start', 'bare `node -e 0`', ms(bare));
const shipped = await repeat(() => coldStart([`${root}dist/cli.js`]));
row('cold start', 'shipped CLI (esbuild, split), → initialize → tools/list', ms(shipped), ms(bare), `${(shipped / bare).toFixed(2)}×`, '≤ 2.0×');
const single = await repeat(() => coldStart([`${root}bundle/server/index.js`]));
row('cold start', 'MCP Bundle single minified file', ms(single), ms(bare), `${(single / bare).toFixed(2)}×`, '≤ 2.0×');
const plain = await repeat(() => coldStart([`${unbundled}/cli.js`]));
row('cold start', 'unbundled tsc output + node_modules (not shipped)', ms(plain), ms(bare), `${(plain / bare).toFixed(2)}×`);

// ── lists at scale ───────────────────────────────────────────────────────────────────────────
async function serverOn(sb) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [`${root}dist/cli.js`, '--confirm-send', 'never', '--log-level', 'error'],
    env: { PATH: process.env.PATH, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
  });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return { client, pid: transport.pid };
}
async function rawGetParse(url, key) {
  const res = await request(url, { headers: { authorization: `Bearer ${key}`, accept: 'application/json' } });
  const text = await res.body.text();
  const parsed = JSON.parse(text);
  return { bytes: Buffer.byteLength(text), count: parsed.data.length };
}
const timed = async (fn) => {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
};

for (const size of SIZES) {
  // A fresh server per size, warmed on small data (first-call loading is not the data's cost),
  // then the sandbox is reseeded to the size measured.
  const sb = await startSandbox({ clients: 100, requests: 100 });
  const { client, pid } = await serverOn(sb);
  for (let i = 0; i < 3; i++) for (const name of ['list_requests', 'list_clients']) await client.callTool({ name, arguments: {} });
  const idle = kb(pid, 'VmRSS');
  sb.reseed({ clients: size, requests: size });
  let singlePeak;
  for (const [tool, path] of [['list_requests', '/api/v1/requests'], ['list_clients', '/api/v1/clients']]) {
    const call = () => client.callTool({ name: tool, arguments: {} });
    const raw = () => rawGetParse(`${sb.url}${path}`, sb.keys.demo);
    await call();
    if (tool === 'list_requests') singlePeak = kb(pid, 'VmHWM');
    const { value: body } = await timed(raw);
    const calls = [];
    const raws = [];
    for (let i = 0; i < RUNS; i++) {
      raws.push((await timed(raw)).ms);
      calls.push((await timed(call)).ms);
    }
    const before = sb.calls.length;
    const result = await call();
    const upstream = sb.calls.length - before;
    const text = result.content[0].text;
    const overhead = median(calls) / median(raws);
    row(`${tool} @ ${size.toLocaleString('en')}`, 'latency (default args, over stdio)', ms(median(calls)), `${ms(median(raws))} raw GET+parse`, `${overhead.toFixed(2)}×`, size === 100_000 ? '≤ 1.3×' : '');
    row(`${tool} @ ${size.toLocaleString('en')}`, 'result text', `${text.length.toLocaleString('en')} chars ≈ ${Math.round(text.length / 4).toLocaleString('en')} tokens`, `${body.bytes.toLocaleString('en')} B raw JSON`, `${((text.length / body.bytes) * 100).toFixed(2)}%`, '≤ 8,000 chars');
    row(`${tool} @ ${size.toLocaleString('en')}`, 'upstream HTTP calls per tool call', String(upstream), '', '', '1');
  }
  const requestsBody = (await rawGetParse(`${sb.url}/api/v1/requests`, sb.keys.demo)).bytes;
  const peak = kb(pid, 'VmHWM');
  const label = `${mb(requestsBody)} requests body + ${mb(idle)} warm idle`;
  row(`server @ ${size.toLocaleString('en')}`, 'peak RSS, first list_requests', mb(singlePeak), label, `${((singlePeak - idle) / requestsBody).toFixed(2)}× body above idle`, size === 100_000 ? '≤ 2.5×' : '');
  row(`server @ ${size.toLocaleString('en')}`, `peak RSS after ${2 * (RUNS + 2)} calls of both lists`, mb(peak), label, `${((peak - idle) / requestsBody).toFixed(2)}× body above idle`);

  if (size === SIZES[Math.min(1, SIZES.length - 1)]) {
    const before = sb.calls.length;
    await Promise.all(Array.from({ length: 50 }, () => client.callTool({ name: 'list_requests', arguments: {} })));
    row(`coalescing @ ${size.toLocaleString('en')}`, '50 identical concurrent list_requests', `${sb.calls.length - before} upstream call(s)`, '', '', '1');

    sb.demoFirm.monthlyRequestLimit = 1e9;
    const target = sb.demoFirm.clients[3];
    const counts = { dry: [], send: [] };
    const lat = { dry: [], send: [] };
    for (let i = 0; i < RUNS; i++) {
      const args = { client: target.email, title: `Bench ${i}`, items: [{ name: 'W-2' }, { name: 'Moved?', type: 'boolean' }] };
      let mark = sb.calls.length;
      lat.dry.push((await timed(() => client.callTool({ name: 'create_request', arguments: { ...args, dryRun: true } }))).ms);
      counts.dry.push(sb.calls.slice(mark).map((c) => `${c.method} ${c.path.split('/').pop()}`).join(' + '));
      mark = sb.calls.length;
      lat.send.push((await timed(() => client.callTool({ name: 'create_request', arguments: args }))).ms);
      counts.send.push(sb.calls.slice(mark).map((c) => `${c.method} ${c.path.split('/').pop()}`).join(' + '));
    }
    row(`create_request @ ${size.toLocaleString('en')}`, 'dry run (resolve client, duplicate guard)', ms(median(lat.dry)), counts.dry.at(-1));
    row(`create_request @ ${size.toLocaleString('en')}`, 'send right after its dry run', ms(median(lat.send)), counts.send.at(-1), '', 'one POST');
  }
  await client.close();
  await sb.close();
}

await groupedAndJoinedCost();

const table = [
  '| group | measure | value | reference | ratio | target |',
  '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');
process.stdout.write(`\n${table}\n\nnode ${process.version}, ${RUNS} runs per figure (median), ${new Date().toISOString().slice(0, 10)}\n`);

// ── grouped and joined lists: what one-call answers cost against a plain list_requests ─────────
// groupBy and the requests join fetch the clients beside the requests (in parallel) and group in
// the same pass; target: at most 1.3× a plain list_requests call at 100,000 requests.
async function groupedAndJoinedCost(size = Number(process.env.BENCH_GROUPED_SIZE ?? 100_000)) {
  const sb = await startSandbox({ clients: 100, requests: 100 });
  const { client } = await serverOn(sb);
  const cases = [
    ['list_requests', {}],
    ['list_requests', { groupBy: 'client' }],
    ['list_requests', { groupBy: 'client', sort: 'most_open', limit: 3 }],
    ['list_requests', { client: 'Sam Taylor' }],
    ['list_clients', { requests: 'none_open' }],
    ['list_clients', { requests: 'overdue' }],
  ];
  for (let i = 0; i < 3; i++) for (const [name, args] of cases) await client.callTool({ name, arguments: args });
  sb.reseed({ clients: size / 10, requests: size });
  const label = `@ ${size.toLocaleString('en')} requests, ${(size / 10).toLocaleString('en')} clients`;
  const times = cases.map(() => []);
  const texts = [];
  for (const [i, [name, args]] of cases.entries()) texts[i] = (await client.callTool({ name, arguments: args })).content[0].text.length;
  // Interleaved, so drift on the machine falls on every case alike.
  for (let run = 0; run < RUNS; run++) {
    for (const [i, [name, args]] of cases.entries()) times[i].push((await timed(() => client.callTool({ name, arguments: args }))).ms);
  }
  const plain = median(times[0]);
  for (const [i, [name, args]] of cases.entries()) {
    const t = median(times[i]);
    row(`lists ${label}`, `${name} ${JSON.stringify(args)}`, `${ms(t)}, ${texts[i].toLocaleString('en')} chars`, i === 0 ? '' : ms(plain), i === 0 ? '' : `${(t / plain).toFixed(2)}×`, i === 0 ? '< 8,000 chars' : '≤ 1.3×, < 8,000 chars');
  }
  await client.close();
  await sb.close();
}
