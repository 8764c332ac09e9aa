import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES } from '../src/templates/builtin.js';
import { cannotConfirm, closeTemplates, pageNext, sendWay } from '../src/tools/sending.js';
import { MemoryStore } from '../src/store/memory.js';
import { ClientSessions } from '../src/transport/client-sessions.js';
import { sandboxAndClient, structured, APPS_HOST as APPS, hostsOn, pageTokenOf as pageToken } from './support/connect.js';

/**
 * The guards of the person's own Send, each on its own: who confirms (sendWay) for every setting and
 * host, the words the model and the person read, the page's Send refusing what is not its own, "which
 * one?" for a batch and a template, and a session's renewal. test/person-send.test.ts shows the whole.
 */

const { sb, firm } = await sandboxAndClient();
const active = firm.clients.filter((c) => c.status === 'active' && c.email);
const posts = () => sb.callsTo('POST', '/api/v1/requests').length;
const host = hostsOn(sb);
type Form = { requestedSchema?: { properties?: Record<string, { title?: string; oneOf?: { const: string; title: string }[] }> } };

describe('sendWay: who confirms, for every setting and host', () => {
  const way = (confirmSend: 'auto' | 'person' | 'always' | 'never', canAsk: boolean, showsPages: boolean, viaPage = false) =>
    sendWay({ config: { confirmSend } as never, canAsk, showsPages, viaPage });
  it("a press of Send is the page's, whatever the setting", () => {
    for (const mode of ['auto', 'person', 'always', 'never'] as const) expect(way(mode, false, false, true)).toBe('pressed');
  });
  it('never: unattended; always: the form, or nobody', () => {
    expect(way('never', true, true)).toBe('unattended');
    expect(way('always', true, true)).toBe('asked');
    expect(way('always', false, true)).toBe('none');
    expect(way('always', false, false)).toBe('none');
  });
  it('auto and person: the page first, then the form; then the token (auto) or nobody (person)', () => {
    for (const mode of ['auto', 'person'] as const) {
      expect(way(mode, true, true)).toBe('page');
      expect(way(mode, false, true)).toBe('page');
      expect(way(mode, true, false)).toBe('asked');
    }
    expect(way('auto', false, false)).toBe('token');
    expect(way('person', false, false)).toBe('none');
  });
});

describe('the words', () => {
  it('pageNext: until when, in UTC to the minute, and that the model cannot send it', () => {
    const at = Date.UTC(2026, 2, 16, 9, 41, 30);
    expect(pageNext(at, 'create_request')).toBe(
      "Next: the preview page shown with this result has a Send button; only the person's press sends it (until 2026-03-16 09:41 UTC). " +
        'If they do not press it, nothing is sent, and you cannot send it for them: calling create_request again only previews again. Tell the person to check the page and press Send if it is right.',
    );
  });
  it('cannotConfirm: person names both ways and what to do; always is the form alone', () => {
    expect(cannotConfirm('person').message).toBe(
      "Nothing was sent: this server is set so that only a person can send (DOCREQ_CONFIRM_SEND=person), by pressing Send on the preview page or answering the host's own form, and this host offers neither. " +
        'Send it from a host that shows MCP Apps pages or asks through a form, or ask whoever runs the server.',
    );
    expect(cannotConfirm('always').message).toContain('DOCREQ_CONFIRM_SEND is "always"');
  });
  it('closeTemplates: a typo, spaces or underscores for dashes, a part of a name; closest first, at most five; nothing for a stranger', () => {
    const names = (q: string) => closeTemplates(BUILTIN_TEMPLATES, q).map((t) => t.name);
    expect(names('individual-tax-retrun')[0]).toBe('individual-tax-return');
    expect(names('  Individual Tax_Return ')).toEqual(['individual-tax-return']);
    expect(names('payroll')[0]).toBe('payroll-quarter-end');
    expect(names('zzzz qqqq')).toEqual([]);
    // Every built-in name holds an "e" but one: the five closest, in the catalogue's order (all alike).
    expect(names('e')).toEqual(['individual-tax-return', 'business-year-end', 'bookkeeping-onboarding', 'payroll-quarter-end', 'mortgage-application']);
    expect(names('business-year-edn')).toEqual(['business-year-end']);
    expect(names('year end')).toEqual(['business-year-end']);
    expect(names('mortgage aplication')).toEqual(['mortgage-application']);
    expect(names('onboarding book')).toEqual(['bookkeeping-onboarding']);
    expect(names('tax')).toEqual(['individual-tax-return']);
  });
});

