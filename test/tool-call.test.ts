// What every tools/call goes through (src/mcp/call-tool.ts): refusals, the deadline, the person's form and MRTR rounds, answers, failures.
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createServer } from '../src/mcp/server.js';
import { SendLedger } from '../src/send/ledger.js';
import { Confirmations } from '../src/send/token.js';
import { MemoryStore } from '../src/store/memory.js';
import { StoreUnavailableError } from '../src/store/store.js';
import { defineTool } from '../src/tools/define.js';
import { statelessEntry } from '../src/transport/http.js';
import { AROUND_TODAY, FAST_API, sandbox, TODAY } from './support/sandbox.js';
import { APPS_HOST, hostsOn, structured } from './support/connect.js';

const sb = await sandbox(AROUND_TODAY);
const firm = sb.demoFirm;
const host = hostsOn(sb);
const MODERN = { era: '2026-07-28' as const };
const CLASSIC = { era: '2025-11-25' as const };
const [sam1, sam2] = firm.clients.filter((c) => c.displayName === 'Sam Taylor');
const active = firm.clients.filter((c) => c.status === 'active' && c.email && c.displayName !== 'Sam Taylor');
const posted = () => sb.callsTo('POST', '/api/v1/requests').map((c) => (JSON.parse(c.body!) as { clientId: string; title: string }).clientId);
type Form = { requestedSchema?: { properties?: Record<string, { oneOf?: { const: string; title: string }[] }>; required?: string[] } };
type Answer = ElicitResult;
const fields = (form: unknown) => (form as Form).requestedSchema?.properties ?? {};
const yes: Answer = { action: 'accept', content: { confirm: true } };
/** A person who confirms, and answers "which one?" with `pick` (field key → value). */
const person =
  (pick: (key: string) => string, asked: string[] = []) =>
  (message: string, form: unknown) => {
    asked.push(message);
    const f = fields(form);
    return 'confirm' in f ? yes : ({ action: 'accept', content: Object.fromEntries(Object.keys(f).map((k) => [k, pick(k)])) } as Answer);
  };
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const withState = (body: string, edit: (state: string) => unknown) => {
  const message = JSON.parse(body) as { params: Record<string, unknown> };
  message.params.requestState = edit(message.params.requestState as string);
  return JSON.stringify(message);
};
type Rpc = {
  result?: { isError?: boolean; content?: { text: string }[]; structuredContent?: { outcome?: string }; resultType?: string };
  error?: { message: string };
};
const rpcText = (r: unknown) => (r as Rpc).result?.content?.[0]?.text ?? '';

