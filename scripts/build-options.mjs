// esbuild options shared by the package build and the MCP Bundle's single file.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/**
 * zod's `z` namespace re-exports every locale (about 260 KB of the 840 KB chunk the CLI loads at start);
 * this server speaks English only (it words issues itself, src/issues.ts), so only `en` is bundled.
 * `z.locales.<other>` would be undefined; nothing here uses it.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({ contents: 'export { default as en } from "./en.js";', loader: 'js' }));
  },
};

/**
 * oidc-provider (the sandbox's demo identity provider) keys its storage by model class name and checks
 * a stored entry's kind against `constructor.name` (and names its errors so); minified, the demo
 * provider's codes were not found again and the sandbox sign-in from the built CLI failed with
 * invalid_grant (issue 26; test/shipped.test.ts signs in through the built CLI). Its own files keep
 * their names (esbuild's keepNames applied to them alone); the rest stays fully minified, since
 * keepNames everywhere costs start-up (a `__name` call per function evaluated at load).
 */
const oidcProviderKeepsNames = {
  name: 'oidc-provider-keeps-names',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]oidc-provider[\\/].*\.js$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const { transform } = await import('esbuild');
      const source = await readFile(args.path, 'utf8');
      const { code } = await transform(source, { loader: 'js', format: 'esm', keepNames: true, target: 'node20.18', sourcefile: args.path });
      return { contents: code, loader: 'js', resolveDir: args.path.replace(/[\\/][^\\/]*$/, '') };
    });
  },
};

/**
 * The SDK server's platform shims (`@modelcontextprotocol/server/_shims`) name Ajv, a whole JSON Schema
 * engine (about 150 KB, evaluated and instantiated at every start: ~11 ms of a ~118 ms cold start), as
 * the default check of an accepted elicitation answer. createServer passes its own (src/mcp/form-check.ts:
 * the flat forms MCP allows); here the shims name that class too, so Ajv is not in the build at all.
 */
const sdkShims = {
  name: 'sdk-shims-without-ajv',
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, () => ({ path: 'sdk-shims', namespace: 'docreq-shims' }));
    build.onLoad({ filter: /^sdk-shims$/, namespace: 'docreq-shims' }, () => ({
      contents: `import process from 'node:process'; export { FormCheck as DefaultJsonSchemaValidator } from ${JSON.stringify(new URL('../src/mcp/form-check.ts', import.meta.url).pathname)}; export { process };`,
      loader: 'js',
      resolveDir: new URL('..', import.meta.url).pathname,
    }));
  },
};

export const esbuildOptions = {
  plugins: [zodEnglishOnly, oidcProviderKeepsNames, sdkShims],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.18',
  minify: true,
  legalComments: 'none',
  define: { __DOCREQ_VERSION__: JSON.stringify(pkg.version) },
  // undici and the SDK's dependencies require() Node built-ins; ESM output needs a require.
  banner: { js: "import { createRequire as __docreqRequire } from 'node:module'; const require = __docreqRequire(import.meta.url);" },
  logLevel: 'warning',
};

/**
 * `__DOCREQ_TOOL_LISTING__` for a build: the catalogue's tools as tools/list lists them (src/mcp/
 * tool-schema.ts, builtListing), worked out now from this source, so a start reads JSON instead of
 * converting the zod schemas (about 5 ms of a cold start). Bundled to a scratch file and imported.
 */
export async function toolListingDefine() {
  const { build } = await import('esbuild');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(`${tmpdir()}/docreq-listing-`);
  try {
    const src = new URL('../src/', import.meta.url).pathname;
    await build({
      ...esbuildOptions,
      minify: false,
      stdin: { contents: `export { TOOLS } from './tools/index.ts'; export { builtListing } from './mcp/tool-schema.ts';`, resolveDir: src, loader: 'ts' },
      define: { ...esbuildOptions.define, __DOCREQ_UI_PAGES__: JSON.stringify('{}') },
      outfile: `${dir}/listing.mjs`,
      logLevel: 'error',
    });
    const { TOOLS, builtListing } = await import(`${dir}/listing.mjs`);
    return JSON.stringify(JSON.stringify(builtListing(TOOLS)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The npm package a bundled file comes from (`node_modules/@scope/name/…` → `@scope/name`), or undefined for our own source. */
function packageOf(input) {
  const parts = input.split('node_modules/');
  if (parts.length < 2) return undefined;
  const segments = parts.at(-1).split('/');
  return segments[0].startsWith('@') ? `${segments[0]}/${segments[1]}` : segments[0];
}

/**
 * What runs: every npm package esbuild puts into the build of `entryPoints` (the package build: the CLI
 * and the library; the MCP Bundle: the CLI), with the bytes each takes in the output, largest first,
 * read from esbuild's metafile. scripts/readme.mjs writes it into docs/development.md; test/readme.test.ts checks it.
 */
export async function bundledPackages(entryPoints) {
  const { build } = await import('esbuild');
  const result = await build({
    ...esbuildOptions,
    define: { ...esbuildOptions.define, __DOCREQ_UI_PAGES__: JSON.stringify('{}') },
    entryPoints,
    outdir: new URL('../.metafile-out', import.meta.url).pathname,
    splitting: true,
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const bytes = new Map();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = packageOf(input);
      if (name && bytesInOutput > 0) bytes.set(name, (bytes.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...bytes].map(([name, size]) => ({ name, bytes: size })).sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
}
