// node scripts/bench/bench-answers.mjs (after npm run build) — what answers v3 costs, measured in one run.
//
// At 100,000 requests and 10,000 clients (loopback sandbox, no compression), over stdio:
//   1. this build's plain list_requests (which now computes days overdue, the average and oldest, the
//      no-due-date counts and items outstanding on every call) against the same call on the `main`
//      build (BENCH_ANSWERS_REF, default main), built into a temporary folder from `git archive`;
//   2. the new questions against this build's plain list_requests: hasDueDate, most_outstanding, a part
//      of a name several clients share, list_clients with details and a tag search.
// Calls are interleaved (each run calls every case once; main and this build take turns going first,
// each call after a pause), so drift on the machine falls on all alike; figures are medians. Each full answer is read again from the service (a changed list), so
// revalidation (304) does not flatter any case. Figures, not assertions: printed with their ratios.
//
// Exports run() for `npm run bench`: [{ row, figure, note }].
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';
import { esbuildOptions } from '../build-options.mjs';

const root = new URL('../..', import.meta.url).pathname;
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const SIZE = Number(process.env.BENCH_ANSWERS_SIZE ?? 100_000);
const REF = process.env.BENCH_ANSWERS_REF ?? 'main';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;

/** The CLI of `ref`, bundled into a temporary folder with this tree's dependencies. */
async function buildRef(ref) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-answers-'));
  const tar = join(dir, 'src.tar');
  writeFileSync(tar, execFileSync('git', ['archive', ref, 'src'], { cwd: root, maxBuffer: 256 * 1024 * 1024 }));
  execFileSync('tar', ['-xf', tar, '-C', dir]);
  await build({ ...esbuildOptions, entryPoints: [join(dir, 'src/cli.ts')], outfile: join(dir, 'cli.mjs'), nodePaths: [join(root, 'node_modules')] });
  return { cli: join(dir, 'cli.mjs'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function serverOn(cli, sb) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, '--log-level', 'error'],
    env: { PATH: process.env.PATH, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
  });
  const client = new Client({ name: 'bench-answers', version: '1' });
  await client.connect(transport);
  return client;
}

/** Changes one record of each list so the next GET is a full answer (a new ETag), and builds that answer before timing. */
let edits = 0;
function freshLists(sb) {
  const r = sb.demoFirm.requests[1];
  r.title = `${r.title.replace(/ ·\d+$/, '')} ·${++edits}`;
  const c = sb.demoFirm.clients.at(-1);
  c.email = `${c.email.replace(/\.\d+$/, '')}.${edits}`;
  sb.invalidateLists();
  for (const what of ['requests', 'clients']) sb.listBody(sb.demoFirm, what, sb.clock());
}

async function timedCall(client, name, args) {
  const started = performance.now();
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const elapsed = performance.now() - started;
  if (result.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${result.content[0].text.slice(0, 300)}`);
  return { elapsed, chars: result.content[0].text.length };
}

export async function run() {
  const { startSandbox } = await import(pathToFileURL(`${root}dist/index.js`).href);
  const before = await buildRef(REF);
  const sb = await startSandbox({ clients: 100, requests: 100 });
  sb.setCompression(false);
  const ours = await serverOn(`${root}dist/cli.js`, sb);
  const theirs = await serverOn(before.cli, sb);
  const plain = ['list_requests', {}];
  const cases = [
    ['list_requests', { hasDueDate: false, state: 'open' }],
    ['list_requests', { overdue: true }],
    ['list_requests', { groupBy: 'client', sort: 'most_outstanding', limit: 3 }],
    ['list_requests', { client: 'Siobhan' }],
    ['list_clients', { details: true }],
    ['list_clients', { search: 'priority' }],
  ];
  // Warm both servers on small data: first-call loading is not the data's cost.
  for (let i = 0; i < 3; i++) {
    await timedCall(theirs, ...plain);
    for (const c of [plain, ...cases]) await timedCall(ours, ...c);
  }
  sb.reseed({ clients: SIZE / 10, requests: SIZE });
  // Both servers read the reseeded client list before timing. list_requests reuses a recent client list to flag names
  // several clients share; without this, the reference kept the warm-up's 100 clients (no such notes: a shorter answer,
  // and a clients GET at a time of its own choosing) while this build had read the new list through list_clients, so
  // the two compared different work (it read 1.97× for the same code).
  for (const client of [ours, theirs]) await timedCall(client, 'list_clients', { details: true });
  const times = { main: [], plain: [], cases: cases.map(() => []) };
  const chars = { main: 0, plain: 0, cases: [] };
  // Each call starts after a pause, so the last call's garbage collection (in either server) is not
  // charged to it; main and this build take turns going first.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  /** The plain call on one server, on fresh lists, after a pause; kept under `which` (main or plain). */
  const plainOn = (client, which) => async () => {
    freshLists(sb);
    await settle();
    const r = await timedCall(client, ...plain);
    times[which].push(r.elapsed);
    chars[which] = r.chars;
  };
  const mainCall = plainOn(theirs, 'main');
  const plainCall = plainOn(ours, 'plain');
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      await mainCall();
      await plainCall();
    } else {
      await plainCall();
      await mainCall();
    }
    for (const [k, c] of cases.entries()) {
      freshLists(sb);
      await settle();
      const r = await timedCall(ours, ...c);
      times.cases[k].push(r.elapsed);
      chars.cases[k] = r.chars;
    }
  }
  await ours.close();
  await theirs.close();
  await sb.close();
  before.cleanup();

  const at = `@ ${SIZE.toLocaleString('en')} requests, ${(SIZE / 10).toLocaleString('en')} clients`;
  const plainMs = median(times.plain);
  const rows = [
    { row: `answers ${at}: list_requests {} on ${REF}`, figure: `${ms(median(times.main))}, ${chars.main.toLocaleString('en')} chars` },
    {
      row: `answers ${at}: list_requests {} with the v3 figures`,
      figure: `${ms(plainMs)}, ${chars.plain.toLocaleString('en')} chars`,
      note: `${(plainMs / median(times.main)).toFixed(2)}× ${REF}; target ≤ 1.1×, < 8,000 chars`,
    },
    ...cases.map(([name, args], k) => ({
      row: `answers ${at}: ${name} ${JSON.stringify(args)}`,
      figure: `${ms(median(times.cases[k]))}, ${chars.cases[k].toLocaleString('en')} chars`,
      note: `${(median(times.cases[k]) / plainMs).toFixed(2)}× plain list_requests; < 8,000 chars`,
    })),
  ];
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await run();
  process.stdout.write(
    ['| measure | figure | note |', '|---|---|---|', ...rows.map((r) => `| ${r.row} | ${r.figure} | ${r.note ?? ''} |`)].join('\n') +
      `\n\nnode ${process.version}, ${RUNS} runs per figure (median), interleaved, full answers (no 304)\n`,
  );
}
