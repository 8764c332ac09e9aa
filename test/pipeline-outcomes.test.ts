import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createServer } from '../src/mcp/server.js';
import { SendLedger } from '../src/send/ledger.js';
import { Confirmations } from '../src/send/token.js';
import { MemoryStore } from '../src/store/memory.js';
import { StoreUnavailableError, type SendStore } from '../src/store/store.js';
import { captured } from './support/key-scan.js';
import { AROUND_TODAY, FAST_API, sandbox, TODAY } from './support/sandbox.js';

/**
 * The send pipeline's outcomes as a person reads them (src/send/pipeline.ts): a POST whose answer is
 * lost after the service wrote it is recorded as "may have been sent" (not left "pending"), so the
 * next call says so; a store that fails at the claim stops a batch before any POST, naming it.
 */
const sb = await sandbox({ ...AROUND_TODAY, clients: 160 });
const firm = sb.demoFirm;
const posts = () => sb.callsTo('POST', '/api/v1/requests');
afterEach(() => sb.clearFaults());
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of open) await o.close().catch(() => undefined);
});
const pool = firm.clients.filter(
  (c) => c.status === 'active' && firm.clients.filter((d) => d.displayName === c.displayName).length === 1 && !firm.requests.some((r) => r.clientId === c.id),
);
let taken = 0;
const take = () => pool[taken++]!;

async function server(store: SendStore, confirmSend = 'never') {
  const config = loadConfig({}, { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, DOCREQ_CONFIRM_SEND: confirmSend });
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
  });
  const client = new Client({ name: 'pipeline', version: '1' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([mcp.connect(b), client.connect(a)]);
  open.push({ close: async () => (await client.close(), await mcp.close()) });
  return {
    logs,
    async call(name: string, args: Record<string, unknown>) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      captured.push(text);
      return { ...result, text };
    },
  };
}

describe('a POST whose answer is lost after the service wrote it', () => {
  it('answers MAY HAVE BEEN SENT, records it so, and the next call is refused saying the outcome was unclear (1 POST)', async () => {
    const mcp = await server(new MemoryStore());
    const c = take();
    const args = { client: c.id, title: 'Lost answer', items: [{ name: 'W-2' }] };
    sb.inject('POST /api/v1/requests', { kind: 'reset' }, { times: 1, after: true });
    const before = posts().length;
    const first = await mcp.call('create_request', args);
    expect(first.isError).toBe(true);
    expect(first.text).toMatch(
      /^MAY HAVE BEEN SENT — .+ The request may have been sent: check with list_requests before sending again; this server refuses to send it again for 24 hours unless allowDuplicate is given\.$/,
    );
    expect(first.structuredContent).toMatchObject({ sent: false, outcome: 'may_have_been_sent', request: null });
    const warnings = (first.structuredContent as { warnings: string[] }).warnings;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^The connection to http:\/\/127\.0\.0\.1:\d+/);
    const again = await mcp.call('create_request', args);
    expect(again.isError).toBe(true);
    expect(again.text).toMatch(
      /^Not sent: this server may have sent "Lost answer" to this client at \d{4}-\d\d-\d\d \d\d:\d\d UTC \(the outcome was unclear: it may have been sent\); check with list_requests\. Nothing was sent\./,
    );
    expect(posts().length - before).toBe(1);
  });
});

describe('a token whose send had an unclear outcome', () => {
  it('used again: ALREADY USED with that outcome, telling to check the list, and no POST', async () => {
    const mcp = await server(new MemoryStore(), 'auto');
    const c = take();
    const args = { client: c.id, title: 'Unclear then again', items: [{ name: 'W-2' }] };
    const preview = await mcp.call('create_request', args);
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    sb.inject('POST /api/v1/requests', { kind: 'reset' }, { times: 1, after: true });
    const before = posts().length;
    const first = await mcp.call('create_request', { ...args, confirmationToken: token });
    expect(first.structuredContent).toMatchObject({ outcome: 'may_have_been_sent' });
    const again = await mcp.call('create_request', { ...args, confirmationToken: token });
    expect(again.text).toBe(
      'ALREADY USED: this confirmationToken was used before (outcome: may_have_been_sent); nothing more was sent. Check with list_requests.',
    );
    expect(posts().length - before).toBe(1);
  });
});

describe('sends that go through', () => {
  it('a normal send warns of no cancellation; with allowDuplicate the same request is sent again, NEW (2 POSTs)', async () => {
    const mcp = await server(new MemoryStore());
    const args = { client: take().id, title: 'Sent twice on purpose', items: [{ name: 'W-2' }] };
    const before = posts().length;
    const first = await mcp.call('create_request', args);
    expect(first.structuredContent).toMatchObject({ outcome: 'sent' });
    expect(mcp.logs.join('\n')).not.toContain('cancelled after it was written');
    const refused = await mcp.call('create_request', args);
    expect(refused.isError).toBe(true);
    const again = await mcp.call('create_request', { ...args, allowDuplicate: true });
    expect(again.structuredContent).toMatchObject({ outcome: 'sent' });
    expect(posts().length - before).toBe(2);
  });

  it('a token whose send was refused by the plan limit is not used up: once there is room, it sends', async () => {
    const { SANDBOX_KEYS } = await import('../src/sandbox/seed.js');
    const mcp = await server(new MemoryStore(), 'auto');
    const args = { client: take().id, title: 'Room later', items: [{ name: 'W-2' }] };
    const token = ((await mcp.call('create_request', args)).structuredContent as { confirmation: { token: string } }).confirmation.token;
    const limit = firm.activeRequestLimit;
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 0);
    try {
      const refused = await mcp.call('create_request', { ...args, confirmationToken: token });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain('plan');
    } finally {
      firm.activeRequestLimit = limit;
    }
    const sent = await mcp.call('create_request', { ...args, confirmationToken: token });
    expect(sent.structuredContent).toMatchObject({ outcome: 'sent' });
  });
});

describe('a store that fails when the claim is taken', () => {
  class ClaimFails extends MemoryStore {
    override claim(): Promise<boolean> {
      return Promise.reject(new StoreUnavailableError('a store that fails', 'EIO on claim'));
    }
  }

  it('a batch stops at its first recipient, nothing POSTed, the report naming the store', async () => {
    const mcp = await server(new ClaimFails());
    const [a, b] = [take(), take()];
    const before = posts().length;
    const r = await mcp.call('create_request_batch', { clients: [a.id, b.id], title: 'Store fails', items: [{ name: 'W-2' }] });
    expect(r.text.split('\n')[0]).toBe(
      'NOT SENT: 0 sent, 0 may have been sent, 2 not sent, 0 skipped (of 2). STOPPED by the send store failing (at recipient 1): Nothing was sent: the send store (a store that fails) cannot be used (EIO on claim), so this server cannot guarantee the request is sent only once. Sending works again once it is back; reading is not affected.',
    );
    expect(r.structuredContent).toMatchObject({ sent: 0, stoppedBy: 'the send store failing (at recipient 1)' });
    const reasons = (r.structuredContent as { recipients: { reason: string }[] }).recipients.map((x) => x.reason);
    expect(reasons).toEqual([
      'Nothing was sent: the send store (a store that fails) cannot be used (EIO on claim), so this server cannot guarantee the request is sent only once. Sending works again once it is back; reading is not affected.',
      'stopped by the send store failing at recipient 1',
    ]);
    expect(r.isError).toBe(true);
    expect(posts().length - before).toBe(0);
  });
});
