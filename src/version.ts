import { readFileSync } from 'node:fs';

// The single-file bundle has the version baked in by esbuild; the tsc build reads package.json.
declare const __DOCREQ_VERSION__: string | undefined;

function readVersion(): string {
  if (typeof __DOCREQ_VERSION__ === 'string') return __DOCREQ_VERSION__;
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export const VERSION = readVersion();
export const USER_AGENT = `docreq-mcp/${VERSION}`;
