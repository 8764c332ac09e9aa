import { defineConfig } from 'vitest/config';
import base from './vitest.stryker.config.js';

/**
 * The suite for fitting the firm's service (stryker.config.mjs SUITES.fit): the domain's rules (src/domain/: how a
 * date the service wrote is read, which statuses are open or closed, the service profile that names its fields, the
 * checklist's facts), the profile file read at start (src/service-profile.ts), and the check of what the service kept
 * against the preview (src/tools/as-previewed.ts). Its unit files answer most mutants in milliseconds; the
 * settings' files read profile files that cannot be used; the files after them ask the same of the query engine's
 * counts, of services that differ from ours where the API document is silent (the sandbox's dialects, with and
 * without a profile) and of the one POST and what its outcome means, against the real sandbox over real HTTP.
 * `npm run mutate -- --suite fit --mutate 'src/domain/*.ts,src/service-profile.ts,src/tools/as-previewed.ts'`.
 */
const FIT_FILES = [
  'test/domain-units.test.ts',
  'test/as-previewed-units.test.ts',
  'test/service-profile-file-units.test.ts',
  'test/domain.test.ts',
  'test/config-units.test.ts',
  'test/config-rules-units.test.ts',
  'test/requests-units.test.ts',
  'test/requests-orders-units.test.ts',
  'test/service-fit.test.ts',
  'test/sandbox-dialect.test.ts',
  'test/api-sending.test.ts',
];

export default defineConfig({ ...base, test: { ...base.test, name: 'mutation-fit', include: FIT_FILES, exclude: [] } });
