import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createServer } from '../src/mcp/server.js';
import { SendLedger } from '../src/send/ledger.js';
import { Confirmations } from '../src/send/token.js';
import { MemoryStore } from '../src/store/memory.js';
import { captured } from './support/key-scan.js';
import { AROUND_TODAY, FAST_API, sandbox, TODAY } from './support/sandbox.js';

/**
 * The send tools and the send pipeline where another call, another replica or the store itself acts
 * in the middle of a send (src/tools/create-request.ts, src/tools/create-request-batch.ts,
 * src/send/pipeline.ts): a record or a claim that appears after the lists were read, a token used
 * by a parallel call, a store that fails without a message, an answer without a record, a client
 * without an id, and the exact words of warnings, questions and reports where two of a kind are joined.
 */
const sb = await sandbox({ ...AROUND_TODAY, clients: 160 });
const firm = sb.demoFirm;
const posts = () => sb.callsTo('POST', '/api/v1/requests');
const limit = firm.activeRequestLimit;
afterEach(() => {
  sb.clearFaults();
  firm.activeRequestLimit = limit;
});
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of open) await o.close().catch(() => undefined);
});

type SandboxClient = (typeof firm.clients)[number];
const single = (c: SandboxClient) => firm.clients.filter((d) => d.displayName === c.displayName).length === 1;
const pool = firm.clients.filter((c) => c.status === 'active' && single(c) && !firm.requests.some((r) => r.clientId === c.id));
let taken = 0;
const take = () => pool[taken++]!;
let titles = 0;
const title = () => `Proof sendtools ${++titles}`;
const label = (c: { displayName: string | null; email: string | null; id: string | null }) => `"${c.displayName}" <${c.email}> (id ${c.id ?? ''})`;
const FAR = '2027-06-01';
const FAR_WARNING = `The due date ${FAR} is more than a year ahead: check it is the one meant.`;

/** A send store another replica shares: the test acts on it at the claim, fails a write, or hides a token's result once. */
class SharedStore extends MemoryStore {
  claims: string[] = [];
  /** Called at each claim (its place among this store's claims, 0-based); false: another call holds it. */
  onClaim: ((key: string, n: number) => Promise<boolean | void>) | undefined;
  /** Called at each write; an error thrown fails it. */
  onSet: ((key: string, value: string) => Promise<void>) | undefined;
  /** How many reads of a token's result still find nothing (written by a replica after them). */
  hideTokens = 0;

  override async claim(key: string, value: string, ttlMs: number): Promise<boolean> {
    const n = this.claims.push(key) - 1;
    if ((await this.onClaim?.(key, n)) === false) return false;
    return super.claim(key, value, ttlMs);
  }

  override async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.onSet?.(key, value);
    return super.set(key, value, ttlMs);
  }

  override get(key: string): Promise<string | undefined> {
    if (key.includes(':token:') && this.hideTokens > 0) {
      this.hideTokens--;
      return Promise.resolve(undefined);
    }
    return super.get(key);
  }

  /** Writes this server's record of a send for the recipient and title a claim key names, as another call that finished it would. */
  recordFor(claimKey: string, outcome: 'sent' | 'may_have_been_sent', title: string): Promise<void> {
    return super.set(claimKey.replace(':claim:', ':send:'), JSON.stringify({ outcome, requestId: null, title, at: Date.now() }), 86_400_000);
  }
}

interface Options {
  store?: SharedStore;
  confirmSend?: 'never' | 'auto';
  elicit?: 'accept' | 'decline';
  actor?: { email: string; sub: string; role: 'sender' };
}

