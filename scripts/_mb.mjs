import { build } from 'esbuild';
import { esbuildOptions } from './build-options.mjs';
await build({ ...esbuildOptions, minify: false, plugins: esbuildOptions.plugins, entryPoints: ['/tmp/mb/entry.ts'], external: ['/work/main/scripts/throughput.mjs'], outfile: '/tmp/mb/out.mjs', define: { ...esbuildOptions.define, __DOCREQ_UI_PAGES__: '"{}"' } });
