// npm run bench (or node scripts/bench/bench-store.mjs): what the send store adds to one send. The same
// create_request (DOCREQ_CONFIRM_SEND=never, a fresh title each time) through an in-process server
// against the sandbox, with the memory, file and redis stores, interleaved in one run; the figure is
// each store's median minus memory's. Redis is a real redis-server started here on its own port.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { freePort, sandboxKey } from '../processes.mjs';
import { Confirmations, createServer, FileStore, loadConfig, MemoryStore, RedisStore, SendLedger } from '../../dist/index.js';

const SENDS = Number(process.env.BENCH_STORE_SENDS ?? 100);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function run() {
  // The service in a process of its own, as a real one would be: its work does not share this one's threads.
  const sbPort = await freePort();
  const sandbox = spawn(process.execPath, [new URL('../../dist/cli.js', import.meta.url).pathname, 'sandbox', '--port', String(sbPort), '--clients', '400'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const key = await sandboxKey(sandbox);
  const sb = { url: `http://127.0.0.1:${sbPort}`, keys: { demo: key } };
  const dir = mkdtempSync(join(tmpdir(), 'docreq-bench-store-'));
  const stores = { memory: new MemoryStore(), file: new FileStore(dir) };
  let redis;
  const hasRedis = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  if (hasRedis) {
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    stores.redis = new RedisStore(`redis://127.0.0.1:${port}/0`);
    await stores.redis.ready(5_000);
  }
  const config = loadConfig({}, { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, DOCREQ_CONFIRM_SEND: 'never', DOCREQ_LOG_LEVEL: 'error' });
  const clients = {};
  let rows = [];
  // Whatever happens (a send refused, a store that fails), the sandbox and redis-server stop with the benchmark.
  try {
    for (const [name, store] of Object.entries(stores)) {
      const server = createServer(config, { sending: { ledger: new SendLedger(store), confirmations: new Confirmations(undefined) } });
      const [a, b] = InMemoryTransport.createLinkedPair();
      await server.connect(a);
      const client = new Client({ name: 'bench-store', version: '1' });
      await client.connect(b);
      clients[name] = client;
    }
    const listed = await clients.memory.callTool({ name: 'list_clients', arguments: { limit: 500 } });
    // Only active clients: a send to another is previewed with a warning and, with DOCREQ_CONFIRM_SEND=never, not sent.
    const ids = listed.structuredContent.clients.filter((c) => (c.status ?? 'active') === 'active').map((c) => c.id);
    const times = Object.fromEntries(Object.keys(stores).map((n) => [n, []]));
    for (let i = 0; i < SENDS + 5; i++) {
      for (const name of Object.keys(stores)) {
        const t = performance.now();
        const result = await clients[name].callTool({
          name: 'create_request',
          arguments: { client: ids[i % ids.length], title: `Bench ${name} ${i}`, items: [{ name: 'W-2' }] },
        });
        if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content).slice(0, 300)}`);
        if (i >= 5) times[name].push(performance.now() - t);
      }
    }
    const base = median(times.memory);
    rows = [
      {
        row: 'one send, memory store (p50)',
        figure: `${base.toFixed(2)} ms`,
        note: `${SENDS} sends, in-process server, sandbox in its own process on loopback`,
      },
    ];
    for (const name of ['file', 'redis']) {
      if (!times[name]) {
        rows.push({ row: `one send, ${name} store`, figure: 'n/a', note: 'redis-server not installed' });
        continue;
      }
      const p50 = median(times[name]);
      rows.push({
        row: `one send, ${name} store (p50)`,
        figure: `${p50.toFixed(2)} ms`,
        note: `+${(p50 - base).toFixed(2)} ms over memory (${(p50 / base).toFixed(2)}×), same run`,
      });
    }
  } finally {
    for (const c of Object.values(clients)) await c.close().catch(() => undefined);
    for (const s of Object.values(stores)) await s.close().catch(() => undefined);
    redis?.kill('SIGTERM');
    sandbox.kill('SIGTERM');
  }
  rmSync(dir, { recursive: true, force: true });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await run()) process.stdout.write(`| ${r.row} | ${r.figure} | ${r.note ?? ''} |\n`);
  process.exit(0);
}
