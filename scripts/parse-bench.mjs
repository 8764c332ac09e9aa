// node scripts/parse-bench.mjs [--ref <git ref>] [--records N] [--runs N]
//
// Times src/api/list-stream.ts (or, with --ref, the file as it is at that git ref, e.g. `--ref main`)
// against one JSON.parse of the whole body, each body fed to the parser in 64 KiB chunks:
//   - N list records (default 100,000) of the documented request shape;
//   - one record holding a 24 MB string field (the linear-time case);
//   - N/10 records whose strings are full of "}," and escaped quotes (hostile to a cut-and-try parser).
// Prints the median of --runs runs (default 7) in ms and the ratio stream / JSON.parse.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};
const ref = option('ref', undefined);
const count = Number(option('records', 100_000));
const runs = Number(option('runs', 7));
const CHUNK = 64 * 1024;

// Bundle the parser (as it is now, or at --ref) into a temporary module.
const source = ref ? execFileSync('git', ['show', `${ref}:src/api/list-stream.ts`], { cwd: root, encoding: 'utf8' }) : readFileSync(`${root}src/api/list-stream.ts`, 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'parse-bench-'));
const out = join(dir, 'list-stream.mjs');
await build({ stdin: { contents: source, resolveDir: `${root}src/api`, loader: 'ts', sourcefile: 'list-stream.ts' }, bundle: true, platform: 'node', format: 'esm', target: 'node20.18', outfile: out, logLevel: 'warning' });
const { ListStreamParser } = await import(out);
rmSync(dir, { recursive: true, force: true });

function requestBody(n, title = (i) => `Year-end documents ${i} for Müller & Söhne`) {
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

function median(fn) {
  const times = [];
  let result;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    result = fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(runs / 2)], result };
}

function compare(name, body) {
  const chunks = chunksOf(body);
  const text = body.toString('utf8');
  const whole = median(() => JSON.parse(text).data.length);
  const decoded = median(() => JSON.parse(body.toString('utf8')).data.length);
  const streamed = median(() => {
    const parser = new ListStreamParser('request', (v) => v);
    for (const chunk of chunks) parser.write(chunk);
    return parser.end().length;
  });
  if (streamed.result !== whole.result) throw new Error(`${name}: ${streamed.result} records streamed, ${whole.result} parsed`);
  const mb = (body.length / 1024 / 1024).toFixed(1);
  console.log(
    `${name.padEnd(34)} ${mb.padStart(6)} MB  JSON.parse ${whole.ms.toFixed(1).padStart(7)} ms` +
      `  (decode+parse ${decoded.ms.toFixed(1).padStart(7)} ms)  stream ${streamed.ms.toFixed(1).padStart(7)} ms  ratio ${(streamed.ms / whole.ms).toFixed(2)}×`,
  );
}

console.log(`list-stream.ts ${ref ? `at ${ref}` : '(working tree)'}, node ${process.version}, 64 KiB chunks, median of ${runs}`);
compare(`${count.toLocaleString('en')} records`, requestBody(count));
compare('1 record, one 24 MB string field', Buffer.from(JSON.stringify({ data: [{ id: 'x', title: 'a'.repeat(24 * 1024 * 1024) }] }), 'utf8'));
compare(`${Math.round(count / 10).toLocaleString('en')} records full of "}," and \\"`, requestBody(Math.round(count / 10), (i) => `"},{"x":${i}},`.repeat(20)));
