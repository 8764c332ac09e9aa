// The MCP Bundle, in steps both `npm run bundle` (scripts/bundle.mjs) and test/shipped.test.ts take:
// the server (esbuild, split like the package build: `server/index.js` loads only what stdio needs at
// start; team mode, the sandbox, undici and redis are chunks beside it in `server/chunks/`, read when
// first used. One file of all of them made V8 parse every line at each start: cold start 3.9× bare node
// against the split build's 1.9×), the bundle's folder, the .mcpb, and how a host starts it unpacked.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions, toolListingDefine } from './build-options.mjs';
import { buildPages } from './build-pages.mjs';

const root = new URL('..', import.meta.url).pathname;
export const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The mcpb command line tool (devDependency), run from the repository. */
export const mcpb = (...args) => execFileSync(join(root, 'node_modules/.bin/mcpb'), args, { cwd: root, encoding: 'utf8' });

/** Writes `index.js` and `chunks/` into `outdir` (emptied first); returns the entry's path. */
export async function buildBundleServer(outdir) {
  const pages = await buildPages();
  rmSync(outdir, { recursive: true, force: true });
  await build({
    ...esbuildOptions,
    define: { ...esbuildOptions.define, __DOCREQ_UI_PAGES__: JSON.stringify(JSON.stringify(pages)), __DOCREQ_TOOL_LISTING__: await toolListingDefine() },
    entryPoints: { index: new URL('../src/cli.ts', import.meta.url).pathname },
    outdir,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
  });
  return join(outdir, 'index.js');
}

/**
 * The bundle's folder in `dir` (emptied first: the server, manifest.json, LICENSE, icon.png, a package.json
 * making the server ESM), validated and packed into `out`. Returns what `mcpb validate` said.
 */
export async function packBundle(dir, out) {
  if (manifest.version !== pkg.version) throw new Error(`manifest.json version ${manifest.version} differs from package.json ${pkg.version}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'server'), { recursive: true });
  await buildBundleServer(join(dir, 'server'));
  for (const file of ['manifest.json', 'LICENSE', 'icon.png']) cpSync(join(root, file), join(dir, file));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }, null, 2));
  const validated = mcpb('validate', join(dir, 'manifest.json')).trim();
  rmSync(out, { force: true });
  mcpb('pack', dir, out);
  return validated;
}

/**
 * How a host starts the bundle unpacked in `installed`: the manifest's mcp_config with `${__dirname}` and
 * each `${user_config.x}` filled in (the person's answers in `answers`, else each option's default).
 */
export function hostCommand(installed, answers) {
  const cfg = manifest.server.mcp_config;
  const defaults = Object.fromEntries(Object.entries(manifest.user_config).map(([k, v]) => [k, v.default]));
  const userConfig = { ...defaults, ...answers };
  for (const [k, v] of Object.entries(manifest.user_config))
    if (userConfig[k] === undefined && v.required) throw new Error(`no value for required user_config.${k}`);
  const fill = (s) => s.replaceAll('${__dirname}', installed).replace(/\$\{user_config\.(\w+)\}/g, (_, k) => String(userConfig[k] ?? ''));
  return {
    command: cfg.command === 'node' ? process.execPath : cfg.command,
    args: cfg.args.map(fill),
    env: Object.fromEntries(Object.entries(cfg.env).map(([k, v]) => [k, fill(v)])),
  };
}
