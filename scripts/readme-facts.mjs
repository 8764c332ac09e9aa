// The README's checkable facts (its pages' generated blocks: docs/development.md), each worked out from its one
// source: scripts/readme.mjs writes them into those blocks, test/readme.test.ts checks the pages against them.
import { execFileSync } from 'node:child_process';
import { bundledPackages } from './build-options.mjs';

const root = new URL('..', import.meta.url).pathname;

/** The npm packages in the package build (the CLI and the library), from esbuild's metafile. */
export const packageBuildPackages = () => bundledPackages({ cli: `${root}src/cli.ts`, index: `${root}src/index.ts` });
/** The npm packages in the MCP Bundle's server (the CLI alone), from esbuild's metafile. */
export const mcpBundlePackages = () => bundledPackages({ index: `${root}src/cli.ts` });

const kb = (bytes) => (bytes < 1024 ? '<1' : String(Math.round(bytes / 1024)));

/** The what-runs block: each package bundled into the server, with the kilobytes it takes there. */
export function whatRunsBlock(packages) {
  return (
    `What runs in the server process: ${packages.length} npm packages, bundled by esbuild into \`dist/\` (and the MCP Bundle's ` +
    "`server/`, which carries the same ones), listed from esbuild's metafile with the kilobytes each takes in the build, largest " +
    `first: ${packages.map((p) => `\`${p.name}\` ${kb(p.bytes)}`).join(', ')}. Nothing else. Team mode, the sandbox (with its demo ` +
    'identity provider) and redis are loaded only when used.'
  );
}

/** The package's size as npm reports it: the tarball and what it unpacks to. */
export function packSizes() {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
  );
  return { size: packed.size, unpackedSize: packed.unpackedSize };
}

const mb = (bytes) => (bytes / 1_000_000).toFixed(1);

/** The package-size block (npm's MB: 10^6 bytes, as `npm pack` prints them). */
export function packageSizeBlock({ size, unpackedSize }) {
  return `1 package (${mb(size)} MB to download, ${mb(unpackedSize)} MB unpacked, as \`npm pack --dry-run\` reports it)`;
}
