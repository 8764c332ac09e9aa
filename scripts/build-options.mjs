// esbuild options shared by the package build and the MCP Bundle's single file.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

export const esbuildOptions = {
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
