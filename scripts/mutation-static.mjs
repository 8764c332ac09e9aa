// The static mutants, run. Stryker leaves out ("ignoreStatic") the mutants reached only while a module loads: a
// constant, a regular expression, a table built at the top of a file. Testing one needs a fresh module graph, which
// Stryker's reused worker does not give. This script gives it: each static mutant of the named modules is applied
// alone to a copy of the project, and the test file likeliest to kill it (the one whose tests killed most of the
// module's mutants near it, in the record) is run with a fresh module graph, stopping at the first failure. The
// mutants it leaves are then applied together and the whole in-process suite is run (halved where that fails);
// mutants that touch the same text as one already in place (one regular expression's, a literal inside an object's)
// wait for a later set, run against the files that reach their module (those covering its other mutants) and those
// that killed the mutant whose text they share. A survivor here survives every test that can see it. The result is
// mutation/static.json, which `npm run mutate -- --check` reads: its kills count in the score, its survivors need a reason in
// mutation/survivors.json like any other, and a module changed since this ran fails the check under --ci.
// docs/proof.md says how long it takes.
//
//   node scripts/mutation-static.mjs --files src/auth/pkce.ts,src/text/redact.ts
//   node scripts/mutation-static.mjs --survivors --files src/auth/pkce.ts   # only the static mutants its last run left, its kills kept
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { inProcessCopy } from './in-process-suite.mjs';
import { applyMutant, commitOf } from './mutation-sample.mjs';

const root = resolve(import.meta.dirname, '..');
const OUT = join(root, 'mutation/static.json');
const { values } = parseArgs({ options: { files: { type: 'string' }, survivors: { type: 'boolean' } } });
if (!values.files) {
  console.error('mutation-static: name the modules: --files src/a.ts,src/b.ts');
  process.exit(2);
}
const record = JSON.parse(readFileSync(join(root, 'mutation/stryker-incremental.json'), 'utf8'));
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** Test id → its file, over the record. */
const fileOfTest = new Map();
for (const [file, { tests }] of Object.entries(record.testFiles ?? {})) for (const t of tests) fileOfTest.set(t.id, file);

const modules = values.files.split(',');
const sameMutant = (a, b) =>
  a.mutatorName === b.mutator &&
  a.replacement === b.replacement &&
  a.location.start.line === b.location.start.line &&
  a.location.start.column === b.location.start.column;
/** With --survivors: each module's last static run, which must have been on the source it has now. */
const earlier = new Map();
if (values.survivors) {
  const last = existsSync(OUT) ? JSON.parse(readFileSync(OUT, 'utf8')).modules : {};
  for (const file of modules) {
    const run = last[file];
    if (!run || run.sha256 !== sha256(record.files[file]?.source ?? '')) throw new Error(`${file} has no static run on its present source: run it whole first`);
    earlier.set(file, run);
  }
}
const work = [];
for (const file of modules) {
  const entry = record.files[file];
  if (!entry) throw new Error(`${file} has no mutation run in the record: run npm run mutate -- --mutate ${file} first`);
  if (readFileSync(join(root, file), 'utf8') !== entry.source) throw new Error(`${file} changed since its mutation run: run it again first`);
  // The files whose tests reach the module at all: those that cover any of its mutants that were run.
  const reach = new Set(
    entry.mutants
      .flatMap((m) => m.coveredBy ?? [])
      .map((id) => fileOfTest.get(id))
      .filter(Boolean),
  );
  const killers = entry.mutants.filter((m) => m.status === 'Killed' && m.killedBy?.length);
  for (const m of entry.mutants.filter((m) => m.status === 'Ignored' && /^Static mutant/.test(m.statusReason ?? ''))) {
    if (earlier.has(file) && !earlier.get(file).mutants.some((e) => e.status === 'Survived' && sameMutant(m, e))) continue;
    work.push({ file, mutant: m, files: [...reach].filter((f) => existsSync(join(root, f))).sort(), first: likeliest(m, killers) });
  }
}

