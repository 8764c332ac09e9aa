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

await batchBench();

const table = [
  '| group | measure | value | reference | ratio | target |',
  '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');
process.stdout.write(`\n${table}\n\nnode ${process.version}, ${RUNS} runs per figure (median), ${new Date().toISOString().slice(0, 10)}\n`);

// ── create_request_batch: a 100-client dry run at 10,000 requests; the batch's overhead per send ──
async function batchBench() {
  const size = 10_000;
  const sb = await startSandbox({ clients: 200, requests: 100 });
  const { client } = await serverOn(sb);
  for (let i = 0; i < 3; i++) await client.callTool({ name: 'list_requests', arguments: {} });
  sb.reseed({ clients: size, requests: size });
  sb.demoFirm.monthlyRequestLimit = 1e9;
  const ids = sb.demoFirm.clients.filter((c) => c.status === 'active').map((c) => c.id);
  const items = [{ name: 'W-2' }, { name: 'Moved?', type: 'boolean' }];
  const upstream = (mark) => sb.calls.slice(mark).map((c) => `${c.method} ${c.path.split('/').pop()}`).join(' + ');
  const dry = [];
  let dryCalls = '';
  for (let i = 0; i < RUNS; i++) {
    const mark = sb.calls.length;
    dry.push((await timed(() => client.callTool({ name: 'create_request_batch', arguments: { clients: ids.slice(0, 100), title: `Bench batch dry ${i}`, items, dryRun: true } }))).ms);
    dryCalls = upstream(mark);
  }
  row(`create_request_batch @ ${size.toLocaleString('en')}`, '100-client dry run (resolve, duplicates, preview)', ms(median(dry)), dryCalls, '', 'one read of each list');

  // Per send: a batch of 20 (DOCREQ_CONFIRM_SEND=never), its reads taken off, next to one raw POST.
  const perSend = [];
  const raw = [];
  let sendCalls = 0;
  for (let i = 0; i < RUNS; i++) {
    const recipients = ids.slice(100 + i * 20, 120 + i * 20);
    const dryRun = (await timed(() => client.callTool({ name: 'create_request_batch', arguments: { clients: recipients, title: `Bench batch ${i}`, items, dryRun: true } }))).ms;
    const mark = sb.calls.length;
    const { ms: sendMs, value } = await timed(() => client.callTool({ name: 'create_request_batch', arguments: { clients: recipients, title: `Bench batch ${i}`, items } }));
    if (value.structuredContent?.sent !== 20) throw new Error(`bench batch sent ${value.structuredContent?.sent}: ${value.content[0].text.slice(0, 300)}`);
    sendCalls = sb.calls.length - mark;
    perSend.push((sendMs - dryRun) / 20);
    // 20 raw POSTs on one kept-alive connection, as the server makes them.
    const { ms: rawMs } = await timed(async () => {
      for (let k = 0; k < 20; k++) {
        const body = JSON.stringify({ clientId: ids[k], title: `Bench raw ${i}`, items: items.map((it) => ({ required: true, type: 'file', ...it })) });
        const res = await request(`${sb.url}/api/v1/requests`, { method: 'POST', body, headers: { authorization: `Bearer ${sb.keys.demo}`, 'content-type': 'application/json', 'idempotency-key': `bench-${i}-${k}` } });
        await res.body.text();
      }
    });
    raw.push(rawMs / 20);
  }
  const overhead = median(perSend) - median(raw);
  row(`create_request_batch @ ${size.toLocaleString('en')}`, 'per send in a batch of 20 ((batch − its dry run) / 20)', ms(median(perSend)), `${ms(median(raw))} one raw POST`, `${overhead >= 0 ? '+' : '−'}${ms(Math.abs(overhead))} per send`, `${sendCalls} upstream calls for 20 sends`);
  await client.close();
  await sb.close();
}
