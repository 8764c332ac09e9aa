import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { clientResolver, resolveClient } from '../src/tools/resolve-client.js';
import { captured } from './support/key-scan.js';
import { AROUND_TODAY, sandbox } from './support/sandbox.js';
import { previewThenSend, serversOn } from './support/connect.js';

/**
 * create_request_batch against the sandbox over real HTTP, through the SDK client:
 * one preview, one confirmation, one POST at a time, a stop at the plan limit or a rejected key,
 * a cancel that stops before the next POST, and a resend that sends only to the rest.
 */
const sb = await sandbox({ ...AROUND_TODAY, clients: 160 });
const firm = sb.demoFirm;
const server = serversOn(sb);
const limit = firm.activeRequestLimit;
afterEach(() => {
  firm.activeRequestLimit = limit;
});

/** Active clients whose display name no other client has: each resolves by name or id alone. */
const pool = firm.clients.filter((c) => c.status === 'active' && firm.clients.filter((d) => d.displayName === c.displayName).length === 1);
let next = 0;
/** `n` clients no other test in this file uses. */
function take(n: number) {
  const chosen = pool.slice(next, next + n);
  next += n;
  if (chosen.length < n) throw new Error(`the seed has too few distinct active clients (${pool.length})`);
  return chosen;
}
let titles = 0;
const request = (extra: Record<string, unknown> = {}) => ({
  title: `Batch test ${++titles}`,
  items: [{ name: 'Bank statements' }, { name: 'Moved this year?', type: 'boolean' }],
  ...extra,
});

type Recipient = { client: string; clientId: string | null; outcome: string; request: { id: string } | null; reason: string | null };
type Out = {
  sent: number;
  dryRun: boolean;
  confirmation: { needed: boolean; token: string | null };
  payload: Record<string, unknown>;
  recipients: Recipient[];
  stoppedBy: string | null;
  warnings: string[];
};
const out = (r: CallToolResult) => r.structuredContent as Out;
const posts = () => sb.callsTo('POST', '/api/v1/requests');
const postedTo = (ids: string[]) => posts().filter((c) => ids.includes((JSON.parse(c.body ?? '{}') as { clientId?: string }).clientId ?? ''));
const outcomes = (r: CallToolResult) => out(r).recipients.map((x) => x.outcome);

describe('create_request_batch: a plan limit reached mid-batch', () => {
  it('a batch of 20 whose plan limit is reached at the 8th: exactly 7 sent, the report names the rest', async () => {
    const mcp = await server();
    const clients = take(20);
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 7);
    const args = { clients: clients.map((c) => c.id), ...request() };
    const { preview, sent } = await previewThenSend(mcp, 'create_request_batch', args);

    expect(outcomes(preview)).toEqual(Array<string>(20).fill('will_send'));
    expect(preview.text.split('\n')[0]).toContain('PREVIEW — nothing was sent. 20 will send, 0 skipped (of 20).');
    const result = out(sent);
    expect(result.sent).toBe(7);
    expect(outcomes(sent)).toEqual([...Array<string>(7).fill('sent'), ...Array<string>(13).fill('not_sent')]);
    for (const r of result.recipients.slice(0, 7)) expect(r.request?.id).toMatch(/\S/);
    expect(result.recipients[7]!.reason).toContain('active_request_limit_reached');
    for (const r of result.recipients.slice(8)) expect(r.reason).toBe("stopped by the firm's plan limit at recipient 8");
    expect(result.stoppedBy).toBe("the firm's plan limit (at recipient 8)");
    expect(sent.text.split('\n')[0]).toContain("STOPPED by the firm's plan limit (at recipient 8): The firm's active-request limit stops this (409).");
    expect(sent.text.split('\n')[0]).toContain('7 sent, 0 may have been sent, 13 not sent, 0 skipped (of 20)');
    // Every recipient has its line, with its id and outcome.
    for (const c of clients) expect(sent.text).toContain(`(id ${c.id}): `);
    expect(sent.text).toContain('sends only to the clients not yet sent');
    expect(posts()).toHaveLength(8);
    expect(sb.emails.filter((e) => e.title === args.title)).toHaveLength(7);
  });

  it('the same batch retried, with the same token and with a new one: 0 sent twice, no POST to the 7; with room, only the rest are sent', async () => {
    const mcp = await server();
    const clients = take(20);
    const ids = clients.map((c) => c.id);
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 7);
    const args = { clients: ids, ...request() };
    const first = await previewThenSend(mcp, 'create_request_batch', args);
    expect(out(first.sent).sent).toBe(7);
    const sentIds = ids.slice(0, 7);

    const sameToken = await mcp.call('create_request_batch', { ...args, confirmationToken: first.token });
    expect(out(sameToken).sent).toBe(0);
    expect(sameToken.isError).toBe(true);
    expect(outcomes(sameToken).slice(0, 7)).toEqual(Array<string>(7).fill('already_sent'));
    expect(out(sameToken).recipients[0]!.reason).toContain('this server sent');
    const again = await previewThenSend(mcp, 'create_request_batch', args);
    expect(outcomes(again.preview)).toEqual([...Array<string>(7).fill('already_sent'), ...Array<string>(13).fill('will_send')]);
    expect(out(again.sent).sent).toBe(0);
    expect(postedTo(sentIds)).toHaveLength(7);
    // The 8th was tried each time (and refused by the plan): the same confirmation, the same key.
    const eighth = postedTo([ids[7]!]).map((c) => c.idempotencyKey);
    expect(eighth).toHaveLength(3);
    expect(eighth[1]).toBe(eighth[0]);
    expect(eighth[2]).not.toBe(eighth[0]);

    // Room again: the same batch sends to the 13 not yet sent, none twice.
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 100);
    const rest = await previewThenSend(mcp, 'create_request_batch', args);
    expect(out(rest.sent).sent).toBe(13);
    expect(rest.sent.text.split('\n')[0]).toContain('13 sent, 0 may have been sent, 0 not sent, 0 skipped, 7 already sent (of 20)');
    const emails = sb.emails.filter((e) => e.title === args.title).map((e) => e.to);
    expect(emails.sort()).toEqual(clients.map((c) => c.email).sort());
  });
});

