import { TOOLS } from '../src/tools/index.js';
import { APP_ONLY_TOOLS } from '../src/ui/apps.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { startRedis } from './support/redis.js';

/**
 * The local team stack (scripts/team-stack.mjs, `npm run team`) as a person runs it: the script as a
 * child process, its processes (redis-server, the sandbox, two replicas, nginx) found by their parent,
 * a preview through the proxy confirmed on the other replica, and every process gone once it stops.
 * And the warning a replica on a shared store without DOCREQ_TOKEN_SECRET gives, at start and in check.
 * No step is timed: each wait lasts until what it waits for happens (the test's own limit is generous).
 */

const SCRIPT = new URL('../scripts/team-stack.mjs', import.meta.url).pathname;
const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
const STACK_MS = 300_000;
const teamModeDoc = readFileSync(new URL('../docs/team-mode.md', import.meta.url), 'utf8');
const REFUSED_ELSEWHERE = 'a confirmation token issued by another replica will be refused: set DOCREQ_TOKEN_SECRET, the same on every replica';

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/cli.js is missing: run npm run build (npm test does)');
});

interface Proc {
  pid: number;
  ppid: number;
  zombie: boolean;
  command: string;
}

/** Every process of this machine: from /proc on Linux, else from ps. */
function processes(): Proc[] {
  if (existsSync('/proc/self/stat')) {
    const out: Proc[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
        out.push({ pid: Number(name), ppid: Number(ppid), zombie: state === 'Z', command });
      } catch {
        // gone while read
      }
    }
    return out;
  }
  const ps = spawnSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' });
  return ps.stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), zombie: m[3]!.startsWith('Z'), command: m[4]! }));
}

/** The processes below `pid`, children and theirs. */
function descendants(pid: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  const parents = [pid];
  while (parents.length) {
    const parent = parents.pop()!;
    for (const p of all.filter((q) => q.ppid === parent)) {
      found.push(p);
      parents.push(p.pid);
    }
  }
  return found;
}

const running = (pids: number[]) => {
  const alive = new Set(
    processes()
      .filter((p) => !p.zombie)
      .map((p) => p.pid),
  );
  return pids.filter((pid) => alive.has(pid));
};

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Stack {
  child: ChildProcess;
  mcpUrl: string;
  key: string;
  stderr: () => string;
  exit: Promise<[number | null, NodeJS.Signals | null]>;
}

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

