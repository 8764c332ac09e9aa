#!/usr/bin/env node
// npm run mutate [-- options]: the mutation run (docs/proof.md).
// Runs Stryker (stryker.config.mjs) over the modules that hold the promises, prints the score per
// module, and checks every surviving or uncovered mutant against mutation/survivors.json: each one
// there carries the reason it cannot matter. Exit 1 on a survivor not listed, a reason still "TODO",
// or a score under 90%.
//
// Options of its own:
//   --full             re-test every mutant (default: incremental, only mutants in changed code or
//                      reached by changed tests are run again; the rest is read from
//                      mutation/stryker-incremental.json)
//   --ci               incremental, and only over the files the incremental record already holds
//                      (a module never run in full is left to --full, which takes hours). The gate
//                      against regressions: exit 1 on a survivor not in the baseline, or on a module
//                      whose source differs from the one its record was run on; the score and the
//                      score is printed as what is left to reach, not failed (a reason that is not final fails)
//   --check            no Stryker run: check the last report (reports/mutation/mutation.json) again
//   --report <file>    with --check: check that report instead (e.g. mutation/stryker-incremental.json,
//                      which a run stopped with Ctrl-C leaves with what it had tested)
//   --sample N         after the check: re-run N recorded kills (seeded by the commit), each mutant applied
//                      again to a copy of the project and its killing test run; exit 1 if one survives
//                      (scripts/mutation-sample.mjs). CI runs it with the check.
//   --forget a,b       remove these modules (not in the mutated set) from the record, and write its digest again
//   --moved-tests      after test files were renamed, split or reformatted: each recorded test is found again by its
//                      full title and the record told where it stands (scripts/mutation-moved.mjs); digest written again
//   --write-baseline   add new survivors to mutation/survivors.json with reason "TODO" (the check
//                      fails until each has a real reason) and drop entries now killed
//   --units            run the mutants against vitest.stryker-units.config.ts, the files that test the modules
//                      every test reaches (config.ts, api/errors.ts, errors.ts, api/records.ts, api/exchange.ts)
//                      directly: under the whole suite each of their survivors costs minutes
//   --suite <name>     the same for another group of modules (stryker.config.mjs SUITES: units, requests, lists, clients, fit, calls)
// Every other option goes to Stryker as it is: --mutate <globs, comma-separated>, --concurrency N,
// --logLevel debug, --timeoutMS N, …
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const BASELINE = resolve(ROOT, 'mutation/survivors.json');
const MIN_SCORE = 90; // docs/proof.md
/** Over the mutants a test can kill: without the survivors listed as equivalent or unreachable (their reasons begin so). */
const MIN_KILLABLE = 95;
const CANNOT_BE_KILLED = /^(Equivalent|Unreachable|Unobservable|Not visible|Object keys are unique|V8 sorts)/;
const KILLED_BY_SUITE = /^Killed by the whole suite/;
const { default: config, SUITES, suiteOf } = await import(pathToFileURL(resolve(ROOT, 'stryker.config.mjs')).href);
const REPORT = resolve(ROOT, config.jsonReporter.fileName);
const INCREMENTAL = resolve(ROOT, config.incrementalFile);
const DIGEST_NAME = 'mutation/record.sha256';
const DIGEST = resolve(ROOT, DIGEST_NAME);
/** The static mutants' runs (scripts/mutation-static.mjs): Stryker's record leaves them out. */
const STATIC = resolve(ROOT, 'mutation/static.json');

