// The survivors, checked against the whole in-process suite. Stryker runs each mutant against the tests its coverage
// says reach it; a test that reaches the code in a way coverage does not see (a module loaded before the test, a
// server started in beforeAll) is never run against it, so a reason written for a survivor ("equivalent",
// "unreachable") may be false. This applies every recorded survivor at once to a copy of the project and runs every
// test file that runs the source in its own process (vitest.stryker.config.ts's set plus the unit files the units
// runs use; the built-CLI, package and browser files run dist/, which holds no mutant), a fresh module graph per file.
// If nothing fails, every survivor survives that suite. Where something fails, the set is halved (module by module
// first) and only the failing files are run again, until each failure is pinned to the mutants that cause it.
// docs/proof.md says how long it takes.
//
//   node scripts/mutation-verify.mjs [--files src/a.ts,src/b.ts --out mutation/verified-<what>.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { inProcessCopy } from './in-process-suite.mjs';
import { commitOf, replacementText } from './mutation-sample.mjs';

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { files: { type: 'string' }, out: { type: 'string' } } });
const record = JSON.parse(readFileSync(join(root, 'mutation/stryker-incremental.json'), 'utf8'));
const only = values.files ? new Set(values.files.split(',')) : undefined;

/** Character offset of a 1-based line and column. */
function offsetIn(source, { line, column }) {
  let at = 0;
  for (let l = 1; l < line; l++) at = source.indexOf('\n', at) + 1;
  return at + column - 1;
}

// Every survivor (and mutant no test reached) that was run: static mutants were not run, so there is no reason to check.
const survivors = [];
for (const [file, { mutants, source }] of Object.entries(record.files)) {
  if (only && !only.has(file)) continue;
  if (readFileSync(join(root, file), 'utf8') !== source) throw new Error(`${file} changed since its mutation run: run it again first (npm run mutate)`);
  for (const m of mutants) {
    if (m.status !== 'Survived' && m.status !== 'NoCoverage') continue;
    survivors.push({ file, mutant: m, from: offsetIn(source, m.location.start), to: offsetIn(source, m.location.end) });
  }
}

/** The sources with these mutants in place; mutants that overlap one already taken wait for a later set. */
function applied(set) {
  const byFile = new Map();
  for (const s of set) byFile.set(s.file, [...(byFile.get(s.file) ?? []), s]);
  const out = new Map();
  for (const [file, list] of byFile) {
    let text = record.files[file].source;
    for (const s of [...list].sort((a, b) => b.from - a.from)) text = text.slice(0, s.from) + replacementText(s.mutant) + text.slice(s.to);
    out.set(file, text);
  }
  return out;
}

/** Splits the survivors into sets with no two overlapping in one file (most fit in the first). */
function disjointSets(list) {
  const sets = [];
  for (const s of list) {
    const fits = sets.find((set) => !set.some((t) => t.file === s.file && t.from < s.to && s.from < t.to));
    if (fits) fits.push(s);
    else sets.push([s]);
  }
  return sets;
}

const suite = inProcessCopy(root, 'verify');
const started = Date.now();

/** Runs the suite (or these test files) with these mutants in place: the failing tests. */
function failuresWith(set, files = []) {
  const sources = applied(set);
  for (const [file, text] of sources) writeFileSync(join(suite.copy, file), text);
  try {
    return suite.run(files);
  } finally {
    for (const file of sources.keys()) writeFileSync(join(suite.copy, file), record.files[file].source);
  }
}

/** Two halves of a set: by modules while it spans several (balanced by count), else by its mutants. */
function halves(set) {
  const files = [...new Set(set.map((s) => s.file))];
  if (files.length === 1) return [set.slice(0, set.length >> 1), set.slice(set.length >> 1)];
  const first = [];
  for (const file of files) {
    if (first.length && first.length + set.filter((s) => s.file === file).length > set.length / 2) break;
    first.push(...set.filter((s) => s.file === file));
  }
  if (first.length === set.length) first.splice(set.filter((s) => s.file === files.at(-1)).length * -1);
  return [first, set.filter((s) => !first.includes(s))];
}

