// node scripts/readme.mjs [figures.md]: rewrites the generated blocks of the README's pages from their one source.
// - docs/settings.md, settings table (between the settings-table markers): from SETTINGS in src/settings.ts (via dist/);
// - docs/performance.md, figures: from what `npm run bench` last printed (.bench/figures.md);
//   scale: from what `npm run scale` last printed (.bench/scale.md);
//   throughput: from what `node scripts/bench/throughput.mjs` last wrote (.bench/throughput.md);
//   targets: each of those figures that has a target, beside it, met or missed (scripts/targets.mjs);
// - docs/development.md, what-runs and package-size: from esbuild's metafile and `npm pack --dry-run`
//   (scripts/readme-facts.mjs).
// test/readme.test.ts fails when a page's settings table drifts from SETTINGS, or a fact from its source.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
if (!existsSync(`${root}dist/index.js`)) throw new Error('dist/ is missing: run npm run build first');
const { settingsTable } = await import(`${root}dist/index.js`);

/** Replaces what lies between `<!-- name…-->` and `<!-- /name -->` (the opening marker's comment is kept). */
export function replaceBlock(text, name, body) {
  const open = text.indexOf(`<!-- ${name}`);
  const close = text.indexOf(`<!-- /${name} -->`);
  if (open === -1 || close === -1 || close < open) throw new Error(`no ${name} markers`);
  const afterOpen = text.indexOf('-->', open) + 3;
  return `${text.slice(0, afterOpen)}\n${body.trim()}\n${text.slice(close)}`;
}

/** What lies between `<!-- name…-->` and `<!-- /name -->`. */
export function blockText(text, name) {
  const opened = text.split(`<!-- ${name}`)[1];
  if (opened === undefined) throw new Error(`no ${name} markers`);
  return opened
    .slice(opened.indexOf('-->') + 3)
    .split(`<!-- /${name} -->`)[0]
    .trim();
}

/** Rewrites the page at `path` (relative to the root) with `edit`. */
const rewrite = (path, edit) => writeFileSync(`${root}${path}`, edit(readFileSync(`${root}${path}`, 'utf8')));

rewrite('docs/settings.md', (page) => replaceBlock(page, 'settings-table', settingsTable()));

const facts = await import('./readme-facts.mjs');
const whatRuns = facts.whatRunsBlock(await facts.packageBuildPackages());
const packageSize = facts.packageSizeBlock(facts.packSizes());
rewrite('docs/development.md', (page) => replaceBlock(replaceBlock(page, 'what-runs', whatRuns), 'package-size', packageSize));

// Each measured block of docs/performance.md and the file its script last wrote.
const BLOCKS = [
  ['figures', process.argv[2] ?? `${root}.bench/figures.md`, 'npm run bench'],
  ['scale', `${root}.bench/scale.md`, 'npm run scale'],
  ['throughput', `${root}.bench/throughput.md`, 'node scripts/bench/throughput.mjs'],
];
const { targetsBlock } = await import('./targets.mjs');
rewrite('docs/performance.md', (page) => {
  for (const [name, file, script] of BLOCKS) {
    if (existsSync(file)) page = replaceBlock(page, name, readFileSync(file, 'utf8'));
    else process.stderr.write(`readme: no ${file} (run ${script} first); the ${name} block is left as it is\n`);
  }
  const tables = Object.fromEntries(BLOCKS.map(([name]) => [name, blockText(page, name)]));
  return replaceBlock(page, 'targets', targetsBlock(tables));
});
process.stderr.write('readme: docs/settings.md, docs/development.md and docs/performance.md regenerated from their sources\n');