// ---- arguments ------------------------------------------------------------------------------------
const own = { full: false, ci: false, check: false, writeBaseline: false, report: undefined, sample: 0, forget: undefined, movedTests: false };
const strykerOptions = {};
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--full') own.full = true;
  else if (arg === '--ci') own.ci = true;
  else if (arg === '--check') own.check = true;
  else if (arg === '--write-baseline') own.writeBaseline = true;
  else if (arg === '--report') own.report = resolve(args[++i] ?? '');
  else if (arg === '--sample') own.sample = Number(args[++i]);
  else if (arg === '--forget') own.forget = (args[++i] ?? '').split(',').filter(Boolean);
  else if (arg === '--moved-tests') own.movedTests = true;
  // The modules every test reaches, run against the files that test them directly (vitest.stryker-units.config.ts).
  else if (arg === '--units') strykerOptions.vitest = { configFile: SUITES.units.config, pool: 'forks', related: true };
  // A module group run against the files that test it directly (stryker.config.mjs SUITES).
  else if (arg === '--suite') {
    const suite = SUITES[args[++i] ?? ''];
    if (!suite) {
      console.error(`mutate: --suite takes one of ${Object.keys(SUITES).join(', ')} (stryker.config.mjs SUITES)`);
      process.exit(2);
    }
    strykerOptions.vitest = { configFile: suite.config, pool: 'forks', related: true };
  } else if (arg === '--incremental')
    strykerOptions.incremental = true; // the default; accepted
  else if (arg.startsWith('--')) {
    const [name, inline] = arg.slice(2).split(/=(.*)/s);
    const next = args[i + 1];
    const value = inline ?? (next !== undefined && !next.startsWith('--') ? (i++, next) : 'true');
    strykerOptions[name] =
      name === 'mutate' ? value.split(',') : value === 'true' ? true : value === 'false' ? false : /^\d+$/.test(value) ? Number(value) : value;
  } else {
    console.error(`mutate: unexpected argument ${arg} (options start with --; see the top of scripts/mutate.mjs)`);
    process.exit(2);
  }
}

// ---- forgetting modules -----------------------------------------------------------------------------
// A module taken out of the set (or run only to see where it stands) leaves the record with its results; the record's
// digest is written again, as after a run. A module still in the set is refused: the check would fail on it at once.
if (own.forget?.length) {
  const record = JSON.parse(readFileSync(INCREMENTAL, 'utf8'));
  const inSet = own.forget.filter((file) => config.mutate.some((glob) => matchesGlob(file, glob)));
  if (inSet.length) {
    console.error(`mutate --forget: still in the mutated set (stryker.config.mjs): ${inSet.join(', ')}`);
    process.exit(2);
  }
  for (const file of own.forget) delete record.files[file];
  writeFileSync(INCREMENTAL, JSON.stringify(record, null, 2));
  writeDigest();
  console.log(`mutate --forget: ${own.forget.length} module(s) left the record; ${Object.keys(record.files).length} remain`);
  process.exit(0);
}

// ---- tests moved ------------------------------------------------------------------------------------
// Test files renamed, split by behaviour or reformatted: the record follows each test by its full title, so that the
// next run does not take them for new tests (and run every mutant they cover again). Written as a run writes it.
if (own.movedTests) {
  const { carryTests, currentTests, sourceIn } = await import('./mutation-moved.mjs');
  const record = JSON.parse(readFileSync(INCREMENTAL, 'utf8'));
  const { moved, dropped, orphaned } = carryTests(record, currentTests(ROOT), sourceIn(ROOT));
  writeFileSync(INCREMENTAL, JSON.stringify(record, null, 2));
  writeDigest();
  console.log(
    `mutate --moved-tests: ${moved} test(s) found at another file or position, ${dropped} not found (dropped: the next run tests their mutants again), ${orphaned} killed mutant(s) left without their test`,
  );
  process.exit(0);
}

// ---- the run --------------------------------------------------------------------------------------
/** The incremental record of the last runs, if any (Stryker's JSON report format). */
const readJson = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);

