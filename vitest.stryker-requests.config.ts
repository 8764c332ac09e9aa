import { defineConfig } from 'vitest/config';
import base from './vitest.stryker.config.js';

/**
 * The suite for list_requests' query engine (stryker.config.mjs SUITES.requests): src/requests/ is pure functions over
 * parsed records, so its unit files answer every question the tools ask (against a recomputation written in the test)
 * in well under a second, where the list tools' files take seconds per mutant. No sandbox, no server.
 * `npm run mutate -- --suite requests --mutate 'src/requests/*.ts'`.
 */
const REQUEST_UNIT_FILES = ['test/requests-units.test.ts', 'test/requests-orders-units.test.ts'];

export default defineConfig({
  ...base,
  test: { ...base.test, name: 'mutation-requests', include: REQUEST_UNIT_FILES, exclude: [], globalSetup: [], setupFiles: [] },
});