describe('create_request_batch: recipients that cannot be sent', () => {
  it('an ambiguous name and a duplicate of an open request are both skipped with reasons; the others are sent', async () => {
    const mcp = await server();
    const isOpen = (r: (typeof firm.requests)[number]) => !['completed', 'cancelled', 'archived'].includes(r.status) && r.completedItems < r.totalItems;
    const duplicate = firm.requests.find((r) => isOpen(r) && pool.some((c) => c.id === r.clientId))!;
    const dupClient = firm.clients.find((c) => c.id === duplicate.clientId)!;
    const others = take(8)
      .filter((c) => c.id !== dupClient.id && !firm.requests.some((r) => r.clientId === c.id && r.title === duplicate.title))
      .slice(0, 3);
    const sams = firm.clients.filter((c) => c.displayName === 'Sam Taylor');
    const args = {
      clients: ['Sam Taylor', others[0]!.email, dupClient.displayName, others[1]!.displayName, others[2]!.id],
      title: duplicate.title,
      items: [{ name: 'Receipts' }],
    };
    const { preview, sent } = await previewThenSend(mcp, 'create_request_batch', args);

    expect(outcomes(preview)).toEqual(['skipped', 'will_send', 'skipped', 'will_send', 'will_send']);
    const [sam, , dup] = out(preview).recipients;
    expect(sam!.reason).toContain('ambiguous: matches 2 clients');
    for (const s of sams) expect(sam!.reason).toContain(s.id);
    expect(dup!.reason).toContain('already has an open request');
    expect(dup!.reason).toContain(duplicate.id);
    expect(dup!.clientId).toBe(dupClient.id);

    expect(outcomes(sent)).toEqual(['skipped', 'sent', 'skipped', 'sent', 'sent']);
    expect(sent.text.split('\n')[0]).toContain('3 sent, 0 may have been sent, 0 not sent, 2 skipped (of 5)');
    expect(postedTo(sams.map((s) => s.id))).toHaveLength(0);
    expect(postedTo([dupClient.id])).toHaveLength(0);
    expect(posts()).toHaveLength(3);
  });

  it('says why not for a client not found and the same client twice, and warns of a client that is not active; nothing sent on a dry run', async () => {
    const mcp = await server();
    const inactive = firm.clients.find((c) => c.status !== 'active')!;
    const [a, b] = take(2);
    const result = await mcp.call('create_request_batch', {
      clients: [a!.id, 'Nobody Atall', a!.email, inactive.id, b!.displayName],
      ...request(),
      dryRun: true,
    });
    expect(result.isError).toBeFalsy();
    const r = out(result);
    expect(r.dryRun).toBe(true);
    // A client who is not active is previewed with a warning naming the status: sent only with the person's go-ahead.
    expect(outcomes(result)).toEqual(['will_send', 'skipped', 'skipped', 'will_send', 'will_send']);
    expect(r.recipients[1]!.reason).toContain('no client has this id, e-mail or exact name');
    expect(r.recipients[2]!.reason).toBe('the same client as recipient 1');
    expect(r.warnings.join(' ')).toContain(`(id ${inactive.id}): The client's status is "${inactive.status}", not active.`);
    expect(r.recipients.map((x) => x.client)).toEqual([a!.id, 'Nobody Atall', a!.email, inactive.id, b!.displayName]);
    // The exact body, once, without clientId.
    expect(r.payload).not.toHaveProperty('clientId');
    expect(result.text.split(JSON.stringify(r.payload)).length).toBe(2);
    expect(result.text).toContain('DRY RUN — nothing was sent. 3 will send, 2 skipped (of 5).');
    expect(posts()).toHaveLength(0);
  });

  it('answers a batch in which no one can be sent without a token, and sends nothing', async () => {
    const mcp = await server();
    const result = await mcp.call('create_request_batch', { clients: ['Sam Taylor', 'Nobody Atall'], ...request() });
    expect(result.isError).toBeFalsy();
    expect(result.text).toMatch(/^NOTHING TO SEND/);
    expect(out(result).confirmation).toMatchObject({ needed: false, token: null, expiresAt: null });
    expect(posts()).toHaveLength(0);
  });

  it('resolves each recipient exactly as create_request does (the indexed resolver agrees with resolveClient)', () => {
    const clients = [
      ...firm.clients,
      { id: null, displayName: 'No Id', email: null, status: 'active' },
      { id: 'X-1', displayName: '  Spaced   Name ', email: ' MIXED@Case.example ', status: null },
    ];
    const resolve = clientResolver(clients);
    const queries = [
      ...firm.clients.flatMap((c) => [c.id, c.email.toUpperCase(), ` ${c.displayName}  `]),
      'sam   taylor',
      'x-1',
      'mixed@case.example',
      'spaced name',
      'no id',
      'nobody',
      '',
    ];
    for (const q of queries) expect(resolve(q), q).toEqual(resolveClient(clients, q));
  });

  it('refuses invalid input before any HTTP call', async () => {
    const mcp = await server();
    for (const args of [
      { clients: ['only one'], ...request() },
      { clients: Array<string>(101).fill('x'), ...request() },
      { clients: ['a', 'b'], title: 'x', items: [] },
    ]) {
      const result = await mcp.call('create_request_batch', args);
      expect(result.isError).toBe(true);
    }
    expect(sb.calls).toHaveLength(0);
  });
});