async function server(options: Options = {}) {
  const store = options.store ?? new SharedStore();
  const config = loadConfig({}, { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, DOCREQ_CONFIRM_SEND: options.confirmSend ?? 'auto' });
  const logs: string[] = [];
  const logger = createLogger('debug', [sb.keys.demo], (line) => {
    logs.push(line);
    captured.push(line);
  });
  const mcp = createServer(config, {
    logger,
    api: FAST_API,
    clock: () => TODAY,
    sending: { ledger: new SendLedger(store), confirmations: new Confirmations(config.tokenSecret) },
    ...(options.actor ? { actor: options.actor } : {}),
  });
  const questions: string[] = [];
  const client = new Client({ name: 'proof-sendtools', version: '1' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const action = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params.message);
      return action === 'accept' ? { action, content: { confirm: true } } : { action };
    });
  }
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([mcp.connect(b), client.connect(a)]);
  await client.listTools();
  open.push({ close: async () => (await client.close(), await mcp.close()) });
  return {
    store,
    logs,
    questions,
    async call(name: string, args: Record<string, unknown>) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      captured.push(text);
      return { ...result, text, lines: text.split('\n') };
    },
  };
}

type Row = { client: string; outcome: string; reason: string | null; request: { id: string } | null };
const rows = (r: CallToolResult) => (r.structuredContent as { recipients: Row[] }).recipients;
const tokenOf = (r: CallToolResult) => (r.structuredContent as { confirmation: { token: string } }).confirmation.token;

/** A client the service lists without an id (added to the sandbox for one test, then removed). */
async function withoutId<T>(work: (c: SandboxClient) => Promise<T>): Promise<T> {
  const noId = { ...pool[0]!, id: null as unknown as string, displayName: 'Nora Noid', email: 'nora.noid@noid.example' };
  firm.clients.push(noId);
  sb.invalidateLists();
  try {
    return await work(noId);
  } finally {
    firm.clients.splice(firm.clients.indexOf(noId), 1);
    sb.invalidateLists();
  }
}

describe('create_request_batch: what changed after the lists were read', () => {
  it('a recipient another call sent meanwhile is already sent, one it may have sent is skipped, one held is skipped; the question asks only for the rest', async () => {
    const mcp = await server({ elicit: 'accept' });
    const [a, b, c, d] = [take(), take(), take(), take()];
    const t = title();
    mcp.store.onClaim = async (key, n) => {
      if (n === 1) await mcp.store.recordFor(key, 'sent', t);
      if (n === 2) await mcp.store.recordFor(key, 'may_have_been_sent', t);
      if (n === 3) return false;
    };
    const before = posts().length;
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id, c.id, d.id], title: t, items: [{ name: 'W-2' }] });
    expect(posts().length - before).toBe(1);
    expect(rows(r).map((x) => x.outcome)).toEqual(['sent', 'already_sent', 'skipped', 'skipped']);
    expect(rows(r)[1]!.reason).toMatch(new RegExp(`^this server sent "${t}" to this client at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`));
    expect(rows(r)[2]!.reason).toMatch(new RegExp(`^this server may have sent "${t}" to this client at`));
    // The batch names no one in the pipeline's words: "this client", its default.
    expect(rows(r)[3]!.reason).toMatch(new RegExp(`^a send of "${t}" to this client is already in progress \\(started by another call`));
    expect(r.lines[0]).toBe('SENT: 1 sent, 0 may have been sent, 0 not sent, 2 skipped, 1 already sent (of 4).');
    expect(r.isError).toBeFalsy();
    expect(mcp.questions).toHaveLength(1);
    const q = mcp.questions[0]!.split('\n');
    expect(q.slice(0, 3)).toEqual(['Send this document request to 1 client? The service will e-mail each one.', `- ${label(a)}`, 'Not sent (3):']);
    expect(q[3]).toMatch(new RegExp(`^- ${label(b).replace(/[().]/g, '\\$&')}: this server sent "${t}"`));
    expect(q[4]).toMatch(new RegExp(`^- ${label(c).replace(/[().]/g, '\\$&')}: this server may have sent "${t}"`));
    expect(q[5]).toMatch(new RegExp(`^- ${label(d).replace(/[().]/g, '\\$&')}: a send of "${t}"`));
    expect(q[6]).toBe(`Title: "${t}"`);
    // Not stopped: nothing about a stop in the log.
    expect(mcp.logs.join('\n')).not.toContain('stopped by');
  });

  it('every recipient sent by another call meanwhile: nobody is asked, nothing is sent', async () => {
    const mcp = await server({ elicit: 'accept' });
    const [a, b] = [take(), take()];
    const t = title();
    mcp.store.onClaim = async (key) => {
      await mcp.store.recordFor(key, 'sent', t);
    };
    const before = posts().length;
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: t, items: [{ name: 'W-2' }] });
    expect(posts().length - before).toBe(0);
    expect(rows(r).map((x) => x.outcome)).toEqual(['already_sent', 'already_sent']);
    expect(mcp.questions).toHaveLength(0);
  });

  it('recipient 1 is free for another call as soon as it is sent, while recipient 2 is being sent', async () => {
    const mcp = await server({ confirmSend: 'never' });
    const [a, b] = [take(), take()];
    const free: boolean[] = [];
    mcp.store.onSet = async (key, value) => {
      // Recipient 2's record before its POST: can another process take recipient 1's claim now?
      if (key.includes(':send:') && value.includes('"pending"') && mcp.store.claims.length === 2 && key === mcp.store.claims[1]!.replace(':claim:', ':send:')) {
        const other = await MemoryStore.prototype.claim.call(mcp.store, mcp.store.claims[0]!, 'another call', 60_000);
        free.push(other);
        if (other) await mcp.store.release(mcp.store.claims[0]!, 'another call');
      }
    };
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title(), items: [{ name: 'W-2' }] });
    expect(r.structuredContent).toMatchObject({ sent: 2 });
    expect(free).toEqual([true]);
  });
});

