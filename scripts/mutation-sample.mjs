// The recorded kills, re-run: a sample of the mutants the mutation record says were killed is applied
// again, one at a time, to a copy of the project, and the test that killed each is run against it (then
// the files of the tests covering it, then the whole mutation suite, as far as needed). A kill that no
// longer happens (a record written by hand, a test weakened since, a module it imports changed) fails
// the gate. Called by scripts/mutate.mjs (--sample N); docs/proof.md says when.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** What a copy needs to run the suite: everything but the installed modules (linked), git and reports. */
export const LEFT_OUT = new Set(['node_modules', '.git', 'reports', '.stryker-tmp', 'coverage', '.bench', 'bundle']);

/** A small seeded generator (mulberry32): the same commit picks the same sample. */
function generator(seedText) {
  let seed = 0;
  for (const ch of seedText) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) | 0;
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The source with the mutant's replacement in its place (locations are 1-based lines and columns, end exclusive). */
export function applyMutant(source, mutant) {
  const { start, end } = mutant.location;
  const lines = source.split('\n');
  const offset = (p) => lines.slice(0, p.line - 1).reduce((n, l) => n + l.length + 1, 0) + p.column - 1;
  return source.slice(0, offset(start)) + replacementText(mutant) + source.slice(offset(end));
}

/** Mutators whose replacement is a binary expression: written into the text, it must keep the grouping the tree had. */
const BINARY = new Set(['LogicalOperator', 'EqualityOperator', 'ArithmeticOperator']);

/**
 * A mutant's replacement as text to put in place of its original. Stryker mutates the syntax tree, so `a && b` → `a || b`
 * inside `a && b && c` is `(a || b) && c`; pasted as bare text it would read `a || (b && c)`, another mutant.
 */
export function replacementText({ mutatorName, replacement }) {
  return BINARY.has(mutatorName) ? `(${replacement})` : replacement;
}

/**
 * Runs vitest in the copy over these arguments, with the suite the mutant was run against, up to the first failure; 'killed'
 * when a test (or a file, at load) fails; 'not run' when nothing ran, or the run outlived `timeout` (a busy CI machine runs thirty files slowly).
 */