/** Starts the script and waits for its ready block (as long as it takes, while the script runs). */
async function startStack(): Promise<Stack> {
  const child = spawn(process.execPath, [SCRIPT], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  while (!/^Ctrl-C stops everything\.$/m.test(stdout)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the stack stopped before it was ready:\n${stderr}`);
    await pause(100);
  }
  // The ready block names the sandbox's demo key (the try-out's own): it stays out of the key scan's capture; the processes' lines go in.
  afterAll(() => void captured.push(stderr));
  return { child, mcpUrl: /MCP URL:\s+(\S+)/.exec(stdout)![1]!, key: /Bearer key:\s+(\S+)/.exec(stdout)![1]!, stderr: () => stderr, exit };
}

/** Waits until none of `pids` runs (a zombie counts as gone): the pids still running after that, none. */
async function gone(pids: number[]): Promise<number[]> {
  for (let i = 0; i < 600 && running(pids).length; i++) await pause(100);
  return running(pids);
}

/** One 2025-11-25 tool call as a plain JSON POST: one request, so one pick of nginx's round robin. */
async function plainCall(url: string, key: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Protocol-Version': '2025-11-25',
      Authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  captured.push(text);
  expect(res.status, text).toBe(200);
  const data = text.includes('data: ')
    ? text
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6)
    : text;
  return (JSON.parse(data) as { result: CallToolResult }).result;
}

/** Which replica logged each tool call of `tool`: the access-log lines the script passes on, named. */
function replicasThatRan(stderr: string, tool: string): string[] {
  return [...stderr.matchAll(/^\[(replica \d+)\] (\{.*\})$/gm)].filter((m) => (JSON.parse(m[2]!) as { tool?: string }).tool === tool).map((m) => m[1]!);
}

/**
 * A 2025 host that shows pages, through the proxy: its initialize opens a session whose capabilities
 * every replica reads from the shared store, so each preview (whichever replica answers it) gives the
 * model no token and the page its own; the person's press sends once; once the session is ended, a
 * request naming it is told to reconnect and nothing runs.
 */
async function hostThatShowsPages(stack: Stack, clientId: string): Promise<void> {
  const apps = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
  const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${stack.key}` } } });
  const host = new Client({ name: 'apps-host', version: '1' }, { capabilities: apps });
  await host.connect(transport);
  const sessionId = transport.sessionId!;
  expect(sessionId).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
  const before = replicasThatRan(stack.stderr(), 'create_request').length;
  const args = { client: clientId, title: `Team stack page ${process.pid}-${Date.now()}`, items: [{ name: 'W-2' }], dryRun: true };
  // Four previews in a row: round robin gives each replica at least one.
  let token = '';
  for (let n = 0; n < 4; n++) {
    const preview = (await host.callTool({ name: 'create_request', arguments: args })) as CallToolResult & { _meta?: Record<string, { token: string }> };
    captured.push(JSON.stringify(preview));
    const seen = JSON.stringify(preview.content) + JSON.stringify(preview.structuredContent);
    token = preview._meta!['docreq-mcp/send']!.token;
    expect(seen).not.toContain(token);
    expect((preview.structuredContent as { confirmation: { by: string; token: null } }).confirmation).toMatchObject({ by: 'page', token: null });
  }
  while (replicasThatRan(stack.stderr(), 'create_request').length < before + 4) await pause(100);
  expect(new Set(replicasThatRan(stack.stderr(), 'create_request').slice(before)).size).toBe(2);
  const { dryRun: _, ...send } = args;
  const sent = (await host.callTool({ name: 'send_from_page', arguments: { tool: 'create_request', arguments: send, pageToken: token } })) as CallToolResult;
  expect((sent.structuredContent as { outcome: string }).outcome).toBe('sent');
  const again = (await host.callTool({ name: 'send_from_page', arguments: { tool: 'create_request', arguments: send, pageToken: token } })) as CallToolResult;
  expect((again.structuredContent as { outcome: string }).outcome).toBe('already_sent');
  // Ended (DELETE): the session's id is refused on every replica with 404, nothing called.
  await transport.terminateSession();
  for (let n = 0; n < 2; n++) {
    const res = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Protocol-Version': '2025-11-25',
        'Mcp-Session-Id': sessionId,
        Authorization: `Bearer ${stack.key}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'send_from_page', arguments: { tool: 'create_request', arguments: send, pageToken: token } },
      }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(404);
    expect(text).toContain('Reconnect');
  }
  await host.close().catch(() => undefined);
}

describe('the local team stack (scripts/team-stack.mjs)', () => {
  it(
    'serves through nginx; a preview on one replica is sent from the other, once; Ctrl-C (SIGTERM) stops every process',
    async () => {
      const stack = await startStack();
      const tree = descendants(stack.child.pid!);
      const commands = tree.map((p) => p.command);
      // redis, the sandbox, two replicas, nginx's master and its worker.
      expect(commands.filter((c) => c.startsWith('redis-server'))).toHaveLength(1);
      expect(commands.filter((c) => c.includes('dist/cli.js sandbox'))).toHaveLength(1);
      expect(commands.filter((c) => c.includes('dist/cli.js --transport http'))).toHaveLength(2);
      expect(commands.filter((c) => c.startsWith('nginx: master'))).toHaveLength(1);
      expect(commands.filter((c) => c.startsWith('nginx: worker'))).toHaveLength(1);
      const work = /-p (\S+)/.exec(commands.find((c) => c.startsWith('nginx: master'))!)![1]!;
      expect(existsSync(work)).toBe(true);

      // tools/list and a read through the proxy, with the key the script printed.
      const client = new Client({ name: 'team-stack-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${stack.key}` } } }));
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(TOOLS.filter((t) => !APP_ONLY_TOOLS.includes(t.name)).map((t) => t.name));
      const clients = (await client.callTool({ name: 'list_clients', arguments: { status: 'active', limit: 1 } })) as CallToolResult;
      const clientId = (clients.structuredContent as { clients: { id: string }[] }).clients[0]!.id;

      // Preview, then send with its token: two requests in a row, so round robin gives them different replicas.
      const title = `Team stack check ${process.pid}-${Date.now()}`;
      const args = { client: clientId, title, items: [{ name: 'W-2' }] };
      const preview = await plainCall(stack.mcpUrl, stack.key, 'create_request', args);
      const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
      expect(token).toBeTruthy();
      const sent = await plainCall(stack.mcpUrl, stack.key, 'create_request', { ...args, confirmationToken: token });
      expect(sent.isError, JSON.stringify(sent.content)).toBeFalsy();
      expect((sent.structuredContent as { outcome: string }).outcome).toBe('sent');

      // One request with this title at the service: sent once.
      const listed = (await client.callTool({ name: 'list_requests', arguments: { search: title } })) as CallToolResult;
      expect((listed.structuredContent as { requests: { title: string }[] }).requests.filter((r) => r.title === title)).toHaveLength(1);
      await client.close();

      // The preview and the send were answered by different replicas (each logs a line as its answer closes).
      while (replicasThatRan(stack.stderr(), 'create_request').length < 2) await pause(100);
      expect(new Set(replicasThatRan(stack.stderr(), 'create_request')).size).toBe(2);

      await hostThatShowsPages(stack, clientId);

      stack.child.kill('SIGTERM');
      const [code] = await stack.exit;
      expect(code).toBe(0);
      expect(stack.stderr()).toContain('stopped: every process of the stack has exited');
      expect(await gone(tree.map((p) => p.pid))).toEqual([]);
      expect(existsSync(work)).toBe(false);
    },
    STACK_MS,
  );

  it(
    'when one of its processes stops on its own, stops all the others and says which',
    async () => {
      const stack = await startStack();
      const tree = descendants(stack.child.pid!);
      const replica = tree.find((p) => p.command.includes('dist/cli.js --transport http'))!;
      process.kill(replica.pid, 'SIGKILL');
      const [code] = await stack.exit;
      expect(code).toBe(1);
      expect(stack.stderr()).toMatch(/team-stack: replica \d stopped on its own \(SIGKILL\): stopping everything/);
      expect(await gone(tree.map((p) => p.pid))).toEqual([]);
    },
    STACK_MS,
  );
});

