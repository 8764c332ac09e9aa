import { defineConfig } from 'vitest/config';
import base from './vitest.stryker.config.js';

/**
 * The suite for the modules every test reaches (docs/proof.md, "Runs split by module"): the settings
 * (config.ts), what an answer from the service means (api/errors.ts, errors.ts, api/records.ts) and the
 * exchange itself (api/exchange.ts), and the one bounded cache (cache.ts). Under the whole suite each of their mutants is covered by nearly
 * every test, and a survivor costs minutes; here it costs the files that test these modules directly,
 * against the real sandbox over real HTTP where HTTP is involved. `npm run mutate -- --units --mutate …`.
 */
const UNIT_FILES = [
  'test/config-units.test.ts',
  'test/config-rules-units.test.ts',
  'test/config.test.ts',
  'test/api-errors-units.test.ts',
  'test/records-units.test.ts',
  'test/exchange-units.test.ts',
  'test/exchange-answers-units.test.ts',
  'test/api.test.ts',
  'test/api-sending.test.ts',
  'test/network.test.ts',
  'test/list-stream.test.ts',
  'test/fault-matrix.test.ts',
  'test/cache-units.test.ts',
];

export default defineConfig({ ...base, test: { ...base.test, name: 'mutation-units', include: UNIT_FILES, exclude: [] } });