const where = (s) =>
  `${s.file}:${s.mutant.location.start.line}:${s.mutant.location.start.column} ${s.mutant.mutatorName} → ${JSON.stringify(s.mutant.replacement.slice(0, 60))}`;
const killed = [];
const interacting = [];

// A failure outside every test (the global setup loads the sandbox, and with it the domain's modules) names no file
// to run again. Such a failure usually comes back with one small file as well, so it is tried first: pinning it then
// costs seconds a step instead of the whole suite's minutes.
const PROBE = ['test/log-units.test.ts'];

/** The files to run a set's halves with: the failing files, or for a failure outside the tests the probe where it fails too (else every file). */
function filesFor(set, failures) {
  if (!failures.some((f) => f.startsWith('('))) return [...new Set(failures.map((f) => f.split(' ')[0]))];
  return failuresWith(set, PROBE).length ? PROBE : [];
}

/** Pins the failures of a set that fails to its mutants: halves until one mutant alone fails (killed) or neither half does (they act together). */
function pin(set, failures, files = set.length === 1 ? [] : filesFor(set, failures)) {
  if (set.length === 1) {
    killed.push({ mutant: where(set[0]), id: set[0].mutant.id, by: failures });
    console.log(`  killed: ${where(set[0])} by ${failures.slice(0, 3).join('; ')}`);
    return;
  }
  let pinned = false;
  for (const part of halves(set)) {
    const f = failuresWith(part, files);
    console.log(
      `  ${part.length} mutant(s) of ${new Set(part.map((s) => s.file)).size} module(s): ${f.length} failing test(s)${files === PROBE ? ' with the probe' : ''} (run ${suite.runs()}, ${Math.round((Date.now() - started) / 60_000)} min)`,
    );
    if (f.length) {
      pinned = true;
      pin(part, f);
    }
  }
  // With the probe alone, a half may fail only beside files the probe leaves out: the halves are tried again with every file.
  if (!pinned && files === PROBE) return pin(set, failures, []);
  if (!pinned) interacting.push({ mutants: set.map(where), failures });
}

try {
  const sets = disjointSets(survivors);
  console.log(
    `${survivors.length} survivors of ${new Set(survivors.map((s) => s.file)).size} modules, in ${sets.length} set(s) of mutants that do not overlap`,
  );
  for (const set of sets) {
    const f = failuresWith(set);
    console.log(
      `${set.length} mutant(s) at once: ${f === null ? 'the build fails' : `${f.length} failing test(s)`} (run ${suite.runs()}, ${Math.round((Date.now() - started) / 60_000)} min)`,
    );
    if (f === null || f.length) pin(set, f);
  }
} finally {
  suite.remove();
}

const minutes = Math.round((Date.now() - started) / 6_000) / 10;
const result = {
  commit: commitOf(root),
  date: new Date().toISOString().slice(0, 10),
  suite: 'every test file that runs the source in its own process (vitest.stryker.config.ts plus the unit files), one era, a fresh module graph per file',
  survivors: survivors.length,
  runs: suite.runs(),
  minutes,
  killed,
  interacting,
};
// The whole record's check goes to mutation/verified.json; a check of some modules only where --out names.
const out = values.out ?? (only ? undefined : 'mutation/verified.json');
if (out) writeFileSync(join(root, out), `${JSON.stringify({ ...result, ...(only ? { modules: [...only] } : {}) }, null, 2)}\n`);
console.log(
  `${survivors.length - killed.length - interacting.flatMap((i) => i.mutants).length} of ${survivors.length} survive the whole suite; ${killed.length} killed; ${interacting.length} set(s) that fail only together; ${suite.runs()} runs in ${minutes} min`,
);
process.exitCode = killed.length || interacting.length ? 1 : 0;
