import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suiteEnvironment } from '../test/global-setup.js';

/**
 * The mutation run's own folders (vitest.stryker.config.ts), laid out as the suite's (test/global-setup.ts
 * suiteEnvironment: home, XDG folders, state, captures, all inside one fresh folder): the send store's file
 * backend and every spawned child (test/support/folders.ts childEnv) write there, never to the user's folders.
 */
export function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-mutation-'));
  const env = suiteEnvironment(dir);
  Object.assign(process.env, env);
  for (const folder of [env.DOCREQ_TEST_CAPTURE_DIR, env.DOCREQ_STATE_DIR, env.HOME]) mkdirSync(folder!, { recursive: true });
  // Tests that run only the built dist/ (no mutant there) skip themselves in this run: test/store-processes.test.ts, test/store-redis-replicas.test.ts.
  process.env.DOCREQ_MUTATION_RUN = '1';
  return () => rmSync(dir, { recursive: true, force: true });
}