describe('create_request_batch: cancel, key rejected, progress, logs', () => {
  // Both eras. Cancellation: a 2025 client sends notifications/cancelled; a 2026 client over Streamable HTTP
  // closes the request's response stream, which "MUST be treated by the server as cancellation of that
  // request" (2026-07-28 transports, Cancellation). Progress: notifications/progress on the request's own
  // response stream in both (2026-07-28: "continue to flow on the response stream of the request they relate to").
  it('cancel mid-batch: no POST after the cancel; what was sent is recorded, and the batch sent again sends only the rest', async () => {
    const mcp = await server();
    const clients = take(10);
    const args = { clients: clients.map((c) => c.id), ...request() };
    const token = out(await mcp.call('create_request_batch', args)).confirmation.token!;
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 250 });
    const controller = new AbortController();
    const call = mcp.callWith('create_request_batch', { ...args, confirmationToken: token }, { signal: controller.signal }).catch((e: unknown) => e);
    while (posts().length < 3) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    const atCancel = posts().length;
    expect(await call).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(posts()).toHaveLength(atCancel);
    // The POST in flight at the cancel finished: its e-mail went, and its outcome was recorded.
    expect(sb.emails.filter((e) => e.title === args.title)).toHaveLength(atCancel);
    expect(mcp.logs.some((l) => l.includes(`stopped by the cancellation of the call (at recipient ${atCancel + 1})`))).toBe(true);
    sb.clearFaults();
    const rest = await mcp.call('create_request_batch', { ...args, confirmationToken: token });
    expect(out(rest).sent).toBe(10 - atCancel);
    expect(outcomes(rest).filter((o) => o === 'already_sent')).toHaveLength(atCancel);
    expect(sb.emails.filter((e) => e.title === args.title)).toHaveLength(10);
  });

  it('a key rejected mid-batch stops it: the rest are not sent and say why', async () => {
    const mcp = await server();
    const clients = take(6);
    const args = { clients: clients.map((c) => c.id), ...request() };
    const token = out(await mcp.call('create_request_batch', args)).confirmation.token!;
    // The first two POSTs pass untouched; the third is answered 401.
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 0 }, { times: 2 });
    sb.inject('POST /api/v1/requests', { kind: 'status', status: 401 }, { times: 1 });
    const result = await mcp.call('create_request_batch', { ...args, confirmationToken: token });
    expect(outcomes(result)).toEqual(['sent', 'sent', 'not_sent', 'not_sent', 'not_sent', 'not_sent']);
    expect(out(result).recipients[2]!.reason).toContain('rejected the API key');
    expect(out(result).recipients[3]!.reason).toBe('stopped by the service rejecting the API key at recipient 3');
    expect(out(result).stoppedBy).toBe('the service rejecting the API key (at recipient 3)');
    expect(posts()).toHaveLength(3);
  });

  it('a refusal for one recipient is reported for it and the batch goes on', async () => {
    const mcp = await server();
    const args = { clients: take(3).map((c) => c.id), ...request() };
    const token = out(await mcp.call('create_request_batch', args)).confirmation.token!;
    sb.inject(
      'POST /api/v1/requests',
      { kind: 'status', status: 422, body: { error: { code: 'validation_failed', message: 'Client cannot receive requests.' } } },
      { times: 1 },
    );
    const result = await mcp.call('create_request_batch', { ...args, confirmationToken: token });
    expect(outcomes(result)).toEqual(['not_sent', 'sent', 'sent']);
    expect(out(result).recipients[0]!.reason).toContain('Client cannot receive requests.');
    expect(out(result).stoppedBy).toBeNull();
  });

  it('records an unclear outcome per recipient as "may have been sent" and never resends it', async () => {
    const mcp = await server();
    const args = { clients: take(3).map((c) => c.id), ...request() };
    sb.inject('POST /api/v1/requests', { kind: 'status', status: 502 }, { times: 1, after: true });
    const { sent } = await previewThenSend(mcp, 'create_request_batch', args);
    expect(outcomes(sent)).toEqual(['may_have_been_sent', 'sent', 'sent']);
    expect(sent.text.split('\n')[0]).toContain('2 sent, 1 may have been sent');
    expect(sent.text).toContain('check with list_requests');
    const again = await mcp.call('create_request_batch', args);
    expect(outcomes(again)).toEqual(['skipped', 'already_sent', 'already_sent']);
    expect(out(again).recipients[0]!.reason).toContain('may have sent');
    expect(posts()).toHaveLength(3);
  });

  it('sends progress notifications with a total, and a log line per send', async () => {
    const mcp = await server();
    const args = { clients: [...take(4).map((c) => c.id), 'Sam Taylor'], ...request() };
    const token = out(await mcp.call('create_request_batch', args)).confirmation.token!;
    const progress: Progress[] = [];
    const result = await mcp.callWith('create_request_batch', { ...args, confirmationToken: token }, { onprogress: (p) => progress.push(p) });
    expect(out(result).sent).toBe(4);
    expect(progress.map((p) => p.progress)).toEqual([0, 1, 2, 3, 4]);
    expect(progress.every((p) => p.total === 4)).toBe(true);
    expect(progress.at(-1)!.message).toBe('4 of 4: sent');
    for (const n of [1, 2, 3, 4]) expect(mcp.logs.some((l) => l.includes(`create_request_batch: ${n}/4 sent: client `))).toBe(true);
  });

  it('makes one POST per recipient when the same confirmed batch is called 5 times in parallel', async () => {
    const mcp = await server();
    const args = { clients: take(5).map((c) => c.id), ...request() };
    const token = out(await mcp.call('create_request_batch', args)).confirmation.token!;
    const results = await Promise.all(Array.from({ length: 5 }, () => mcp.call('create_request_batch', { ...args, confirmationToken: token })));
    expect(posts()).toHaveLength(5);
    expect(results.reduce((n, r) => n + out(r).sent, 0)).toBe(5);
    expect(sb.emails.filter((e) => e.title === args.title)).toHaveLength(5);
  });
});

