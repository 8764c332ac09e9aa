// The CLI and its dependencies as one ESM file, for the MCP Bundle.
import { build } from 'esbuild';
import { esbuildOptions } from './build-options.mjs';
import { buildPages } from './build-pages.mjs';

export async function buildSingleFile(outfile) {
  const pages = await buildPages();
  await build({ ...esbuildOptions, define: { ...esbuildOptions.define, __DOCREQ_UI_PAGES__: JSON.stringify(JSON.stringify(pages)) }, entryPoints: [new URL('../src/cli.ts', import.meta.url).pathname], outfile });
}
