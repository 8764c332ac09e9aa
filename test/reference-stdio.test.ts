import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { childEnv, suiteFolder } from './support/folders.js';

const { esbuildOptions } = (await import(new URL('../scripts/build-options.mjs', import.meta.url).href)) as { esbuildOptions: object };

// `npm run bench` times this one-tool server on the official SDK beside the CLI (docs/performance.md,
// "What the SDK alone needs"): the figure means something only if the bundle it times is a server that
// answers initialize and tools/list, as the CLI must.
describe('the cold-start references (test/fixtures/reference-stdio.mjs on SDK v2, reference-stdio-v1.mjs on SDK v1)', () => {
  it.each(['reference-stdio.mjs', 'reference-stdio-v1.mjs'])(
    '%s, bundled as the benchmark bundles it, answers initialize, tools/list and its one tool',
    async (fixture) => {
      const outfile = join(mkdtempSync(join(suiteFolder(), 'reference-stdio-')), 'index.mjs');
      await build({ ...esbuildOptions, entryPoints: [new URL(`./fixtures/${fixture}`, import.meta.url).pathname], outfile, logLevel: 'error' });
      const client = new Client({ name: 'reference-test', version: '1' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [outfile], env: childEnv(), stderr: 'pipe' }));
      try {
        expect(client.getServerVersion()?.name).toBe('reference');
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(['ping']);
        const result = await client.callTool({ name: 'ping', arguments: {} });
        expect(result.content).toEqual([{ type: 'text', text: 'pong' }]);
      } finally {
        await client.close();
      }
    },
  );
});
