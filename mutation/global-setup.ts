import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The mutation run's own state folder (vitest.stryker.config.ts): the send store's file backend and
 * every spawned child (test/helpers.ts childEnv) write there, never to the user's state folder.
 */
export function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-mutation-state-'));
  process.env.DOCREQ_STATE_DIR = join(dir, 'state');
  process.env.XDG_STATE_HOME = join(dir, 'xdg');
  // Tests that run only the built dist/ (no mutant there) skip themselves in this run: test/store.test.ts.
  process.env.DOCREQ_MUTATION_RUN = '1';
  return () => rmSync(dir, { recursive: true, force: true });
}