describe('create_request_batch: one confirmation for the batch', () => {
  it('elicitation host: one question for the whole batch, naming every recipient and who is skipped', async () => {
    const questions: string[] = [];
    // "Which one?" for the name two clients share comes first; the person picks none of them.
    const mcp = await server({
      elicit: (message, form) => {
        questions.push(message);
        const content: Record<string, string | boolean> = form?.requestedSchema?.properties?.recipient4 ? { recipient4: ':none' } : { confirm: true };
        return { action: 'accept', content };
      },
    });
    const clients = take(3);
    const result = await mcp.call('create_request_batch', { clients: [...clients.map((c) => c.id), 'Sam Taylor'], ...request() });
    expect(questions).toHaveLength(2);
    expect(questions[0]).toContain('One recipient matches several clients');
    expect(questions[1]).toContain('to 3 clients');
    for (const c of clients) expect(questions[1]).toContain(c.id);
    expect(questions[1]).toContain('Not sent (1)');
    expect(out(result).sent).toBe(3);
    expect(posts()).toHaveLength(3);
  });

  it('elicitation declined: every recipient declined, nothing sent', async () => {
    const mcp = await server({ elicit: () => ({ action: 'decline' }) });
    const result = await mcp.call('create_request_batch', { clients: take(2).map((c) => c.id), ...request() });
    expect(outcomes(result)).toEqual(['declined', 'declined']);
    expect(result.text).toMatch(/^NOT SENT: the person declined/);
    expect(posts()).toHaveLength(0);
  });

  it('a token is bound to the batch: another recipient, order, title or allowDuplicate previews again and sends nothing', async () => {
    const mcp = await server();
    const [a, b, c] = take(3);
    const args = { clients: [a!.id, b!.id], ...request() };
    const token = out(await mcp.call('create_request_batch', args)).confirmation.token!;
    for (const change of [
      { clients: [a!.id, c!.id] },
      { clients: [b!.id, a!.id] },
      { clients: [a!.id, b!.id, c!.id] },
      { title: 'Another title' },
      { allowDuplicate: true },
    ]) {
      const result = await mcp.call('create_request_batch', { ...args, ...change, confirmationToken: token });
      expect(result.isError).toBeFalsy();
      expect(result.text).toContain('does not belong to this exact batch');
      expect(out(result).sent).toBe(0);
    }
    // A token from create_request for one of them does not send the batch either.
    const single = await mcp.call('create_request', { client: a!.id, title: args.title, items: args.items });
    expect((await mcp.call('create_request_batch', { ...args, confirmationToken: out(single).confirmation.token })).text).toContain(
      'does not belong to this exact batch',
    );
    expect(posts()).toHaveLength(0);
  });

  it('DOCREQ_CONFIRM_SEND=always without elicitation cannot send; never sends without confirmation', async () => {
    const always = await server({ env: { DOCREQ_CONFIRM_SEND: 'always' } });
    const refused = await always.call('create_request_batch', { clients: take(2).map((c) => c.id), ...request() });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('"always"');
    const never = await server({ env: { DOCREQ_CONFIRM_SEND: 'never' } });
    expect(out(await never.call('create_request_batch', { clients: take(2).map((c) => c.id), ...request() })).sent).toBe(2);
    expect(posts()).toHaveLength(2);
  });

  it('takes a template: its items first, then items', async () => {
    const mcp = await server();
    const result = await mcp.call('create_request_batch', {
      clients: take(2).map((c) => c.id),
      template: 'individual-tax-return',
      items: [{ name: 'Extra note', type: 'text' }],
      dryRun: true,
    });
    const items = out(result).payload.items as { name: string }[];
    expect(items.at(-1)!.name).toBe('Extra note');
    expect(items.length).toBeGreaterThan(2);
  });

  it('never shows the key', () => {
    for (const text of captured) for (const key of Object.values(SANDBOX_KEYS)) expect(text).not.toContain(key);
  });
});
