// The MCP Apps pages (src/ui/page): each bundled by esbuild for the browser, with its CSS, into one
// self-contained HTML string (no external script, style, font or image). build.mjs writes them to
// dist/ui/*.html and bakes them into the server bundle, so `npx` and the MCP Bundle carry them.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const pageDir = `${root}src/ui/page`;

/** Loads nothing from anywhere: the host bridge (postMessage) is the page's only way out. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'";

const PAGES = {
  preview: { entry: 'preview.ts', title: 'Send preview' },
  dashboard: { entry: 'dashboard.ts', title: 'Document requests' },
};

/**
 * Page budget, tested in test/apps.test.ts: each page's HTML at most this many bytes (raw, gzip). The
 * pages speak the host bridge themselves (src/ui/page/bridge.ts, typed by ext-apps) instead of
 * bundling ext-apps's App with zod and the SDK's Protocol: about 15 KB a page instead of 410 KB.
 */
export const PAGE_BUDGET = { bytes: 150_000, gzipBytes: 40_000 };

async function page(name, { entry, title }) {
  const out = await build({
    entryPoints: [`${pageDir}/${entry}`],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome111',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  // Inline script: no "</script" may appear inside it.
  const js = out.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1');
  const css = readFileSync(`${pageDir}/style.css`, 'utf8').replace(/\n/g, '');
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}">` +
    `<title>${title}</title><style>${css}</style></head>` +
    `<body><main id="app"><p>Loading…</p></main><script data-page="${name}">${js}</script></body></html>`
  );
}

/** Builds every page; writes dist/ui/<name>.html when `outDir` is given. */
export async function buildPages(outDir) {
  const pages = {};
  for (const [name, spec] of Object.entries(PAGES)) pages[name] = await page(name, spec);
  if (outDir) {
    mkdirSync(outDir, { recursive: true });
    for (const [name, html] of Object.entries(pages)) writeFileSync(`${outDir}/${name}.html`, html);
  }
  return pages;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const pages = await buildPages(`${root}dist/ui`);
  for (const [name, html] of Object.entries(pages)) process.stdout.write(`${name}.html: ${Buffer.byteLength(html)} bytes\n`);
}