/** A tool of this test's own (extraTools): read-only or sending, doing what `run` does. */
const tool = (
  name: string,
  readOnly: boolean,
  run: () => Promise<{ text: string; structured: { n: number }; meta?: Record<string, unknown>; isError?: boolean }>,
) =>
  defineTool({
    name,
    title: name,
    description: 'A test tool.',
    inputSchema: z.strictObject({}),
    outputSchema: z.object({ n: z.number() }),
    annotations: { readOnlyHint: readOnly, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: run,
  });
const slow = () =>
  new Promise<{ text: string; structured: { n: number } }>((resolve) => setTimeout(() => resolve({ text: 'done late', structured: { n: 1 } }), 3_000));

describe('a tool that is not offered', () => {
  it('read-only: a sending tool is a result naming the setting; an unknown name is a protocol error', async () => {
    const c = await host({ env: { DOCREQ_READ_ONLY: 'true' } });
    const held = await c.call('create_request', { client: active[0]!.id, title: 'Read-only', items: [{ name: 'A' }] });
    expect(held.isError).toBe(true);
    expect(held.text).toBe('create_request is not offered: the server runs read-only (DOCREQ_READ_ONLY / --read-only). Nothing was sent.');
    const error = (await c.call('delete_everything').catch((e: unknown) => e)) as { code?: number; message?: string };
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('Unknown tool "delete_everything". Tools: list_clients, list_requests');
    expect(error.message).not.toContain('create_request');
  });
});

describe('the per-call deadline (DOCREQ_TIMEOUT_MS)', () => {
  it('a reading tool still running is answered at the deadline: nothing was changed', async () => {
    const c = await host({ env: { DOCREQ_TIMEOUT_MS: '100' }, extraTools: [tool('slow_read', true, slow), tool('slow_send', false, slow)] });
    const read = await c.call('slow_read');
    expect(read.isError).toBe(true);
    expect(read.text).toBe('The call did not finish within DOCREQ_TIMEOUT_MS; nothing was changed. Try again, or with narrower filters.');
    const send = await c.call('slow_send');
    expect(send.isError).toBe(true);
    expect(send.text).toBe(
      'The call did not finish within DOCREQ_TIMEOUT_MS. The request may have been sent: check with list_requests before sending again (this server will refuse a duplicate).',
    );
  });
});

describe('answers and failures', () => {
  it('a result with _meta keeps its text, structuredContent, _meta and error flag', async () => {
    const c = await host({
      extraTools: [tool('meta_tool', true, () => Promise.resolve({ text: 'half done', structured: { n: 2 }, meta: { 'x/page': { k: 1 } }, isError: true }))],
    });
    const r = await c.call('meta_tool');
    expect(r).toMatchObject({ isError: true, text: 'half done', structuredContent: { n: 2 }, _meta: { 'x/page': { k: 1 } } });
  });

  it('an unexpected failure is a result with the key redacted, cut, and logged at error', async () => {
    const key = sb.keys.demo;
    const c = await host({ extraTools: [tool('boom_tool', true, () => Promise.reject(new Error(`socket said ${key}\nand ${'x'.repeat(400)}`)))] });
    const r = await c.call('boom_tool');
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(
      /^boom_tool failed unexpectedly \(socket said \[redacted\] and x+…?\)\. Nothing was retried; if it was a send, check list_requests before trying again\.$/,
    );
    expect(r.text).not.toContain(key);
    expect(c.logs.some((l) => l.includes('boom_tool failed unexpectedly: socket said [redacted]'))).toBe(true);
  });

  it('an expected refusal is logged by its first line; a result breaking its schema is logged at error', async () => {
    const broken = tool('broken_tool', true, () => Promise.resolve({ text: 'bad', structured: { n: 'one' as unknown as number } }));
    const c = await host({ extraTools: [broken] });
    const r = await c.call('create_request', { client: 'nobody-at-all@example.invalid', title: 'Nobody', items: [{ name: 'A' }] });
    expect(r.isError).toBe(true);
    const first = r.text.split('\n')[0]!;
    expect(c.logs.some((l) => l.includes(`create_request: ${first}`))).toBe(true);
    const bad = await c.call('broken_tool');
    expect(bad.text).toMatch(/^broken_tool produced a result that does not match its output schema/);
    expect(c.logs.some((l) => l.includes('error') && l.includes('broken_tool produced a result that does not match'))).toBe(true);
  });

  it('the operator sees how long each call took, in ms', async () => {
    const c = await host();
    const before = Date.now();
    await c.call('list_templates');
    const took = Date.now() - before;
    const line = c.logs.find((l) => l.includes('list_templates answered in'));
    const ms = Number(/list_templates answered in (\d+) ms/.exec(line ?? '')?.[1]);
    expect(ms).toBeGreaterThanOrEqual(0);
    expect(ms).toBeLessThanOrEqual(took);
  });

  it('a server not configured names every problem on its own line and calls nothing', async () => {
    const c = await host({ env: { DOCREQ_API_KEY: undefined, DOCREQ_TIMEOUT_MS: 'soon' } });
    const r = await c.call('list_clients');
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^docreq-mcp is not configured, so nothing was called:\n- .+\n- .+\nSet these in the host's "env"/);
    expect(sb.calls).toHaveLength(0);
  });

  it("a host that shows pages gets the candidates of an ambiguous name in the refusal's _meta", async () => {
    const c = await host({ capabilities: APPS_HOST });
    const r = await c.call('create_request', { client: 'Sam Taylor', title: 'Pages', items: [{ name: 'A' }] });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('"Sam Taylor" matches 2 clients; nothing was sent.');
    const meta = r._meta?.['docreq-mcp/choose'] as { given: string; candidates: { id: string }[] };
    expect(meta.given).toBe('Sam Taylor');
    expect(meta.candidates.map((x) => x.id)).toEqual([sam1!.id, sam2!.id]);
  });
});

describe("the person's form (2025-11-25, the server asks)", () => {
  const shared = { client: 'Sam Taylor', title: 'Form', items: [{ name: 'A' }] };
  it('a form that fails to open: nothing is sent, and the model is told to ask in the chat', async () => {
    const broken = await host({ ...CLASSIC, elicit: () => Promise.reject(new Error('the dialog crashed')) });
    const confirm = await broken.call('create_request', { client: active[0]!.id, title: 'Form: crash', items: [{ name: 'A' }] });
    expect(confirm.text).toMatch(
      /^Nothing was sent: asking the person to confirm failed \(.*the dialog crashed.*\)\. Ask them in the chat, then call again\.$/,
    );
    const choose = await broken.call('create_request', shared);
    expect(choose.text).toMatch(
      /^Nothing was sent: asking the person which one they meant failed \(.*the dialog crashed.*\)\. Ask them in the chat, then call again with the id\.$/,
    );
    expect(posted()).toEqual([]);
  });

  it('only an accepted yes sends: a decline (even carrying yes), a no, a cancel, an empty answer do not', async () => {
    for (const answer of [
      { action: 'decline', content: { confirm: true } },
      { action: 'accept', content: { confirm: false } },
      { action: 'cancel' },
    ] as Answer[]) {
      const c = await host({ ...CLASSIC, elicit: () => answer });
      const r = await c.call('create_request', { client: active[1]!.id, title: `Form: ${JSON.stringify(answer)}`, items: [{ name: 'A' }] });
      expect(structured<{ sent: boolean; outcome: string }>(r)).toMatchObject({ sent: false, outcome: 'declined' });
    }
    const empty = await host({ ...CLASSIC, elicit: () => ({ action: 'accept' }) });
    const r = await empty.call('create_request', { client: active[1]!.id, title: 'Form: empty', items: [{ name: 'A' }] });
    expect(r.text).not.toContain('unexpectedly');
    expect(posted()).toEqual([]);
  });

  it('"which one?": a declined form sends nothing, even one carrying a pick', async () => {
    const c = await host({ ...CLASSIC, elicit: () => ({ action: 'decline', content: { client: sam2!.id } }) });
    expect((await c.call('create_request', shared)).text).toBe('Nothing was sent: the person chose none of the 2 clients "Sam Taylor" matches.');
    const batch = await c.call('create_request_batch', { clients: ['Sam Taylor', active[2]!.id], title: 'Form: batch declined', items: [{ name: 'A' }] });
    expect(batch.text).toBe('Nothing was sent: the person declined to say which clients were meant.');
    const empty = await host({ ...CLASSIC, elicit: (_m, form) => ('confirm' in fields(form) ? yes : { action: 'accept' }) });
    const none = await empty.call('create_request_batch', { clients: ['Sam Taylor', active[2]!.id], title: 'Form: batch empty', items: [{ name: 'A' }] });
    expect(none.text).toBe('Nothing was sent: the person declined to say which clients were meant.');
    expect(posted()).toEqual([]);
  });

  it('a batch: "none of these" skips that recipient, the others are sent once', async () => {
    const asked: string[] = [];
    const c = await host({ ...CLASSIC, elicit: person((k) => (k === 'recipient1' ? ':none' : sam2!.id), asked) });
    const r = await c.call('create_request_batch', { clients: ['Sam Taylor', active[3]!.id, 'sam taylor'], title: 'Form: batch none', items: [{ name: 'A' }] });
    const rows = structured<{ recipients: { clientId: string | null; outcome: string }[] }>(r).recipients;
    expect(rows.map((x) => x.outcome)).toEqual(['skipped', 'sent', 'sent']);
    expect(posted()).toEqual([active[3]!.id, sam2!.id]);
    expect(asked).toHaveLength(2);
    expect(c.logs.some((l) => l.includes(`create_request_batch: 2/2 sent: client ${sam2!.id}`))).toBe(true);
  });

  it('cancelling the call closes the form the person has open', async () => {
    const c = await host({ ...CLASSIC, capabilities: { elicitation: {} } });
    let forms = 0;
    let opened!: (form: { closed: Promise<boolean> }) => void;
    const open = new Promise<{ closed: Promise<boolean> }>((r) => (opened = r));
    c.client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
      // The first form is declined at once (SDK v1 hears no cancellation of a request numbered 0).
      if (forms++ === 0) return { action: 'decline' };
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ action: 'decline' }), 3_000);
        opened({ closed: new Promise((closed) => (extra.signal.addEventListener('abort', () => closed(true)), setTimeout(() => closed(false), 3_000))) });
        extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve({ action: 'cancel' })));
      });
    });
    await c.call('create_request', { client: active[4]!.id, title: 'Form: first', items: [{ name: 'A' }] });
    const cancel = new AbortController();
    const call = c
      .callWith('create_request', { client: active[4]!.id, title: 'Form: cancelled', items: [{ name: 'A' }] }, { signal: cancel.signal })
      .catch(() => undefined);
    const { closed } = await open;
    cancel.abort();
    await call;
    expect(await closed).toBe(true);
    expect(posted()).toEqual([]);
  });

  it('a 2026 host without a form is answered with the candidates, as before', async () => {
    const c = await host(MODERN);
    const r = await c.call('create_request', shared);
    expect(r.text).toContain('"Sam Taylor" matches 2 clients; nothing was sent. Pass the id of the one you mean as client:');
  });
});

