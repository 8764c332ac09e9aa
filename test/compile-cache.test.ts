import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnv, suiteFolder } from './support/folders.js';

// The built executable turns on Node's compile cache (Node 22.1 and later) before it loads anything
// else of ours: a start after the first then reads V8's compiled code of the chunks instead of
// parsing and compiling them again (docs/performance.md, "Cold start").
const CLI = new URL('../dist/cli.js', import.meta.url).pathname;
const run = promisify(execFile);
const dir = mkdtempSync(join(suiteFolder(), 'compile-cache-'));

describe('the compile cache', () => {
  it("the executable's first file imports only Node's own modules, and the rest only after the cache is on", () => {
    const text = readFileSync(CLI, 'utf8');
    const staticImports = [...text.matchAll(/(?:^|[;\n])\s*import\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']([^"']+)["']/g)].map((m) => m[1]);
    expect(staticImports.length).toBeGreaterThan(0);
    for (const specifier of staticImports) expect(specifier).toMatch(/^node:/);
    const on = text.indexOf('enableCompileCache');
    const rest = text.search(/\bimport\(["']\.\/chunks\//);
    expect(on).toBeGreaterThan(0);
    expect(rest).toBeGreaterThan(on);
  });

  it('is asked for once per start, with no folder of ours (Node picks its own, or none when NODE_DISABLE_COMPILE_CACHE=1)', async () => {
    // A stand-in for Node's enableCompileCache (Node 20 has none), recording each call.
    const calls = join(dir, 'calls');
    writeFileSync(calls, '');
    const preload = join(dir, 'preload.mjs');
    writeFileSync(
      preload,
      `import module from 'node:module'; import { appendFileSync } from 'node:fs';\nmodule.enableCompileCache = (...args) => { appendFileSync(${JSON.stringify(calls)}, JSON.stringify(args) + '\\n'); return { status: 0 }; };\n`,
    );
    const { stdout } = await run(process.execPath, ['--import', preload, CLI, '--version'], { env: childEnv() });
    expect(stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(readFileSync(calls, 'utf8')).toBe('[]\n');
  });

  const native = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
  it.skipIf(!native)('on a Node that has it, a start leaves the compiled chunks in the cache folder, and the next start reads them', async () => {
    // Node's own folder for it, in the temporary folder: here, one of this test's (NODE_COMPILE_CACHE is
    // not set, so only the executable's call turns the cache on).
    const temp = join(dir, 'tmp');
    const cache = join(temp, 'node-compile-cache');
    const env = { ...childEnv(), TMPDIR: temp };
    mkdirSync(temp);
    await run(process.execPath, [CLI, '--version'], { env });
    const entries = readdirSync(cache, { recursive: true }).length;
    expect(entries).toBeGreaterThan(2);
    const { stderr } = await run(process.execPath, [CLI, '--version'], { env: { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' } });
    expect(stderr).toMatch(/main-[A-Z0-9]+\.js was accepted/);
  });
});
