// The CLI and its dependencies as one ESM file, for the MCP Bundle.
import { build } from 'esbuild';
import { esbuildOptions } from './build-options.mjs';

export async function buildSingleFile(outfile) {
  await build({ ...esbuildOptions, entryPoints: [new URL('../src/cli.ts', import.meta.url).pathname], outfile });
}
