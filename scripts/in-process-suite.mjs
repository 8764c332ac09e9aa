// The in-process suite in a copy of the project, for the scripts that put mutants in place by hand
// (scripts/mutation-verify.mjs, scripts/mutation-static.mjs): every test file that runs the source in its own process
// (vitest.stryker.config.ts's files plus the unit files of the units runs; the built-CLI, package and browser files run
// dist/, which holds no mutant), one era, a fresh module graph per file, so a mutant reached only at load is loaded too.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEFT_OUT } from './mutation-sample.mjs';

const CONFIG = 'vitest.in-process.config.ts';

/** A copy of `root` (node_modules linked) that runs the suite: `run(files, extra)` gives the failing tests ("file › name"; a file that failed to load counts as one). */
export function inProcessCopy(root, name) {
  const copy = mkdtempSync(join(tmpdir(), `docreq-${name}-`));
  cpSync(root, copy, { recursive: true, filter: (from) => !LEFT_OUT.has(from.slice(root.length + 1).split('/')[0]) });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
  writeFileSync(
    join(copy, CONFIG),
    `import { defineConfig } from 'vitest/config';
import { NOT_MUTATION_TESTED } from './vitest.stryker.config';
export default defineConfig({
  test: {
    name: '${name}',
    include: ['test/**/*.test.ts'],
    exclude: NOT_MUTATION_TESTED.filter((file) => !file.endsWith('-units.test.ts')),
    testTimeout: 90_000,
    hookTimeout: 60_000,
    retry: 1,
    pool: 'forks',
    globalSetup: ['mutation/global-setup.ts'],
    setupFiles: ['mutation/setup.ts'],
  },
});
`,
  );
  const vitest = join(root, 'node_modules/vitest/vitest.mjs');
  let runs = 0;
  return {
    copy,
    runs: () => runs,
    /** These test files (all when empty), with vitest's extra arguments (`--bail=1`). */
    run(files = [], extra = []) {
      runs++;
      const report = join(copy, `${name}-${runs}.json`);
      const { status } = spawnSync(process.execPath, [vitest, 'run', '--config', CONFIG, ...files, ...extra, '--reporter=json', `--outputFile=${report}`], {
        cwd: copy,
        env: { ...process.env, CI: '1', DOCREQ_MUTATION_RUN: '1' },
        encoding: 'utf8',
        timeout: 1_800_000,
      });
      let results;
      try {
        results = JSON.parse(readFileSync(report, 'utf8')).testResults;
      } catch {
        return ['(the suite did not finish)'];
      }
      const failures = results.flatMap((r) => {
        const file = r.name.slice(copy.length + 1);
        const failed = r.assertionResults.filter((a) => a.status === 'failed').map((a) => `${file} › ${a.fullName}`);
        return failed.length || r.status !== 'failed' ? failed : [`${file} (failed to load)`];
      });
      // An error outside every test (thrown while a module loads in a worker, or unhandled) fails the run without failing
      // a test in the report: it is a failure all the same, never a pass.
      return failures.length || status === 0 ? failures : [`(the run failed outside its tests: vitest exited ${status})`];
    },
    remove: () => rmSync(copy, { recursive: true, force: true }),
  };
}
