// The built binary spoken to line by line, as a host writes to its stdin: what the tests that drive
// dist/cli.js without an SDK client share.
import { existsSync } from 'node:fs';
import { beforeAll } from 'vitest';

/** The built CLI; the file's tests stop before any runs when it has not been built. */
export function builtCli(): string {
  const bin = new URL('../../dist/cli.js', import.meta.url).pathname;
  beforeAll(() => {
    if (!existsSync(bin)) throw new Error('dist/cli.js is missing: run npm run build (npm test does)');
  });
  return bin;
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
export const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

/** The complete JSON-RPC lines of a stdout so far. */
export function messages(out: string): { id?: unknown; result?: unknown; error?: unknown }[] {
  return out
    .split('\n')
    .slice(0, -1)
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id?: unknown });
}
