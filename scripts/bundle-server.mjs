// The CLI and its dependencies for the MCP Bundle: no node_modules, split like the package build.
// `server/index.js` loads only what stdio needs at start; team mode, the sandbox, undici and redis
// are chunks beside it (`server/chunks/`), read when first used. One file of all of them made V8
// parse every line at each start (cold start 3.9× bare node against the split build's 1.9×).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions } from './build-options.mjs';
import { buildPages } from './build-pages.mjs';

/** Writes `index.js` and `chunks/` into `outdir` (emptied first); returns the entry's path. */
export async function buildBundleServer(outdir) {
  const pages = await buildPages();
  rmSync(outdir, { recursive: true, force: true });
  await build({
    ...esbuildOptions,
    define: { ...esbuildOptions.define, __DOCREQ_UI_PAGES__: JSON.stringify(JSON.stringify(pages)) },
    entryPoints: { index: new URL('../src/cli.ts', import.meta.url).pathname },
    outdir,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
  });
  return join(outdir, 'index.js');
}
