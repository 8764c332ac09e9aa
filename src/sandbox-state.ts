import { join } from 'node:path';
import { defaultStateDir } from './store/index.js';

/**
 * Where a server on the embedded sandbox keeps its sends when no state folder is named: a `sandbox` folder inside the
 * person's state folder, so that trying the sandbox never mixes its records with the person's real sends.
 */
export function sandboxStateDir(env: NodeJS.ProcessEnv): string {
  return join(defaultStateDir(env), 'sandbox');
}
