// npm run soak: 10,000 mixed tool calls in one server process (the built binary over stdio) against
// the sandbox. Prints the server's RSS and open sockets as it goes, and every unexpected error.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startSandbox } from '../../dist/index.js';

const TOTAL = Number(process.env.SOAK_CALLS ?? 10_000);
const CONCURRENCY = 8;
const sb = await startSandbox({ clients: 200, requests: 2_000 });
sb.demoFirm.monthlyRequestLimit = 1e9;
// The default (file) send store, in a folder of its own: the soak's sends never touch the user's state folder.
const state = mkdtempSync(join(tmpdir(), 'docreq-soak-state-'));
process.on('exit', () => rmSync(state, { recursive: true, force: true }));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [new URL('../../dist/cli.js', import.meta.url).pathname, '--confirm-send', 'never', '--log-level', 'error'],
  env: { PATH: process.env.PATH ?? '', DOCREQ_STATE_DIR: state, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
  stderr: 'inherit',
});
const client = new Client({ name: 'soak', version: '1' });
await client.connect(transport);
const pid = transport.pid;

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const sockets = () =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  }).length;

let n = 0;
let sent = 0;
let refusedAsExpected = 0;
const unexpected = [];
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const clients = sb.demoFirm.clients;

function nextCall(i) {
  const r = Math.random();
  if (i % 50 === 25) sb.inject('GET /api/v1/requests', { kind: 'status', status: 503 }, { times: 1 }); // a transient fault now and then
  if (r < 0.4)
    return {
      name: 'list_requests',
      arguments: pick([{}, { overdue: true }, { status: ['sent', 'in_progress'] }, { sort: 'due_soonest', limit: 50 }, { client: 'a', offset: 5 }]),
      expectError: false,
    };
  if (r < 0.7)
    return { name: 'list_clients', arguments: pick([{}, { search: 'mül' }, { status: 'active', limit: 100 }, { search: 'trust' }]), expectError: false };
  if (r < 0.9)
    return {
      name: 'create_request',
      arguments: { client: pick(clients).id, title: `Soak dry run ${i}`, items: [{ name: 'W-2' }], dryRun: true },
      expectError: false,
    };
  if (r < 0.95)
    return {
      name: 'create_request',
      arguments: { client: pick(clients).id, title: `Soak send ${i}`, items: [{ name: 'Statement' }, { name: 'Year end', type: 'date' }] },
      expectError: false,
      send: true,
    };
  return { name: 'create_request', arguments: { client: 'x', title: '', items: [] }, expectError: true };
}

async function worker() {
  while (n < TOTAL) {
    const i = n++;
    const call = nextCall(i);
    try {
      const result = await client.callTool({ name: call.name, arguments: call.arguments });
      if (result.isError && call.expectError) refusedAsExpected++;
      else if (result.isError) unexpected.push(`${call.name}: ${result.content[0].text.slice(0, 160)}`);
      else if (call.send) sent++;
    } catch (error) {
      unexpected.push(`${call.name} threw: ${error.message}`);
    }
    if ((i + 1) % 2_000 === 0) console.log(`${String(i + 1).padStart(6)} calls  RSS ${rssMb().toFixed(1)} MB  sockets ${sockets()}`);
  }
}

for (let i = 0; i < 200; i++) await client.callTool({ name: 'list_clients', arguments: {} }); // warm up
const start = { rss: rssMb(), sockets: sockets(), time: Date.now() };
console.log(
  `soak: ${TOTAL} mixed calls, ${CONCURRENCY} at a time, server pid ${pid}; sandbox ${sb.demoFirm.clients.length} clients, ${sb.demoFirm.requests.length} requests`,
);
console.log(`     0 calls  RSS ${start.rss.toFixed(1)} MB  sockets ${start.sockets}`);
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
const end = { rss: rssMb(), sockets: sockets() };
const posts = sb.callsTo('POST', '/api/v1/requests').length;
console.log(`done in ${((Date.now() - start.time) / 1000).toFixed(1)} s`);
console.log(
  `RSS start ${start.rss.toFixed(1)} MB → end ${end.rss.toFixed(1)} MB (${(end.rss - start.rss >= 0 ? '+' : '') + (end.rss - start.rss).toFixed(1)} MB); sockets ${start.sockets} → ${end.sockets}`,
);
console.log(
  `sent ${sent} (sandbox saw ${posts} POSTs, ${sb.emails.length} e-mails); invalid input refused ${refusedAsExpected}; unexpected errors ${unexpected.length}`,
);
for (const e of unexpected.slice(0, 10)) console.log(`  ${e}`);
await client.close();
await sb.close();
process.exitCode = unexpected.length === 0 && posts === sent ? 0 : 1;