/** A 2026 host (MRTR) whose retries are recorded and, where `edit` says, replaced. */
async function mrtrHost(elicit: (message: string, form: unknown) => Answer, edit: (retry: string) => string | undefined = () => undefined) {
  const retries: string[] = [];
  const c = await host({ ...MODERN, elicit, tap: (b) => (b.includes('"requestState"') ? (retries.push(b), edit(b)) : undefined) });
  return { ...c, retries, post: (body: string) => c.post!(body) };
}

describe('MRTR (2026-07-28): "which one?" and "send it?" as input_required rounds', () => {
  it('a shared name is asked, then the send: the one picked gets it; a second send in the same session too', async () => {
    const asked: string[] = [];
    const forms: Form[] = [];
    const c = await mrtrHost((m, form) => (forms.push(form as Form), person(() => sam2!.id, asked)(m, form)));
    const r = await c.call('create_request', { client: 'Sam Taylor', title: 'MRTR: picked', items: [{ name: 'A' }] });
    expect(structured<{ sent: boolean }>(r).sent).toBe(true);
    expect(asked[0]).toBe('"Sam Taylor" matches 2 clients. Which one should get this request? Nothing is sent until the request is confirmed.');
    expect(asked[1]).toMatch(/^Send this document request\?/);
    expect(asked).toHaveLength(2);
    expect(forms[0]!.requestedSchema).toMatchObject({
      required: ['client'],
      properties: { client: { oneOf: [{ const: sam1!.id }, { const: sam2!.id }, { const: ':none', title: 'None of these (nothing is sent)' }] } },
    });
    const again = await c.call('create_request', { client: active[5]!.id, title: 'MRTR: second', items: [{ name: 'A' }] });
    expect(structured<{ sent: boolean }>(again).sent).toBe(true);
    expect(posted()).toEqual([sam2!.id, active[5]!.id]);
  });

  it('the pick riding in the state is bound to it: another client swapped in sends nothing', async () => {
    const swap = (b: string) => (b.includes('"confirm":{') ? withState(b, (s) => `${s.split('~')[0]}~${b64({ client: sam1!.id })}`) : undefined);
    const c = await mrtrHost(
      person(() => sam2!.id),
      swap,
    );
    const r = await c.call('create_request', { client: 'Sam Taylor', title: 'MRTR: swapped', items: [{ name: 'A' }] });
    expect(r.text).toBe(
      'Nothing was sent: the confirmation state that came back is not valid for this call (mismatch). Call again without it to be asked again.',
    );
    expect(posted()).toEqual([]);
  });

  it('a choice naming no client offered, or declined while carrying one, sends nothing', async () => {
    for (const answer of [
      { action: 'accept', content: { client: 'not-a-candidate' } },
      { action: 'decline', content: { client: sam2!.id } },
    ] as Answer[]) {
      const c = await mrtrHost((m, form) => ('confirm' in fields(form) ? yes : answer));
      const r = await c.call('create_request', { client: 'Sam Taylor', title: 'MRTR: stray', items: [{ name: 'A' }] });
      expect(r.text).toBe('Nothing was sent: the person chose none of the 2 clients "Sam Taylor" matches.');
    }
    const empty = await mrtrHost((m, form) => ('confirm' in fields(form) ? yes : { action: 'accept' }));
    const r = await empty.call('create_request_batch', { clients: ['Sam Taylor', active[6]!.id], title: 'MRTR: batch empty', items: [{ name: 'A' }] });
    expect(r.text).toBe('Nothing was sent: the person declined to say which clients were meant.');
    expect(posted()).toEqual([]);
  });

  it('a batch: "none of these" for one recipient is carried to the send round and skips it alone', async () => {
    const asked: string[] = [];
    const c = await mrtrHost(person((k) => (k === 'recipient1' ? ':none' : sam2!.id), asked));
    const r = await c.call('create_request_batch', { clients: ['Sam Taylor', active[7]!.id, 'sam taylor'], title: 'MRTR: batch none', items: [{ name: 'A' }] });
    const rows = structured<{ recipients: { outcome: string }[] }>(r).recipients;
    expect(rows.map((x) => x.outcome)).toEqual(['skipped', 'sent', 'sent']);
    expect(asked).toHaveLength(2);
    expect(posted()).toEqual([active[7]!.id, sam2!.id]);
  });

  it('two questions in one call (which template, then which client) are asked in turn, then the send', async () => {
    const asked: string[] = [];
    const answer = (message: string, form: unknown): Answer => {
      asked.push(message);
      const f = fields(form);
      if ('confirm' in f) return yes;
      return { action: 'accept', content: Object.fromEntries(Object.entries(f).map(([k, q]) => [k, k === 'client' ? sam2!.id : q.oneOf![0]!.const])) };
    };
    const c = await mrtrHost(answer);
    const r = await c.call('create_request', { client: 'Sam Taylor', template: 'business-year-edn', title: 'MRTR: two questions', items: [{ name: 'A' }] });
    expect(asked.map((m) => m.split(/[.?]/)[0])).toEqual([
      'No template is named "business-year-edn"',
      '"Sam Taylor" matches 2 clients',
      'Send this document request',
    ]);
    expect(structured<{ sent: boolean }>(r).sent).toBe(true);
    expect(posted()).toEqual([sam2!.id]);
  });

  it('a retry that answers another question than the one asked is asked again', async () => {
    let first = true;
    const wrong = (b: string) => {
      if (!first || !b.includes('"choose":{')) return undefined;
      first = false;
      return b.replace(/"inputResponses":\{.*?\}\}\}/, '"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}');
    };
    const asked: string[] = [];
    const c = await mrtrHost(
      person(() => sam1!.id, asked),
      wrong,
    );
    const r = await c.call('create_request', { client: 'Sam Taylor', title: 'MRTR: wrong answer', items: [{ name: 'A' }] });
    expect(first).toBe(false);
    expect(structured<{ sent: boolean }>(r).sent).toBe(true);
    expect(asked.filter((m) => m.includes('Which one'))).toHaveLength(2);
    expect(posted()).toEqual([sam1!.id]);
  });
});

