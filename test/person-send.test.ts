import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps';
import { isToolVisibilityAppOnly } from '@modelcontextprotocol/ext-apps/app-bridge';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, ERA, sandboxAndClient, structured, TODAY, type Connected } from './helpers.js';

/**
 * The person's own Send. On a host that renders MCP Apps (its capabilities declare the ui extension),
 * the preview's token goes only to the page (the result's _meta, which hosts hand the page and not the
 * model) and the send is completed by send_from_page, a tool only the page may call. Nothing the model
 * sees (the text, structuredContent) can send; DOCREQ_CONFIRM_SEND=person refuses a host with neither a
 * page nor a form. Both eras (DOCREQ_TEST_ERA): a 2026 request brings its capabilities itself.
 */

const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [RESOURCE_MIME_TYPE] } } };
const { sb, firm } = await sandboxAndClient();
const active = firm.clients.filter((c) => c.status === 'active' && c.email);
const posts = () => sb.callsTo('POST', '/api/v1/requests').length;
const open: Connected[] = [];
afterAll(async () => {
  for (const c of open) await c.close();
});
async function host(options: Parameters<typeof connect>[1] = {}): Promise<Connected> {
  const c = await connect(sb, { today: TODAY, ...options });
  open.push(c);
  return c;
}
const apps = () => host({ capabilities: APPS });
const args = (n: number, title: string) => ({ client: active[n]!.id, title, items: [{ name: 'Bank statements' }], dueDate: '2026-05-01' });
type Preview = { confirmation: { needed: boolean; by: string; token: string | null; expiresAt: string | null }; outcome: string; sent: boolean };
const pageToken = (result: { _meta?: Record<string, unknown> }) => (result._meta?.['docreq-mcp/send'] as { token?: string } | undefined)?.token;

describe(`a host that renders MCP Apps (${ERA})`, () => {
  it('lists send_from_page for the page alone (visibility ["app"]), beside the send tools', async () => {
    const c = await apps();
    const tools = (await c.client.listTools()).tools;
    const page = tools.find((t) => t.name === 'send_from_page')!;
    expect(isToolVisibilityAppOnly(page as never)).toBe(true);
    expect(tools.filter((t) => isToolVisibilityAppOnly(t as never)).map((t) => t.name)).toEqual(['send_from_page']);
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
    expect(preview.text).toContain('only the person\'s press sends it');
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
    expect(pressed.filter((r) => r.isError || structured<Preview>(r).outcome !== 'sent').map((r) => r.text)).toEqual([expect.stringMatching(/already in progress|ALREADY USED/)]);
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
    expect(leaked.text).toContain("never a confirmationToken from the chat");
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
