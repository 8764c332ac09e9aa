import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createServer } from '../src/mcp/server.js';
import { SendLedger } from '../src/send/ledger.js';
import { Confirmations } from '../src/send/token.js';
import { FileStore, RedisStore, type SendStore } from '../src/store/index.js';
import { captured } from './support/key-scan.js';
import { AROUND_TODAY, FAST_API, sandbox, TODAY } from './support/sandbox.js';
import { startRedis } from './support/redis.js';

/**
 * The send pipeline's guards (docs/sending.md), each with the one condition that needs it, on the
 * real server, the real sandbox over HTTP and a real send store (a file folder, a redis-server):
 * the record written before the POST answers a restart once the dead process's claim has expired;
 * a store that stops taking writes refuses the send; a POST is never retried, whatever the answer.
 * Each server here gets its own ledger (its "process"), so a test decides which ones share a store.
 */
const sb = await sandbox({ ...AROUND_TODAY, clients: 160 });
const firm = sb.demoFirm;
const POST = 'POST /api/v1/requests';
const posts = () => sb.callsTo('POST', '/api/v1/requests');
const postsTo = (clientId: string) => posts().filter((c) => (JSON.parse(c.body ?? '{}') as { clientId?: string }).clientId === clientId);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Short leases, so a dead process's claim clears within the test (the server's are 60 s). */
const LEASE = { ttlMs: 400, renewMs: 100 };

const dirs: string[] = [];
const open: { close(): Promise<void> }[] = [];
afterEach(() => sb.setListLag(0));
afterAll(async () => {
  for (const o of open) await o.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'docreq-guards-'));
  dirs.push(dir);
  return dir;
}

/** Clients with a name no other client has, each used by one test only. */
const pool = firm.clients.filter((c) => c.status === 'active' && firm.clients.filter((d) => d.displayName === c.displayName).length === 1);
let taken = 0;
const take = () => pool[taken++]!;
let titles = 0;
const title = (what: string) => `Guard ${++titles}: ${what}`;

interface Mcp {
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult & { text: string }>;
  logs: string[];
}

/** A server ("a process") with its own send ledger over `store`, linked in memory to an SDK client. */
async function server(
  store: SendStore,
  options: {
    env?: Record<string, string>;
    elicit?: () => Promise<ElicitResult> | ElicitResult;
    actor?: { email: string; sub: string };
    audit?: (line: string) => void;
  } = {},
): Promise<Mcp> {
  const config = loadConfig({}, { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, ...options.env });
  const logs: string[] = [];
  const logger = createLogger('debug', [sb.keys.demo], (line) => {
    logs.push(line);
    captured.push(line);
  });
  const ledger = new SendLedger(store, Date.now, LEASE);
  const mcp = createServer(config, {
    logger,
    api: FAST_API,
    clock: () => TODAY,
    sending: { ledger, confirmations: new Confirmations(config.tokenSecret) },
    ...(options.actor ? { actor: options.actor, audit: options.audit } : {}),
  });
  const client = new Client({ name: 'guards', version: '1' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, () => answer());
  }
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([mcp.connect(b), client.connect(a)]);
  await client.listTools();
  open.push({ close: async () => (await client.close(), await mcp.close()) });
  return {
    logs,
    async call(name, args, signal) {
      const result = (await client.callTool({ name, arguments: args }, undefined, signal ? { signal } : undefined)) as CallToolResult;
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      captured.push(text, JSON.stringify(result.structuredContent ?? null));
      return { ...result, text };
    },
  };
}

/**
 * A store a process stops using when it dies: once `die()` is called, nothing more of that process
 * reaches it (no renewal of its claim, no release, no settled outcome), as after a SIGKILL.
 */
function diesWithItsProcess(store: SendStore): { store: SendStore; die(): void } {
  let dead = false;
  const guard =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    (...a: A) =>
      dead ? Promise.reject(new Error('the process is gone')) : f(...a);
  return {
    die: () => void (dead = true),
    store: {
      backend: store.backend,
      name: store.name,
      scope: store.scope,
      claim: guard(store.claim.bind(store)),
      renew: guard(store.renew.bind(store)),
      release: guard(store.release.bind(store)),
      get: guard(store.get.bind(store)),
      set: guard(store.set.bind(store)),
      delete: guard(store.delete.bind(store)),
      incr: guard(store.incr.bind(store)),
      close: () => store.close(),
    },
  };
}