describe('create_request_batch: failures and stops', () => {
  it('a store that fails without a message stops the batch at recipient 1: the head ends with a period, the rest are not sent', async () => {
    const mcp = await server({ confirmSend: 'never' });
    const [a, b] = [take(), take()];
    mcp.store.onSet = (key, value) => (key.includes(':send:') && value.includes('"pending"') ? Promise.reject(new Error('')) : Promise.resolve());
    const before = posts().length;
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title(), items: [{ name: 'W-2' }] });
    expect(posts().length - before).toBe(0);
    expect(r.lines).toEqual([
      'NOT SENT: 0 sent, 0 may have been sent, 2 not sent, 0 skipped (of 2). STOPPED by an unexpected failure (at recipient 1).',
      `  1. ${label(a)}: not sent`,
      `  2. ${label(b)}: not sent — stopped by an unexpected failure at recipient 1`,
      'Calling create_request_batch again with the same arguments sends only to the clients not yet sent (none is sent twice).',
    ]);
    expect(r.isError).toBe(true);
  });

  it('one answer lost, then the plan limit: both closing lines, each on its own line', async () => {
    const mcp = await server({ confirmSend: 'never' });
    const [a, b, c] = [take(), take(), take()];
    sb.setActiveRequestRoom(sb.keys.demo, 1);
    sb.inject('POST /api/v1/requests', { kind: 'reset' }, { times: 1, after: true });
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id, c.id], title: title(), items: [{ name: 'W-2' }] });
    expect(r.lines[0]).toMatch(
      /^NOT SENT: 0 sent, 1 may have been sent, 2 not sent, 0 skipped \(of 3\)\. STOPPED by the firm's plan limit \(at recipient 2\): /,
    );
    expect(r.lines.slice(-2)).toEqual([
      'Calling create_request_batch again with the same arguments sends only to the clients not yet sent (none is sent twice), once the firm has room: complete or archive requests, or upgrade the plan.',
      'For "may have been sent": check with list_requests before sending again; this server will not send those again for 24 hours.',
    ]);
    expect(r.isError).toBe(true);
  });

  it('every answer lost: a report (not "nothing to send"), an error result', async () => {
    const mcp = await server({ confirmSend: 'never' });
    sb.inject('POST /api/v1/requests', { kind: 'reset' }, { times: 2, after: true });
    const r = await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }] });
    expect(r.lines[0]).toBe('NOT SENT: 0 sent, 2 may have been sent, 0 not sent, 0 skipped (of 2).');
    expect(r.isError).toBe(true);
  });

  it('every recipient refused by the service (not a stop): a report of what was not sent, not "nothing to send"', async () => {
    const mcp = await server({ confirmSend: 'never' });
    sb.inject(
      'POST /api/v1/requests',
      { kind: 'status', status: 422, body: { error: { code: 'validation_error', message: 'Title is not accepted.' } } },
      { times: 2 },
    );
    const r = await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }] });
    expect(r.lines[0]).toBe('NOT SENT: 0 sent, 0 may have been sent, 2 not sent, 0 skipped (of 2).');
    expect(r.isError).toBe(true);
  });

  it('declined: the head and one line per recipient, nothing after', async () => {
    const mcp = await server({ elicit: 'decline' });
    const [a, b] = [take(), take()];
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title(), items: [{ name: 'W-2' }] });
    expect(r.lines).toEqual([
      'NOT SENT: the person declined the batch; nothing was sent. 0 sent, 0 may have been sent, 0 not sent, 0 skipped, 2 declined (of 2).',
      `  1. ${label(a)}: declined — the person declined`,
      `  2. ${label(b)}: declined — the person declined`,
    ]);
  });
});

