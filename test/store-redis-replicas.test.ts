import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/sandbox/service.js';
import { describeRedisUrl, RedisStore, StoreUnavailableError } from '../src/store/index.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { freePort } from './support/ports.js';
import { childProcesses, stop, wrap, type Mcp } from './support/children.js';
import { APPS_HOST } from './support/connect.js';

/**
 * The redis store shared by HTTP replicas: real redis-servers started here on ports of their own,
 * the built binary as replicas of team mode. A send is kept once across replicas (one token to both,
 * a retry on the other, two previews confirmed on two), the rate limit holds across them, each store
 * says in /healthz, at start and in check what it holds across, a redis that stops refuses sends and
 * answers reads, and the store names where it is, never who. The sandbox counts POSTs: "once" is
 * exactly one POST per case.
 */
const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
/**
 * The mutation run (vitest.stryker.config.ts) skips the tests that run only the built dist/ in child
 * processes: no mutant is in dist/, and a machine loaded by mutants makes their start-up waits flaky.
 */
const MUTATION_RUN = process.env.DOCREQ_MUTATION_RUN === '1';
const { children, startRedis, claimRace } = childProcesses();

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url, child, log: () => log };
    await sleep(25);
  }
  throw new Error(`replica did not start: ${log}`);
}

/** An SDK client over Streamable HTTP; `capabilities` as its initialize declares them (a client that declares any gets a session). */
async function http(url: string, key: string, capabilities: Record<string, unknown> = {}): Promise<Mcp> {
  const client = new Client({ name: 'store-test', version: '1' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return wrap(client);
}

const structured = <T>(r: CallToolResult) => r.structuredContent as T;
const tokenOf = (r: CallToolResult) => structured<{ confirmation: { token: string } }>(r).confirmation.token;

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
    for (const [n, honest] of [
      [5, false],
      [6, true],
    ] as const) {
      sb.ignoreIdempotencyKey = !honest;
      sb.setListLag(honest ? 0 : 5_000);
      const [a, b] = await Promise.all([http(r1.url, sb.keys.demo), http(r2.url, sb.keys.demo)]);
      const input = args(n, `Store test two previews ${honest ? 'honest' : 'lagging'}`);
      const [t1, t2] = [tokenOf(await a.call('create_request', input)), tokenOf(await b.call('create_request', input))];
      expect(t1).not.toBe(t2);
      const before = count();
      const results = await Promise.all([
        a.call('create_request', { ...input, confirmationToken: t1 }),
        b.call('create_request', { ...input, confirmationToken: t2 }),
      ]);
      expect(
        results.filter((r) => r.text.startsWith('SENT')),
        results.map((r) => r.text).join('\n'),
      ).toHaveLength(1);
      expect(count() - before).toBe(1);
      await Promise.all([a.close(), b.close()]);
    }
    sb.ignoreIdempotencyKey = true;
    sb.setListLag(5_000);
  });

  it('redis stopped mid-session: sends refused naming the store (no password), reads answered; redis back: sends work', async () => {
    // A host that shows pages: its connection has a session, kept in the store.
    let a = await http(r1.url, sb.keys.demo, APPS_HOST);
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
    // A redis without persistence came back empty: the host's session went with it, so the host
    // reconnects, as a 404 ("Session not found") tells it to.
    // (Until the store answers again, its requests are still read with sending disabled.)
    let gone = '';
    for (let i = 0; i < 100 && !gone; i++) {
      gone = await a.call('list_clients', {}).then(
        () => '',
        (error: Error) => error.message,
      );
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
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'list_templates', arguments: {} } })),
    );
  const postBatch = (url: string, n: number) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${sb.keys.demo}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: batch(n),
    });

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
    const { stdout } = await run(process.execPath, [BIN, 'check', ...args], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, ...env },
      timeout: 15_000,
    });
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
    expect(await check({ DOCREQ_STORE_URL: redis.url }, ['--transport', 'http'])).toMatch(
      /^✓ send store: redis at 127\.0\.0\.1:\d+\/3: once-only and the rate limit hold across every replica/m,
    );
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
    const error = await store.incr('firm-wrong:rate:x', 60_000).then(
      () => undefined,
      (e: unknown) => e,
    );
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
    const error = await store.claim('firm-down:claim:a', 'A', 1_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain(`(redis at 127.0.0.1:${port}/1) cannot be used (not connected: ECONNREFUSED)`);
    await expect(store.ready(100)).rejects.toThrow(`not connected: ECONNREFUSED`);
    expect(said).toEqual([`send store redis at 127.0.0.1:${port}/1: ECONNREFUSED; sending is refused until it is back`]);
    expect([...said, (error as Error).message].join('\n')).not.toContain('s3cret');
    await store.close();
  });
});