describe("the page's Send refuses what is not its own", () => {
  it("a tool that is not a send tool, arguments that are not the tool's: nothing sent, said why", async () => {
    const c = await host({ capabilities: APPS });
    const before = posts();
    const other = await c.call('send_from_page', { tool: 'list_clients', arguments: {}, pageToken: 'x'.repeat(30) });
    expect(other.text).toBe('Nothing was sent: the page can send only through create_request or create_request_batch.');
    const proto = await c.call('send_from_page', { tool: 'toString', arguments: {}, pageToken: 'x'.repeat(30) });
    expect(proto.text).toContain('the page can send only through');
    const bad = await c.call('send_from_page', {
      tool: 'create_request',
      arguments: { client: active[0]!.id, title: 'T', items: 'no' },
      pageToken: 'x'.repeat(30),
    });
    expect(bad.text).toMatch(/^Nothing was sent: the page's request does not match create_request's arguments \(items: /);
    const empty = await c.call('send_from_page', { tool: 'create_request', arguments: { title: 'T' }, pageToken: 'x'.repeat(30) });
    expect(empty.text).toMatch(/\(client: /);
    const nested = await c.call('send_from_page', {
      tool: 'create_request',
      arguments: { client: active[0]!.id, title: 7, items: [{ name: 5 }] },
      pageToken: 'x'.repeat(30),
    });
    expect(nested.text).toMatch(/\(title: [^;]+; items\.0\.name: [^;]+\)\.$/);
    const extra = await c.call('send_from_page', {
      tool: 'create_request',
      arguments: { client: active[0]!.id, title: 'T', items: [{ name: 'A' }], stray: 1 },
      pageToken: 'x'.repeat(30),
    });
    expect(extra.text).toMatch(/\(arguments: /);
    expect(posts()).toBe(before);
  });

  it("a press whose token is not the page's own (a model's token, another request's): the page is told, nothing sent", async () => {
    // One token secret for both, as replicas share it: the page host must refuse the other's token on its merits.
    const secret = { DOCREQ_TOKEN_SECRET: 'guards-shared-secret-0123456789abcdef' };
    const plain = await host({ env: secret });
    const c = await host({ capabilities: APPS, env: secret });
    const a = { client: active[1]!.id, title: 'Guards: foreign token', items: [{ name: 'A' }] };
    const modelToken = structured<{ confirmation: { token: string } }>(await plain.call('create_request', a)).confirmation.token;
    const before = posts();
    const single = await c.call('send_from_page', { tool: 'create_request', arguments: a, pageToken: modelToken });
    expect(single.text).toMatch(
      /^Nothing was sent: the preview page's confirmation was not taken\. The confirmationToken given does not belong to this exact request/,
    );
    expect(single.text).toMatch(/Ask the assistant for a new preview\.$/);
    const b = { clients: [active[1]!.id, active[2]!.id], title: 'Guards: foreign batch token', items: [{ name: 'A' }] };
    const batchToken = structured<{ confirmation: { token: string } }>(await plain.call('create_request_batch', b)).confirmation.token;
    const batch = await c.call('send_from_page', { tool: 'create_request_batch', arguments: b, pageToken: batchToken });
    expect(batch.text).toMatch(
      /^Nothing was sent: the preview page's confirmation was not taken\. The confirmationToken given does not belong to this exact batch/,
    );
    expect(posts()).toBe(before);
  });

  it("a batch on a host that shows pages: a model's token is not taken (said so), the page's token is in _meta only; a host without pages has no _meta", async () => {
    const c = await host({ capabilities: APPS });
    const b = { clients: [active[3]!.id, active[4]!.id], title: 'Guards: batch on a page host', items: [{ name: 'A' }] };
    const model = await c.call('create_request_batch', { ...b, confirmationToken: 'q'.repeat(40) });
    expect(model.text).toMatch(
      /^This host shows the preview page: a send is the person's press of Send there, never a confirmationToken from the chat; nothing was sent\. PREVIEW/,
    );
    expect(model.text).toContain('calling create_request_batch again only previews again');
    expect(pageToken(model)).toBeTruthy();
    const single = await c.call('create_request', { client: active[3]!.id, title: 'Guards: single on a page host', items: [{ name: 'A' }] });
    expect(single.text).toContain('calling create_request again only previews again');
    const plain = await host();
    const tokenHost = await plain.call('create_request_batch', b);
    expect(tokenHost._meta).toBeUndefined();
    expect(structured<{ confirmation: { by: string; token: string } }>(tokenHost).confirmation.by).toBe('token');
    const plainSingle = await plain.call('create_request', { client: active[3]!.id, title: 'Guards: single on a page host', items: [{ name: 'A' }] });
    expect(plainSingle._meta).toBeUndefined();
  });

  it("a page host's preview (single and batch) starts with the plain PREVIEW line, nothing before or after it", async () => {
    const c = await host({ capabilities: APPS });
    const single = await c.call('create_request', { client: active[5]!.id, title: 'Guards: first line', items: [{ name: 'A' }] });
    expect(single.text.split('\n')[0]).toBe('PREVIEW — nothing was sent.');
    const batch = await c.call('create_request_batch', { clients: [active[5]!.id, active[6]!.id], title: 'Guards: first line batch', items: [{ name: 'A' }] });
    expect(batch.text.split('\n')[0]).toBe('PREVIEW — nothing was sent. 2 will send, 0 skipped (of 2).');
  });

  it('person on a host with neither: a batch dry run says why it cannot be sent, with no token', async () => {
    const c = await host({ env: { DOCREQ_CONFIRM_SEND: 'person' } });
    const dry = await c.call('create_request_batch', {
      clients: [active[5]!.id, active[6]!.id],
      title: 'Guards: nobody',
      items: [{ name: 'A' }],
      dryRun: true,
    });
    expect(structured<{ confirmation: { by: string; token: null; expiresAt: null } }>(dry).confirmation).toEqual({
      needed: false,
      by: 'none',
      token: null,
      expiresAt: null,
    });
    expect(dry.text).toContain('Next: Nothing was sent: this server is set so that only a person can send');
  });
});

describe('"which one?": a batch and a template, asked in the form', () => {
  const sams = () => firm.clients.filter((c) => c.displayName === 'Sam Taylor');

  it('two ambiguous recipients: one form, a field each ("Recipient n: given"), each picked client sent; an answer that picks nothing offered sends nothing', async () => {
    const forms: Form[] = [];
    const messages: string[] = [];
    const [first, second] = sams();
    const c = await host({
      elicit: (message, form) => {
        messages.push(message);
        forms.push(form as Form);
        const fields = (form as Form)?.requestedSchema?.properties ?? {};
        const content: Record<string, string | boolean> = 'confirm' in fields ? { confirm: true } : { recipient1: first!.id, recipient3: second!.id };
        return { action: 'accept', content };
      },
    });
    const before = posts();
    const result = await c.call('create_request_batch', {
      clients: ['Sam Taylor', active[7]!.id, 'sam taylor'],
      title: 'Guards: two Sams',
      items: [{ name: 'A' }],
    });
    expect(messages[0]).toBe('2 recipients match several clients. Which client is meant for each? Nothing is sent until the batch is confirmed.');
    const fields = forms[0]!.requestedSchema!.properties!;
    expect(Object.keys(fields)).toEqual(['recipient1', 'recipient3']);
    expect(fields.recipient1!.title).toBe('Recipient 1: "Sam Taylor"');
    expect(fields.recipient3!.title).toBe('Recipient 3: "sam taylor"');
    const out = structured<{ recipients: { clientId: string; outcome: string }[] }>(result);
    expect(out.recipients.map((r) => [r.clientId, r.outcome])).toEqual([
      [first!.id, 'sent'],
      [active[7]!.id, 'sent'],
      [second!.id, 'sent'],
    ]);
    expect(posts()).toBe(before + 3);

    // A recipient no client matches, or one id: nothing to ask, so the form is the confirmation alone.
    const asked: string[] = [];
    const plainForm = await host({ elicit: (message) => (asked.push(message), { action: 'accept', content: { confirm: true } }) });
    await plainForm.call('create_request_batch', {
      clients: ['nobody-at-all@example.invalid', active[8]!.id, active[9]!.email],
      title: 'Guards: nobody to choose',
      items: [{ name: 'A' }],
      dryRun: true,
    });
    await plainForm.call('create_request_batch', {
      clients: ['nobody-at-all@example.invalid', active[8]!.id, active[9]!.email],
      title: 'Guards: nobody to choose',
      items: [{ name: 'A' }],
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^Send this document request to 2 clients\?/);

    const declined = await host({ elicit: () => ({ action: 'decline' }) });
    const no = await declined.call('create_request_batch', { clients: ['Sam Taylor', active[8]!.id], title: 'Guards: declined Sams', items: [{ name: 'A' }] });
    expect(no.text).toBe('Nothing was sent: the person declined to say which clients were meant.');
    const stray = await host({ elicit: () => ({ action: 'accept', content: { recipient1: 'not-a-candidate' } }) });
    const odd = await stray.call('create_request_batch', { clients: ['Sam Taylor', active[8]!.id], title: 'Guards: stray Sam', items: [{ name: 'A' }] });
    expect(odd.text).toMatch(/^Nothing was sent: asking the person which one they meant failed \(.*recipient1 is not one of the choices\)/);
    // Three for the Sams' batch, two for the batch with nobody to choose.
    expect(posts()).toBe(before + 5);
  });

  it('a template name close to some: the form names each (name: title), the pick is used; "none of these" or declining sends nothing; a stranger name is refused as before', async () => {
    const forms: Form[] = [];
    const messages: string[] = [];
    const c = await host({
      elicit: (message, form) => {
        messages.push(message);
        forms.push(form as Form);
        const options = (form as Form)?.requestedSchema?.properties?.template?.oneOf ?? [];
        return { action: 'accept', content: { template: options[0]!.const } };
      },
    });
    const dry = await c.call('create_request', { client: active[9]!.id, template: 'business-year-edn', dryRun: true });
    const wanted = BUILTIN_TEMPLATES.find((t) => t.name === 'business-year-end')!;
    expect(messages[0]).toBe('No template is named "business-year-edn". Which one was meant? Nothing is sent until the request is confirmed.');
    const field = forms[0]!.requestedSchema!.properties!.template!;
    expect(field.title).toBe('Template');
    expect(field.oneOf![0]).toEqual({ const: wanted.name, title: `${wanted.name}: ${wanted.title}` });
    expect(field.oneOf!.at(-1)!.title).toMatch(/None of these/);
    expect(structured<{ previewed: { title: string } }>(dry).previewed.title).toBe(wanted.title);

    const none = await host({
      elicit: (_m, form) => ({ action: 'accept', content: { template: (form as Form).requestedSchema!.properties!.template!.oneOf!.at(-1)!.const } }),
    });
    expect((await none.call('create_request', { client: active[9]!.id, template: 'business-year-edn', dryRun: true })).text).toBe(
      'Nothing was sent: the person chose none of the templates close to "business-year-edn".',
    );
    const declined = await host({ elicit: () => ({ action: 'decline' }) });
    expect((await declined.call('create_request', { client: active[9]!.id, template: 'business-year-edn', dryRun: true })).text).toBe(
      'Nothing was sent: the person chose none of the templates close to "business-year-edn".',
    );
    const stranger = await c.call('create_request', { client: active[9]!.id, template: 'zzzz qqqq', dryRun: true });
    expect(stranger.text).toMatch(/^No template is named "zzzz qqqq"; nothing was sent\. Templates: /);
    expect(messages).toHaveLength(1);
  });
});

describe('a 2026 host that shows pages', () => {
  it("is listed the page's Send, with a private cache hint (its list depends on what it declared)", async () => {
    const c = await host({ era: '2026-07-28', capabilities: APPS });
    const listed = (await c.client.listTools()) as { tools: { name: string }[]; cacheScope?: string; ttlMs?: number };
    expect(listed.tools.map((t) => t.name)).toContain('send_from_page');
    expect(listed.cacheScope).toBe('private');
    expect(listed.ttlMs).toBe(60_000);
    const plain = await host({ era: '2026-07-28' });
    const plainList = (await plain.client.listTools()) as { tools: { name: string }[]; cacheScope?: string };
    expect(plainList.tools.map((t) => t.name)).not.toContain('send_from_page');
  });
});

describe("a 2025 connection's session", () => {
  it("renewed once half its idle time has passed, exactly: the renewed entry is still the owner's", async () => {
    let now = 5_000_000;
    const writes: number[] = [];
    const store = new MemoryStore();
    const counted = {
      get: (k: string) => store.get(k),
      delete: (k: string) => store.delete(k),
      set: (k: string, v: string, ttl: number) => (writes.push(now), store.set(k, v, ttl)),
    };
    const sessions = new ClientSessions(counted, 10_000, () => now);
    const id = await sessions.open('firm:person', APPS);
    now += 5_000;
    await sessions.find(id, 'firm:person');
    expect(writes).toHaveLength(1);
    now += 1;
    expect(await sessions.find(id, 'firm:person')).toEqual({ ok: true, capabilities: APPS });
    expect(writes).toHaveLength(2);
    expect(await sessions.find(id, 'firm:person')).toEqual({ ok: true, capabilities: APPS });
  });
});
