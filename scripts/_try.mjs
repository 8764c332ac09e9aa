import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
const { Stryker } = await import(pathToFileURL(resolve('node_modules/@stryker-mutator/core/dist/src/stryker.js')).href);
const s = new Stryker({ mutate: ['src/freeze.ts'], concurrency: 1 });
const results = await s.runMutationTest();
console.log('mutants', results.length);
