import { defineConfig } from 'vitest/config';
import base from './vitest.stryker.config.js';

/**
 * The suite for the two list tools (stryker.config.mjs SUITES.lists): list_requests' and list_clients' schemas, notes
 * and wording (the query engine under them, src/requests/, has its own unit suite). Nearly every tool test lists
 * something, so under the whole suite a survivor of theirs costs minutes; here it costs the files that ask the lists
 * questions and check the answers, against the real sandbox over real HTTP. `npm run mutate -- --suite lists --mutate …`.
 */
const LIST_FILES = [
  'test/list-requests-words.test.ts',
  'test/list-clients-words.test.ts',
  'test/list-requests.test.ts',
  'test/list-requests-index.test.ts',
  'test/list-clients.test.ts',
  'test/list-budget.test.ts',
  'test/answer-fields.test.ts',
  'test/paging-signals.test.ts',
  'test/service-fit.test.ts',
  'test/sandbox-dialect.test.ts',
  'test/domain.test.ts',
  'test/rendering.test.ts',
  'test/service-text-and-secrets.test.ts',
  'test/fuzz.test.ts',
  'test/server.test.ts',
];

export default defineConfig({ ...base, test: { ...base.test, name: 'mutation-lists', include: LIST_FILES, exclude: [] } });