describe('MRTR: the request state and the answers that come back', () => {
  const once = (title: string) => ({ client: active[8]!.id, title, items: [{ name: 'A' }] });
  const notValid = (why: string) =>
    `Nothing was sent: the confirmation state that came back is not valid for this call (${why}). Call again without it to be asked again.`;

  it('a state with picks added, or unreadable ones, is refused; without answers the retry is a no', async () => {
    const c = await mrtrHost(
      () => yes,
      (b) => withState(b, (s) => `${s}~${b64(null)}`),
    );
    const r = await c.call('create_request', once('MRTR: tampered'));
    expect(r.text).toBe(notValid('mismatch'));
    const retry = c.retries[0]!;
    for (const state of [(s: string) => `${s}~${b64(0)}`, (s: string) => `${s}~${b64([])}`, (s: string) => `${s}~!!!`]) {
      expect(rpcText(await c.post(withState(retry, state)))).toBe(notValid('mismatch'));
    }
    const unanswered = JSON.parse(retry) as { params: Record<string, unknown> };
    delete unanswered.params.inputResponses;
    const no = (await c.post(JSON.stringify(unanswered))) as Rpc;
    expect(no.result?.structuredContent?.outcome).toBe('declined');
    expect(rpcText(await c.post(retry))).toBe('Nothing was sent: this confirmation was already answered once. Call again to be asked again.');
    expect(posted()).toEqual([]);
  });

  it('only an accepted yes sends: a decline carrying yes, a no, an accept without content do not', async () => {
    const edits = [(b: string) => b.replace('"action":"accept"', '"action":"decline"'), (b: string) => b.replace(',"content":{"confirm":true}', '')];
    for (const edit of edits) {
      const c = await mrtrHost(() => yes, edit);
      expect(structured<{ outcome: string }>(await c.call('create_request', once('MRTR: not yes'))).outcome).toBe('declined');
    }
    const no = await mrtrHost(() => ({ action: 'accept', content: { confirm: false } }));
    expect(structured<{ outcome: string }>(await no.call('create_request', once('MRTR: no'))).outcome).toBe('declined');
    expect(posted()).toEqual([]);
  });

  it("a retry whose answer is of another kind than a form's is asked again, then sends on a yes", async () => {
    let first = true;
    const asked: string[] = [];
    const odd = (b: string) => (first ? ((first = false), b.replace(/"inputResponses":\{.*?\}\}\}/, '"inputResponses":{"choose":{"roots":[]}}')) : undefined);
    const c = await mrtrHost((m) => (asked.push(m), yes), odd);
    expect(structured<{ sent: boolean }>(await c.call('create_request', once('MRTR: roots'))).sent).toBe(true);
    expect(first).toBe(false);
    expect(asked).toHaveLength(2);
  });
});