describe('create_request_batch: recipients and warnings', () => {
  it('a client the service lists without an id is skipped, saying so; a name like no other has no "closest"', async () => {
    const mcp = await server();
    await withoutId(async (noId) => {
      const a = take();
      const r = await mcp.call('create_request_batch', { clients: [noId.email, a.id, 'qxzjvkwq'], title: title(), items: [{ name: 'W-2' }], dryRun: true });
      expect(r.lines.slice(0, 4)).toEqual([
        'DRY RUN — nothing was sent. 1 will send, 2 skipped (of 3).',
        `  1. ${label(noId)}: skipped — the service's record of this client has no id`,
        `  2. ${label(a)}: will send`,
        '  3. "qxzjvkwq": skipped — no client has this id, e-mail or exact name',
      ]);
      expect(rows(r).map((x) => [x.client, x.outcome, x.reason])).toEqual([
        [noId.email, 'skipped', "the service's record of this client has no id"],
        [a.id, 'will_send', null],
        ['qxzjvkwq', 'skipped', 'no client has this id, e-mail or exact name'],
      ]);
    });
  });

  it('no recipient resolves: nothing to send, without reading the send store (a store that cannot be read changes nothing)', async () => {
    class Unreadable extends SharedStore {
      override get(): Promise<string | undefined> {
        return Promise.reject(new Error('EIO on read'));
      }
    }
    const mcp = await server({ store: new Unreadable() });
    const r = await mcp.call('create_request_batch', { clients: ['qxzjvkwq', 'nobody@nowhere.invalid'], title: title(), items: [{ name: 'W-2' }] });
    expect(r.isError).toBeFalsy();
    expect(r.lines[0]).toBe('NOTHING TO SEND — nothing was sent: 0 will send, 2 skipped (of 2).');
  });

  it("the draft's warning and a duplicate's, joined by a space, in the question and in the report", async () => {
    const withOpen = firm.clients.find(
      (c) => c.status === 'active' && single(c) && firm.requests.filter((r) => r.clientId === c.id && ['sent', 'in_progress'].includes(r.status)).length === 1,
    )!;
    const openRequest = firm.requests.find((r) => r.clientId === withOpen.id && ['sent', 'in_progress'].includes(r.status))!;
    const mcp = await server({ elicit: 'accept' });
    const a = take();
    const r = await mcp.call('create_request_batch', {
      clients: [a.id, withOpen.id],
      title: openRequest.title,
      items: [{ name: 'W-2' }],
      dueDate: FAR,
      allowDuplicate: true,
    });
    const duplicate = `${label(withOpen)}: sending although the client already has an open request "${openRequest.title}" (id ${openRequest.id}, status ${openRequest.status}, created ${openRequest.createdAt.slice(0, 10)}).`;
    const warnings = `Warnings: ${FAR_WARNING} ${duplicate}`;
    expect(mcp.questions[0]!.split('\n').at(-1)).toBe(warnings);
    expect(r.lines[0]).toBe('SENT: 2 sent, 0 may have been sent, 0 not sent, 0 skipped (of 2).');
    expect(r.lines.at(-1)).toBe(warnings);
    expect((r.structuredContent as { warnings: string[] }).warnings).toEqual([FAR_WARNING, duplicate]);
  });

  it('a signed-in batch that sends nothing (a dry run): no sentBy, no "Sent in the name of"; one only queued (202): sentBy is said', async () => {
    const actor = { email: 'pat@firm.example', sub: 'sub-pat', role: 'sender' as const };
    const dry = await (
      await server({ confirmSend: 'never', actor })
    ).call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }], dryRun: true });
    expect(dry.structuredContent).toMatchObject({ sent: 0, sentBy: null });
    expect(dry.text).not.toContain('Sent in the name of');
    const mcp = await server({ confirmSend: 'never', actor });
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 202, body: '' }, { times: 2, after: true });
    const queued = await mcp.call('create_request_batch', { clients: [take().id, take().id], title: title(), items: [{ name: 'W-2' }] });
    expect(rows(queued).map((r) => r.outcome)).toEqual(['accepted', 'accepted']);
    expect(queued.structuredContent).toMatchObject({ sent: 0, sentBy: 'pat@firm.example' });
    expect(queued.text).toContain('\nSent in the name of pat@firm.example (signed in).');
  });

  it('a signed-in batch: who it was sent as said once (sentBy, its own line), never as a warning on each recipient', async () => {
    const mcp = await server({ confirmSend: 'never', actor: { email: 'pat@firm.example', sub: 'sub-pat', role: 'sender' } });
    const [a, b] = [take(), take()];
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 201, body: '' }, { times: 1, after: true });
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: title(), items: [{ name: 'W-2' }] });
    // The answer named no request: the one read of the list after the sends found it.
    expect(rows(r)[0]).toMatchObject({
      outcome: 'sent',
      request: { clientName: a.displayName, title: (r.structuredContent as { previewed: { title: string } }).previewed.title },
      reason: 'The service answered 201 with an empty body (no record of the new request).',
    });
    expect(rows(r)[1]).toMatchObject({ outcome: 'sent', reason: null });
    expect(r.structuredContent).toMatchObject({ sentBy: 'pat@firm.example' });
    expect(r.text.split('\n')[1]).toBe('Sent in the name of pat@firm.example (signed in).');
    expect(r.text).not.toMatch(/Warnings:.*Sent in the name/);
  });
});

