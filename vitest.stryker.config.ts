import { defineConfig } from 'vitest/config';

/**
 * The suite as Stryker runs it (stryker.config.mjs, `npm run mutate`): one era (2025-11-25), every test
 * file that drives the mutated modules in this process, the real server against the real sandbox over
 * real HTTP on 127.0.0.1. Left out: files that only run the built CLI or package (dist/ holds no
 * mutant) or a browser. Files that mix both stay: their dist/ tests run in the dry run only, as no
 * mutant is covered by them (coverageAnalysis perTest).
 * No key scan or state-folder comparison here (test/setup.ts, test/global-setup.ts): every mutant
 * run would add a capture file; mutation/global-setup.ts gives the run its own state folder.
 */
export const NOT_MUTATION_TESTED = [
  'test/apps.test.ts', // Chromium, and the pages from dist/ui
  'test/auth-browser.test.ts', // Chromium
  'test/package.test.ts', // npm pack and the packed dist/
  'test/readme.test.ts', // the built CLI's help and README snippets run as child processes
  'test/stdio.test.ts', // the built binary over stdio
  'test/shipped.test.ts', // the built CLI in Chromium, and the packed MCP Bundle
  'test/quiet-start.test.ts', // the built CLI's start-up lines
  'test/hosts.test.ts', // npm run hosts: a script writing hosts' configuration files, and the built CLI it names
  'test/team-stack.test.ts', // the local team stack: the built CLI's replicas, redis-server and nginx as child processes
  'test/server-card.test.ts', // team mode's Server Card over HTTP: no send path
  'test/test-needs.test.ts', // npm test's first step, a script run as a child process
  // Unit files of the modules every test reaches: run with them in vitest.stryker-units.config.ts (npm run mutate -- --units).
  'test/config-rules-units.test.ts',
  'test/api-errors-units.test.ts',
  'test/records-units.test.ts',
  'test/exchange-units.test.ts',
  'test/exchange-answers-units.test.ts',
];

export default defineConfig({
  test: {
    name: 'mutation',
    include: ['test/**/*.test.ts'],
    exclude: NOT_MUTATION_TESTED,
    // Instrumented code counts every branch it takes: a 20,000-send test runs several times slower.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    // A test that fails once under load (a child's start-up wait) is tried again before it counts:
    // the dry run must pass in full, and a mutant is killed only by a failure that repeats.
    retry: 1,
    pool: 'forks',
    // One worker reused for every file of a mutant's run: a fresh process and module graph per file
    // cost more than most mutants' tests.
    isolate: false,
    globalSetup: ['mutation/global-setup.ts'],
    setupFiles: ['mutation/setup.ts'],
  },
});
