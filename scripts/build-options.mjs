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
  // Minified, but every function and class keeps its own `.name`: oidc-provider keys its storage by model
  // class name and checks a stored entry's kind against `constructor.name` (and names its errors so);
  // minified, the demo identity provider's codes were not found again and the sandbox sign-in from the
  // built CLI failed with invalid_grant (issue 26; test/shipped.test.ts signs in through the built CLI).
  keepNames: true,
  legalComments: 'none',
  define: { __DOCREQ_VERSION__: JSON.stringify(pkg.version) },
  // undici and the SDK's dependencies require() Node built-ins; ESM output needs a require.
  banner: { js: "import { createRequire as __docreqRequire } from 'node:module'; const require = __docreqRequire(import.meta.url);" },
  logLevel: 'warning',
};
