import { isToolVisibilityAppOnly } from '@modelcontextprotocol/ext-apps/app-bridge';
import { describe, expect, it } from 'vitest';
import { ERA } from './support/era.js';
import { sandboxAndClient, structured, APPS_HOST as APPS, hostsOn, pageTokenOf as pageToken } from './support/connect.js';

/**
 * The person's own Send. On a host that renders MCP Apps (its capabilities declare the ui extension),
 * the preview's token goes only to the page (the result's _meta, which hosts hand the page and not the
 * model) and the send is completed by send_from_page, a tool only the page may call. Nothing the model
 * sees (the text, structuredContent) can send; DOCREQ_CONFIRM_SEND=person refuses a host with neither a
 * page nor a form. Both eras (DOCREQ_TEST_ERA): a 2026 request brings its capabilities itself.
 */

const { sb, firm } = await sandboxAndClient();
const active = firm.clients.filter((c) => c.status === 'active' && c.email);
const posts = () => sb.callsTo('POST', '/api/v1/requests').length;
const host = hostsOn(sb);
const apps = () => host({ capabilities: APPS });
const args = (n: number, title: string) => ({ client: active[n]!.id, title, items: [{ name: 'Bank statements' }], dueDate: '2026-05-01' });
type Preview = { confirmation: { needed: boolean; by: string; token: string | null; expiresAt: string | null }; outcome: string; sent: boolean };

