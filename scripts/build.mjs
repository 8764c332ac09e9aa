// npm run build: type declarations from tsc, JavaScript from esbuild. The CLI and the library entry
// are bundled with their dependencies (sharing one chunk), so the published package has no runtime
// dependencies: `npx -y docreq-mcp` installs one package instead of a hundred.
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { esbuildOptions, toolListingDefine } from './build-options.mjs';
import { buildPages } from './build-pages.mjs';

const root = new URL('..', import.meta.url).pathname;

rmSync(`${root}dist`, { recursive: true, force: true });
execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', `${root}tsconfig.build.json`], { stdio: 'inherit' });

// The MCP Apps pages: dist/ui/*.html, and baked into the server bundle.
const pages = await buildPages(`${root}dist/ui`);
await build({
  ...esbuildOptions,
  define: { ...esbuildOptions.define, __DOCREQ_UI_PAGES__: JSON.stringify(JSON.stringify(pages)), __DOCREQ_TOOL_LISTING__: await toolListingDefine() },
  entryPoints: { cli: `${root}src/cli.ts`, index: `${root}src/index.ts` },
  outdir: `${root}dist`,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
});
chmodSync(`${root}dist/cli.js`, 0o755);