describe("docs/team-mode.md's quick start", () => {
  it('comes first and runs the stack with the command package.json names', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.team).toBe('npm run build && node scripts/team-stack.mjs');
    const first = teamModeDoc.split('\n## ')[1]!;
    expect(first).toMatch(/^Quick start/);
    expect(first).toContain('npm run team');
    expect(first).toContain('node scripts/team-stack.mjs');
  });
});

describe('a replica on a shared store without DOCREQ_TOKEN_SECRET', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => void redis.child.kill('SIGTERM'));

  const check = (env: Record<string, string>) => {
    const run = spawnSync(process.execPath, [BIN, 'check', '--transport', 'http', '--sandbox'], {
      env: { ...childEnv(), ...env },
      encoding: 'utf8',
      timeout: 120_000,
    });
    captured.push(run.stdout, run.stderr);
    return run;
  };

  it('check --transport http shows it as a "!" line, naming the consequence and the fix', () => {
    const run = check({ DOCREQ_STORE_URL: redis.url });
    const line = run.stdout.split('\n').find((l) => l.includes('DOCREQ_TOKEN_SECRET'));
    expect(line, run.stdout).toBeDefined();
    expect(line!.startsWith('! ')).toBe(true);
    expect(line).toContain(REFUSED_ELSEWHERE);
    // A warning, not a failure: one replica on a shared store works.
    expect(run.status, run.stdout).toBe(0);
  }, 150_000);

  it('check says nothing of it with the secret set, or without a shared store', () => {
    const settings: Record<string, string>[] = [{ DOCREQ_STORE_URL: redis.url, DOCREQ_TOKEN_SECRET: 'a'.repeat(64) }, {}];
    for (const env of settings) {
      const run = check(env);
      expect(run.status, run.stdout).toBe(0);
      expect(run.stdout).toMatch(/send store/);
      expect(run.stdout).not.toContain(REFUSED_ELSEWHERE);
    }
  }, 150_000);

  /** The start's lines, up to the one saying it serves; then the service is stopped. */
  async function startLines(env: Record<string, string>): Promise<string> {
    const child = spawn(process.execPath, [BIN, '--transport', 'http', '--sandbox', '--host', '127.0.0.1', '--port', '0'], {
      env: { ...childEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(child);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    while (!/serving MCP over HTTP/.test(stderr)) {
      if (child.exitCode !== null) throw new Error(`exited: ${stderr}`);
      await pause(50);
    }
    child.kill('SIGTERM');
    await once(child, 'exit');
    // The sandbox names its demo keys at start (the try-out's own): that line stays out of the key scan's capture.
    captured.push(
      stderr
        .split('\n')
        .filter((l) => !l.includes('sandbox keys'))
        .join('\n'),
    );
    return stderr;
  }

  it('the start says so on stderr, before it serves', async () => {
    const stderr = await startLines({ DOCREQ_STORE_URL: redis.url });
    const line = stderr.split('\n').find((l) => l.includes(REFUSED_ELSEWHERE));
    expect(line, stderr).toMatch(/^docreq-mcp warn: DOCREQ_STORE_URL is set .* but DOCREQ_TOKEN_SECRET is not: /);
    expect(stderr.indexOf(line!)).toBeLessThan(stderr.indexOf('serving MCP over HTTP'));
    // docs/team-mode.md shows the line as it is printed.
    expect(teamModeDoc).toContain(line);
    expect(await startLines({ DOCREQ_STORE_URL: redis.url, DOCREQ_TOKEN_SECRET: 'b'.repeat(64) })).not.toContain(REFUSED_ELSEWHERE);
  }, 150_000);
});
