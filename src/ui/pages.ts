import { readFileSync } from 'node:fs';

/**
 * The pages' HTML. The package and the MCP Bundle have it baked in by esbuild (scripts/build.mjs,
 * scripts/bundle-server.mjs); run from source (the tests), it is read from dist/ui, which
 * scripts/build-pages.mjs writes.
 */
declare const __DOCREQ_UI_PAGES__: string | undefined;

export type PageName = 'preview' | 'dashboard';

let pages: Record<PageName, string> | undefined;

export function pageHtml(name: PageName): string {
  if (!pages && typeof __DOCREQ_UI_PAGES__ === 'string') pages = JSON.parse(__DOCREQ_UI_PAGES__) as Record<PageName, string>;
  if (pages) return pages[name];
  try {
    return readFileSync(new URL(`../../dist/ui/${name}.html`, import.meta.url), 'utf8');
  } catch {
    throw new Error(`The ${name} page is not built: run npm run build.`);
  }
}
