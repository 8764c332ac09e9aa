import { defineConfig } from 'vitest/config';
import base from './vitest.stryker.config.js';

/**
 * The suite for which client a send means (stryker.config.mjs SUITES.clients): src/tools/resolve-client.ts's exact
 * matching, its batch form, the likeness rule behind "closest" and the "which one?" it asks. Every send resolves a
 * client, so under the whole suite each of its mutants costs every send test; here it costs its own unit file and the
 * files that check what a send says when no single client matches (not found, several, the person's pick, the page's
 * choice, a list with more pages), for one request and for a batch, against the real sandbox over real HTTP.
 * `npm run mutate -- --suite clients --mutate src/tools/resolve-client.ts`.
 */
const CLIENT_FILES = [
  'test/resolve-client-units.test.ts',
  'test/resolve-client.test.ts',
  'test/create-request.test.ts',
  'test/create-words.test.ts',
  'test/create-request-batch.test.ts',
  'test/batch-words.test.ts',
  'test/batch-failures-and-settings.test.ts',
  'test/person-guards.test.ts',
  'test/person-send.test.ts',
  'test/tool-call.test.ts',
  'test/mrtr.test.ts',
  'test/service-text-and-secrets.test.ts',
  'test/service-fit.test.ts',
  'test/templates.test.ts',
  'test/sending-words.test.ts',
];

export default defineConfig({ ...base, test: { ...base.test, name: 'mutation-clients', include: CLIENT_FILES, exclude: [] } });
