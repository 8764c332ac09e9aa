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

export const esbuildOptions = {
  plugins: [zodEnglishOnly],
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
