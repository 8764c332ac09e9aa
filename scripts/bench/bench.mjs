// npm run bench: one table, measured in one run on this machine, medians over repeated runs.
// Figures, not assertions: targets are printed beside them.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { startSandbox } from '../../dist/index.js';
import { startLinkProxy } from '../../test/fixtures/link-proxy.mjs';
import { buildBundleServer } from '../bundle-server.mjs';
import { esbuildOptions } from '../build-options.mjs';
import { build } from 'esbuild';
import { freePort } from '../processes.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const SIZES = (process.env.BENCH_SIZES ?? '100,10000,100000').split(',').map(Number);
// Sections to run (default all): cold, lists, link, growth, and any scripts/bench/bench-<topic>.mjs by its topic.
// Parts of a section, to iterate faster: coldstart and first (of cold), grouped and batch (of lists).
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? 'cold,lists,link,growth').split(','));
const part = (name, section) => SECTIONS.has(name) || SECTIONS.has(section);
const root = new URL('../..', import.meta.url).pathname;
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
  const answered = (id) =>
    new Promise((resolve) => {
      const check = () => (out.includes(`"id":${id}`) ? resolve() : child.stdout.once('data', (d) => ((out += d), check())));
      check();
    });
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`,
  );
  await answered(1);
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`,
  );
  await answered(2);
  const elapsed = performance.now() - started;
  child.kill();
  await once(child, 'exit');
  return elapsed;
}
// Bare node runs in the servers' environment (PATH alone): an inherited NODE_EXTRA_CA_CERTS, for one,
// makes every node start read and parse that bundle (about 80 ms here), which the servers above never do.
async function bareNode() {
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', '0'], { env: { PATH: process.env.PATH } });
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
if (part('coldstart', 'cold')) {
  // The unbundled build (tsc output resolving node_modules), for comparison only; not shipped.
  const unbundled = `${root}.bench/unbundled`;
  mkdirSync(unbundled, { recursive: true });
  execFileSync(process.execPath, [
    `${root}node_modules/typescript/bin/tsc`,
    '-p',
    `${root}tsconfig.build.json`,
    '--emitDeclarationOnly',
    'false',
    '--declaration',
    'false',
    '--outDir',
    unbundled,
  ]);
  writeFileSync(`${root}.bench/package.json`, '{"type":"module","version":"0.0.0-bench"}');
  // The MCP Bundle's server (index.js and its chunks), built now from this source (a bundle/ left from an older build would measure old code).
  const bundleEntry = await buildBundleServer(`${root}.bench/bundle-server`);
  writeFileSync(`${root}.bench/bundle-server/package.json`, '{"type":"module"}');
  // The SDK's own floor: a one-tool server on the official SDK (test/fixtures/reference-stdio.mjs), bundled alike.
  const referenceEntry = `${root}.bench/reference-stdio/index.mjs`;
  await build({ ...esbuildOptions, entryPoints: [`${root}test/fixtures/reference-stdio.mjs`], outfile: referenceEntry });
  // The same server on SDK v1, which starts faster: the CLI's goal is set against the faster of the two.
  const referenceV1Entry = `${root}.bench/reference-stdio-v1/index.mjs`;
  await build({ ...esbuildOptions, entryPoints: [`${root}test/fixtures/reference-stdio-v1.mjs`], outfile: referenceV1Entry });

  const bare = await repeat(bareNode);
  row('cold start', 'bare `node -e 0`', ms(bare));
  const reference = await repeat(() => coldStart([referenceEntry]));
  row(
    'cold start',
    'one-tool server on the official SDK (bundled alike), → initialize → tools/list',
    ms(reference),
    ms(bare),
    `${(reference / bare).toFixed(2)}×`,
  );
  const referenceV1 = await repeat(() => coldStart([referenceV1Entry]));
  row(
    'cold start',
    'one-tool server on the official SDK v1 (bundled alike), → initialize → tools/list',
    ms(referenceV1),
    ms(bare),
    `${(referenceV1 / bare).toFixed(2)}×`,
  );
  const shipped = await repeat(() => coldStart([`${root}dist/cli.js`]));
  row('cold start', 'shipped CLI (esbuild, split), → initialize → tools/list', ms(shipped), ms(bare), `${(shipped / bare).toFixed(2)}×`, '≤ 2.0×');
  row('cold start', 'shipped CLI against the one-tool SDK server', ms(shipped), ms(reference), `${(shipped / reference).toFixed(2)}×`);
  const faster = Math.min(reference, referenceV1);
  row('cold start', 'shipped CLI against the faster one-tool SDK server (v1 or v2)', ms(shipped), ms(faster), `${(shipped / faster).toFixed(2)}×`, '≤ 1.0×');
  const single = await repeat(() => coldStart([bundleEntry]));
  row('cold start', 'MCP Bundle server (esbuild, split like the CLI, no node_modules)', ms(single), ms(bare), `${(single / bare).toFixed(2)}×`, '≤ 2.0×');
  const plain = await repeat(() => coldStart([`${unbundled}/cli.js`]));
  row('cold start', 'unbundled tsc output + node_modules (not shipped)', ms(plain), ms(bare), `${(plain / bare).toFixed(2)}×`);
}

// The servers' sends use the default (file) send store in a folder of the bench's own, never the user's state folder.
const STATE = mkdtempSync(`${tmpdir()}/docreq-bench-state-`);
process.on('exit', () => rmSync(STATE, { recursive: true, force: true }));

// ── lists at scale ───────────────────────────────────────────────────────────────────────────
async function serverOn(sb, url = sb.url) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [`${root}dist/cli.js`, '--confirm-send', 'never', '--log-level', 'error'],
    env: { PATH: process.env.PATH, DOCREQ_STATE_DIR: STATE, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: url },
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

/** Changes one record, so the next list answer is a full one (a new ETag), and builds it (and its compressed forms) before timing. */
let edits = 0;
async function freshList(sb) {
  const r = sb.demoFirm.requests[1];
  r.title = `${r.title.replace(/ ·\d+$/, '')} ·${++edits}`;
  const c = sb.demoFirm.clients.at(-1);
  c.email = `${c.email.replace(/\.\d+$/, '')}.${edits}`;
  sb.invalidateLists();
  // Compressed forms are built only when the sandbox compresses (building gzip of 1M records takes seconds).
  if (sb.compressing) await sb.warmLists();
  else for (const what of ['requests', 'clients']) sb.listBody(sb.demoFirm, what, sb.clock()); // private in TypeScript; builds the answer text before timing
}
const noCompression = (sb) => {
  sb.setCompression(false);
  sb.compressing = false;
};

for (const size of SECTIONS.has('lists') ? SIZES : []) {
  // A fresh server per size, warmed on small data (first-call loading is not the data's cost),
  // then the sandbox is reseeded to the size measured.
  const sb = await startSandbox({ clients: 100, requests: 100 });
  const { client, pid } = await serverOn(sb);
  for (let i = 0; i < 3; i++) for (const name of ['list_requests', 'list_clients']) await client.callTool({ name, arguments: {} });
  const idle = kb(pid, 'VmRSS');
  // Loopback: the service does not compress (raw GET + JSON.parse reads identity too), and every timed
  // call gets a full answer (a changed list), so revalidation does not flatter the figures.
  noCompression(sb);
  sb.reseed({ clients: size, requests: size });
  let singlePeak;
  for (const [tool, path] of [
    ['list_requests', '/api/v1/requests'],
    ['list_clients', '/api/v1/clients'],
  ]) {
    const call = () => client.callTool({ name: tool, arguments: {} });
    const raw = () => rawGetParse(`${sb.url}${path}`, sb.keys.demo);
    await call();
    if (tool === 'list_requests') singlePeak = kb(pid, 'VmHWM');
    const { value: body } = await timed(raw);
    const calls = [];
    const raws = [];
    const revalidated = [];
    for (let i = 0; i < RUNS; i++) {
      await freshList(sb);
      raws.push((await timed(raw)).ms);
      calls.push((await timed(call)).ms);
      revalidated.push((await timed(call)).ms);
    }
    await freshList(sb);
    const before = sb.calls.length;
    const result = await call();
    const upstream = sb.calls.length - before;
    const text = result.content[0].text;
    const overhead = median(calls) / median(raws);
    row(
      `${tool} @ ${size.toLocaleString('en')}`,
      'latency, full answer (default args, over stdio)',
      ms(median(calls)),
      `${ms(median(raws))} raw GET+parse`,
      `${overhead.toFixed(2)}×`,
      size === 100_000 ? '≤ 1.15×' : '',
    );
    row(
      `${tool} @ ${size.toLocaleString('en')}`,
      'latency, unchanged list (304, records reused)',
      ms(median(revalidated)),
      `${ms(median(raws))} raw GET+parse`,
      `${(median(revalidated) / median(raws)).toFixed(2)}×`,
    );
    row(
      `${tool} @ ${size.toLocaleString('en')}`,
      'result text',
      `${text.length.toLocaleString('en')} chars ≈ ${Math.round(text.length / 4).toLocaleString('en')} tokens`,
      `${body.bytes.toLocaleString('en')} B raw JSON`,
      `${((text.length / body.bytes) * 100).toFixed(2)}%`,
      '≤ 8,000 chars',
    );
    row(`${tool} @ ${size.toLocaleString('en')}`, 'upstream HTTP calls per tool call', String(upstream), '', '', '1');
  }
  const requestsBody = (await rawGetParse(`${sb.url}/api/v1/requests`, sb.keys.demo)).bytes;
  const peak = kb(pid, 'VmHWM');
  const label = `${mb(requestsBody)} requests body + ${mb(idle)} warm idle`;
  row(
    `server @ ${size.toLocaleString('en')}`,
    'peak RSS, first list_requests',
    mb(singlePeak),
    label,
    `${((singlePeak - idle) / requestsBody).toFixed(2)}× body above idle`,
    size === 100_000 ? '≤ 1.5×' : '',
  );
  row(
    `server @ ${size.toLocaleString('en')}`,
    `peak RSS after ${2 * (RUNS + 2)} calls of both lists`,
    mb(peak),
    label,
    `${((peak - idle) / requestsBody).toFixed(2)}× body above idle`,
  );

  if (size === SIZES[Math.min(1, SIZES.length - 1)]) {
    const before = sb.calls.length;
    await Promise.all(Array.from({ length: 50 }, () => client.callTool({ name: 'list_requests', arguments: {} })));
    // Over stdio at most 16 calls run at once (the transport's memory bound, src/transport/stdio.ts): the calls of one
    // turn share one GET; each later turn revalidates the list it holds (a 304, the body not sent again).
    const upstream = sb.calls.slice(before);
    const full = upstream.filter((c) => c.status !== 304).length;
    row(
      `coalescing @ ${size.toLocaleString('en')}`,
      '50 identical concurrent list_requests (16 run at once over stdio)',
      `${upstream.length} upstream call(s), ${full} with the body`,
      '',
      '',
      `≤ ${Math.ceil(50 / 16)}`,
    );

    sb.demoFirm.monthlyRequestLimit = 1e9;
    const target = sb.demoFirm.clients[3];
    const counts = { dry: [], send: [] };
    const lat = { dry: [], send: [] };
    for (let i = 0; i < RUNS; i++) {
      const args = { client: target.email, title: `Bench ${i}`, items: [{ name: 'W-2' }, { name: 'Moved?', type: 'boolean' }] };
      let mark = sb.calls.length;
      lat.dry.push((await timed(() => client.callTool({ name: 'create_request', arguments: { ...args, dryRun: true } }))).ms);
      counts.dry.push(
        sb.calls
          .slice(mark)
          .map((c) => `${c.method} ${c.path.split('/').pop()}`)
          .join(' + '),
      );
      mark = sb.calls.length;
      lat.send.push((await timed(() => client.callTool({ name: 'create_request', arguments: args }))).ms);
      counts.send.push(
        sb.calls
          .slice(mark)
          .map((c) => `${c.method} ${c.path.split('/').pop()}`)
          .join(' + '),
      );
    }
    row(`create_request @ ${size.toLocaleString('en')}`, 'dry run (resolve client, duplicate guard)', ms(median(lat.dry)), counts.dry.at(-1));
    row(`create_request @ ${size.toLocaleString('en')}`, 'send right after its dry run', ms(median(lat.send)), counts.send.at(-1), '', 'one POST');
    // A batch: what its send asks of the service beyond its POSTs (checking what the service kept reads each POST's answer, no GET).
    const recipients = sb.demoFirm.clients.filter((c) => c.status === 'active' && c.email).slice(4, 9);
    const batch = { clients: recipients.map((c) => c.id), title: 'Bench batch', items: [{ name: 'W-2' }] };
    await client.callTool({ name: 'create_request_batch', arguments: { ...batch, dryRun: true } });
    const mark = sb.calls.length;
    const batchMs = (await timed(() => client.callTool({ name: 'create_request_batch', arguments: batch }))).ms;
    const asked = sb.calls.slice(mark);
    const gets = asked.filter((c) => c.method === 'GET');
    row(
      `create_request_batch @ ${size.toLocaleString('en')}`,
      `send to ${recipients.length} right after its dry run`,
      ms(batchMs),
      `${gets.map((c) => `GET ${c.path.split('/').pop()} (${c.status})`).join(' + ')} + ${asked.length - gets.length} POST`,
      '',
      'conditional GETs only (304)',
    );
  }
  await client.close();
  await sb.close();
}

// ── first call: undici is loaded right after initialize, so the first list call costs what a later one does ──
if (part('first', 'cold')) {
  const sb = await startSandbox({ clients: 1000, requests: 10_000 });
  noCompression(sb);
  /** A fresh team-mode process (`--transport http`), the official SDK v1 client over Streamable HTTP; close() stops both. */
  const teamServerOn = async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [`${root}dist/cli.js`, '--transport', 'http', '--port', String(port), '--log-level', 'error'], {
      env: { PATH: process.env.PATH, DOCREQ_STATE_DIR: STATE, DOCREQ_BASE_URL: sb.url },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    for (let n = 0; n < 200; n++) {
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${sb.keys.demo}` } } }),
    );
    const close = async () => {
      await client.close();
      child.kill();
      await once(child, 'exit');
    };
    return { client, close };
  };
  const ways = [
    [
      'first list_requests @ 10,000 right after initialize',
      async () => {
        const { client } = await serverOn(sb);
        return { client, close: () => client.close() };
      },
    ],
    ['team mode: first list_requests @ 10,000 right after initialize', teamServerOn],
  ];
  for (const [measure, open] of ways) {
    const firsts = [];
    const laters = [];
    for (let i = 0; i < RUNS; i++) {
      const { client, close } = await open();
      await freshList(sb);
      firsts.push((await timed(() => client.callTool({ name: 'list_requests', arguments: {} }))).ms);
      await freshList(sb);
      laters.push((await timed(() => client.callTool({ name: 'list_requests', arguments: {} }))).ms);
      await close();
    }
    row('first call', measure, ms(median(firsts)), `${ms(median(laters))} a later one`, `${(median(firsts) / median(laters)).toFixed(2)}×`, '≤ 1.3×');
  }
  await sb.close();
}

// ── link: an emulated remote link (test/fixtures/link-proxy.mjs: RTT, throughput cap, gzip when asked) ──
if (SECTIONS.has('link')) {
  const LINK = Number(process.env.BENCH_LINK_SIZE ?? 100_000);
  const group = 'link 40 ms · 50 Mbit/s';
  const sb = await startSandbox({ clients: 100, requests: 100 });
  sb.compressing = true;
  const link = await startLinkProxy({ upstream: sb.url, rttMs: 40, mbit: 50 });
  const { client } = await serverOn(sb, link.url);
  for (let i = 0; i < 2; i++) await client.callTool({ name: 'list_requests', arguments: {} });
  sb.reseed({ clients: 1000, requests: LINK });
  // The ideal client: one GET asking for gzip, gunzip, JSON.parse (no streaming, no revalidation).
  const ideal = async () => {
    const res = await request(`${link.url}/api/v1/requests`, {
      headers: { authorization: `Bearer ${sb.keys.demo}`, accept: 'application/json', 'accept-encoding': 'gzip' },
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
    return JSON.parse(text).data.length;
  };
  const ideals = [];
  const calls = [];
  let wire = 0;
  for (let i = 0; i < RUNS; i++) {
    await freshList(sb);
    ideals.push((await timed(ideal)).ms);
    await freshList(sb);
    const before = link.stats.bytesOut;
    const { ms: t, value } = await timed(() => client.callTool({ name: 'list_requests', arguments: {} }));
    if (value.isError || value.structuredContent.total !== LINK) throw new Error(`link list failed: ${value.content[0].text}`);
    wire = link.stats.bytesOut - before;
    calls.push(t);
  }
  const at = `list_requests @ ${LINK.toLocaleString('en')}`;
  row(
    group,
    `${at}, full answer (${mb(wire)} on the wire)`,
    ms(median(calls)),
    `${ms(median(ideals))} ideal client (GET gzip, gunzip, JSON.parse)`,
    `${(median(calls) / median(ideals)).toFixed(2)}×`,
    '≤ 1.0×',
  );

  const filters = [{ overdue: true }, { status: ['sent'] }, { search: 'tax' }, { sort: 'due_soonest' }, { client: 'Nguyen', sort: 'least_complete' }];
  const totals = [];
  const bytes = [];
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    await freshList(sb);
    const before = link.stats.bytesOut;
    const started = performance.now();
    const each = [];
    for (const args of filters) {
      const t0 = performance.now();
      const result = await client.callTool({ name: 'list_requests', arguments: args });
      each.push(Math.round(performance.now() - t0));
      if (result.isError) throw new Error(`filtered list failed: ${result.content[0].text}`);
    }
    totals.push(performance.now() - started);
    process.stderr.write(`  (each: ${each.join(', ')} ms)\n`);
    bytes.push(link.stats.bytesOut - before);
  }
  row(
    group,
    `five differently filtered list_requests @ ${LINK.toLocaleString('en')} (ETag: 1 full answer + 4 × 304)`,
    ms(median(totals)),
    `${mb(median(bytes))} on the wire`,
    '',
    '≤ 1.5 s, ≤ 6 MB',
  );
  await client.close();
  await link.close();

  // 200,000 requests over 10 Mbit/s within the default 30 s timeout.
  const slow = await startLinkProxy({ upstream: sb.url, rttMs: 40, mbit: 10 });
  const second = await serverOn(sb, slow.url);
  await second.client.callTool({ name: 'list_clients', arguments: {} });
  sb.reseed({ clients: 1000, requests: 200_000 });
  await freshList(sb);
  const before = slow.stats.bytesOut;
  const { ms: t, value } = await timed(() => second.client.callTool({ name: 'list_requests', arguments: {} }, undefined, { timeout: 120_000 }));
  row(
    'link 40 ms · 10 Mbit/s',
    `list_requests @ 200,000 (${mb(slow.stats.bytesOut - before)} on the wire)`,
    value.isError ? `error: ${value.content[0].text.slice(0, 80)}` : ms(t),
    'default timeout 30,000 ms',
    `${(t / 30_000).toFixed(2)} of it`,
    '< 30 s',
  );
  await second.client.close();
  await slow.close();
  await sb.close();
}

// ── growth: 1,000 → 1,000,000 requests on loopback, exact counts, peak memory, fitted exponent ──
if (SECTIONS.has('growth')) {
  const GROWTH = (process.env.BENCH_GROWTH ?? '1000,10000,100000,1000000').split(',').map(Number);
  const sb = await startSandbox({ clients: 100, requests: 100 });
  noCompression(sb);
  const { client, pid } = await serverOn(sb);
  for (let i = 0; i < 2; i++) await client.callTool({ name: 'list_requests', arguments: {} });
  const points = [];
  for (const size of GROWTH) {
    sb.reseed({ clients: 1000, requests: size });
    const xs = [];
    let result;
    for (let i = 0; i < (size >= 1_000_000 ? 2 : 3); i++) {
      await freshList(sb);
      const r = await timed(() => client.callTool({ name: 'list_requests', arguments: {} }, undefined, { timeout: 300_000 }));
      xs.push(r.ms);
      result = r.value;
    }
    const sc = result.structuredContent;
    const exact = !result.isError && sc.total === size && sc.matched === size && Object.values(sc.byStatus).reduce((a, b) => a + b, 0) === size;
    points.push([size, median(xs)]);
    row(
      `growth @ ${size.toLocaleString('en')}`,
      'list_requests, full answer (loopback)',
      ms(median(xs)),
      exact ? 'exact counts' : `NOT exact: ${result.isError ? result.content[0].text.slice(0, 100) : JSON.stringify(result.structuredContent.total)}`,
      '',
      size === 1_000_000 ? 'exact' : '',
    );
    row(`growth @ ${size.toLocaleString('en')}`, 'server peak RSS so far', mb(kb(pid, 'VmHWM')));
  }
  // Least-squares slope of log(time) on log(size): 1 is linear.
  const lx = points.map(([n]) => Math.log(n));
  const ly = points.map(([, t]) => Math.log(t));
  const mx = lx.reduce((a, b) => a + b) / lx.length;
  const my = ly.reduce((a, b) => a + b) / ly.length;
  const slope = lx.reduce((a, x, i) => a + (x - mx) * (ly[i] - my), 0) / lx.reduce((a, x) => a + (x - mx) ** 2, 0);
  row('growth', `fitted exponent, time ∝ n^k over ${GROWTH.map((n) => n.toLocaleString('en')).join(' → ')}`, `k = ${slope.toFixed(2)}`, '', '', '≈ 1 (linear)');
  await client.close();
  await sb.close();
}

if (part('grouped', 'lists')) await groupedAndJoinedCost();
if (part('batch', 'lists')) await batchBench();

// Other benchmarks: every scripts/bench/bench-<topic>.mjs exporting run() → [{ row, figure, note? }] (docs/development.md, Scripts),
// each its own section (BENCH_SECTIONS=<topic> runs only it).
for (const file of readdirSync(`${root}scripts/bench`)
  .filter((f) => /^bench-[\w-]+\.mjs$/.test(f))
  .sort()) {
  const topic = file.slice('bench-'.length, -'.mjs'.length);
  if (process.env.BENCH_SECTIONS && !SECTIONS.has(topic)) continue;
  const mod = await import(`${root}scripts/bench/${file}`);
  if (typeof mod.run !== 'function') continue;
  try {
    for (const r of await mod.run()) row(topic, r.row, r.figure, r.note ?? '');
  } catch (error) {
    row(
      topic,
      `${file} failed`,
      String(error?.message ?? error)
        .split('\n')[0]
        .slice(0, 120),
    );
  }
}

const table = ['| group | measure | value | reference | ratio | target |', '|---|---|---|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const footer = `node ${process.version}, ${RUNS} runs per figure (median), ${new Date().toISOString().slice(0, 10)}`;
process.stdout.write(`\n${table}\n\n${footer}\n`);
// What `node scripts/readme.mjs` puts in docs/performance.md's figures block (the page quotes this, never hand-copied numbers).
// Only a run of every section writes it: a partial run (BENCH_SECTIONS) must not replace the whole block.
if (!process.env.BENCH_SECTIONS) {
  mkdirSync(`${root}.bench`, { recursive: true });
  writeFileSync(`${root}.bench/figures.md`, `${table}\n\n${footer}\n`);
}

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
    row(
      `lists ${label}`,
      `${name} ${JSON.stringify(args)}`,
      `${ms(t)}, ${texts[i].toLocaleString('en')} chars`,
      i === 0 ? '' : ms(plain),
      i === 0 ? '' : `${(t / plain).toFixed(2)}×`,
      i === 0 ? '< 8,000 chars' : '≤ 1.3×, < 8,000 chars',
    );
  }
  await client.close();
  await sb.close();
}

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
  const upstream = (mark) =>
    sb.calls
      .slice(mark)
      .map((c) => `${c.method} ${c.path.split('/').pop()}`)
      .join(' + ');
  const dry = [];
  let dryCalls = '';
  for (let i = 0; i < RUNS; i++) {
    const mark = sb.calls.length;
    dry.push(
      (
        await timed(() =>
          client.callTool({ name: 'create_request_batch', arguments: { clients: ids.slice(0, 100), title: `Bench batch dry ${i}`, items, dryRun: true } }),
        )
      ).ms,
    );
    dryCalls = upstream(mark);
  }
  row(
    `create_request_batch @ ${size.toLocaleString('en')}`,
    '100-client dry run (resolve, duplicates, preview)',
    ms(median(dry)),
    dryCalls,
    '',
    'one read of each list',
  );

  // Per send: a batch of 20 (DOCREQ_CONFIRM_SEND=never), its reads taken off, next to one raw POST.
  const perSend = [];
  const raw = [];
  let sendCalls = 0;
  for (let i = 0; i < RUNS; i++) {
    const recipients = ids.slice(100 + i * 20, 120 + i * 20);
    const dryRun = (
      await timed(() => client.callTool({ name: 'create_request_batch', arguments: { clients: recipients, title: `Bench batch ${i}`, items, dryRun: true } }))
    ).ms;
    const mark = sb.calls.length;
    const { ms: sendMs, value } = await timed(() =>
      client.callTool({ name: 'create_request_batch', arguments: { clients: recipients, title: `Bench batch ${i}`, items } }),
    );
    if (value.structuredContent?.sent !== 20) throw new Error(`bench batch sent ${value.structuredContent?.sent}: ${value.content[0].text.slice(0, 300)}`);
    sendCalls = sb.calls.length - mark;
    // The whole confirmed call (its list revalidation included) over its 20 POSTs. Subtracting a separate
    // dry run's time instead gave negative figures: the send revalidates lists the dry run had to read in full.
    void dryRun;
    perSend.push(sendMs / 20);
    // 20 raw POSTs on one kept-alive connection, as the server makes them.
    const { ms: rawMs } = await timed(async () => {
      for (let k = 0; k < 20; k++) {
        const body = JSON.stringify({ clientId: ids[k], title: `Bench raw ${i}`, items: items.map((it) => ({ required: true, type: 'file', ...it })) });
        const res = await request(`${sb.url}/api/v1/requests`, {
          method: 'POST',
          body,
          headers: { authorization: `Bearer ${sb.keys.demo}`, 'content-type': 'application/json', 'idempotency-key': `bench-${i}-${k}` },
        });
        await res.body.text();
      }
    });
    raw.push(rawMs / 20);
  }
  row(
    `create_request_batch @ ${size.toLocaleString('en')}`,
    'per send in a confirmed batch of 20 (the whole call / 20)',
    ms(median(perSend)),
    `${ms(median(raw))} one raw POST`,
    `${(median(perSend) / median(raw)).toFixed(2)}×`,
    `${sendCalls} upstream calls for 20 sends`,
  );
  await client.close();
  await sb.close();
}