function run(copy, vitest, suite, args, report, timeout = 300_000) {
  spawnSync(process.execPath, [vitest, 'run', '--config', suite, '--bail=1', ...args, '--reporter=json', `--outputFile=${report}`], {
    cwd: copy,
    env: { ...process.env, CI: '1' },
    encoding: 'utf8',
    timeout,
  });
  try {
    const results = JSON.parse(readFileSync(report, 'utf8')).testResults.flatMap((r) =>
      r.assertionResults.length ? r.assertionResults : [{ status: r.status === 'failed' ? 'failed' : 'not run' }],
    );
    if (results.some((r) => r.status === 'failed')) return 'killed';
    return results.some((r) => r.status === 'passed') ? 'survived' : 'not run';
  } catch {
    return 'not run';
  }
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Picks `count` killed mutants (seeded by `seed`, the commit) from the record and re-runs each against the test that
 * killed it. Returns the failures, each in words; an empty list when every sampled kill holds.
 */
export function sampleKills(root, record, count, seed, suiteOf = () => 'vitest.stryker.config.ts', log = console.log) {
  const names = new Map();
  for (const [file, { tests }] of Object.entries(record.testFiles ?? {})) for (const t of tests) names.set(t.id, { file, name: t.name });
  const killed = [];
  for (const [file, { mutants }] of Object.entries(record.files))
    for (const m of mutants)
      if (m.status === 'Killed' && m.killedBy?.length && names.has(m.killedBy[0]) && m.replacement !== undefined)
        killed.push({ file, mutant: m, test: names.get(m.killedBy[0]) });
  if (killed.length < count) return [`the record holds ${killed.length} killed mutants with their test, fewer than the ${count} to re-run`];
  const random = generator(seed);
  const picked = [];
  while (picked.length < count) {
    const [one] = killed.splice(Math.floor(random() * killed.length), 1);
    picked.push(one);
  }

  const copy = mkdtempSync(join(tmpdir(), 'docreq-kills-'));
  const failures = [];
  try {
    cpSync(root, copy, { recursive: true, filter: (from) => !LEFT_OUT.has(from.slice(root.length + 1).split('/')[0]) });
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const vitest = join(root, 'node_modules/vitest/vitest.mjs');
    for (const [i, { file, mutant, test }] of picked.entries()) {
      const path = join(copy, file);
      const source = readFileSync(path, 'utf8');
      if (source !== record.files[file].source) {
        failures.push(`${file}: the source differs from the one the record was run on`);
        continue;
      }
      writeFileSync(path, applyMutant(source, mutant));
      const where = `${file}:${mutant.location.start.line} ${mutant.mutatorName} → ${JSON.stringify(mutant.replacement.slice(0, 60))}`;
      // A module of a suite apart was run against the files that test it directly (stryker.config.mjs SUITES).
      const suite = suiteOf(file);
      try {
        // First the test the record names; then its whole file (a test's inputs can depend on the tests run before it in
        // the file, as they were when Stryker ran them); then, as Stryker runs them, every file of the tests that cover it.
        let outcome = run(copy, vitest, suite, [test.file, '-t', `^${escape(test.name)}$`], join(copy, `kill-${i}.json`));
        // A wider run that ran out of time (or ran nothing) leaves the verdict to the narrower one: it is named, not read as passing.
        const unfinished = [];
        let by = `"${test.file} › ${test.name.slice(0, 80)}"`;
        if (outcome !== 'killed') {
          const inFile = run(copy, vitest, suite, [test.file], join(copy, `kill-${i}-file.json`));
          if (inFile !== 'not run')
            [outcome, by] = [inFile, `the file of that test, whole (${test.file}; the test alone did not kill it: "${test.name.slice(0, 80)}")`];
          else unfinished.push(`the file of that test (${test.file})`);
        }
        if (outcome !== 'killed') {
          const covering = [...new Set([...(mutant.killedBy ?? []), ...(mutant.coveredBy ?? [])].map((id) => names.get(id)?.file).filter(Boolean))];
          const wider = run(copy, vitest, suite, covering, join(copy, `kill-${i}-files.json`), 900_000);
          if (wider !== 'not run') [outcome, by] = [wider, `the ${covering.length} file(s) covering it (${covering.join(', ')})`];
          else unfinished.push(`the ${covering.length} file(s) covering it`);
        }
        if (outcome !== 'killed') {
          // Records merged before test ids were renamed can name the wrong tests: the whole mutation suite settles it.
          const whole = run(copy, vitest, suite, [], join(copy, `kill-${i}-all.json`), 900_000);
          if (whole !== 'not run') [outcome, by] = [whole, 'the whole mutation suite (its recorded tests did not kill it alone)'];
          else unfinished.push('the whole mutation suite');
        }
        log(`  ${i + 1}/${count} ${outcome}: ${where} by ${by}`);
        if (outcome === 'survived' && unfinished.length)
          failures.push(`a recorded kill was not confirmed: ${where} survives ${by}, and ${unfinished.join(' and ')} did not finish within the time limit`);
        else if (outcome === 'survived') failures.push(`a recorded kill no longer holds: ${where} survives ${by}`);
        if (outcome === 'not run') failures.push(`a recorded kill could not be re-run: ${where}: its test "${test.name}" (${test.file}) was not found`);
      } finally {
        writeFileSync(path, source);
      }
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  return failures;
}

/** The commit the sample is seeded by (CI: the commit under test), or a fixed word outside git. */
export function commitOf(root) {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: resolve(root), encoding: 'utf8' }).trim();
  } catch {
    return 'no-commit';
  }
}