describe(`a host that renders MCP Apps (${ERA})`, () => {
  it('lists send_from_page for the page alone (visibility ["app"]), beside the send tools', async () => {
    const c = await apps();
    const tools = (await c.client.listTools()).tools;
    const page = tools.find((t) => t.name === 'send_from_page')!;
    expect(isToolVisibilityAppOnly(page as never)).toBe(true);
    expect(tools.filter((t) => isToolVisibilityAppOnly(t as never)).map((t) => t.name)).toEqual(['send_from_page']);
    // A host that shows tools to a person shows it for what it does: it sends, and e-mails clients.
    expect(page).toMatchObject({
      title: 'Page Send',
      description: 'Only the preview page calls this.',
      annotations: { title: 'Page Send', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    });
  });

  it("the model's text and structuredContent hold no token; the page's is in _meta; the person's press sends once, again and again it sends nothing more", async () => {
    const c = await apps();
    const a = args(0, 'Person: single');
    const preview = await c.call('create_request', a);
    const token = pageToken(preview)!;
    expect(token).toMatch(/\S{20,}/);
    const seen = structured<Preview>(preview);
    expect(seen).toMatchObject({ outcome: 'previewed', sent: false, confirmation: { needed: true, by: 'page', token: null } });
    // Nothing the model is handed holds it, whole or in part.
    const modelSees = preview.text + JSON.stringify(preview.structuredContent);
    expect(modelSees).not.toContain(token);
    expect(modelSees).not.toContain(token.slice(-16));
    expect(preview.text).toContain("only the person's press sends it");
    expect(preview.text).not.toContain('confirmationToken:');

    const before = posts();
    // The model, with anything it could have seen: no token, the same call again, a made-up token.
    for (const attempt of [a, { ...a, confirmationToken: 'x'.repeat(40) }, { ...a, confirmationToken: seen.confirmation.expiresAt! }]) {
      const again = await c.call('create_request', attempt);
      expect(structured<Preview>(again).sent).toBe(false);
    }
    // The page's tool without the page's token.
    const forged = await c.call('send_from_page', { tool: 'create_request', arguments: a, pageToken: 'y'.repeat(40) });
    expect(forged.isError).toBe(true);
    expect(forged.text).toContain('Nothing was sent');
    expect(posts()).toBe(before);

    // The person's press: once, then a reload's or a double press's second call sends nothing more.
    const pressed = await Promise.all([1, 2].map(() => c.call('send_from_page', { tool: 'create_request', arguments: a, pageToken: token })));
    expect(posts()).toBe(before + 1);
    // One sends; the other is told the same send is in progress (or was already sent): nothing twice.
    expect(pressed.filter((r) => !r.isError && structured<Preview>(r).outcome === 'sent')).toHaveLength(1);
    expect(pressed.filter((r) => r.isError || structured<Preview>(r).outcome !== 'sent').map((r) => r.text)).toEqual([
      expect.stringMatching(/already in progress|ALREADY USED/),
    ]);
    const reload = await c.call('send_from_page', { tool: 'create_request', arguments: a, pageToken: token });
    expect(structured<Preview>(reload).outcome).toBe('already_sent');
    expect(posts()).toBe(before + 1);
  });

  it("the page's token sends only the request it was issued for, and never through create_request", async () => {
    const c = await apps();
    const a = args(1, 'Person: bound');
    const token = pageToken(await c.call('create_request', a))!;
    const before = posts();
    const other = await c.call('send_from_page', { tool: 'create_request', arguments: { ...a, title: 'Person: swapped' }, pageToken: token });
    expect(other.isError).toBe(true);
    expect(other.text).toContain('does not belong to this exact request');
    // Even were it leaked to the model, create_request on this host takes no token from the chat.
    const leaked = await c.call('create_request', { ...a, confirmationToken: token });
    expect(structured<Preview>(leaked).sent).toBe(false);
    expect(leaked.text).toContain('never a confirmationToken from the chat');
    // Nor does a host without pages take the page's token as its own.
    const plain = await host();
    const asToken = await plain.call('create_request', { ...a, confirmationToken: token });
    expect(structured<Preview>(asToken).sent).toBe(false);
    expect(posts()).toBe(before);
  });

  it('a batch: the preview holds no token for the model; the press sends each recipient once', async () => {
    const c = await apps();
    const b = { clients: [active[2]!.id, active[3]!.email], title: 'Person: batch', items: [{ name: 'Payroll summary' }] };
    const preview = await c.call('create_request_batch', b);
    const token = pageToken(preview)!;
    expect(preview.text + JSON.stringify(preview.structuredContent)).not.toContain(token);
    expect(structured<Preview>(preview).confirmation).toMatchObject({ by: 'page', token: null });
    const before = posts();
    const model = await c.call('create_request_batch', { ...b, confirmationToken: 'z'.repeat(40) });
    expect(structured<{ sent: number }>(model).sent).toBe(0);
    const sent = await c.call('send_from_page', { tool: 'create_request_batch', arguments: b, pageToken: token });
    expect(structured<{ sent: number }>(sent).sent).toBe(2);
    const again = await c.call('send_from_page', { tool: 'create_request_batch', arguments: b, pageToken: token });
    expect(structured<{ sent: number }>(again).sent).toBe(0);
    expect(posts()).toBe(before + 2);
  });
});

describe('DOCREQ_CONFIRM_SEND=person', () => {
  it('a host with neither pages nor a form: nothing is sent, told why in plain words; its preview holds no token', async () => {
    const c = await host({ env: { DOCREQ_CONFIRM_SEND: 'person' } });
    const a = args(4, 'Person: nowhere');
    const before = posts();
    const refused = await c.call('create_request', a);
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('only a person can send');
    expect(refused.text).toContain('this host offers neither');
    const dry = await c.call('create_request', { ...a, dryRun: true });
    expect(structured<Preview>(dry).confirmation).toMatchObject({ by: 'none', token: null });
    expect(dry.text).toContain('only a person can send');
    const batch = await c.call('create_request_batch', { clients: [active[4]!.id, active[5]!.id], title: 'Person: nowhere batch', items: [{ name: 'ID' }] });
    expect(batch.isError).toBe(true);
    expect(posts()).toBe(before);
  });

  it("a host that shows pages sends on the person's press; one with a form asks in it", async () => {
    const c = await host({ env: { DOCREQ_CONFIRM_SEND: 'person' }, capabilities: APPS });
    const a = args(5, 'Person: page under person');
    const token = pageToken(await c.call('create_request', a))!;
    const before = posts();
    await c.call('send_from_page', { tool: 'create_request', arguments: a, pageToken: token });
    expect(posts()).toBe(before + 1);
    const asked: string[] = [];
    const form = await host({ env: { DOCREQ_CONFIRM_SEND: 'person' }, elicit: (m) => (asked.push(m), { action: 'accept', content: { confirm: true } }) });
    const sent = await form.call('create_request', args(6, 'Person: form under person'));
    expect(asked).toHaveLength(1);
    expect(structured<Preview>(sent).outcome).toBe('sent');
    expect(posts()).toBe(before + 2);
  });
});

describe('"Which one?" asked inside the call, in the host\'s form', () => {
  type Form = { requestedSchema?: { properties?: Record<string, { oneOf?: { const: string; title: string }[] }> } };
  const sams = () => firm.clients.filter((c) => c.displayName === 'Sam Taylor');
  /** A person who picks, for each choice asked, the option `pick` names (its e-mail or name in the title), and confirms sends. */
  const person =
    (pick: (field: string, options: { const: string; title: string }[]) => string, asked: string[] = []) =>
    (message: string, form?: Form) => {
      asked.push(message);
      const fields = form?.requestedSchema?.properties ?? {};
      if ('confirm' in fields) return { action: 'accept' as const, content: { confirm: true } };
      return { action: 'accept' as const, content: Object.fromEntries(Object.entries(fields).map(([key, f]) => [key, pick(key, f.oneOf ?? [])])) };
    };

  it('a name two clients share: the person picks one (name, e-mail, id shown) and it is sent to that one, in one call', async () => {
    expect(sams().length).toBe(2);
    const chosen = sams()[1]!;
    const asked: string[] = [];
    const titles: string[] = [];
    const c = await host({
      elicit: person((_, options) => (titles.push(...options.map((o) => o.title)), options.find((o) => o.title.includes(chosen.email))!.const), asked),
    });
    const before = posts();
    const sent = await c.call('create_request', { client: 'Sam Taylor', title: 'Which one: Sam', items: [{ name: 'ID' }] });
    expect(structured<{ outcome: string; client: { id: string } }>(sent)).toMatchObject({ outcome: 'sent', client: { id: chosen.id } });
    expect(asked[0]).toContain('matches 2 clients');
    for (const sam of sams()) expect(titles.some((t) => t.includes(sam.email) && t.includes(sam.id))).toBe(true);
    expect(titles.at(-1)).toMatch(/None of these/);
    expect(posts()).toBe(before + 1);
    expect(sb.callsTo('POST', '/api/v1/requests').at(-1)!.body).toContain(chosen.id);
  });

  it('"none of these" sends nothing; a host without a form gets the list, as before', async () => {
    const c = await host({ elicit: person((_, options) => options.at(-1)!.const) });
    const before = posts();
    const none = await c.call('create_request', { client: 'Sam Taylor', title: 'Which one: none', items: [{ name: 'ID' }] });
    expect(none.isError).toBe(true);
    expect(none.text).toContain('chose none of the 2 clients');
    const plain = await host();
    const listed = await plain.call('create_request', { client: 'Sam Taylor', title: 'Which one: listed', items: [{ name: 'ID' }] });
    expect(listed.isError).toBe(true);
    expect(listed.text).toContain('matches 2 clients');
    for (const sam of sams()) expect(listed.text).toContain(sam.id);
    expect(posts()).toBe(before);
  });

  it('a batch asks every ambiguous recipient in one form; the picked one is sent, with the others', async () => {
    const chosen = sams()[0]!;
    const asked: string[] = [];
    const c = await host({ elicit: person((_, options) => options.find((o) => o.title.includes(chosen.email))!.const, asked) });
    const before = posts();
    const result = await c.call('create_request_batch', { clients: ['Sam Taylor', active[7]!.id], title: 'Which one: batch', items: [{ name: 'ID' }] });
    const out = structured<{ sent: number; recipients: { clientId: string; outcome: string }[] }>(result);
    expect(out.sent).toBe(2);
    expect(out.recipients[0]).toMatchObject({ clientId: chosen.id, outcome: 'sent' });
    expect(asked[0]).toContain('One recipient matches several clients');
    expect(posts()).toBe(before + 2);
  });

  it('a template name close to one: the person picks it in the form', async () => {
    const c = await host({ elicit: person((_, options) => options[0]!.const) });
    const result = await c.call('create_request', { client: active[8]!.id, template: 'individual tax retrun', dryRun: true });
    expect(structured<{ previewed: { title: string } }>(result).previewed.title).toBeTruthy();
    expect(result.text).toContain('DRY RUN');
    const plain = await host();
    const refused = await plain.call('create_request', { client: active[8]!.id, template: 'individual tax retrun', dryRun: true });
    expect(refused.text).toContain('No template is named');
  });
});
