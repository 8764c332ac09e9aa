import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/sandbox/service.js';
import { SendLedger } from '../src/send/ledger.js';
import { defaultStateDir, describeRedisUrl, FileStore, MemoryStore, openStore, RedisStore, StoreUnavailableError, storeReach, type SendStore } from '../src/store/index.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { freePort } from './support/ports.js';
import { startRedis as startRedisServer } from './support/redis.js';

/**
 * The send store (contract §7) with real processes: the built binary over stdio sharing a state
 * folder, a server SIGKILLed mid-POST, HTTP replicas sharing a real redis-server started here on
 * a port of its own. The sandbox counts POSTs: "once" is exactly one POST per case.
 */
const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
/**
 * The mutation run (vitest.stryker.config.ts) skips the tests that run only the built dist/ in child
 * processes: no mutant is in dist/, and a machine loaded by mutants makes their start-up waits flaky.
 */
const MUTATION_RUN = process.env.DOCREQ_MUTATION_RUN === '1';
const POST = 'POST /api/v1/requests';
const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-store-'));
  dirs.push(dir);
  return dir;
}

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (r: CallToolResult) => (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

interface Mcp {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }>;
  pid: number | null;
  close(): Promise<void>;
}

function wrap(client: Client, pid: number | null = null): Mcp {
  return {
    client,
    pid,
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const t = text(result);
      captured.push(t);
      return { ...result, text: t };
    },
    close: () => client.close().catch(() => undefined),
  };
}

/** The built binary over stdio, with its own environment. */
async function stdio(sb: Sandbox, env: Record<string, string>, elicit?: () => Promise<ElicitResult>): Promise<Mcp> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--log-level', 'error'],
    env: { ...childEnv(), HOME: process.env.HOME ?? '', DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => captured.push(d.toString()));
  const client = new Client({ name: 'store-test', version: '1' }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  await client.connect(transport);
  return wrap(client, transport.pid);
}