describe('MRTR: the send store', () => {
  it("a store that cannot take the state's single use sends nothing and says why, secrets redacted", async () => {
    const config = loadConfig({}, { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url });
    class OnceFails extends MemoryStore {
      override claim(key: string, value: string, ttlMs: number): Promise<boolean> {
        if (key.includes(':once:')) return Promise.reject(new StoreUnavailableError('redis', `EIO near ${sb.keys.demo}`));
        return super.claim(key, value, ttlMs);
      }
    }
    const sending = { ledger: new SendLedger(new OnceFails()), confirmations: new Confirmations(config.tokenSecret) };
    const logger = createLogger('error', [], () => undefined);
    const entry = statelessEntry(() => createServer(config, { logger, api: FAST_API, clock: () => TODAY, sending, stateless: true }), undefined);
    const client = new ModernClient({ name: 'test', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    client.setRequestHandler('elicitation/create', () => yes as never);
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://docreq.test/mcp'), { fetch: (url, init) => entry.handler.fetch(new Request(url, init)) }),
    );
    try {
      const r = (await client.callTool({
        name: 'create_request',
        arguments: { client: active[9]!.id, title: 'MRTR: store down', items: [{ name: 'A' }] },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(r.isError).toBe(true);
      expect(r.content[0]!.text).toBe(
        'Nothing was sent: the send store (redis) cannot be used (EIO near [redacted]), so this server cannot guarantee the request is sent only once. Sending works again once it is back; reading is not affected.',
      );
      expect(posted()).toEqual([]);
    } finally {
      entry.stop();
      await client.close();
      await entry.handler.close();
    }
  });
});
