// node --expose-gc scripts/parse-bench.mjs [--ref <git ref>] [--records N] [--runs N] [--cpu]
//
// Times src/api/list-stream.ts as it is now ("after") and as it is at --ref ("before", default main)
// against one JSON.parse of the whole body (already a string), each body fed to the parsers in
// 64 KiB chunks:
//   - N list records (default 100,000) of the documented request shape, ASCII only;
//   - the same with a non-ASCII title in one record of ten (UTF-8 decoding costs more);
//   - one record holding a 24 MB string field (the linear-time case);
//   - N/10 records whose strings are full of "}," and escaped quotes (hostile to a cut-and-try parser).
// The three are run in turn within each round, so load on the machine weighs on all alike; the
// figures are medians over --runs rounds (default 9) of the times and of each round's ratio to JSON.parse.
// Run with `node --expose-gc` to collect garbage before each timing.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};
const ref = option('ref', 'main');
const count = Number(option('records', 100_000));
const runs = Number(option('runs', 9));
const CHUNK = 64 * 1024;

async function load(source, name) {
  const dir = mkdtempSync(join(tmpdir(), 'parse-bench-'));
  const out = join(dir, `${name}.mjs`);
  await build({ stdin: { contents: source, resolveDir: `${root}src/api`, loader: 'ts', sourcefile: 'list-stream.ts' }, bundle: true, platform: 'node', format: 'esm', target: 'node20.18', outfile: out, logLevel: 'warning' });
  const module = await import(out);
  rmSync(dir, { recursive: true, force: true });
  return module.ListStreamParser;
}
const before = await load(execFileSync('git', ['show', `${ref}:src/api/list-stream.ts`], { cwd: root, encoding: 'utf8' }), 'before');
const after = await load(readFileSync(`${root}src/api/list-stream.ts`, 'utf8'), 'after');

function requestBody(n, title = (i) => `Year-end documents ${i}`) {
  const data = [];
  for (let i = 0; i < n; i++) {
    data.push({ id: randomUUID(), title: title(i), status: 'sent', dueDate: '2026-01-01', createdAt: '2025-12-01T10:00:00Z', clientName: `Client ${i % 997}`, totalItems: 5, completedItems: 2 });
  }
  return Buffer.from(JSON.stringify({ data, total: n }), 'utf8');
}

function chunksOf(body) {
  const chunks = [];
  for (let at = 0; at < body.length; at += CHUNK) chunks.push(Buffer.from(body.subarray(at, at + CHUNK)));
  return chunks;
}

/** Wall time, or with --cpu the process's CPU time (user + system): steadier on a busy machine. */
const cpu = args.includes('--cpu');
function timed(fn) {
  globalThis.gc?.();
  const started = performance.now();
  const usage = process.cpuUsage();
  const result = fn();
  const used = process.cpuUsage(usage);
  return { ms: cpu ? (used.user + used.system) / 1000 : performance.now() - started, result };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function stream(Parser, chunks) {
  const parser = new Parser('request', (v) => v);
  for (const chunk of chunks) parser.write(chunk);
  return parser.end().length;
}

function compare(name, body) {
  const chunks = chunksOf(body);
  const text = body.toString('utf8');
  const times = { parse: [], before: [], after: [], beforeRatio: [], afterRatio: [] };
  for (let run = 0; run < runs; run++) {
    const whole = timed(() => JSON.parse(text).data.length);
    const old = timed(() => stream(before, chunks));
    const now = timed(() => stream(after, chunks));
    if (old.result !== whole.result || now.result !== whole.result) throw new Error(`${name}: ${old.result} and ${now.result} records streamed, ${whole.result} parsed`);
    times.parse.push(whole.ms);
    times.before.push(old.ms);
    times.after.push(now.ms);
    times.beforeRatio.push(old.ms / whole.ms);
    times.afterRatio.push(now.ms / whole.ms);
  }
  const ms = (values) => `${median(values).toFixed(1).padStart(7)} ms`;
  const ratio = (values) => `${median(values).toFixed(2).padStart(5)}×`;
  console.log(
    `${name.padEnd(36)} ${(body.length / 1024 / 1024).toFixed(1).padStart(5)} MB  JSON.parse ${ms(times.parse)}` +
      `  before ${ms(times.before)} ${ratio(times.beforeRatio)}  after ${ms(times.after)} ${ratio(times.afterRatio)}`,
  );
}

console.log(`list-stream.ts: before = ${ref}, after = working tree; node ${process.version}, 64 KiB chunks, ${cpu ? 'CPU' : 'wall'} time, median of ${runs} rounds`);
compare(`${count.toLocaleString('en')} records`, requestBody(count));
compare(`${count.toLocaleString('en')} records, 1 in 10 non-ASCII`, requestBody(count, (i) => (i % 10 ? `Year-end documents ${i}` : `Year-end documents ${i} for Müller & Söhne`)));
compare('1 record, one 24 MB string field', Buffer.from(JSON.stringify({ data: [{ id: 'x', title: 'a'.repeat(24 * 1024 * 1024) }] }), 'utf8'));
compare(`${Math.round(count / 10).toLocaleString('en')} records full of "}," and \\"`, requestBody(Math.round(count / 10), (i) => `"},{"x":${i}},`.repeat(20)));