async function startRedis(port?: number): Promise<{ port: number; child: ChildProcess; url: string }> {
  const redis = await startRedisServer(port);
  children.add(redis.child);
  return redis;
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/** `docreq-mcp --transport http` as a child process. */
async function replica(sb: Sandbox, env: Record<string, string>, rateLimit = 1_000_000): Promise<{ url: string; child: ChildProcess; log: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, '--transport', 'http', '--port', String(port), '--rate-limit', String(rateLimit), '--log-level', 'info'], {
    env: { ...childEnv(), HOME: process.env.HOME ?? '', DOCREQ_BASE_URL: sb.url, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let log = '';
  child.stderr.on('data', (d: Buffer) => {
    log += d.toString();
    captured.push(d.toString());
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return { url, child, log: () => log };
    await sleep(25);
  }
  throw new Error(`replica did not start: ${log}`);
}

async function http(url: string, key: string): Promise<Mcp> {
  const client = new Client({ name: 'store-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return wrap(client);
}

const structured = <T>(r: CallToolResult) => r.structuredContent as T;
const tokenOf = (r: CallToolResult) => structured<{ confirmation: { token: string } }>(r).confirmation.token;

/**
 * N real node processes, each with its own store (the built dist/index.js) on one folder or one Redis,
 * held at a barrier (ready on stdout, go on stdin) and then claiming the same keys at once: each key
 * has exactly one winner. A claim that is not an exclusive create (`wx`, `SET NX`) gives every process the key.
 */
async function claimRace(where: string, processes: number, keys: string[], ttlMs: number): Promise<Map<string, number>> {
  const lib = new URL('../dist/index.js', import.meta.url).href;
  const script = `
    import { FileStore, RedisStore } from ${JSON.stringify(lib)};
    const where = process.env.RACE_AT;
    const store = where.startsWith('redis://') ? new RedisStore(where) : new FileStore(where);
    if (store instanceof RedisStore) await store.ready(5000);
    await store.get('race:warm');
    process.stdout.write('ready\\n');
    process.stdin.once('data', async () => {
      const keys = JSON.parse(process.env.RACE_KEYS);
      const won = await Promise.all(keys.map((k) => store.claim(k, 'owner-' + process.pid, Number(process.env.RACE_TTL))));
      process.stdout.write(JSON.stringify(keys.filter((_, i) => won[i])) + '\\n');
      process.exit(0);
    });`;
  const racers = Array.from({ length: processes }, () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...childEnv(), RACE_AT: where, RACE_KEYS: JSON.stringify(keys), RACE_TTL: String(ttlMs) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const waiting: [number, (line: string) => void, (error: Error) => void][] = [];
    const settle = () => {
      const lines = out.split('\n').slice(0, -1);
      for (const w of waiting.splice(0)) {
        if (lines.length > w[0]) w[1](lines[w[0]]!);
        else if (child.exitCode !== null) w[2](new Error(`racer exited: ${err}`));
        else waiting.push(w);
      }
    };
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      settle();
    });
    child.once('exit', settle);
    const line = (n: number) => new Promise<string>((resolve, reject) => waiting.push([n, resolve, reject]));
    const result = line(1);
    result.catch(() => undefined); // awaited below, once every racer is ready
    return { child, ready: line(0), result };
  });
  await Promise.all(racers.map((r) => r.ready));
  for (const r of racers) r.child.stdin.write('go\n');
  const wins = new Map<string, number>(keys.map((k) => [k, 0]));
  for (const r of racers) for (const k of JSON.parse(await r.result) as string[]) wins.set(k, wins.get(k)! + 1);
  return wins;
}

describe('the file store: claims raced by real processes', () => {
  it.skipIf(MUTATION_RUN)('6 processes claim the same 25 keys in one folder at once: each key has exactly one winner', async () => {
    const dir = tempDir();
    const keys = Array.from({ length: 25 }, (_, i) => `firm-race:claim:${i}`);
    const wins = await claimRace(dir, 6, keys, 60_000);
    expect([...wins.values()]).toEqual(keys.map(() => 1));
  });

  it.skipIf(MUTATION_RUN)('6 processes take over the same expired claims at once (a process that died): exactly one winner each', async () => {
    const dir = tempDir();
    const keys = Array.from({ length: 10 }, (_, i) => `firm-race:claim:stale-${i}`);
    const dead = new FileStore(dir);
    for (const k of keys) expect(await dead.claim(k, 'a process that was killed', 1)).toBe(true);
    await sleep(20);
    const wins = await claimRace(dir, 6, keys, 60_000);
    expect([...wins.values()]).toEqual(keys.map(() => 1));
  });

  it('a claim file another process has created and not yet written counts as held; left empty by a crash, it is taken over after 5 s', async () => {
    const dir = tempDir();
    const store = new FileStore(dir);
    const key = 'firm-race:claim:half-written';
    await store.get(key); // makes the firm's folder
    const sha = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);
    const path = join(dir, 'v1', sha('firm-race', 24), sha(key, 40));
    writeFileSync(path, '', { mode: 0o600 }); // what open('wx') leaves before the claim is written
    expect(await store.claim(key, 'second', 60_000)).toBe(false);
    utimesSync(path, new Date(), new Date(Date.now() - 6_000)); // its writer died right after creating it
    expect(await store.claim(key, 'second', 60_000)).toBe(true);
    expect(await store.get(key)).toBe('second');
  });
});

describe.skipIf(MUTATION_RUN)('the file store: stdio servers of one user', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    // A service that ignores Idempotency-Key and lists creates 5 s late: only the store keeps a send once.
    sb = await startSandbox({ listLagMs: 5_000, ignoreIdempotencyKey: true });
  });
  afterAll(() => sb.close());

  it('two stdio servers sharing a state folder: a send by one is refused by the other (1 POST); folder 0700, files 0600', async () => {
    const dir = tempDir();
    const env = { DOCREQ_STATE_DIR: join(dir, 'state'), DOCREQ_CONFIRM_SEND: 'never' };
    const [a, b] = await Promise.all([stdio(sb, env), stdio(sb, env)]);
    const client = sb.demoFirm.clients[0]!.id;
    const args = { client, title: 'Store test shared folder', items: [{ name: 'W-2' }] };
    const before = sb.callsTo('POST', '/api/v1/requests').length;
    const first = await a.call('create_request', args);
    expect(first.text).toMatch(/^SENT/);
    const second = await b.call('create_request', args);
    expect(second.isError).toBe(true);
    expect(second.text).toContain('this server sent');
    expect(sb.callsTo('POST', '/api/v1/requests').length - before).toBe(1);
    const state = join(dir, 'state');
    expect(statSync(state).mode & 0o777).toBe(0o700);
    const firmDir = join(state, 'v1', readdirSync(join(state, 'v1'))[0]!);
    const files = readdirSync(firmDir).filter((f) => !f.startsWith('.'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(statSync(join(firmDir, f)).mode & 0o777).toBe(0o600);
    await Promise.all([a.close(), b.close()]);
  });

  it('two stdio servers sharing a state folder, the same send confirmed in both at once (the person says yes twice): 1 POST', async () => {
    // Each host asks its person and holds the answer until the other host has asked too, or the other
    // call has ended: the claim taken before asking is all that keeps the second send out.
    const dir = tempDir();
    const env = { DOCREQ_STATE_DIR: dir, DOCREQ_CONFIRM_SEND: 'always' };
    let asked = 0;
    let bothAsked = () => undefined as void;
    const both = new Promise<void>((r) => (bothAsked = r));
    const calls: Promise<unknown>[] = [];
    const yes = async (): Promise<ElicitResult> => {
      if (++asked === 2) bothAsked();
      await Promise.race([both, ...calls]);
      return { action: 'accept', content: { confirm: true } };
    };
    const [a, b] = await Promise.all([stdio(sb, env, yes), stdio(sb, env, yes)]);
    const args = { client: sb.demoFirm.clients[3]!.id, title: 'Store test confirmed twice at once', items: [{ name: 'W-2' }] };
    const before = sb.callsTo('POST', '/api/v1/requests').length;
    calls.push(a.call('create_request', args), b.call('create_request', args));
    const results = (await Promise.all(calls)) as (CallToolResult & { text: string })[];
    expect(results.filter((r) => r.text.startsWith('SENT')), results.map((r) => r.text).join('\n')).toHaveLength(1);
    expect(results.find((r) => r.isError)?.text).toContain('already in progress');
    expect(asked).toBe(1);
    expect(sb.callsTo('POST', '/api/v1/requests').length - before).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('a server SIGKILLed mid-POST and started again: the same send answers "may have been sent", exactly 1 POST', async () => {
    const dir = tempDir();
    const env = { DOCREQ_STATE_DIR: dir, DOCREQ_CONFIRM_SEND: 'never' };
    const client = sb.demoFirm.clients[1]!.id;
    const args = { client, title: 'Store test killed mid-POST', items: [{ name: 'W-2' }] };
    const before = sb.callsTo('POST', '/api/v1/requests').length;
    sb.inject(POST, { kind: 'latency', ms: 1_500 }, { times: 1 });
    const a = await stdio(sb, env);
    const pending = a.call('create_request', args).catch(() => undefined);
    for (let i = 0; i < 200 && sb.callsTo('POST', '/api/v1/requests').length === before; i++) await sleep(10);
    expect(sb.callsTo('POST', '/api/v1/requests').length - before).toBe(1);
    process.kill(a.pid!, 'SIGKILL');
    await pending;
    await a.close();
    const b = await stdio(sb, env);
    const again = await b.call('create_request', args);
    expect(again.isError).toBe(true);
    expect(again.text).toContain('may have been sent');
    expect(again.text).toContain('list_requests');
    // While the dead process's claim lasts, the answer says what to do and when it clears.
    expect(again.text).toContain('clears within about a minute');
    await sleep(1_600); // the first POST lands in the service
    expect(sb.callsTo('POST', '/api/v1/requests').length - before).toBe(1);
    // The dead process's claim and record hold only that send: another title to that client, and that title to another client, go out.
    expect((await b.call('create_request', { ...args, title: 'Store test after the kill, another title' })).text).toMatch(/^SENT/);
    expect((await b.call('create_request', { ...args, client: sb.demoFirm.clients[5]!.id })).text).toMatch(/^SENT/);
    expect(sb.callsTo('POST', '/api/v1/requests').length - before).toBe(3);
    await b.close();
  });

  it('the host quits mid-POST (closes stdin: the server exits before the answer) and retries on a new server: "may have been sent", exactly 1 POST', async () => {
    const dir = tempDir();
    const env = { DOCREQ_STATE_DIR: dir, DOCREQ_CONFIRM_SEND: 'never' };
    const args = { client: sb.demoFirm.clients[4]!.id, title: 'Store test host quit mid-POST', items: [{ name: 'W-2' }] };
    const before = sb.callsTo('POST', '/api/v1/requests').length;
    sb.inject(POST, { kind: 'latency', ms: 3_000 }, { times: 1 });
    const a = await stdio(sb, env);
    const pending = a.call('create_request', args).catch(() => undefined);
    for (let i = 0; i < 200 && sb.callsTo('POST', '/api/v1/requests').length === before; i++) await sleep(10);
    await a.close(); // stdin ends: the server stops within 1.5 s, while the POST is still unanswered
    await pending;
    const alive = () => {
      try {
        return process.kill(a.pid!, 0);
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await sleep(20);
    expect(alive()).toBe(false);
    const b = await stdio(sb, env);
    const again = await b.call('create_request', args);
    expect(again.isError).toBe(true);
    expect(again.text).toContain('may have been sent');
    expect(again.text).toContain('list_requests');
    expect(sb.callsTo('POST', '/api/v1/requests').length - before).toBe(1);
    await b.close();
  });

  it('the same token replayed after a restart (shared DOCREQ_TOKEN_SECRET): 1 POST, answered with the first result', async () => {
    const dir = tempDir();
    const env = { DOCREQ_STATE_DIR: dir, DOCREQ_TOKEN_SECRET: randomBytes(32).toString('hex') };
    const client = sb.demoFirm.clients[2]!.id;
    const args = { client, title: 'Store test token after restart', items: [{ name: 'W-2' }], allowDuplicate: true };
    const before = sb.callsTo('POST', '/api/v1/requests').length;
    const a = await stdio(sb, env);
    const token = tokenOf(await a.call('create_request', args));
    expect((await a.call('create_request', { ...args, confirmationToken: token })).text).toMatch(/^SENT/);
    await a.close();
    const b = await stdio(sb, env);
    const replay = await b.call('create_request', { ...args, confirmationToken: token });
    expect(replay.text).toContain('ALREADY USED');
    expect(structured<{ outcome: string; request: { id: string } | null }>(replay).request?.id).toBeTruthy();
    expect(sb.callsTo('POST', '/api/v1/requests').length - before).toBe(1);
    await b.close();
  });
});

describe.skipIf(MUTATION_RUN)('the redis store: HTTP replicas sharing one redis-server', () => {
  let sb: Sandbox;
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let r1: Awaited<ReturnType<typeof replica>>;
  let r2: Awaited<ReturnType<typeof replica>>;
  const secret = randomBytes(32).toString('hex');
  beforeAll(async () => {
    sb = await startSandbox({ listLagMs: 5_000, ignoreIdempotencyKey: true });
    redis = await startRedis();
    const env = { DOCREQ_STORE_URL: redis.url, DOCREQ_TOKEN_SECRET: secret };
    [r1, r2] = await Promise.all([replica(sb, env), replica(sb, env)]);
  });
  afterAll(async () => {
    await Promise.all([stop(r1.child), stop(r2.child)]);
    await stop(redis.child);
    await sb.close();
  });

  const args = (n: number, title: string) => ({ client: sb.demoFirm.clients[n]!.id, title, items: [{ name: 'W-2' }] });
  const count = () => sb.callsTo('POST', '/api/v1/requests').length;

  it('6 processes, each with its own connection, claim the same 25 keys at once: exactly one winner each', async () => {
    const keys = Array.from({ length: 25 }, (_, i) => `firm-race:claim:redis-${i}`);
    const wins = await claimRace(redis.url, 6, keys, 60_000);
    expect([...wins.values()]).toEqual(keys.map(() => 1));
  });

  it('says in /healthz that once-only and the rate limit hold across every replica', async () => {
    const health = (await (await fetch(`${r1.url}/healthz`)).json()) as { store: { backend: string; shared: boolean; onceOnly: string } };
    expect(health.store).toMatchObject({ backend: 'redis', shared: true });
    expect(health.store.onceOnly).toContain('every replica');
  });

  it('one token sent to both replicas at once (4 times to each, as retrying hosts do): 1 POST', async () => {
    const [a, b] = await Promise.all([http(r1.url, sb.keys.demo), http(r2.url, sb.keys.demo)]);
    const input = args(3, 'Store test token to both');
    const token = tokenOf(await a.call('create_request', input));
    await b.call('create_request', input); // a preview on each replica first, so both are equally warm
    const before = count();
    const results = await Promise.all([a, b, a, b, a, b, a, b].map((m) => m.call('create_request', { ...input, confirmationToken: token })));
    expect(results.filter((r) => r.text.startsWith('SENT'))).toHaveLength(1);
    expect(count() - before).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('a retry routed to the other replica: 1 POST, answered with the first result', async () => {
    const [a, b] = await Promise.all([http(r1.url, sb.keys.demo), http(r2.url, sb.keys.demo)]);
    const input = args(4, 'Store test retry elsewhere');
    const token = tokenOf(await a.call('create_request', input));
    const before = count();
    expect((await a.call('create_request', { ...input, confirmationToken: token })).text).toMatch(/^SENT/);
    const retry = await b.call('create_request', { ...input, confirmationToken: token });
    expect(retry.text).toContain('ALREADY USED');
    expect(count() - before).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('two previews of the same request confirmed on two replicas: 1 POST (and the same with a service that honours the key and lists promptly)', async () => {
    for (const [n, honest] of [[5, false], [6, true]] as const) {
      sb.ignoreIdempotencyKey = !honest;
      sb.setListLag(honest ? 0 : 5_000);
      const [a, b] = await Promise.all([http(r1.url, sb.keys.demo), http(r2.url, sb.keys.demo)]);
      const input = args(n, `Store test two previews ${honest ? 'honest' : 'lagging'}`);
      const [t1, t2] = [tokenOf(await a.call('create_request', input)), tokenOf(await b.call('create_request', input))];
      expect(t1).not.toBe(t2);
      const before = count();
      const results = await Promise.all([a.call('create_request', { ...input, confirmationToken: t1 }), b.call('create_request', { ...input, confirmationToken: t2 })]);
      expect(results.filter((r) => r.text.startsWith('SENT')), results.map((r) => r.text).join('\n')).toHaveLength(1);
      expect(count() - before).toBe(1);
      await Promise.all([a.close(), b.close()]);
    }
    sb.ignoreIdempotencyKey = true;
    sb.setListLag(5_000);
  });

  it('redis stopped mid-session: sends refused naming the store (no password), reads answered; redis back: sends work', async () => {
    let a = await http(r1.url, sb.keys.demo);
    const input = { ...args(7, 'Store test redis down'), dryRun: false };
    await stop(redis.child);
    const before = count();
    const refused = await a.call('create_request', input);
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('Nothing was sent');
    expect(refused.text).toContain(`redis at 127.0.0.1:${redis.port}/3`);
    const read = await a.call('list_clients', {});
    expect(read.isError).toBeFalsy();
    expect(count()).toBe(before);
    redis = await startRedis(redis.port);
    // A redis without persistence came back empty: the connection's session went with it, so the host
    // reconnects, as a 404 ("Session not found") tells it to.
    // (Until the store answers again, its requests are still read with sending disabled.)
    let gone = '';
    for (let i = 0; i < 100 && !gone; i++) {
      gone = await a.call('list_clients', {}).then(() => '', (error: Error) => error.message);
      if (!gone) await sleep(100);
    }
    expect(gone).toContain('Session not found');
    await a.close();
    a = await http(r1.url, sb.keys.demo);
    let preview: CallToolResult & { text: string } = refused;
    for (let i = 0; i < 60 && preview.isError; i++) {
      await sleep(100);
      preview = await a.call('create_request', input);
    }
    expect(preview.text).toContain('PREVIEW');
    expect((await a.call('create_request', { ...input, confirmationToken: tokenOf(preview) })).text).toMatch(/^SENT/);
    expect(count() - before).toBe(1);
    await a.close();
  });
});

describe.skipIf(MUTATION_RUN)('the rate limit in the store', () => {
  let sb: Sandbox;
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    sb = await startSandbox();
    redis = await startRedis();
  });
  afterAll(async () => {
    await stop(redis.child);
    await sb.close();
  });

  const batch = (n: number) =>
    JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'list_templates', arguments: {} } })));
  const postBatch = (url: string, n: number) =>
    fetch(`${url}/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${sb.keys.demo}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: batch(n) });

  it('holds across two replicas and counts every call of a JSON-RPC batch (150 calls against a limit of 120: 429)', async () => {
    const env = { DOCREQ_STORE_URL: redis.url };
    const [a, b] = await Promise.all([replica(sb, env, 120), replica(sb, env, 120)]);
    expect((await postBatch(a.url, 150)).status).toBe(429);
    // 70 on one replica, then 70 on the other: 140 > 120 across the two.
    expect((await postBatch(a.url, 70)).status).not.toBe(429);
    const second = await postBatch(b.url, 70);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    await Promise.all([stop(a.child), stop(b.child)]);
  });

  /** `docreq-mcp check` as a child process: its stdout. */
  const check = async (env: Record<string, string>, args: string[] = []) => {
    const { stdout } = await run(process.execPath, [BIN, 'check', ...args], { env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, ...env }, timeout: 15_000 });
    captured.push(stdout);
    return stdout;
  };

  it('team mode with the default (file) store says at start, in /healthz and in check: once-only and the rate limit per process only', async () => {
    const r = await replica(sb, {});
    const health = (await (await fetch(`${r.url}/healthz`)).json()) as { store: { backend: string; shared: boolean; onceOnly: string } };
    expect(health.store).toMatchObject({ backend: 'file', shared: false });
    expect(health.store.onceOnly).toMatch(/no shared store: .*the rate limit holds per process only/);
    expect(r.log()).toMatch(/warn: send store: no shared store: .*the rate limit holds per process only; replicas need DOCREQ_STORE_URL/);
    await stop(r.child);
    const team = await check({}, ['--transport', 'http']);
    expect(team).toMatch(/^! send store: the file store at .*: no shared store: .*the rate limit holds per process only/m);
    const teamMemory = await check({ DOCREQ_STORE: 'memory', DOCREQ_TRANSPORT: 'http' });
    expect(teamMemory).toMatch(/^! send store: .*once-only holds per process only \(memory store\), and the rate limit holds per process only/m);
    // With redis, check says it holds across every replica; stdio (one person) is not warned.
    expect(await check({ DOCREQ_STORE_URL: redis.url }, ['--transport', 'http'])).toMatch(/^✓ send store: redis at 127\.0\.0\.1:\d+\/3: once-only and the rate limit hold across every replica/m);
    expect(await check({})).toMatch(/^✓ send store: the file store at .*: once-only holds across the processes of this machine only/m);
  });

  it('team mode without a shared store says so at start and in /healthz: per process only', async () => {
    const r = await replica(sb, { DOCREQ_STORE: 'memory' });
    const health = (await (await fetch(`${r.url}/healthz`)).json()) as { store: { shared: boolean; onceOnly: string } };
    expect(health.store.shared).toBe(false);
    expect(health.store.onceOnly).toContain('per process only');
    expect(r.log()).toContain('per process only');
    await stop(r.child);
  });
});

describe('claims are leases: renewed while held, cleared soon after their process dies', () => {
  // Short leases here (the server's are 60 s, renewed every 15 s), with five renewals per lease of margin.
  const lease = { ttlMs: 1_000, renewMs: 200 };
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => stop(redis.child));

  it('a live owner keeps its claim well past one lease (a person answering slowly); released, it is free at once (memory, file, redis)', async () => {
    const redisStore = new RedisStore(redis.url);
    await redisStore.ready();
    const hold = async (store: SendStore) => {
      const [a, b] = [new SendLedger(store, Date.now, lease), new SendLedger(store, Date.now, lease)];
      const release = await a.lock('firm-lease', 'client-1', 'tax');
      expect(release, store.backend).toBeDefined();
      await sleep(2 * lease.ttlMs);
      expect(await b.lock('firm-lease', 'client-1', 'tax'), store.backend).toBeUndefined();
      await release!();
      const again = await b.lock('firm-lease', 'client-1', 'tax');
      expect(again, store.backend).toBeDefined();
      await again!();
    };
    await Promise.all([new MemoryStore(), new FileStore(tempDir()), redisStore].map(hold));
    await redisStore.close();
  });

  it.skipIf(MUTATION_RUN)("a claim left by a SIGKILLed process blocks only its own send, and clears after its lease (file)", async () => {
    const dir = tempDir();
    const lib = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { FileStore, SendLedger } from ${JSON.stringify(lib)};
      const ledger = new SendLedger(new FileStore(process.env.DIR), Date.now, { ttlMs: 1000, renewMs: 200 });
      const release = await ledger.lock('firm-lease', 'client-1', 'tax');
      process.stdout.write(release ? 'locked\\n' : 'refused\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '', DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const said = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
    expect(said).toBe('locked');
    await sleep(1_500); // the child renews past its first lease
    await stop(child, 'SIGKILL');
    const ledger = new SendLedger(new FileStore(dir), Date.now, lease);
    expect(await ledger.lock('firm-lease', 'client-1', 'tax')).toBeUndefined();
    expect(await ledger.claimed('firm-lease', 'client-1', 'tax')).toBe(true);
    // Another title to that client, and that title to another client: not blocked.
    for (const [client, title] of [['client-1', 'payroll'], ['client-2', 'tax']] as const) {
      const release = await ledger.lock('firm-lease', client, title);
      expect(release).toBeDefined();
      await release!();
    }
    await sleep(lease.ttlMs + 100);
    expect(await ledger.claimed('firm-lease', 'client-1', 'tax')).toBe(false);
    const taken = await ledger.lock('firm-lease', 'client-1', 'tax');
    expect(taken).toBeDefined();
    await taken!();
  });
});

describe('bounded per firm: one firm never evicts another', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => stop(redis.child));

  async function floods(store: SendStore, sends: number): Promise<void> {
    const ledger = new SendLedger(store);
    await ledger.record('firmB', 'client-1', 'tax', { outcome: 'sent', requestId: 'r-b', title: 'Tax' });
    for (let i = 0; i < sends; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, sends - i) }, (_, j) => ledger.record('firmA', `client-${i + j}`, 'tax', { outcome: 'sent', requestId: null, title: 'Tax' })));
    }
    expect((await ledger.recent('firmB', 'client-1', 'tax'))?.requestId).toBe('r-b');
  }

  it("memory: firm A's 20,000 sends keep firm B's record, and A stays within its own bound", async () => {
    const store = new MemoryStore(5_000);
    await floods(store, 20_000);
    expect(await new SendLedger(store).recent('firmA', 'client-19999', 'tax')).toBeDefined();
    expect(await new SendLedger(store).recent('firmA', 'client-0', 'tax')).toBeUndefined();
  });

  it("file: firm A's sends beyond its bound prune only firm A's folder", async () => {
    const dir = tempDir();
    const store = new FileStore(dir, 300);
    await floods(store, 2_000);
    const folders = readdirSync(join(dir, 'v1')).map((f) => readdirSync(join(dir, 'v1', f)).filter((n) => !n.startsWith('.')).length);
    expect(Math.max(...folders)).toBeLessThanOrEqual(300 + 500);
  });

  it("redis: firm A's 20,000 sends keep firm B's record", async () => {
    const store = new RedisStore(redis.url);
    await store.ready();
    await floods(store, 20_000);
    await store.close();
  });
});

describe('every backend keeps the one store contract (memory, file, redis)', () => {
  // Memory and file run on a clock the test moves; redis keeps its own time, so its waits are real and short.
  let redis: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => stop(redis.child));

  interface Backend {
    store: SendStore;
    /** Moves time on by `ms` (the fake clock, or a real wait for redis). */
    pass: (ms: number) => Promise<unknown>;
  }
  const backends: [string, () => Promise<Backend>][] = [
    [
      'memory',
      () => {
        let now = 1_000_000;
        return Promise.resolve({ store: new MemoryStore(undefined, () => now), pass: (ms) => Promise.resolve((now += ms)) });
      },
    ],
    [
      'file',
      () => {
        let now = Date.now();
        return Promise.resolve({ store: new FileStore(tempDir(), undefined, () => now), pass: (ms) => Promise.resolve((now += ms)) });
      },
    ],
    [
      'redis',
      async () => {
        const store = new RedisStore(redis.url);
        await store.ready();
        return { store, pass: (ms) => sleep(ms) };
      },
    ],
  ];
  // Redis waits for real: the lease here is short, with margin around each step.
  const TTL = 400;
  const unique = () => `firm-${randomBytes(4).toString('hex')}`;

  it.each(backends)('%s: a claim is one owner\'s until it expires or its owner releases it; only the owner renews or releases', async (_name, make) => {
    const { store, pass } = await make();
    const key = `${unique()}:claim:a`;
    expect(await store.claim(key, 'A', TTL)).toBe(true);
    expect(await store.claim(key, 'B', TTL)).toBe(false);
    expect(await store.get(key)).toBe('A');
    // Another's value neither renews nor releases it.
    expect(await store.renew(key, 'B', TTL)).toBe(false);
    expect(await store.release(key, 'B')).toBe(false);
    expect(await store.get(key)).toBe('A');
    // Renewed by its owner from now: still held past the first expiry.
    await pass(TTL / 2);
    expect(await store.renew(key, 'A', TTL)).toBe(true);
    await pass((TTL * 3) / 4);
    expect(await store.claim(key, 'B', TTL)).toBe(false);
    // Released by its owner: free at once, and a second release finds nothing of its own.
    expect(await store.release(key, 'A')).toBe(true);
    expect(await store.get(key)).toBeUndefined();
    expect(await store.release(key, 'A')).toBe(false);
    // Expired: taken over by another; its first owner can no longer renew or release it.
    expect(await store.claim(key, 'A', TTL)).toBe(true);
    await pass(TTL + 100);
    expect(await store.get(key)).toBeUndefined();
    expect(await store.renew(key, 'A', TTL)).toBe(false);
    expect(await store.claim(key, 'B', TTL)).toBe(true);
    expect(await store.renew(key, 'A', TTL)).toBe(false);
    expect(await store.release(key, 'A')).toBe(false);
    expect(await store.get(key)).toBe('B');
    await store.close();
  });

  it.each(backends)('%s: a record lives its TTL, is replaced by a write, and is gone once deleted (deleting nothing is fine)', async (_name, make) => {
    const { store, pass } = await make();
    const ns = unique();
    const [a, b] = [`${ns}:send:a`, `${ns}:send:b`];
    await store.set(a, 'one', TTL);
    await store.set(a, 'two', TTL);
    await store.set(b, 'other', TTL * 10);
    expect(await store.get(a)).toBe('two');
    await store.delete(a);
    expect(await store.get(a)).toBeUndefined();
    await store.delete(a);
    await store.delete(`${ns}:send:never-written`);
    await store.set(a, 'three', TTL);
    await pass(TTL + 100);
    expect(await store.get(a)).toBeUndefined();
    expect(await store.get(b)).toBe('other');
    // Another namespace's key of the same name is another entry.
    expect(await store.get(`${unique()}:send:b`)).toBeUndefined();
    await store.close();
  });

  it.each(backends)('%s: a counter counts from its first increment, for its TTL from then, not from the last', async (_name, make) => {
    const { store, pass } = await make();
    const key = `${unique()}:rate:x`;
    expect(await store.incr(key, TTL)).toBe(1);
    expect(await store.incr(key, TTL)).toBe(2);
    expect(await store.incr(key, TTL, 5)).toBe(7);
    await pass(TTL / 2);
    expect(await store.incr(key, TTL)).toBe(8);
    // The window opened at the first increment: it ends TTL after it, whatever came since.
    await pass(TTL / 2 + 100);
    expect(await store.incr(key, TTL, 3)).toBe(3);
    expect(await store.incr(key, TTL)).toBe(4);
    await store.close();
  });

  it.each(backends.slice(0, 2))('%s: an entry is gone at the very millisecond it expires, and a claim is free then', async (_name, make) => {
    const { store, pass } = await make();
    const ns = unique();
    await store.set(`${ns}:send:a`, 'one', 1_000);
    expect(await store.claim(`${ns}:claim:a`, 'A', 1_000)).toBe(true);
    await pass(999);
    expect(await store.get(`${ns}:send:a`)).toBe('one');
    expect(await store.claim(`${ns}:claim:a`, 'B', 1_000)).toBe(false);
    await pass(1);
    expect(await store.get(`${ns}:send:a`)).toBeUndefined();
    expect(await store.claim(`${ns}:claim:a`, 'B', 1_000)).toBe(true);
  });

  it('file: two stores on one folder counting and renewing at once, each under the lock: no count lost, no call refused', async () => {
    const dir = tempDir();
    const [a, b] = [new FileStore(dir), new FileStore(dir)];
    const key = 'firm-busy:rate:x';
    const claims = await Promise.all([a, b].map((s, i) => s.claim(`firm-busy:claim:${i}`, `v${i}`, 60_000)));
    expect(claims).toEqual([true, true]);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const s = i % 2 ? a : b;
        return i % 4 < 2 ? s.incr(key, 60_000) : s.renew(`firm-busy:claim:${i % 2 ? 0 : 1}`, `v${i % 2 ? 0 : 1}`, 60_000);
      }),
    );
    expect(await a.incr(key, 60_000, 0)).toBe(20);
  });

  it('file: folders 0700 and entries 0600, folders left by an older version included', async () => {
    const dir = join(tempDir(), 'state');
    mkdirSync(join(dir, 'v1'), { recursive: true, mode: 0o755 });
    const store = new FileStore(dir);
    await store.set('firm-modes:send:a', 'x', 60_000);
    expect(await store.claim('firm-modes:claim:a', 'x', 60_000)).toBe(true);
    const firm = join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);
    for (const folder of [dir, join(dir, 'v1'), firm]) expect(statSync(folder).mode & 0o777, folder).toBe(0o700);
    const files = readdirSync(firm).filter((f) => !f.startsWith('.'));
    expect(files).toHaveLength(2);
    for (const f of files) expect(statSync(join(firm, f)).mode & 0o777, f).toBe(0o600);
  });

  it('file: works again once its folder can be made (a failure is not remembered)', async () => {
    const dir = tempDir();
    const blocker = join(dir, 'later');
    writeFileSync(blocker, 'x');
    const store = new FileStore(join(blocker, 'state'));
    await expect(store.get('firm-later:send:a')).rejects.toBeInstanceOf(StoreUnavailableError);
    rmSync(blocker);
    mkdirSync(blocker);
    await store.set('firm-later:send:a', 'back', 60_000);
    expect(await store.get('firm-later:send:a')).toBe('back');
  });

  it('file: an entry it cannot read for another reason than absence or a cut-short write fails closed, never reads as absent', async () => {
    const dir = tempDir();
    const store = new FileStore(dir);
    const key = 'firm-dir:send:a';
    await store.get(key); // makes the firm's folder
    const sha = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);
    mkdirSync(join(dir, 'v1', sha('firm-dir', 24), sha(key, 40))); // where the entry's file goes: a folder
    const error = await store.get(key).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain('EISDIR');
  });

  it('file: a claim file in a shape it does not know counts as being written for its first seconds, then as expired', async () => {
    let now = Date.now();
    const dir = tempDir();
    const store = new FileStore(dir, undefined, () => now);
    const key = 'firm-shape:claim:a';
    await store.get(key);
    const sha = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);
    const path = join(dir, 'v1', sha('firm-shape', 24), sha(key, 40));
    writeFileSync(path, '{"v":"someone"}', { mode: 0o600 });
    const written = Math.floor(Date.now() / 1_000) * 1_000 - 1_000; // whole seconds: an mtime the file system keeps exactly
    utimesSync(path, new Date(written), new Date(written));
    expect(statSync(path).mtimeMs).toBe(written);
    now = written + 4_999;
    expect(await store.claim(key, 'B', 60_000)).toBe(false);
    now = written + 5_000; // five seconds to the millisecond: no longer being written
    expect(await store.claim(key, 'B', 60_000)).toBe(true);
  });

  it('file: an unusable folder refuses every operation as the store being unavailable, naming the store and the error code, never the raw error', async () => {
    const dir = tempDir();
    const blocker = join(dir, 'not-a-folder');
    writeFileSync(blocker, 'x');
    const store = new FileStore(join(blocker, 'state'));
    const key = 'firm-x:send:a';
    const attempts: [string, Promise<unknown>][] = [
      ['claim', store.claim(key, 'v', 1_000)],
      ['renew', store.renew(key, 'v', 1_000)],
      ['release', store.release(key, 'v')],
      ['get', store.get(key)],
      ['set', store.set(key, 'v', 1_000)],
      ['delete', store.delete(key)],
      ['incr', store.incr(key, 1_000)],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt.then(() => undefined, (e: unknown) => e);
      expect(error, what).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message, what).toContain(`Nothing was sent: the send store (the file store at ${join(blocker, 'state')}) cannot be used (ENOTDIR on mkdir)`);
    }
  });

  it('file: a claim file whose writer died before writing it, and was then removed, is free', async () => {
    let now = Date.now();
    const dir = tempDir();
    const store = new FileStore(dir, undefined, () => now);
    const key = 'firm-gone:claim:a';
    expect(await store.claim(key, 'A', 60_000)).toBe(true);
    const folder = join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);
    for (const f of readdirSync(folder)) if (!f.startsWith('.')) writeFileSync(join(folder, f), ''); // created, not yet written
    expect(await store.claim(key, 'B', 60_000)).toBe(false);
    for (const f of readdirSync(folder)) if (!f.startsWith('.')) rmSync(join(folder, f));
    expect(await store.claim(key, 'B', 60_000)).toBe(true);
    now += 1;
    expect(await store.get(key)).toBe('B');
  });

  it('file: pruning drops expired entries and writers\' leftovers, and over the bound the soonest-expiring records, never a live claim', async () => {
    let now = Date.now();
    const dir = tempDir();
    const store = new FileStore(dir, 10, () => now);
    const ns = 'firm-prune';
    // A claim of a send in flight (minutes) and 30 records of a day.
    expect(await store.claim(`${ns}:claim:live`, 'A', 10 * 60_000)).toBe(true);
    for (let i = 0; i < 30; i++) await store.set(`${ns}:send:${i}`, `r${i}`, 24 * 3_600_000 + i * 60_000);
    await store.set(`${ns}:send:short`, 'short', 10_000);
    const folder = join(dir, 'v1', readdirSync(join(dir, 'v1'))[0]!);
    writeFileSync(join(folder, 'abc.123.tmp'), 'half'); // a writer that died mid-write
    now += 30_000; // "short" has expired; the claim has not; the leftover is 30 s old: kept
    await store.prune(folder);
    expect(readdirSync(folder)).toContain('abc.123.tmp');
    expect(await store.get(`${ns}:send:short`)).toBeUndefined();
    now += 40_000; // the leftover is over a minute old
    await store.prune(folder);
    const left = readdirSync(folder).filter((f) => !f.startsWith('.'));
    expect(left).not.toContain('abc.123.tmp');
    expect(await store.get(`${ns}:claim:live`)).toBe('A');
    expect(await store.get(`${ns}:send:short`)).toBeUndefined();
    // Over the bound of 10: the records expiring soonest went, the latest stayed.
    expect(await store.get(`${ns}:send:0`)).toBeUndefined();
    expect(await store.get(`${ns}:send:29`)).toBe('r29');
    expect(left.filter((f) => !f.endsWith('.tmp')).length).toBe(10);
  });
});

describe('where the store is, and what it holds across', () => {
  it('the state folder: XDG (or ~/.local/state) on Linux, Application Support on macOS, LOCALAPPDATA on Windows', () => {
    expect(defaultStateDir({ XDG_STATE_HOME: '/x/state' }, 'linux')).toBe(join('/x/state', 'docreq-mcp'));
    expect(defaultStateDir({}, 'linux')).toBe(join(homedir(), '.local', 'state', 'docreq-mcp'));
    expect(defaultStateDir({}, 'darwin')).toBe(join(homedir(), 'Library', 'Application Support', 'docreq-mcp'));
    expect(defaultStateDir({ LOCALAPPDATA: 'C:/Users/a/AppData/Local' }, 'win32')).toBe(join('C:/Users/a/AppData/Local', 'docreq-mcp'));
    expect(defaultStateDir({}, 'win32')).toBe(join(homedir(), 'AppData', 'Local', 'docreq-mcp'));
  });

  it('DOCREQ_STORE=redis without a URL is the local redis', async () => {
    const store = openStore({ backend: 'redis', stateDir: undefined, url: undefined });
    expect(store.name).toBe('redis at 127.0.0.1:6379/0');
    await store.close();
  });

  it('says what once-only and the rate limit hold across, for each store, in stdio and team mode', () => {
    const file = new FileStore('/s');
    const memory = new MemoryStore();
    const redis = { scope: 'replicas', name: 'redis at r:6379/0' } as SendStore;
    expect(storeReach(redis, true)).toEqual({ shared: true, note: 'once-only and the rate limit hold across every replica (redis at r:6379/0)' });
    expect(storeReach(file, false)).toEqual({ shared: true, note: 'once-only holds across the processes of this machine only (the file store at /s)' });
    expect(storeReach(memory, false)).toEqual({ shared: false, note: 'once-only holds per process only (memory store)' });
    expect(storeReach(file, true)).toEqual({
      shared: false,
      note: 'no shared store: once-only holds across the processes of this machine only (the file store at /s), and the rate limit holds per process only; replicas need DOCREQ_STORE_URL=redis://… to share them',
    });
  });

  it('memory: over its bound it drops expired entries first, then the oldest', async () => {
    let now = 0;
    const store = new MemoryStore(3, () => now);
    await store.set('f:send:old', 'old', 60_000);
    await store.set('f:send:short', 'short', 10);
    await store.set('f:send:c', 'c', 60_000);
    now = 20;
    await store.set('f:send:d', 'd', 60_000);
    expect(await store.get('f:send:old')).toBe('old');
    expect(await store.get('f:send:d')).toBe('d');
  });
});

describe('the redis store says where it is, never who', () => {
  it('names the address and database, never the user or password; a URL it cannot read is named as the setting', () => {
    expect(describeRedisUrl('redis://user:s3cret@cache.internal:6380/2')).toBe('redis at cache.internal:6380/2');
    expect(describeRedisUrl('rediss://:s3cret@cache.internal')).toBe('rediss at cache.internal:6379/0');
    expect(describeRedisUrl('redis://127.0.0.1/')).toBe('redis at 127.0.0.1:6379/0');
    expect(describeRedisUrl('not a url')).toBe('redis (DOCREQ_STORE_URL, not a URL)');
  });

  it('a command redis refuses while connected is the store being unavailable, named by the error kind, nothing of the value', async () => {
    const redis = await startRedis();
    const store = new RedisStore(redis.url);
    await store.ready();
    await store.set('firm-wrong:rate:x', 'not-a-number-s3cret', 60_000);
    const error = await store.incr('firm-wrong:rate:x', 60_000).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain(`(redis at 127.0.0.1:${redis.port}/3) cannot be used (Error)`);
    expect((error as Error).message).not.toContain('s3cret');
    await store.close();
    await stop(redis.child);
  });

  it('a redis nobody answers: commands are refused at once as the store being unavailable, the error named by its code, the password nowhere', async () => {
    const port = await freePort();
    const said: string[] = [];
    const store = new RedisStore(`redis://user:s3cret@127.0.0.1:${port}/1`, (m) => said.push(m));
    const error = await store.claim('firm-down:claim:a', 'A', 1_000).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain(`(redis at 127.0.0.1:${port}/1) cannot be used (not connected: ECONNREFUSED)`);
    await expect(store.ready(100)).rejects.toThrow(`not connected: ECONNREFUSED`);
    expect(said).toEqual([`send store redis at 127.0.0.1:${port}/1: ECONNREFUSED; sending is refused until it is back`]);
    expect([...said, (error as Error).message].join('\n')).not.toContain('s3cret');
    await store.close();
  });
});