/**
 * The test file likeliest to kill a static mutant: the one whose tests killed most of the module's mutants near it
 * (within five lines), else most of the module's. Run alone first, it settles most static mutants in one file's
 * time; the mutants it leaves standing are run together against the whole suite, and halved where that fails.
 */
function likeliest(mutant, killers) {
  const tally = (list) => {
    const count = new Map();
    for (const k of list) {
      const file = fileOfTest.get(k.killedBy[0]);
      if (file && existsSync(join(root, file))) count.set(file, (count.get(file) ?? 0) + 1);
    }
    return [...count].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
  };
  const line = mutant.location.start.line;
  return tally(killers.filter((k) => Math.abs(k.location.start.line - line) <= 5)) ?? tally(killers);
}

const suite = inProcessCopy(root, 'static');
const started = Date.now();
const minutes = () => Math.round((Date.now() - started) / 6_000) / 10;

/** Runs these test files (all when empty) with these mutants in place: the failing tests. */
function failuresWith(items, files, bail) {
  const changed = new Map();
  // Last in the file first, so that each mutant's line and column still point where they did in the source.
  const fromTheEnd = [...items].sort(
    (a, b) => b.mutant.location.start.line - a.mutant.location.start.line || b.mutant.location.start.column - a.mutant.location.start.column,
  );
  for (const s of fromTheEnd) changed.set(s.file, applyMutant(changed.get(s.file) ?? record.files[s.file].source, s.mutant));
  for (const [file, text] of changed) writeFileSync(join(suite.copy, file), text);
  try {
    return suite.run(files, bail ? ['--bail=1'] : []);
  } finally {
    for (const file of changed.keys()) writeFileSync(join(suite.copy, file), record.files[file].source);
  }
}

const where = (s) => `${s.file}:${s.mutant.location.start.line} ${s.mutant.mutatorName} → ${JSON.stringify(s.mutant.replacement.slice(0, 60))}`;

const results = [];

/** Whether two mutants touch the same text (the same regular expression, say): such mutants are never in place together. */
const overlap = (a, b) => {
  const at = ({ line, column }) => line * 1e6 + column;
  return a.file === b.file && at(a.mutant.location.start) < at(b.mutant.location.end) && at(b.mutant.location.start) < at(a.mutant.location.end);
};

/** The mutants in sets whose members touch no text in common, so each set can be put in place at once. */
function disjointSets(list) {
  const sets = [];
  for (const s of list) {
    const fits = sets.find((set) => !set.some((t) => overlap(s, t)));
    if (fits) fits.push(s);
    else sets.push([s]);
  }
  return sets;
}

/** The files of failing tests (a failure is "<file> › <test>", or a parenthesised note that names no file: then all). */
const filesOf = (failures) => (failures.some((f) => f.startsWith('(')) ? [] : [...new Set(failures.map((f) => f.split(' ')[0]))]);

/** The test files that killed a mutant touching the same text as this one, in this run or in the module's last (--survivors). */
function killersOfOverlapping(s) {
  const killedHere = results.filter((r) => r.status === 'Killed' && overlap(s, r.s)).flatMap((r) => r.by);
  const killedBefore = (earlier.get(s.file)?.mutants ?? [])
    .filter((e) => e.status === 'Killed' && overlap(s, { file: s.file, mutant: { location: e.location } }))
    .flatMap((e) => e.by ?? []);
  return filesOf([...killedHere, ...killedBefore].filter((f) => !f.startsWith('(')));
}

