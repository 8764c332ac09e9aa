// Mutation testing (docs/proof.md). Run it with `npm run mutate` (scripts/mutate.mjs),
// which checks the survivors against mutation/survivors.json; `npx stryker run` alone only reports.
/**
 * The modules nearly every test reaches: each of their survivors would cost minutes under the whole suite, so they are
 * run with `npm run mutate -- --units --mutate <them>`, against vitest.stryker-units.config.ts (the files that test
 * them directly); the kill sample re-runs their kills with that suite too.
 */
export const UNITS_RUN = [
  'src/config.ts',
  'src/api/errors.ts',
  'src/errors.ts',
  'src/api/records.ts',
  'src/api/exchange.ts',
  'src/api/pool.ts',
  'src/api/no-answer.ts',
  'src/cache.ts',
];

/**
 * Every suite a module is run against other than the whole one (vitest.stryker.config.ts): `npm run mutate -- --suite
 * <name> --mutate <its modules>`. Each holds the files that test its modules directly; under the whole suite a survivor
 * of theirs costs every test that passes through it (minutes). The kill sample re-runs a module's kills with its suite.
 */
export const SUITES = {
  units: { config: 'vitest.stryker-units.config.ts', modules: UNITS_RUN },
  // list_requests' query engine (pure functions over parsed records): the index, the query, the orders, the page.
  requests: {
    config: 'vitest.stryker-requests.config.ts',
    modules: [
      'src/requests/facts.ts',
      'src/requests/name-keys.ts',
      'src/requests/names.ts',
      'src/requests/narrow.ts',
      'src/requests/orders.ts',
      'src/requests/page.ts',
      'src/requests/pass.ts',
      'src/requests/query.ts',
      'src/requests/tables.ts',
    ],
  },
  // The two list tools: their schemas, notes and wording, against the files that ask them questions.
  lists: {
    config: 'vitest.stryker-lists.config.ts',
    modules: ['src/tools/list-requests.ts', 'src/tools/list-clients.ts'],
  },
  // Which client a send means: exact matching, the batch's index of it, the likeness rule, "which one?".
  clients: {
    config: 'vitest.stryker-clients.config.ts',
    modules: ['src/tools/resolve-client.ts'],
  },
  // Fitting the firm's service: the domain's rules (dates, statuses, the profile, the checklist), the profile file, and
  // the check of what the service kept against the preview.
  fit: {
    config: 'vitest.stryker-fit.config.ts',
    modules: [
      'src/domain/checklist.ts',
      'src/domain/dates.ts',
      'src/domain/request-status.ts',
      'src/domain/service-profile.ts',
      'src/service-profile.ts',
      'src/tools/as-previewed.ts',
    ],
  },
  // Team mode's HTTP service and its routes, and the tool call every transport makes.
  calls: {
    config: 'vitest.stryker-calls.config.ts',
    modules: ['src/transport/http.ts', 'src/transport/routes.ts', 'src/mcp/call-tool.ts'],
  },
};

