// node scripts/readme.mjs [figures.md]: rewrites the README's generated blocks from their one source.
// - settings table (between the settings-table markers): from SETTINGS in src/config.ts (via dist/);
// - figures (between the figures markers): from what `npm run bench` last printed (.bench/figures.md);
// - scale (between the scale markers): from what `npm run scale` last printed (.bench/scale.md);
// - throughput (between the throughput markers): from what `node scripts/throughput.mjs` last wrote (.bench/throughput.md);
// - what-runs and package-size: from esbuild's metafile and `npm pack --dry-run` (scripts/readme-facts.mjs).
// test/readme.test.ts fails when the README's settings table drifts from SETTINGS, or a fact from its source.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
if (!existsSync(`${root}dist/index.js`)) throw new Error('dist/ is missing: run npm run build first');
const { settingsTable } = await import(`${root}dist/index.js`);

/** Replaces what lies between `<!-- name…-->` and `<!-- /name -->` (the opening marker's comment is kept). */
export function replaceBlock(text, name, body) {
  const open = text.indexOf(`<!-- ${name}`);
  const close = text.indexOf(`<!-- /${name} -->`);
  if (open === -1 || close === -1 || close < open) throw new Error(`README has no ${name} markers`);
  const afterOpen = text.indexOf('-->', open) + 3;
  return `${text.slice(0, afterOpen)}\n${body.trim()}\n${text.slice(close)}`;
}

const readmePath = `${root}README.md`;
let readme = readFileSync(readmePath, 'utf8');
readme = replaceBlock(readme, 'settings-table', settingsTable());
const facts = await import('./readme-facts.mjs');
readme = replaceBlock(readme, 'what-runs', facts.whatRunsBlock(await facts.packageBuildPackages()));
readme = replaceBlock(readme, 'package-size', facts.packageSizeBlock(facts.packSizes()));
// Each generated block and the file its script last wrote.
const BLOCKS = [
  ['figures', process.argv[2] ?? `${root}.bench/figures.md`, 'npm run bench'],
  ['scale', `${root}.bench/scale.md`, 'npm run scale'],
  ['throughput', `${root}.bench/throughput.md`, 'node scripts/throughput.mjs'],
];
for (const [name, file, script] of BLOCKS) {
  if (existsSync(file)) readme = replaceBlock(readme, name, readFileSync(file, 'utf8'));
  else process.stderr.write(`readme: no ${file} (run ${script} first); the ${name} block is left as it is\n`);
}
writeFileSync(readmePath, readme);
process.stderr.write('readme: settings table, what runs and the package size regenerated from their sources\n');
