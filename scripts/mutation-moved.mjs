// Tests moved, split or reformatted keep what the mutation record says they killed (`npm run mutate -- --moved-tests`).
// The record names each test by its file, its position and its full title (Stryker's incremental report). A test file
// renamed, split by behaviour or run through the formatter holds the same tests under another file or position: Stryker
// would read each as a new test and run again every mutant it covers (hours). Here each recorded test is found again by
// its full title, in its own file if that still holds it, else in a file the record does not know yet, and the record
// is told where it now stands (with the file's present source, as Stryker keeps it). A test found in neither, or found
// twice, is dropped from the record: the mutants it killed are run again by the next Stryker run. The kill sample
// (scripts/mutation-sample.mjs) then re-runs recorded kills from their new files; docs/proof.md says how far.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

/** A full title as both Stryker (parts joined by a space) and `vitest list` (joined by " > ") write it, made alike. */
export const titleKey = (name) => name.replaceAll(' > ', ' ');

/**
 * Every test of the suite as it stands, per file: its full title and where it starts (1-based, as the record keeps
 * it). Read by `vitest list` over the first era's project (the second runs the same files again).
 */
export function currentTests(root) {
  // The list goes to a file of its own: the suite's setup reports on stdout after it. A file whose top-level work is
  // still loading when collection ends can fail the list with an unhandled error (and no file): it is asked again.
  const dir = mkdtempSync(join(tmpdir(), 'docreq-tests-'));
  let listed;
  try {
    const file = join(dir, 'tests.json');
    for (let attempt = 1; listed === undefined; attempt++) {
      const run = spawnSync(
        process.execPath,
        [
          resolve(root, 'node_modules/vitest/vitest.mjs'),
          'list',
          `--json=${file}`,
          '--includeTaskLocation',
          '--dangerouslyIgnoreUnhandledErrors',
          '--project',
          '2025-11-25',
        ],
        {
          cwd: root,
          encoding: 'utf8',
          maxBuffer: 256 * 1024 * 1024,
          env: { ...process.env, CI: '1' },
        },
      );
      if (existsSync(file)) listed = JSON.parse(readFileSync(file, 'utf8'));
      else if (attempt === 3) throw new Error(`vitest list wrote no list in 3 attempts:\n${run.stdout.slice(-2000)}${run.stderr.slice(-2000)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const byFile = new Map();
  for (const t of listed) {
    if (!t.location) continue;
    const file = relative(root, t.file).split('\\').join('/');
    if (!byFile.has(file)) byFile.set(file, []);
    byFile.get(file).push({ key: titleKey(t.name), line: t.location.line, column: t.location.column });
  }
  return byFile;
}

/**
 * Carries the record's tests to where they now stand (`current`: currentTests; `sourceOf(file)`: the file's text, or
 * undefined when it is gone). Changes `record` in place; returns what it did: tests moved (to another file or
 * position), tests dropped, and the killed mutants left without the test that killed them.
 */
export function carryTests(record, current, sourceOf) {
  const known = new Set(Object.keys(record.testFiles ?? {}));
  const newFiles = [...current.keys()].filter((file) => !known.has(file));
  /** Where each title stands now, per file: positions in order, each taken once. */
  const free = new Map();
  for (const [file, tests] of current) {
    const byTitle = new Map();
    for (const t of tests) {
      if (!byTitle.has(t.key)) byTitle.set(t.key, []);
      byTitle.get(t.key).push(t);
    }
    free.set(file, byTitle);
  }
  const take = (file, key) => free.get(file)?.get(key)?.shift();
  const carried = new Map(); // file → tests
  const dropped = new Set();
  let moved = 0;
  for (const [file, entry] of Object.entries(record.testFiles ?? {})) {
    const source = sourceOf(file);
    if (source !== undefined && source === entry.source) {
      // Unchanged: its tests stand where the record says; their positions are taken.
      for (const t of entry.tests) take(file, titleKey(t.name));
      carried.set(file, [...(carried.get(file) ?? []), ...entry.tests]);
      continue;
    }
    // Where this file's tests went, by title: a record merged from several runs can hold one test twice (two ids,
    // one title and place); the second follows the first.
    const placed = new Map();
    for (const t of entry.tests) {
      const key = titleKey(t.name);
      let to = source !== undefined && free.get(file)?.get(key)?.length ? file : undefined;
      if (!to) {
        const homes = newFiles.filter((f) => free.get(f)?.get(key)?.length);
        // Found in more than one new file: which one holds it is not known, so it is not carried.
        if (homes.length === 1) to = homes[0];
      }
      let at = to && take(to, key);
      if (!at && placed.has(key)) ({ to, at } = placed.get(key));
      if (at) placed.set(key, { to, at });
      if (!at) {
        dropped.add(t.id);
        continue;
      }
      if (to !== file || at.line !== t.location?.start?.line || at.column !== t.location?.start?.column) moved++;
      carried.set(to, [...(carried.get(to) ?? []), { ...t, location: { start: { line: at.line, column: at.column } } }]);
    }
  }
  const testFiles = {};
  for (const [file, tests] of carried) {
    const kept = record.testFiles?.[file];
    const source = kept && sourceOf(file) === kept.source ? kept.source : sourceOf(file);
    testFiles[file] = {
      ...(kept ?? {}),
      source,
      tests: tests.sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column),
    };
  }
  record.testFiles = testFiles;
  let orphaned = 0;
  for (const { mutants } of Object.values(record.files ?? {}))
    for (const m of mutants) {
      if (m.coveredBy) m.coveredBy = m.coveredBy.filter((id) => !dropped.has(id));
      if (m.killedBy) {
        m.killedBy = m.killedBy.filter((id) => !dropped.has(id));
        if (m.status === 'Killed' && m.killedBy.length === 0) orphaned++;
      }
    }
  return { moved, dropped: dropped.size, orphaned };
}

/** The text of a file of the project, or undefined when there is none. */
export const sourceIn = (root) => (file) => (existsSync(resolve(root, file)) ? readFileSync(resolve(root, file), 'utf8') : undefined);