describe('create_request', () => {
  it('a client the service lists without an id: refused, saying so, before any preview', async () => {
    const mcp = await server();
    await withoutId(async (noId) => {
      const r = await mcp.call('create_request', { client: noId.email, title: title(), items: [{ name: 'W-2' }], dryRun: true });
      expect(r.isError).toBe(true);
      expect(r.text).toBe(`The client "Nora Noid" has no id in the service's answer, so no request can be created for it.`);
    });
  });

  it('an answer without a record: SENT, the request as the list shows it, the warning saying why', async () => {
    const mcp = await server({ confirmSend: 'never' });
    const c = take();
    const t = title();
    sb.inject('POST /api/v1/requests', { kind: 'raw', status: 201, body: '' }, { times: 1, after: true });
    const r = await mcp.call('create_request', { client: c.id, title: t, items: [{ name: 'W-2' }] });
    expect(r.isError).toBeFalsy();
    const request = (r.structuredContent as { request: { id: string } }).request;
    expect(r.lines).toEqual([
      `SENT: "${t}" to ${label(c)}: request id ${request.id}, status sent.`,
      'Warnings: The service answered 201 with an empty body (no record of the new request).',
    ]);
    expect(r.structuredContent).toMatchObject({ sent: true, outcome: 'sent', asPreviewed: true, request: { title: t, clientName: c.displayName } });
  });

  it("the draft's warning and the client's status, joined by a space: in the dry run, the question and the result", async () => {
    const inactive = firm.clients.find((c) => c.status === 'inactive' && single(c) && !firm.requests.some((r) => r.clientId === c.id))!;
    const warnings = `Warnings: ${FAR_WARNING} The client's status is "inactive", not active.`;
    const args = { client: inactive.id, title: title(), items: [{ name: 'W-2' }], dueDate: FAR };
    const dry = await (await server()).call('create_request', { ...args, dryRun: true });
    expect(dry.lines).toContain(warnings);
    const mcp = await server({ elicit: 'accept' });
    const r = await mcp.call('create_request', args);
    expect(mcp.questions[0]!.split('\n').at(-1)).toBe(warnings);
    expect(r.lines[0]).toMatch(new RegExp(`^SENT: "${args.title}" to ${label(inactive).replace(/[().]/g, '\\$&')}: request id \\S+, status \\w+\\.$`));
    expect(r.lines[1]).toBe(warnings);
  });

  it('a record another call wrote after the duplicate check: not sent, saying what that call did', async () => {
    const mcp = await server({ confirmSend: 'never' });
    const c = take();
    const t = title();
    mcp.store.onClaim = (key) => mcp.store.recordFor(key, 'sent', t);
    const before = posts().length;
    const r = await mcp.call('create_request', { client: c.id, title: t, items: [{ name: 'W-2' }] });
    expect(posts().length - before).toBe(0);
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(
      new RegExp(`^Not sent: this server sent "${t}" to this client at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\. Nothing more was sent\\.`),
    );
  });

  it('held by another call and allowDuplicate: nobody is asked, nothing sent', async () => {
    const mcp = await server({ elicit: 'accept' });
    const c = take();
    const t = title();
    mcp.store.onClaim = () => Promise.resolve(false);
    const before = posts().length;
    const r = await mcp.call('create_request', { client: c.id, title: t, items: [{ name: 'W-2' }], allowDuplicate: true });
    expect(mcp.questions).toEqual([]);
    expect(posts().length - before).toBe(0);
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(new RegExp(`^Not sent: a send of "${t}" to ${label(c).replace(/[().]/g, '\\$&')} is already in progress`));
  });

  it('a token a parallel call used while this one waited for the claim: "just used", nothing sent', async () => {
    const mcp = await server();
    // allowDuplicate: the first send's own record does not refuse the second call before the pipeline.
    const args = { client: take().id, title: title(), items: [{ name: 'W-2' }], allowDuplicate: true };
    const token = tokenOf(await mcp.call('create_request', args));
    const first = await mcp.call('create_request', { ...args, confirmationToken: token });
    expect(first.structuredContent).toMatchObject({ outcome: 'sent' });
    // The replica that used it wrote what it did after this call's first look, before its second.
    mcp.store.hideTokens = 1;
    const before = posts().length;
    const again = await mcp.call('create_request', { ...args, confirmationToken: token });
    expect(posts().length - before).toBe(0);
    expect(again.isError).toBe(true);
    expect(again.text).toBe('Not sent again: this confirmationToken was just used (outcome: sent). Nothing more was sent.');
  });
});
