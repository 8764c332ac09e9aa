// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned devDependency, runs
// offline) against team mode on the sandbox. The suite has no way to send a credential, so a loopback
// relay in front of the service adds the demo firm's bearer key to each request (as a host would).
// Prints the suite's own output; exits with its status.
//   node scripts/conformance.mjs [extra conformance args, e.g. --suite all]
//   node scripts/conformance.mjs --expected-failures "$PWD/conformance-baseline.yml"          # the active suite (2025-11-25), as CI runs it
//   node scripts/conformance.mjs --requirements 2026-07-28 --expected-failures "$PWD/conformance-baseline-2026.yml"
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { freePort } from './processes.mjs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
const port = await freePort();
// Default settings: the suite's DNS-rebinding scenario sends its valid request with `Origin: http://<the
// URL it was given>` (the relay's loopback origin), which team mode bound to loopback accepts unlisted,
// and its invalid one with a foreign Host, refused. Host stays on its loopback default (`127.0.0.1`, any port).
const service = spawn(process.execPath, [join(root, 'dist/cli.js'), '--transport', 'http', '--sandbox', '--port', String(port), '--rate-limit', '1000000'], {
  stdio: ['ignore', 'ignore', 'pipe'],
  env: { ...process.env, DOCREQ_STORE: 'memory' },
}); // the memory store: nothing written to this user's state folder
children.add(service);
const key = await new Promise((resolve, reject) => {
  let text = '';
  service.stderr.on('data', (d) => {
    text += d;
    const m = /demo (\S+?);/.exec(text);
    if (m) resolve(m[1]);
  });
  service.on('exit', () => reject(new Error('team mode exited')));
});
for (
  let i = 0;
  i < 100 &&
  !(await fetch(`http://127.0.0.1:${port}/healthz`)
    .then((r) => r.ok)
    .catch(() => false));
  i++
)
  await new Promise((r) => setTimeout(r, 50));

const relay = createServer((req, res) => {
  // The Host header is passed on as sent: the suite's DNS-rebinding scenario checks the service refuses a foreign one.
  const headers = { ...req.headers, authorization: `Bearer ${key}` };
  const upstream = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
await new Promise((r) => relay.listen(0, '127.0.0.1', r)); // a port the system gives it: no window for another listener
const relayPort = relay.address().port;

// The suite needs Node >= 22 (fs.globSync); this project runs on 20: npx fetches Node 22 from the npm
// registry for the suite alone (CONFORMANCE_NODE may name a node 22 binary instead).
const suite = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const [cmd, pre] = process.env.CONFORMANCE_NODE ? [process.env.CONFORMANCE_NODE, []] : ['npx', ['-y', 'node@22']];
mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
// Fail clearly, before the suite runs, when Node 22 cannot be had (no registry, no cache, no CONFORMANCE_NODE).
{
  const probe = spawn(cmd, [...pre, '-e', 'process.stdout.write(process.versions.node)'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: join(root, 'node_modules/.cache'),
  });
  let out = '';
  let err = '';
  probe.stdout.on('data', (d) => (out += d));
  probe.stderr.on('data', (d) => (err += d));
  const ok = await new Promise((r) => {
    probe.on('error', () => r(false));
    probe.on('exit', (c) => r(c === 0));
  });
  if (!ok || Number(out.split('.')[0]) < 22) {
    process.stderr.write(
      `conformance: the suite needs Node >= 22 and \`${[cmd, ...pre].join(' ')}\` did not give one (got ${JSON.stringify(out)}). Set CONFORMANCE_NODE to a node 22 binary, or let npx reach the npm registry.\n${err.slice(-500)}\n`,
    );
    service.kill('SIGTERM');
    process.exit(2);
  }
}
const run = spawn(cmd, [...pre, suite, 'server', '--url', `http://127.0.0.1:${relayPort}/mcp`, ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: join(root, 'node_modules/.cache'),
});
children.add(run);
const code = await new Promise((r) => run.on('exit', (c) => r(c ?? 1)));
relay.close();
service.kill('SIGTERM');
process.exit(code);
