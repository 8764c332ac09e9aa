#!/usr/bin/env node
// The executable's first module, and the only one loaded before Node's compile cache is on: everything
// else (main.ts and the chunks it needs) comes after, by the dynamic import below.
import module from 'node:module';

// Node 22.1 and later keep V8's compiled code of the modules loaded from here on in a cache folder
// (in the OS's temporary folder), so a start after the first skips parsing and compiling them (about
// 600 KB). Node 20 has no such cache (the call is skipped); NODE_DISABLE_COMPILE_CACHE=1 turns it off.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

await import('./main.js');
