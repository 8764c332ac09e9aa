import { defineConfig } from 'vitest/config';

const shared = {
  testTimeout: 20_000,
  hookTimeout: 20_000,
  pool: 'forks' as const,
  setupFiles: ['test/setup.ts'],
};

/**
 * Behaviour files run twice: with a 2025-11-25 client (SDK v1, initialize) and with a 2026-07-28
 * client (SDK v2, no initialize), through the one connection helper (test/support/connect.ts connect, by test/support/era.ts ERA). Transport,
 * fuzz, fault and packaging files run once: they drive their own clients.
 */
export const BOTH_ERAS = [
  'test/answer-fields.test.ts',
  'test/catalog.test.ts',
  'test/create-request.test.ts',
  'test/create-request-batch.test.ts',
  'test/list-budget.test.ts',
  'test/list-clients.test.ts',
  'test/list-requests.test.ts',
  'test/once.test.ts',
  'test/person-send.test.ts',
  'test/rendering.test.ts',
  'test/resolve-client.test.ts',
  'test/server.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { test: { ...shared, name: '2025-11-25', include: ['test/**/*.test.ts'] } },
      { test: { ...shared, name: '2026-07-28', include: BOTH_ERAS, env: { DOCREQ_TEST_ERA: '2026-07-28' } } },
    ],
  },
});