/** The vitest configuration a module's mutants are run against. */
export const suiteOf = (file) => Object.values(SUITES).find((s) => s.modules.includes(file))?.config ?? 'vitest.stryker.config.ts';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // The modules that hold the promises (README, "The promises in brief"): once and as previewed (send/, store/, the send steps and
  // both send tools), sealed (text/), sign-in (the policy; PKCE, redirect URIs, consent and the grant
  // checks, each in its own file; access tokens; the consent and token flows in authorize.ts and
  // grants.ts), the HTTP front door and its limits (front-door.ts, limits.ts, the rate bucket and key
  // scopes in key-scope.ts), which calls skip the SDK's HTTP layer (plain-call.ts), HTML escaping of every page (page.ts), exact (the answer cache and every bound on what is kept, cache.ts), and the server put
  // together (mcp/server.ts: every result sealed as it leaves, read-only's prompts and pages, a call before initialize).
  mutate: [
    'src/send/**/*.ts',
    'src/store/**/*.ts',
    'src/text/**/*.ts',
    'src/tools/sending.ts',
    'src/tools/create-request.ts',
    'src/tools/create-request-batch.ts',
    'src/tools/batch-recipients.ts',
    'src/tools/resolve-client.ts',
    'src/auth/policy.ts',
    'src/auth/pkce.ts',
    'src/auth/redirect-uris.ts',
    'src/auth/consent.ts',
    'src/auth/grant-checks.ts',
    'src/auth/access-token.ts',
    'src/auth/authorize.ts',
    'src/auth/grants.ts',
    // Sign-in's outside world: the firm's identity provider (the callback used once, the same person at a refresh),
    // the apps that may ask (registration, metadata documents) and the fetch of a document from public addresses only.
    'src/auth/federation.ts',
    'src/auth/clients.ts',
    'src/auth/outbound.ts',
    'src/transport/front-door.ts',
    'src/transport/plain-call.ts',
    'src/transport/limits.ts',
    'src/page.ts',
    'src/transport/key-scope.ts',
    'src/freeze.ts',
    'src/cache.ts',
    'src/mcp/server.ts',
    // The one POST and what its outcome means (never retried; a 5xx or a lost answer "may have been sent").
    'src/api/sending.ts',
    // Team mode's HTTP service (its start, refusals and the rate limit shared by replicas) and its routes, and the tool
    // call every transport makes (refusals, the deadline, the person's form and MRTR rounds): SUITES.calls.
    'src/transport/http.ts',
    'src/transport/routes.ts',
    'src/mcp/call-tool.ts',
    // Exact counts: list_requests' query engine (SUITES.requests), and the two list tools' rows, joins and notes (SUITES.lists).
    'src/requests/**/*.ts',
    'src/tools/list-clients.ts',
    'src/tools/list-requests.ts',
    // Fitting the firm's service (SUITES.fit): a date read whatever its form or counted apart, open and closed as the
    // profile says, every field by the profile's name, and a send called "as previewed" only when the service kept it so.
    'src/domain/**/*.ts',
    'src/service-profile.ts',
    'src/tools/as-previewed.ts',
    // Every log line redacted before it leaves (stderr, MCP logging) and team mode's access log.
    'src/log.ts',
    'src/transport/access-log.ts',
    // The person's own Send: the page's Send (the page's token only), and what a 2025 connection's session
    // keeps for every replica (its owner only).
    'src/tools/send-from-page.ts',
    'src/transport/client-sessions.ts',
    // Reached by nearly every test: UNITS_RUN above.
    // What an answer from the service means (errors.ts; the exchange's statuses and cap; no-answer.ts's failures; pool.ts's proxy tunnel) and what
    // of it may be shown (records.ts: redaction before the cap); the tool error that becomes a result.
    'src/api/exchange.ts',
    'src/api/pool.ts',
    'src/api/no-answer.ts',
    'src/api/errors.ts',
    'src/api/records.ts',
    'src/errors.ts',
    // Settings fail closed: a safety setting or a store that cannot be read disables sending.
    'src/config.ts',
  ],
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts', pool: 'forks', related: true },
  // Each mutant runs only the tests that reached it.
  coverageAnalysis: 'perTest',
  // A mutant reached only while a module loads or a suite starts its servers (beforeAll) would need
  // the whole related suite per mutant (minutes each): such "static" mutants are counted apart, not run.
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 10_000,
  reporters: ['json', 'html', 'progress'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  // `--incremental` re-tests only mutants in changed code or changed tests; the file is checked in.
  incrementalFile: 'mutation/stryker-incremental.json',
  // Copied to the sandbox: the source, the tests, and dist/ (tests that mix in-process and built-CLI
  // runs need it in the dry run). Not these:
  ignorePatterns: ['reports', 'coverage', 'bundle', '.bench', '*.mcpb', '*.tgz', 'test/.generated', '.vitest-*', 'mutation/stryker-incremental.json'],
  cleanTempDir: 'always',
  thresholds: { high: 95, low: 90, break: null },
};