if (!own.check) {
  if (!existsSync(resolve(ROOT, 'dist/cli.js'))) {
    console.error('mutate: dist/ is missing; some tests in the mutated files run the built CLI. Run `npm run build` first (npm test does).');
    process.exit(2);
  }
  const before = readJson(INCREMENTAL);
  const options = { incremental: true, ...strykerOptions };
  if (own.full) options.force = true;
  if (own.ci) {
    const known = Object.keys(before?.files ?? {});
    if (!known.length) {
      console.error(`mutate --ci: ${config.incrementalFile} holds no result yet; run \`npm run mutate -- --full\` once and commit it.`);
      process.exit(1);
    }
    const missing = config.mutate.filter((glob) => !known.some((file) => matchesGlob(file, glob)));
    if (missing.length) console.log(`mutate --ci: not in the incremental record yet (run --full for them): ${missing.join(', ')}`);
    options.mutate = known.filter((file) => config.mutate.some((glob) => matchesGlob(file, glob)));
    if (!process.stdout.isTTY) options.reporters = ['json', 'dots'];
  }
  const started = Date.now();
  const Stryker = await loadStryker();
  try {
    await new Stryker(options).runMutationTest();
  } catch (error) {
    console.error(`mutate: Stryker failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  console.log(`\nmutate: Stryker took ${formatDuration(Date.now() - started)}`);
  // A run over part of the modules (--mutate, --ci) keeps the others' results in the record.
  if (before) mergeIncremental(before, readJson(INCREMENTAL), options.mutate ?? config.mutate);
  if (existsSync(INCREMENTAL)) writeDigest();
}

// ---- the check ------------------------------------------------------------------------------------
const report = readJson(own.report ?? REPORT);
if (!report) {
  console.error(`mutate: no report at ${own.report ?? REPORT}`);
  process.exit(1);
}
const failures = check(report);
if (own.sample > 0 && !failures.length) {
  const { sampleKills, commitOf } = await import('./mutation-sample.mjs');
  const seed = process.env.DOCREQ_SAMPLE_SEED ?? commitOf(ROOT);
  const started = Date.now();
  console.log(`\nre-running ${own.sample} recorded kills (seed ${seed.slice(0, 12)}):`);
  failures.push(...sampleKills(ROOT, report, own.sample, seed, suiteOf));
  console.log(`the sample took ${formatDuration(Date.now() - started)}`);
}
if (failures.length) {
  console.log(`\nmutate FAILED:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
  process.exit(1);
}
console.log(own.ci ? '\nmutate --ci passed: no surviving mutant outside mutation/survivors.json' : '\nmutate passed');

// ---- helpers --------------------------------------------------------------------------------------

/**
 * Stryker 10 declares Node >= 22 and its CLI refuses older ones; the project runs on Node 20.18+,
 * where the run itself works (measured: docs/proof.md). Its API is loaded past that start-up check.
 */
async function loadStryker() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return (await import('@stryker-mutator/core')).Stryker;
  return (await import(pathToFileURL(resolve(ROOT, 'node_modules/@stryker-mutator/core/dist/src/stryker.js')).href)).Stryker;
}

/** A reason that settles a survivor: not empty, not a note to someone ("TODO…", "FIXME", "to be checked", "for the lead"). */
function isFinal(reason) {
  const text = (reason ?? '').trim();
  return text.length > 0 && !/\b(TODO|FIXME|XXX|TBD)\b|to be (checked|verified|confirmed)|for the lead/i.test(text);
}

/** Every TypeScript file under src/, as the record names them. */
function sourceFiles() {
  return readdirSync(resolve(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) =>
      relative(ROOT, join(e.parentPath ?? e.path, e.name))
        .split(sep)
        .join('/'),
    );
}

/** The record's digest now and as this script last wrote it (undefined before the first digest). */
function recordDigest() {
  if (!existsSync(DIGEST) || !existsSync(INCREMENTAL)) return undefined;
  return { kept: readFileSync(DIGEST, 'utf8').trim(), now: sha256(readFileSync(INCREMENTAL)) };
}

function writeDigest() {
  writeFileSync(DIGEST, `${sha256(readFileSync(INCREMENTAL))}\n`);
}

/** The commands that run these modules again, each with its suite (stryker.config.mjs SUITES). */
function runCommands(files) {
  const bySuite = new Map();
  for (const file of files) {
    const name = Object.keys(SUITES).find((n) => SUITES[n].modules.includes(file));
    bySuite.set(name, [...(bySuite.get(name) ?? []), file]);
  }
  return [...bySuite].map(([name, list]) => `\`npm run mutate -- ${name ? `--suite ${name} ` : ''}--mutate ${list.join(',')}\``).join(' and ');
}

/** Enough of glob matching for the patterns of stryker.config.mjs (`**`, `*`). */
function matchesGlob(file, glob) {
  const re = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\//g, '(?:.*/)?')
    .replace(/\*\*/g, '.*')
    .replace(/\*/g, '[^/]*');
  return new RegExp(`^${re}$`).test(file);
}

/**
 * Puts back the results of the modules this run did not mutate. Test ids are the run's own (Stryker numbers them
 * afresh each run), so the kept mutants' coveredBy and killedBy are renamed to this run's ids for the same test
 * (file and name); a test this run does not know is added under a new id, so that nothing points at another test.
 * Stryker's own incremental report also rewrites a module outside the run's --mutate whose source changed: the
 * module's new source, with the old results of the mutants its diff kept and none for its new code. That entry
 * would pass for a run of the module as it is; the module's last real run is put back instead, so the check still
 * says it changed since its run.
 */
function mergeIncremental(before, after, mutated) {
  if (!after) return;
  after.testFiles ??= {};
  const oldTests = new Map();
  for (const [file, { tests }] of Object.entries(before.testFiles ?? {})) for (const t of tests) oldTests.set(t.id, { file, test: t });
  const newIds = new Map();
  let next = 0;
  for (const [file, { tests }] of Object.entries(after.testFiles)) {
    for (const t of tests) {
      newIds.set(JSON.stringify([file, t.name]), t.id);
      if (/^\d+$/.test(t.id)) next = Math.max(next, Number(t.id) + 1);
    }
  }
  const idFor = (oldId) => {
    const old = oldTests.get(oldId);
    if (!old) return undefined;
    const key = JSON.stringify([old.file, old.test.name]);
    if (!newIds.has(key)) {
      const id = String(next++);
      newIds.set(key, id);
      const entry = (after.testFiles[old.file] ??= { ...before.testFiles[old.file], tests: [] });
      entry.tests.push({ ...old.test, id });
    }
    return newIds.get(key);
  };
  const globs = mutated.map((glob) => glob.replace(/:\d+(?:-\d+)?$/, ''));
  const ranThisTime = (file) => globs.some((glob) => matchesGlob(file, glob));
  for (const [file, value] of Object.entries(before.files ?? {})) {
    if ((file in after.files && ranThisTime(file)) || !existsSync(resolve(ROOT, file))) continue;
    for (const m of value.mutants) {
      if (m.coveredBy) m.coveredBy = m.coveredBy.map(idFor).filter((id) => id !== undefined);
      if (m.killedBy) m.killedBy = m.killedBy.map(idFor).filter((id) => id !== undefined);
    }
    after.files[file] = value;
  }
  writeFileSync(INCREMENTAL, JSON.stringify(after, null, 2));
}

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

function formatDuration(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** The source line a mutant starts on, trimmed: with the mutator and the replacement, what names a mutant across edits. */
function sameLocation(a, b) {
  return a.start.line === b.start.line && a.start.column === b.start.column && a.end.line === b.end.line && a.end.column === b.end.column;
}

function lineOf(source, line) {
  return (source.split('\n')[line - 1] ?? '').trim();
}

/** The mutated text itself (location columns are 1-based, end exclusive). */
function originalOf(source, { start, end }) {
  const lines = source.split('\n');
  const first =
    start.line === end.line
      ? lines[start.line - 1].slice(start.column - 1, end.column - 1)
      : [lines[start.line - 1].slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1].slice(0, end.column - 1)].join('\n');
  return first.length > 200 ? `${first.slice(0, 200)}…` : first;
}

/** What names a mutant in mutation/survivors.json: file, mutator, replacement and its source line's text. */
function keyOf(e) {
  return JSON.stringify([e.file, e.mutator, e.replacement, e.line]);
}

function check(report) {
  const failures = [];
  // What docs/proof.md asks beyond "no new survivor": a failure, except under --ci (see the top).
  const target = (text) => (own.ci ? console.log(`\nnot yet met: ${text}`) : failures.push(text));
  const UNDETECTED = new Set(['Survived', 'NoCoverage']);
  const rows = [];
  const total = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, ignored: 0, errors: 0 };
  const undetected = [];
  // The static mutants run by scripts/mutation-static.mjs, for the modules whose source is the one they were run on.
  const statics = readJson(STATIC)?.modules ?? {};
  const staleStatic = [];
  for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const row = { file, killed: 0, timeout: 0, survived: 0, noCoverage: 0, ignored: 0, errors: 0 };
    const run = statics[file];
    if (run && run.sha256 !== sha256(source)) staleStatic.push(file);
    const ran = run && run.sha256 === sha256(source) ? run.mutants : [];
    // Each one replaces a mutant of the record that Stryker left out as static (the same place and replacement).
    for (const m of mutants) {
      if (m.status !== 'Ignored' || !ran.length) continue;
      const i = ran.findIndex((r) => r.replacement === m.replacement && r.mutator === m.mutatorName && sameLocation(r.location, m.location));
      if (i !== -1) m.status = ran.splice(i, 1)[0].status;
    }
    for (const m of mutants) {
      if (m.status === 'Killed') row.killed++;
      else if (m.status === 'Timeout') row.timeout++;
      else if (m.status === 'Survived') row.survived++;
      else if (m.status === 'NoCoverage') row.noCoverage++;
      else if (m.status === 'Ignored') row.ignored++;
      else row.errors++; // CompileError, RuntimeError, Pending: not counted in the score
      if (UNDETECTED.has(m.status))
        undetected.push({
          file,
          mutator: m.mutatorName,
          replacement: m.replacement ?? '',
          line: lineOf(source, m.location.start.line),
          original: originalOf(source, m.location),
          status: m.status,
          at: m.location.start.line,
        });
    }
    for (const k of Object.keys(total)) total[k] += row[k];
    rows.push(row);
  }
  const score = (r) => {
    const detected = r.killed + r.timeout;
    const valid = detected + r.survived + r.noCoverage;
    return valid ? (100 * detected) / valid : 100;
  };
  const pad = (v, n) => String(v).padStart(n);
  console.log(
    `\nmutation score per module (killed + timeout over killed + timeout + survived + no coverage; "static": left out by Stryker and not yet run by scripts/mutation-static.mjs)`,
  );
  console.log(
    `${'module'.padEnd(36)} ${pad('score', 7)} ${pad('killed', 7)} ${pad('survived', 9)} ${pad('no cov', 7)} ${pad('timeout', 8)} ${pad('static', 7)} ${pad('errors', 7)}`,
  );
  for (const r of [...rows, { ...total, file: 'all' }])
    console.log(
      `${r.file.padEnd(36)} ${pad(score(r).toFixed(1) + '%', 7)} ${pad(r.killed, 7)} ${pad(r.survived, 9)} ${pad(r.noCoverage, 7)} ${pad(r.timeout, 8)} ${pad(r.ignored, 7)} ${pad(r.errors, 7)}`,
    );
  if (score(total) < MIN_SCORE) target(`the mutation score is ${score(total).toFixed(1)}%, under ${MIN_SCORE}% (docs/proof.md)`);
  // Under --ci the record must be the run of the code as it is: a module changed since its run has
  // mutants nobody tested (its record names another source). Run `npm run mutate` and commit the record.
  if (own.ci) {
    // Every file of the configured set has its run in the record: a new file in a mutated folder included.
    const unrun = sourceFiles().filter((file) => config.mutate.some((glob) => matchesGlob(file, glob)) && !(file in report.files));
    if (unrun.length)
      failures.push(
        `in the mutated set but never run (no result in the record): ${unrun.join(', ')}; run \`npm run mutate -- --mutate ${unrun.join(',')}\` and commit mutation/`,
      );
    // The record as the last run wrote it: its digest is written beside it by this script only.
    const digest = recordDigest();
    if (digest && digest.kept !== digest.now)
      failures.push(
        `${config.incrementalFile} differs from the one the last run wrote (its digest in ${DIGEST_NAME}): a record is written by \`npm run mutate\`, never by hand`,
      );
    if (staleStatic.length)
      failures.push(
        `changed since their static mutants were run (mutation/static.json holds another source): ${staleStatic.join(', ')}; run \`node scripts/mutation-static.mjs --files ${staleStatic.join(',')}\` and commit mutation/`,
      );
    const stale = Object.entries(report.files)
      .filter(([file, { source }]) => !existsSync(resolve(ROOT, file)) || readFileSync(resolve(ROOT, file), 'utf8') !== source)
      .map(([file]) => file);
    if (stale.length)
      failures.push(`changed since their mutation run (the record holds another source): ${stale.join(', ')}; run ${runCommands(stale)} and commit mutation/`);
  }

  // The baseline: a multiset of mutants by file, mutator, replacement and source line.
  const baseline = readJson(BASELINE) ?? { survivors: [] };
  const inScope = new Set(Object.keys(report.files));
  const pool = new Map();
  for (const entry of baseline.survivors) {
    const k = keyOf(entry);
    pool.set(k, [...(pool.get(k) ?? []), entry]);
  }
  const fresh = [];
  const kept = [];
  for (const u of undetected) {
    const list = pool.get(keyOf(u));
    // Two mutants alike on the same line text (two `} finally {` blocks) keep their own entries: the one whose original text is this mutant's first.
    const same = list?.findIndex((e) => e.original === u.original) ?? -1;
    if (list?.length) kept.push({ ...list.splice(same === -1 ? 0 : same, 1)[0], at: u.at, status: u.status });
    else fresh.push(u);
  }
  const nowKilled = [...pool.values()].flat().filter((e) => inScope.has(e.file));
  const outOfScope = baseline.survivors.filter((e) => !inScope.has(e.file));

  if (nowKilled.length) {
    console.log(`\nnow killed (listed in ${'mutation/survivors.json'}, no longer surviving${own.writeBaseline ? ': dropped' : ''}):`);
    for (const e of nowKilled) console.log(`  ${e.file}  ${e.mutator}  ${JSON.stringify(e.replacement)}  in: ${e.line}`);
  }
  const todo = kept.filter((e) => !isFinal(e.reason));
  if (fresh.length) {
    console.log(
      `\n${own.writeBaseline ? 'added to mutation/survivors.json with reason "TODO"' : 'survivors not in mutation/survivors.json'} (${fresh.length}):`,
    );
    for (const u of fresh)
      console.log(
        `  ${u.file}:${u.at}  ${u.status === 'NoCoverage' ? 'no coverage' : 'survived'}  ${u.mutator}  ${JSON.stringify(u.original)} -> ${JSON.stringify(u.replacement)}\n      ${u.line}`,
      );
    if (!own.writeBaseline)
      failures.push(
        `${fresh.length} surviving mutant(s) not in mutation/survivors.json: kill each with a test of the behaviour, or list it with the reason it cannot matter (docs/proof.md)`,
      );
  }
  if (own.writeBaseline) {
    const next = [
      ...outOfScope,
      ...kept.map(({ at: _at, status: _status, ...e }) => e),
      ...fresh.map(({ at: _at, status, ...u }) => ({ ...u, status, reason: 'TODO' })),
    ].sort((a, b) => a.file.localeCompare(b.file) || keyOf(a).localeCompare(keyOf(b)));
    // The first digest of a record made before digests were kept; afterwards only a run writes it.
    if (!existsSync(DIGEST) && existsSync(INCREMENTAL)) writeDigest();
    writeFileSync(
      BASELINE,
      `${JSON.stringify({ ...baseline, survivors: next.map(({ file, mutator, replacement, original, line, status, reason }) => ({ file, mutator, replacement, original, line, status, reason })) }, null, 2)}\n`,
    );
    console.log(`\nwrote mutation/survivors.json: ${next.length} entries`);
    for (const e of fresh) todo.push(e);
  }
  // A reason is final or it is no reason: "TODO", "TODO for the lead", "to be checked" fail under --ci too.
  if (todo.length)
    failures.push(
      `${todo.length} entr${todo.length === 1 ? 'y' : 'ies'} of mutation/survivors.json without a final reason: ${todo.map((e) => `${e.file} "${(e.reason ?? '').slice(0, 40)}"`).join('; ')}`,
    );
  console.log(
    `\nsurvivors: ${undetected.length} (${kept.length} listed in mutation/survivors.json${todo.length ? `, ${todo.length} of them TODO` : ''}, ${fresh.length} new)`,
  );
  // The score the proof is held to: over the mutants a test can kill. A survivor whose reason says no input shows it
  // (equivalent, unreachable) cannot be; scripts/mutation-verify.mjs checks each against the whole suite.
  const cannot = kept.filter((e) => CANNOT_BE_KILLED.test(e.reason ?? '')).length;
  // A survivor of Stryker's per-test runs that the whole in-process suite kills (mutation/verified.json says by which test).
  const bySuite = kept.filter((e) => KILLED_BY_SUITE.test(e.reason ?? '')).length;
  const canBe = total.killed + total.timeout + total.survived + total.noCoverage - cannot;
  const killable = canBe ? (100 * (total.killed + total.timeout + bySuite)) / canBe : 100;
  console.log(
    `score over the mutants a test can kill: ${killable.toFixed(1)}% (${total.killed + total.timeout} killed by Stryker and ${bySuite} by the whole suite, of ${canBe}; ${cannot} survivors' reasons say no test can: equivalent or unreachable)`,
  );
  if (killable < MIN_KILLABLE) target(`the score over the mutants a test can kill is ${killable.toFixed(1)}%, under ${MIN_KILLABLE}% (docs/proof.md)`);
  return failures;
}
