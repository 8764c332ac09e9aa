import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/sandbox/service.js';
import { SendLedger } from '../src/send/ledger.js';
import { FileStore, MemoryStore, RedisStore, type SendStore } from '../src/store/index.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { childProcesses, stop, wrap, type Mcp } from './support/children.js';

/**
 * The send store keeps a send once across real processes: node processes racing for the same claims
 * in one folder, the built binary over stdio sharing a state folder (a server SIGKILLed mid-POST, a
 * host that quits mid-POST, a token replayed after a restart), and claims held as leases that a live
 * owner renews and a dead one leaves to expire. The sandbox counts POSTs: "once" is exactly one POST
 * per case.
 */
const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
/**
 * The mutation run (vitest.stryker.config.ts) skips the tests that run only the built dist/ in child
 * processes: no mutant is in dist/, and a machine loaded by mutants makes their start-up waits flaky.
 */
const MUTATION_RUN = process.env.DOCREQ_MUTATION_RUN === '1';
const POST = 'POST /api/v1/requests';
const { children, startRedis, claimRace } = childProcesses();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-store-'));
  dirs.push(dir);
  return dir;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

const structured = <T>(r: CallToolResult) => r.structuredContent as T;
const tokenOf = (r: CallToolResult) => structured<{ confirmation: { token: string } }>(r).confirmation.token;

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
    expect(
      results.filter((r) => r.text.startsWith('SENT')),
      results.map((r) => r.text).join('\n'),
    ).toHaveLength(1);
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

  it.skipIf(MUTATION_RUN)('a claim left by a SIGKILLed process blocks only its own send, and clears after its lease (file)', async () => {
    const dir = tempDir();
    const lib = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { FileStore, SendLedger } from ${JSON.stringify(lib)};
      const ledger = new SendLedger(new FileStore(process.env.DIR), Date.now, { ttlMs: 1000, renewMs: 200 });
      const release = await ledger.lock('firm-lease', 'client-1', 'tax');
      process.stdout.write(release ? 'locked\\n' : 'refused\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const said = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
    expect(said).toBe('locked');
    await sleep(1_500); // the child renews past its first lease
    await stop(child, 'SIGKILL');
    const ledger = new SendLedger(new FileStore(dir), Date.now, lease);
    expect(await ledger.lock('firm-lease', 'client-1', 'tax')).toBeUndefined();
    expect(await ledger.claimed('firm-lease', 'client-1', 'tax')).toBe(true);
    // Another title to that client, and that title to another client: not blocked.
    for (const [client, title] of [
      ['client-1', 'payroll'],
      ['client-2', 'tax'],
    ] as const) {
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