/** Settles a set of mutants whose run failed these tests: each killed mutant pinned, the rest survive. */
function settle(set, failures) {
  if (!failures.length) {
    for (const s of set) results.push({ s, status: 'Survived' });
    return;
  }
  if (set.length === 1) {
    console.log(`  killed   ${where(set[0])} by ${failures[0]} (run ${suite.runs()}, ${minutes()} min)`);
    results.push({ s: set[0], status: 'Killed', by: failures.slice(0, 3) });
    return;
  }
  const half = set.length >> 1;
  const parts = [set.slice(0, half), set.slice(half)].map((part) => ({ part, failures: failuresWith(part, filesOf(failures), false) }));
  for (const { part, failures: f } of parts) console.log(`  ${part.length} mutant(s): ${f.length} failing test(s) (run ${suite.runs()}, ${minutes()} min)`);
  if (parts.every((p) => !p.failures.length)) {
    // Neither half fails alone: these mutants fail a test only together, and each survives alone.
    console.log(`  ${set.length} mutant(s) fail only together; each survives alone`);
    for (const s of set) results.push({ s, status: 'Survived' });
    return;
  }
  for (const { part, failures: f } of parts) settle(part, f);
}
try {
  console.log(`${work.length} static mutants of ${modules.length} module(s)`);
  const left = [];
  // Run again (--survivors), a mutant has already stood its likeliest file: it goes to the whole suite at once.
  for (const s of values.survivors ? [] : work) {
    // The likeliest file alone (or, for a module no test of which has killed anything, every file that reaches it);
    // a mutant it leaves goes to the whole suite below, with the others left, rather than to a run of its own.
    const f = s.first ? failuresWith([s], [s.first], true) : s.files.length ? failuresWith([s], s.files, true) : [];
    console.log(`  ${f.length ? 'killed  ' : 'survived'} ${where(s)}${f.length ? ` by ${f[0]}` : ''} (run ${suite.runs()}, ${minutes()} min)`);
    if (f.length) results.push({ s, status: 'Killed', by: f.slice(0, 3) });
    else left.push(s);
  }
  if (values.survivors) left.push(...work);
  // What the module's own tests did not kill, against the whole in-process suite: together first; where that fails,
  // halved, each half run against the files its parent failed, until each failure is pinned to one mutant. A half
  // that fails nothing survives whole in one run; mutants that fail only together survive alone, and are said so.
  // The first set goes to the whole suite. Later sets hold only mutants that touch the same text as one before them
  // (the many mutants of one regular expression): each goes to the files that reach its modules, not to the whole
  // suite again, which would cost a whole run per mutant of one expression.
  for (const [i, set] of disjointSets(left).entries()) {
    // A later set's mutants each touch the text of one before them (a literal inside an object literal, say): the files
    // that killed that one are run too, beside those that reach the module (a listing's snapshot reaches a schema's
    // descriptions, yet no test of the tool's code covers them).
    const files = i === 0 ? [] : [...new Set([...set.flatMap((s) => s.files), ...set.flatMap(killersOfOverlapping)])].sort();
    const together = failuresWith(set, files, false);
    const where = i === 0 ? 'the whole suite' : `the ${files.length} file(s) that reach their modules or killed the mutants they share text with`;
    console.log(`${set.length} left, at once under ${where}: ${together.length} failing test(s) (run ${suite.runs()}, ${minutes()} min)`);
    settle(set, together);
  }
} finally {
  suite.remove();
}

// Kept beside the results of the modules not run this time, each with the source it was run on.
const before = existsSync(OUT) ? JSON.parse(readFileSync(OUT, 'utf8')) : { modules: {} };
for (const file of modules) {
  before.modules[file] = {
    sha256: sha256(record.files[file].source),
    commit: commitOf(root),
    date: new Date().toISOString().slice(0, 10),
    mutants: [
      // With --survivors, the kills of the module's last run stand beside this run's results.
      ...(earlier.get(file)?.mutants ?? []).filter((e) => e.status === 'Killed'),
      ...results
        .filter((r) => r.s.file === file)
        .map(({ s, status, by }) => ({
          mutator: s.mutant.mutatorName,
          replacement: s.mutant.replacement,
          location: s.mutant.location,
          status,
          ...(by ? { by } : {}),
        })),
    ],
  };
}
before.modules = Object.fromEntries(Object.entries(before.modules).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(OUT, `${JSON.stringify(before, null, 2)}\n`);
const killed = results.filter((r) => r.status === 'Killed').length;
console.log(`${killed} of ${results.length} static mutants killed, ${results.length - killed} survive; ${suite.runs()} runs in ${minutes()} min`);
