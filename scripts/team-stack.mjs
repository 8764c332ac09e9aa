// A local team-mode stack in one command, on loopback and free ports: a redis-server (the shared send
// store; a temporary folder, nothing saved), one sandbox API (`docreq-mcp sandbox`), two replicas of
// `docreq-mcp --transport http` pointed at it with the same store and one token secret made for this
// run, and nginx in front, round-robin over the replicas. It prints how to connect, passes the
// children's output through (each line named by its process), and stops everything on Ctrl-C or
// SIGTERM, or as soon as any of them stops on its own.
//
//   node scripts/team-stack.mjs [--replicas N] [-- <more replica flags, e.g. --read-only>]
//
// Settings of your own environment (DOCREQ_*) are not passed on: the stack is the same on every machine.
/* global AbortSignal, clearTimeout */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './processes.mjs';

const root = new URL('..', import.meta.url).pathname;
const BIN = join(root, 'dist/cli.js');
/** How long each part may take to answer at start: generous, for a busy machine. */
const START_MS = 90_000;
/** How long stopping may take before what is left is killed: a replica drains for at most 10 s. */
const STOP_MS = 20_000;

const say = (line) => process.stdout.write(`${line}\n`);
const tell = (line) => process.stderr.write(`team-stack: ${line}\n`);

const argv = process.argv.slice(2);
const dashes = argv.indexOf('--');
const own = dashes === -1 ? argv : argv.slice(0, dashes);
const replicaFlags = dashes === -1 ? [] : argv.slice(dashes + 1);
let replicaCount = 2;
for (let i = 0; i < own.length; i++) {
  if (own[i] === '--replicas' && /^\d+$/.test(own[i + 1] ?? '') && Number(own[i + 1]) >= 1) replicaCount = Number(own[++i]);
  else if (own[i] === '--help' || own[i] === '-h') {
    say('node scripts/team-stack.mjs [--replicas N] [-- <more replica flags>]: redis, the sandbox, N replicas (default 2) and nginx on loopback.');
    process.exit(0);
  } else {
    tell(`unknown argument "${own[i]}" (try --help)`);
    process.exit(2);
  }
}

// What the stack needs, named before anything starts.
const missing = [];
if (!existsSync(BIN)) missing.push('dist/cli.js is missing: run npm run build (npm run team does)');
const nginxBin = ['nginx', '/usr/sbin/nginx', '/opt/homebrew/bin/nginx', '/usr/local/bin/nginx'].find(
  (b) => spawnSync(b, ['-v'], { stdio: 'ignore' }).status === 0,
);
if (!nginxBin) missing.push('nginx is not installed: sudo apt-get install -y nginx (Debian/Ubuntu), brew install nginx (macOS)');
if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0)
  missing.push('redis-server is not installed: sudo apt-get install -y redis-server (Debian/Ubuntu), brew install redis (macOS)');
if (missing.length) {
  for (const m of missing) tell(m);
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'docreq-team-stack-'));
/** Every process started, by the name its lines carry. */
const children = new Map();
let stopping = false;

// The environment every child starts from: this one without any docreq setting (a DOCREQ_API_KEY kept
// for stdio use would stop team mode from starting), and a state folder of the stack's own.
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DOCREQ_')));
baseEnv.DOCREQ_STATE_DIR = join(work, 'state');

/**
 * Starts a child in a process group of its own (Ctrl-C reaches this script only, which stops the
 * children in order). Its lines are passed on, named; a quiet one's are kept and shown only if it stops.
 */
function start(name, command, args, { env = {}, quiet = false } = {}) {
  const child = spawn(command, args, { env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.set(name, child);
  child.lines = [];
  child.gone = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      child.lines.push(line);
      if (child.lines.length > 20) child.lines.shift();
      if (!quiet) process.stderr.write(`[${name}] ${line}\n`);
    });
  }
  child.on('error', (error) => tell(`${name} could not start: ${error.message}`));
  child.on('exit', (code, signal) => {
    if (stopping) return;
    tell(`${name} stopped on its own (${signal ?? `exit code ${code}`}): stopping everything`);
    if (quiet && child.lines.length) tell(`${name}'s last lines:\n  ${child.lines.join('\n  ')}`);
    void stop(1);
  });
  return child;
}