/** Waits (bounded) until `ready` holds. */
async function until(ready: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await ready()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

type Single = { sent: boolean; outcome: string };
type Batch = { sent: number; recipients: { clientId: string | null; outcome: string; reason: string | null }[] };

describe('the record written before the POST answers a restart (the claim has expired, the list lags)', () => {
  /**
   * Process A sends and dies while its POST is in flight; its claim expires. Process B, started on
   * the same state folder, is asked for the same send while the service's list does not show it yet:
   * only A's pre-POST record can tell B that it may have been sent.
   */
  async function diedMidPost(clientId: string, requestTitle: string): Promise<{ dir: string }> {
    const dir = tempDir();
    sb.setListLag(10 * 60_000);
    const a = diesWithItsProcess(new FileStore(dir));
    const first = await server(a.store, { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    sb.inject(POST, { kind: 'latency', ms: 600 }, { times: 1 });
    const before = posts().length;
    const answered = first.call('create_request', { client: clientId, title: requestTitle, items: [{ name: 'Payslips' }] });
    await until(() => posts().length > before, 'the first POST');
    a.die();
    await answered; // its answer goes to a host that is gone; the service did create the request
    expect(postsTo(clientId)).toHaveLength(1);
    await sleep(3 * LEASE.ttlMs); // the dead process's claim is no longer renewed: it expires
    return { dir };
  }

  it('create_request on the restarted server: "may have been sent", exactly 1 POST', async () => {
    const client = take();
    const requestTitle = title('restart, single');
    const { dir } = await diedMidPost(client.id, requestTitle);
    const restarted = await server(new FileStore(dir), { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const again = await restarted.call('create_request', { client: client.id, title: requestTitle, items: [{ name: 'Payslips' }] });
    expect(again.isError).toBe(true);
    expect(again.text).toContain('this server may have sent');
    expect(again.text).toContain('its outcome was never recorded');
    expect(again.text).toContain('check with list_requests');
    expect(again.text).not.toContain('already in progress');
    expect(postsTo(client.id)).toHaveLength(1);
  });

  it('create_request_batch on the restarted server: that recipient skipped as "may have sent", the other sent; 1 POST to it', async () => {
    const [client, other] = [take(), take()];
    const requestTitle = title('restart, batch');
    const { dir } = await diedMidPost(client.id, requestTitle);
    const restarted = await server(new FileStore(dir), { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const result = await restarted.call('create_request_batch', { clients: [client.id, other.id], title: requestTitle, items: [{ name: 'Payslips' }] });
    const out = result.structuredContent as Batch;
    expect(out.recipients.map((r) => r.outcome)).toEqual(['skipped', 'sent']);
    expect(out.recipients[0]!.reason).toContain('this server may have sent');
    expect(out.recipients[0]!.reason).toContain('its outcome was never recorded');
    expect(postsTo(client.id)).toHaveLength(1);
    expect(postsTo(other.id)).toHaveLength(1);
  });
});

describe('a send store that stops taking writes (reads still work) refuses the send: 0 POSTs', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let admin: ReturnType<typeof createClient>;
  beforeAll(async () => {
    redis = await startRedis();
    admin = createClient({ url: redis.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.quit().catch(() => undefined);
    redis.child.kill('SIGKILL');
  });
  /** Redis out of memory under noeviction: every write is refused (OOM), every read answered. */
  const full = async (on: boolean) => {
    await admin.configSet('maxmemory-policy', 'noeviction');
    await admin.configSet('maxmemory', on ? '1' : '0');
  };
  afterEach(() => full(false));

  async function storeFullWhileAsked(): Promise<{ mcp: Mcp; store: RedisStore }> {
    const store = new RedisStore(redis.url);
    await store.ready();
    // The claim is taken before the person is asked; while they answer (the first time), the store fills up.
    let asked = 0;
    const mcp = await server(store, {
      elicit: async () => {
        if (asked++ === 0) await full(true);
        return { action: 'accept', content: { confirm: true } };
      },
    });
    open.push(store);
    return { mcp, store };
  }

  it('create_request: refused naming the store, nothing sent; reads answered; sending works again once it has room', async () => {
    const { mcp } = await storeFullWhileAsked();
    const client = take();
    const result = await mcp.call('create_request', { client: client.id, title: title('store full'), items: [{ name: 'W-2' }] });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Nothing was sent: the send store \(redis at 127\.0\.0\.1:\d+\/3\) cannot be used/);
    expect(result.text).toContain('cannot guarantee the request is sent only once');
    expect(posts()).toHaveLength(0);
    expect((await mcp.call('list_clients', { search: client.displayName })).isError).toBeFalsy();
    await full(false);
    const later = await mcp.call('create_request', { client: client.id, title: title('store has room'), items: [{ name: 'W-2' }] });
    expect((later.structuredContent as Single).outcome).toBe('sent');
    expect(posts()).toHaveLength(1);
  });

  it('the store failing after the POST (confirmed by token): the person still hears "sent", the failure is logged, and the send then counts as "may have been sent" (1 POST)', async () => {
    const store = new RedisStore(redis.url);
    await store.ready();
    open.push(store);
    const mcp = await server(store);
    const args = { client: take().id, title: title('store full after the POST'), items: [{ name: 'W-2' }] };
    const token = (await mcp.call('create_request', args)).structuredContent as { confirmation: { token: string } };
    sb.inject(POST, { kind: 'latency', ms: 400 }, { times: 1 });
    // Neither the outcome nor what the token did can be recorded: neither hides the outcome.
    const sending = mcp.call('create_request', { ...args, confirmationToken: token.confirmation.token });
    await until(() => posts().length > 0, 'the POST');
    await full(true);
    const result = await sending;
    expect((result.structuredContent as Single).outcome).toBe('sent');
    expect(result.text).toMatch(/^SENT: /);
    expect(
      mcp.logs.some(
        (l) => l.includes('could not be recorded') && l.includes('its pre-send record stays, so it is treated as "may have been sent" for 24 hours'),
      ),
    ).toBe(true);
    expect(mcp.logs.some((l) => l.includes('what a confirmation token did could not be recorded'))).toBe(true);
    await full(false);
    await sleep(3 * LEASE.ttlMs); // its claim could not be released either: it expires
    const again = await mcp.call('create_request', args);
    expect(again.isError).toBe(true);
    expect(again.text).toContain('its outcome was never recorded');
    expect(posts()).toHaveLength(1);
  });

  it('create_request_batch: the first recipient not sent and the batch stopped by the store; 0 POSTs', async () => {
    const { mcp } = await storeFullWhileAsked();
    const [a, b] = [take(), take()];
    const result = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title('store full, batch'), items: [{ name: 'W-2' }] });
    const out = result.structuredContent as Batch & { stoppedBy: string | null };
    expect(result.isError).toBe(true);
    expect(out.recipients.map((r) => r.outcome)).toEqual(['not_sent', 'not_sent']);
    expect(out.recipients[0]!.reason).toContain('cannot be used');
    expect(out.stoppedBy).toBe('the send store failing (at recipient 1)');
    expect(posts()).toHaveLength(0);
  });
});

describe('a POST is never retried: answered 429, exactly 1 POST', () => {
  it('create_request: the person is told the service is rate limiting and when to try again; trying again sends', async () => {
    const mcp = await server(new FileStore(tempDir()), { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const args = { client: take().id, title: title('429'), items: [{ name: 'W-2' }] };
    sb.inject(POST, { kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { times: 1 });
    const result = await mcp.call('create_request', args);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^The service is rate limiting calls \(429\)\..* Try again in 1 s\.$/);
    expect(result.text).not.toContain('may have been sent');
    expect(posts()).toHaveLength(1);
    // Refused by an answer, so nothing was written: no record blocks the person's retry.
    const retry = await mcp.call('create_request', args);
    expect((retry.structuredContent as Single).outcome).toBe('sent');
    expect(posts()).toHaveLength(2);
  });

  it('create_request_batch: that recipient not sent, saying 429; 1 POST to it', async () => {
    const mcp = await server(new FileStore(tempDir()), { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const [a, b] = [take(), take()];
    sb.inject(POST, { kind: 'status', status: 429 }, { times: 1 });
    const result = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title('429, batch'), items: [{ name: 'W-2' }] });
    const out = result.structuredContent as Batch;
    expect(out.recipients.map((r) => r.outcome)).toEqual(['not_sent', 'sent']);
    expect(out.recipients[0]!.reason).toContain('rate limiting calls (429)');
    expect(postsTo(a.id)).toHaveLength(1);
    expect(posts()).toHaveLength(2);
  });
});

describe('a confirmation answered after the time limit sends nothing and says so', () => {
  /** A person who answers `yes` only after the call's time limit (1 s) has passed. */
  function slowPerson() {
    let answered!: () => void;
    const done = new Promise<void>((r) => (answered = r));
    let fast = false;
    return {
      done,
      speedUp: () => void (fast = true),
      elicit: async (): Promise<ElicitResult> => {
        if (!fast) await sleep(1_600);
        answered();
        return { action: 'accept', content: { confirm: true } };
      },
    };
  }

  it.each([
    ['create_request', (id: string, t: string) => ({ client: id, title: t, items: [{ name: 'W-2' }] })],
    ['create_request_batch', (id: string, t: string) => ({ clients: [id, take().id], title: t, items: [{ name: 'W-2' }] })],
  ] as const)('%s: "Nothing was sent" (never "may have been sent"), the late yes sends nothing, and asking again sends', async (tool, args) => {
    const person = slowPerson();
    const mcp = await server(new FileStore(tempDir()), { env: { DOCREQ_TIMEOUT_MS: '1000' }, elicit: person.elicit });
    const a = args(take().id, title(`late answer, ${tool}`));
    const late = await mcp.call(tool, a);
    expect(late.isError).toBe(true);
    expect(late.text).toMatch(
      /^Nothing was sent: the person did not answer within the call's time limit \(DOCREQ_TIMEOUT_MS, 1 s\), and an answer given after it sends nothing\./,
    );
    expect(late.text).toContain(`Call ${tool} again to ask them again`);
    expect(late.text).not.toContain('may have been sent');
    await person.done;
    await sleep(300);
    expect(posts()).toHaveLength(0);
    // Nothing blocks asking again: no claim is left, no record was written.
    person.speedUp();
    const again = await mcp.call(tool, a);
    expect(again.isError).toBeFalsy();
    expect(posts().length).toBeGreaterThan(0);
  });

  it("a question that fails after the time limit (the host gives up on it) is no one's to hear: nothing sent, nothing thrown", async () => {
    let failed!: () => void;
    const gone = new Promise<void>((r) => (failed = r));
    const mcp = await server(new FileStore(tempDir()), {
      env: { DOCREQ_TIMEOUT_MS: '1000' },
      elicit: async () => {
        await sleep(1_600);
        failed();
        throw new Error('the host closed the question');
      },
    });
    const late = await mcp.call('create_request', { client: take().id, title: title('late failure'), items: [{ name: 'W-2' }] });
    expect(late.text).toMatch(/^Nothing was sent: the person did not answer within/);
    await gone;
    await sleep(300); // an unheard rejection of the question would fail this file here
    expect(posts()).toHaveLength(0);
  });
});

describe('an identical send while one awaits confirmation or is in flight: "already in progress", the person not asked twice', () => {
  /** A person who answers the first question yes only when `answer()` is called, and any later one at once. */
  function heldPerson() {
    const questions: string[] = [];
    let answer!: () => void;
    let asked!: () => void;
    const gate = new Promise<void>((r) => (answer = r));
    const first = new Promise<void>((r) => (asked = r));
    return {
      questions,
      answer,
      asked: first,
      elicit: async (): Promise<ElicitResult> => {
        questions.push('asked');
        if (questions.length > 1) return { action: 'accept', content: { confirm: true } };
        asked();
        await gate;
        return { action: 'accept', content: { confirm: true } };
      },
    };
  }
  const batch = (ids: string[], t: string) => ({ clients: ids, title: t, items: [{ name: 'W-2' }] });
  const inProgress = (r: Batch['recipients'][number]) => r.outcome === 'skipped' && (r.reason ?? '').includes('is already in progress');

  it('batch, then the identical batch while the person is asked: the second is refused for every recipient and asks no one; 1 POST each', async () => {
    const person = heldPerson();
    const mcp = await server(new FileStore(tempDir()), { elicit: person.elicit });
    const args = batch([take().id, take().id], title('batch then batch, asking'));
    const first = mcp.call('create_request_batch', args);
    await person.asked;
    const second = await mcp.call('create_request_batch', args);
    expect((second.structuredContent as Batch).recipients.every(inProgress)).toBe(true);
    expect(second.text).toMatch(/^NOTHING TO SEND — nothing was sent/);
    expect(person.questions).toHaveLength(1);
    person.answer();
    expect((await first).structuredContent).toMatchObject({ sent: 2 });
    for (const id of args.clients) expect(postsTo(id)).toHaveLength(1);
  });

  it('create_request with allowDuplicate, then the identical call while the person is asked: refused, not asked (allowDuplicate never lifts the claim)', async () => {
    const person = heldPerson();
    const mcp = await server(new FileStore(tempDir()), { elicit: person.elicit });
    const args = { client: take().id, title: title('allowDuplicate twice'), items: [{ name: 'W-2' }], allowDuplicate: true };
    const first = mcp.call('create_request', args);
    await person.asked;
    const second = await mcp.call('create_request', args);
    expect(second.text).toMatch(/^Not sent: a send of .* is already in progress/);
    expect(person.questions).toHaveLength(1);
    person.answer();
    expect((await first).structuredContent).toMatchObject({ outcome: 'sent' });
    expect(posts()).toHaveLength(1);
  });

  it('batch, then the identical batch while the first is sending: the second is refused for every recipient; 1 POST each', async () => {
    const mcp = await server(new FileStore(tempDir()), { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const args = batch([take().id, take().id, take().id], title('batch then batch, in flight'));
    sb.inject(POST, { kind: 'latency', ms: 500 }, { times: 1 });
    const first = mcp.call('create_request_batch', args);
    await until(() => posts().length > 0, 'the first POST');
    const second = await mcp.call('create_request_batch', args);
    expect((second.structuredContent as Batch).recipients, second.text).toSatisfy((rs: Batch['recipients']) => rs.every(inProgress));
    expect((await first).structuredContent).toMatchObject({ sent: 3 });
    for (const id of args.clients) expect(postsTo(id)).toHaveLength(1);
  });

  it('batch, then create_request for one of its recipients while the person is asked: refused, not asked; 1 POST each', async () => {
    const person = heldPerson();
    const mcp = await server(new FileStore(tempDir()), { elicit: person.elicit });
    const args = batch([take().id, take().id], title('batch then single'));
    const first = mcp.call('create_request_batch', args);
    await person.asked;
    const single = await mcp.call('create_request', { client: args.clients[1]!, title: args.title, items: args.items });
    expect(single.isError).toBe(true);
    expect(single.text).toMatch(/^Not sent: a send of .* is already in progress/);
    expect(person.questions).toHaveLength(1);
    person.answer();
    expect((await first).structuredContent).toMatchObject({ sent: 2 });
    for (const id of args.clients) expect(postsTo(id)).toHaveLength(1);
  });

  it('create_request, then a batch including its recipient while the person is asked: that recipient refused, the rest sent; 1 POST each', async () => {
    const person = heldPerson();
    const mcp = await server(new FileStore(tempDir()), { elicit: person.elicit });
    const [a, b] = [take(), take()];
    const t = title('single then batch');
    const single = mcp.call('create_request', { client: a.id, title: t, items: [{ name: 'W-2' }] });
    await person.asked;
    const out = (await mcp.call('create_request_batch', batch([a.id, b.id], t))).structuredContent as Batch;
    expect(inProgress(out.recipients[0]!)).toBe(true);
    expect(out.recipients[1]!.outcome).toBe('sent');
    person.answer();
    expect((await single).structuredContent).toMatchObject({ outcome: 'sent' });
    expect(postsTo(a.id)).toHaveLength(1);
    expect(postsTo(b.id)).toHaveLength(1);
  });
});

describe('what a send leaves for the people running it', () => {
  it('signed in: one audit line per send, ids only, with its outcome (sent, may have been sent); the result names the sender', async () => {
    const lines: string[] = [];
    const mcp = await server(new FileStore(tempDir()), {
      env: { DOCREQ_CONFIRM_SEND: 'never' },
      actor: { email: 'sender@demo.example', sub: 'sub-1' },
      audit: (l) => lines.push(l),
    });
    const [a, b] = [take(), take()];
    const sent = await mcp.call('create_request', { client: a.id, title: title('audited'), items: [{ name: 'W-2' }] });
    expect(sent.text).toContain('\nSent in the name of sender@demo.example (signed in).');
    // A fact of the send, in its own line and field: not under "Warnings:".
    expect(sent.text).not.toMatch(/Warnings:.*Sent in the name/);
    expect(sent.structuredContent).toMatchObject({ sentBy: 'sender@demo.example', warnings: [] });
    sb.inject(POST, { kind: 'status', status: 502 }, { times: 1, after: true });
    const unclear = await mcp.call('create_request', { client: b.id, title: title('audited, unclear'), items: [{ name: 'W-2' }] });
    expect((unclear.structuredContent as Single).outcome).toBe('may_have_been_sent');
    const audit = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const id = (sent.structuredContent as { request: { id: string } }).request.id;
    expect(audit).toEqual([
      expect.objectContaining({ audit: 'send', outcome: 'sent', email: 'sender@demo.example', sub: 'sub-1', clientId: a.id, requestId: id }),
      expect.objectContaining({ audit: 'send', outcome: 'may_have_been_sent', email: 'sender@demo.example', sub: 'sub-1', clientId: b.id, requestId: null }),
    ]);
    for (const l of lines) expect(l).not.toContain(a.email);
  });

  it('a host that cancels after the POST was written: the POST finishes, a warning tells its outcome, and it is recorded (1 POST)', async () => {
    const mcp = await server(new FileStore(tempDir()), { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const args = { client: take().id, title: title('cancelled after the write'), items: [{ name: 'W-2' }] };
    sb.inject(POST, { kind: 'latency', ms: 400 }, { times: 1 });
    const controller = new AbortController();
    const call = mcp.call('create_request', args, controller.signal).catch((e: unknown) => e);
    await until(() => posts().length > 0, 'the POST');
    controller.abort();
    expect(await call).toBeInstanceOf(Error);
    await until(() => mcp.logs.some((l) => l.includes('a send the host cancelled after it was written was sent (request id ')), 'the warning');
    expect(mcp.logs.find((l) => l.includes('cancelled after it was written'))).toContain(args.title);
    const again = await mcp.call('create_request', args);
    expect(again.text).toContain('this server sent');
    expect(posts()).toHaveLength(1);
  });

  it('a batch that runs short of its time limit stops before the next POST, saying so (no POST started it cannot finish)', async () => {
    const mcp = await server(new FileStore(tempDir()), { env: { DOCREQ_CONFIRM_SEND: 'never', DOCREQ_TIMEOUT_MS: '3000' } });
    const ids = [take().id, take().id, take().id];
    sb.inject(POST, { kind: 'latency', ms: 2_300 }, { times: 1 });
    const result = await mcp.call('create_request_batch', { clients: ids, title: title('time limit, batch'), items: [{ name: 'W-2' }] });
    const out = result.structuredContent as Batch & { stoppedBy: string | null };
    expect(out.recipients.map((r) => r.outcome)).toEqual(['sent', 'not_sent', 'not_sent']);
    expect(out.recipients[1]!.reason).toContain('Nothing was sent');
    expect(out.recipients[2]!.reason).toBe('stopped by the time limit of the call (DOCREQ_TIMEOUT_MS) at recipient 2');
    expect(out.stoppedBy).toBe('the time limit of the call (DOCREQ_TIMEOUT_MS) (at recipient 2)');
    expect(posts()).toHaveLength(1);
  });
});

describe("this server's record is read again once the claim is held", () => {
  /**
   * A process paused between reading the send store and taking the claim (a GC pause, a slow disk)
   * while another process sends the same request and lets its claim go: only the record read again
   * under the claim stops the second send.
   */
  function pausedBeforeItsClaim(store: SendStore): { store: SendStore; reached: Promise<void>; resume(): void } {
    let resume!: () => void;
    let reached!: () => void;
    const gate = new Promise<void>((r) => (resume = r));
    const atClaim = new Promise<void>((r) => (reached = r));
    return {
      reached: atClaim,
      resume,
      store: Object.assign(Object.create(store) as SendStore, {
        claim: async (key: string, value: string, ttlMs: number) => {
          reached();
          await gate;
          return store.claim(key, value, ttlMs);
        },
      }),
    };
  }

  it.each([
    ['create_request', (ids: string[], t: string) => ({ client: ids[0], title: t, items: [{ name: 'W-2' }] })],
    ['create_request_batch', (ids: string[], t: string) => ({ clients: ids, title: t, items: [{ name: 'W-2' }] })],
  ] as const)('%s: the same send finished by another process meanwhile is not sent again (1 POST)', async (tool, args) => {
    const dir = tempDir();
    const paused = pausedBeforeItsClaim(new FileStore(dir));
    const slow = await server(paused.store, { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const other = await server(new FileStore(dir), { env: { DOCREQ_CONFIRM_SEND: 'never' } });
    const ids = [take().id, take().id];
    const a = args(ids, title(`read again, ${tool}`));
    const late = slow.call(tool, a);
    await paused.reached;
    expect((await other.call(tool, a)).isError).toBeFalsy();
    const sent = posts().length;
    paused.resume();
    const result = await late;
    expect(result.text).toContain('this server sent');
    expect(posts()).toHaveLength(sent);
  });
});
