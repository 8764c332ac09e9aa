// What one revalidation costs the client: the built API client (dist/) asks a sandbox of 10,000
// requests (another process) for a list it already holds, so every GET is answered 304, one call at a
// time; prints this process's CPU time per call (user + system) and the wall time. One client per call,
// as team mode makes one per HTTP request, over one shared keep-alive pool as team mode does.
//
//   npm run build && node scripts/bench/revalidate-bench.mjs            # 3,000 calls per row
//   REVALIDATE_CALLS=5000 REVALIDATE_BUILD=/path/to/a/built/copy node scripts/bench/revalidate-bench.mjs
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, sandboxKey } from '../processes.mjs';

const root = new URL('../..', import.meta.url).pathname;
const build = process.env.REVALIDATE_BUILD ?? root;
const CALLS = Number(process.env.REVALIDATE_CALLS ?? 3000);
const { DocReqApi, ApiState } = await import(join(build, 'dist/index.js'));
const { Agent } = await import('undici');

const port = await freePort();
const sandbox = spawn(process.execPath, [join(root, 'dist/cli.js'), 'sandbox', '--port', String(port), '--requests', '10000'], {
  stdio: ['ignore', 'pipe', 'ignore'],
});
try {
  const key = await sandboxKey(sandbox);
  const sharedPool = new Agent({ keepAliveTimeout: 4_000, connections: 64 });
  const state = new ApiState();
  const client = () => new DocReqApi({ apiKey: key, baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 30_000, sharedPool, state });
  await client().fetchRequests();
  await client().fetchClients();
  const rows = [
    ['requests (warm-up row)', (api) => api.fetchRequests()],
    ['requests', (api) => api.fetchRequests()],
    ['clients', (api) => api.fetchClients()],
    ['requests and clients at once', (api) => Promise.all([api.fetchRequests(), api.fetchClients()])],
  ];
  process.stdout.write(`${build === root ? 'this build' : build}: ${CALLS.toLocaleString('en')} revalidations per row, each answered 304\n`);
  for (const [label, call] of rows) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) {
      const answer = await call(client());
      const revalidated = Array.isArray(answer) ? answer.every((a) => a.revalidated) : answer.revalidated;
      if (!revalidated) throw new Error(`${label}: the service did not answer 304`);
    }
    const used = process.cpuUsage(cpu);
    process.stdout.write(
      `  ${label}: client CPU ${((used.user + used.system) / 1000 / CALLS).toFixed(3)} ms/call, wall ${((performance.now() - started) / CALLS).toFixed(3)} ms/call\n`,
    );
  }
  await sharedPool.close();
} finally {
  sandbox.kill();
}