/** Polls `probe` until it answers true, the child exits, or START_MS pass. */
async function until(name, child, probe) {
  const deadline = Date.now() + START_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null || stopping) throw new Error(`${name} stopped before it was ready`);
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not answer within ${START_MS / 1000} s`);
}

/** A redis PING over plain TCP: true on +PONG. */
function redisPing(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    socket.setTimeout(2_000, () => socket.destroy());
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      text += d;
      if (text.includes('\r\n')) {
        socket.end();
        resolve(text.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
  });
}

const healthy = (url) => fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.ok);

let stopped;
/** Stops nginx and the replicas (they finish what is in flight), then the sandbox and redis; kills whatever is left after STOP_MS. */
function stop(code) {
  if (stopped) return stopped;
  stopping = true;
  stopped = (async () => {
    const alive = (child) => child.exitCode === null && child.signalCode === null;
    const signal = (names, sig) => {
      for (const [name, child] of children) if (names(name) && alive(child)) child.kill(sig);
    };
    const settle = (names) => Promise.all([...children].filter(([name]) => names(name)).map(([, child]) => child.gone));
    const front = (name) => name === 'nginx' || name.startsWith('replica');
    const timer = setTimeout(() => signal(() => true, 'SIGKILL'), STOP_MS);
    signal(front, 'SIGTERM');
    await settle(front);
    signal((name) => !front(name), 'SIGTERM');
    await settle(() => true);
    clearTimeout(timer);
    rmSync(work, { recursive: true, force: true });
    tell('stopped: every process of the stack has exited');
    process.exit(code);
  })();
  return stopped;
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => void stop(0));
// A crash of this script must not leave the children running.
process.on('exit', () => {
  for (const child of children.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function main() {
  // The shared store: nothing saved, nothing read from disk.
  const redisPort = await freePort();
  const redis = start(
    'redis',
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', work, '--loglevel', 'warning'],
    { quiet: true },
  );
  await until('redis', redis, () => redisPing(redisPort));
  const storeUrl = `redis://127.0.0.1:${redisPort}/0`;

  // One sandbox for every replica: a preview on one and its send on another reach the same firm's data.
  const sandboxPort = await freePort();
  const sandbox = start('sandbox', process.execPath, [BIN, 'sandbox', '--port', String(sandboxPort)], { quiet: true });
  let sandboxUrl;
  let demoKey;
  let otherKeys = '';
  await until('sandbox', sandbox, async () => {
    const text = sandbox.lines.join('\n');
    sandboxUrl = /DOCREQ_BASE_URL=(\S+)/.exec(text)?.[1];
    demoKey = /DOCREQ_API_KEY=(\S+)/.exec(text)?.[1];
    otherKeys = /other keys: (.*)/.exec(text)?.[1] ?? '';
    return Boolean(sandboxUrl && demoKey);
  });

  // Made for this run, the same on every replica: a token a preview got on one is accepted by the others.
  const tokenSecret = randomBytes(32).toString('hex');
  const replicas = [];
  for (let n = 1; n <= replicaCount; n++) {
    const port = await freePort();
    const child = start(`replica ${n}`, process.execPath, [BIN, '--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...replicaFlags], {
      env: { DOCREQ_BASE_URL: sandboxUrl, DOCREQ_STORE_URL: storeUrl, DOCREQ_TOKEN_SECRET: tokenSecret },
    });
    replicas.push({ n, port, child, url: `http://127.0.0.1:${port}` });
  }
  await Promise.all(replicas.map((r) => until(`replica ${r.n}`, r.child, () => healthy(r.url))));

  // nginx in front, as deploy/nginx.conf sets it up, without TLS: every path goes to the replicas (MCP,
  // /healthz, the home page, the Server Card and the catalogue). Request bodies (at most 1 MiB) stay
  // in memory, so a worker never needs to write a temporary file, whatever user it runs as.
  const proxyPort = await freePort();
  for (const dir of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(work, dir), { recursive: true });
  writeFileSync(
    join(work, 'nginx.conf'),
    [
      'worker_processes 1;',
      `pid ${work}/nginx.pid;`,
      'error_log stderr warn;',
      'events { worker_connections 1024; }',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${work}/${t};`),
      '  upstream docreq_mcp {',
      ...replicas.map((r) => `    server 127.0.0.1:${r.port} max_fails=1 fail_timeout=5s;`),
      '    keepalive 16;',
      '  }',
      '  server {',
      `    listen 127.0.0.1:${proxyPort};`,
      '    client_max_body_size 1m;',
      '    client_body_buffer_size 1m;',
      '    location / {',
      '      proxy_pass http://docreq_mcp;',
      '      proxy_http_version 1.1;',
      '      proxy_set_header Connection "";',
      // With its port: the replicas name this address in the home page and the Server Card.
      '      proxy_set_header Host $http_host;',
      '      proxy_set_header X-Forwarded-Proto $scheme;',
      '      proxy_buffering off;',
      '      proxy_read_timeout 120s;',
      '      proxy_next_upstream error timeout;',
      '    }',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  const nginx = start('nginx', nginxBin, ['-p', work, '-c', join(work, 'nginx.conf'), '-g', 'daemon off;']);
  const proxy = `http://127.0.0.1:${proxyPort}`;
  await until('nginx', nginx, () => healthy(proxy));

  const mcp = `${proxy}/mcp`;
  say(
    [
      `team stack ready: MCP at ${mcp} (nginx, round-robin over ${replicaCount} replica${replicaCount === 1 ? '' : 's'})`,
      `  MCP URL:       ${mcp}`,
      `  Bearer key:    ${demoKey}   (the sandbox's demo firm; send it as Authorization: Bearer <key>)`,
      `  other keys:    ${otherKeys}`,
      `  replicas:      ${replicas.map((r) => r.url).join(', ')}`,
      `  shared store:  ${storeUrl}; token secret ${tokenSecret.slice(0, 8)}… (made for this run, the same on every replica)`,
      `  sandbox API:   ${sandboxUrl}`,
      `  Server Card:   ${mcp}/server-card (catalogue: ${proxy}/.well-known/ai-catalog.json)`,
      'Connect:',
      `  Inspector (CLI):  npx -y @modelcontextprotocol/inspector@2.12.0 --cli ${mcp} --transport http --header "Authorization: Bearer ${demoKey}" --method tools/list`,
      `  Inspector (UI):   npx -y @modelcontextprotocol/inspector@2.12.0, then Streamable HTTP, URL ${mcp}, header Authorization: Bearer ${demoKey}`,
      `  Claude Code:      claude mcp add --transport http docreq-local ${mcp} --header "Authorization: Bearer ${demoKey}"`,
      `  curl:             curl -s ${proxy}/healthz`,
      "Each replica's lines below carry its name. To confirm on purpose on another replica than the one that previewed, preview through one replica's own address and send through the other's.",
      'Ctrl-C stops everything.',
    ].join('\n'),
  );
}

main().catch((error) => {
  if (stopping) return;
  tell(`could not start: ${error.message}`);
  void stop(1);
});
