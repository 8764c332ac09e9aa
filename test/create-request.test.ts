import { describe, expect, it } from 'vitest';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { isOpen } from './support/sandbox.js';
import { connect, previewThenSend, sandboxAndClient, structured } from './support/connect.js';

const { sb, firm, mcp, upstream } = await sandboxAndClient();
interface RequestsOut {
  requests: { id: string }[];
}

describe('create_request: refusals send nothing', () => {
  const item = [{ name: 'Photo ID' }];

  it.each([
    ['an empty item name', { client: 'x', title: 'T', items: [{ name: '   ' }] }, 'items[0].name: must not be empty'],
    ['an item name of zero-width characters', { client: 'x', title: 'T', items: [{ name: '\u200b\u200b' }] }, 'items[0].name: must not contain invisible'],
    ['a title with a right-to-left override', { client: 'x', title: 'Invoice \u202egnp.exe', items: item }, 'title: must not contain invisible'],
    ['a title with a NUL', { client: 'x', title: 'Tax\u0000 docs', items: item }, 'title: must not contain invisible'],
    ['a title of tag characters', { client: 'x', title: '\u{E0041}\u{E0042}', items: item }, 'title: must not contain invisible'],
    ['no title and no template', { client: 'x', items: item }, 'give a title'],
    ['an unknown template', { client: 'x', template: 'no-such-template' }, 'No template is named'],
    ['no items', { client: 'x', title: 'T', items: [] }, 'items: give at least one item'],
    ['an unknown item type', { client: 'x', title: 'T', items: [{ name: 'a', type: 'pdf' }] }, 'items[0].type'],
    ['an unknown mode', { client: 'x', title: 'T', items: item, correctnessMode: 'strict' }, 'correctnessMode'],
    ['a misspelt field', { client: 'x', title: 'T', items: item, due_date: '2030-01-01' }, 'unknown field "due_date"'],
    ['a 201-character title', { client: 'x', title: 'a'.repeat(201), items: item }, 'title: must be at most 200 characters'],
    ['a malformed due date', { client: 'x', title: 'T', items: item, dueDate: '01/02/2030' }, 'dueDate: must be a date YYYY-MM-DD'],
  ])('refuses %s before any HTTP call', async (_, args, message) => {
    const result = await mcp.call('create_request', args);
    expect(result.isError).toBe(true);
    expect(result.text).toContain(message);
    expect(result.text.toLowerCase()).toMatch(/nothing was (called or )?sent/);
    expect(upstream()).toBe(0);
  });

  it('counts characters, not UTF-16 units: 150 emoji are a valid title', async () => {
    const result = await mcp.call('create_request', { client: firm.clients[0]!.id, title: '🎉'.repeat(150), items: item, dryRun: true });
    expect(structured<{ payload: { title: string } }>(result).payload.title).toBe('🎉'.repeat(150));
  });

  it('refuses a due date in the past', async () => {
    const result = await mcp.call('create_request', { client: firm.clients[0]!.id, title: 'T', items: item, dueDate: '2020-01-01' });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('is in the past');
    expect(upstream()).toBe(0);
  });

  it('lists each candidate with its id when a name matches several clients, and never guesses', async () => {
    const result = await mcp.call('create_request', { client: 'sam taylor', title: 'Ambiguity check', items: item });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('matches 2 clients');
    for (const c of firm.clients.filter((c) => c.displayName === 'Sam Taylor')) expect(result.text).toContain(c.id);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('names the closest clients when nothing matches', async () => {
    const near = firm.clients.find((c) => c.displayName.includes(' ') && !c.displayName.startsWith('Sam'))!;
    const result = await mcp.call('create_request', { client: near.displayName.slice(0, -1), title: 'T', items: item });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('Closest');
    expect(result.text).toContain(near.id);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('refuses a duplicate of an open request for the same client, unless allowDuplicate', async () => {
    const open = firm.requests.find((r) => isOpen(r) && firm.clients.filter((c) => c.displayName === r.clientName).length === 1)!;
    const client = firm.clients.find((c) => c.displayName === open.clientName)!;
    const args = { client: client.email.toUpperCase(), title: `  ${open.title.toUpperCase()} `, items: item, dryRun: true };
    const refused = await mcp.call('create_request', args);
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('already has an open request');
    expect(refused.text).toContain(open.id);
    const allowed = await mcp.call('create_request', { ...args, allowDuplicate: true });
    expect(structured<{ warnings: string[] }>(allowed).warnings.join(' ')).toContain(open.id);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('shows on dryRun exactly the body it would send, with defaults applied, and sends nothing', async () => {
    const client = firm.clients[0]!;
    const emails = sb.emails.length;
    const result = await mcp.call('create_request', {
      client: client.id,
      title: ' Dry run preview ',
      items: [{ name: ' W-2 forms ' }, { name: 'Moved?', type: 'boolean', required: false }],
      correctnessMode: 'soft',
      dryRun: true,
    });
    const out = structured<{ sent: boolean; dryRun: boolean; payload: unknown; request: unknown }>(result);
    expect(out).toMatchObject({ sent: false, dryRun: true, request: null });
    expect(out.payload).toEqual({
      clientId: client.id,
      title: 'Dry run preview',
      items: [
        { name: 'W-2 forms', required: true, type: 'file' },
        { name: 'Moved?', required: false, type: 'boolean' },
      ],
      correctnessMode: 'soft',
    });
    expect(result.text).toMatch(/^DRY RUN — nothing was sent/);
    // The preview shows the exact body, byte for byte.
    expect(result.text).toContain(`Exact body: ${JSON.stringify(out.payload)}`);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
    expect(sb.emails.length).toBe(emails);
  });

  it('carries the service words and what to do on a plan limit, after one POST', async () => {
    const harbor = await connect(sb, { key: SANDBOX_KEYS.harbor });
    const client = sb.firms.get(SANDBOX_KEYS.harbor)!.clients[0]!;
    const { sent: result } = await previewThenSend(harbor, 'create_request', { client: client.id, title: 'Engagement letter', items: item });
    await harbor.close();
    expect(result.isError).toBe(true);
    expect(result.text).toContain('active_request_limit_reached');
    expect(result.text).toMatch(/complete or archive open requests/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
  });
});

describe('create_request: sending', () => {
  const args = (title: string) => ({ client: firm.clients[2]!.id, title, items: [{ name: 'Bank statements' }], dueDate: '2099-01-31' });

  it('without elicitation, previews with a token first and sends only when the token comes back', async () => {
    const emails = sb.emails.length;
    const { preview, sent: result } = await previewThenSend(mcp, 'create_request', args('Send without elicitation'));
    expect(preview.isError).toBeFalsy();
    expect(structured<{ outcome: string; confirmation: { needed: boolean } }>(preview)).toMatchObject({ outcome: 'previewed', confirmation: { needed: true } });
    expect(preview.text).toMatch(/^PREVIEW — nothing was sent/);
    const out = structured<{ sent: boolean; outcome: string; request: { id: string; status: string }; warnings: string[] }>(result);
    expect(out.sent).toBe(true);
    expect(out.outcome).toBe('sent');
    expect(out.request.status).toBe('sent');
    expect(result.text).toContain(`request id ${out.request.id}`);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
    expect(sb.emails.length).toBe(emails + 1);
    const listed = structured<RequestsOut>(await mcp.call('list_requests', { limit: 1 }));
    expect(listed.requests[0]!.id).toBe(out.request.id);
  });

  it('reports a lost answer as "may have been sent" and does not resend', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'resetMidBody' });
    const emails = sb.emails.length;
    const { sent: result } = await previewThenSend(mcp, 'create_request', args('Lost answer'));
    expect(result.isError).toBe(true);
    expect(result.text).toContain('may have been sent: check with list_requests');
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
    expect(sb.emails.length).toBe(emails + 1);
  });

  it("a send asks the service nothing new: one conditional GET before its POST (the batch: one per list it checks), and what the service kept is read from the POST's answer", async () => {
    const seen = () => sb.calls.map((c) => ({ method: c.method, path: c.path, conditional: Boolean(c.ifNoneMatch ?? c.ifModifiedSince), status: c.status }));
    const single = args('Asks nothing new');
    const preview = await mcp.call('create_request', single);
    sb.calls.length = 0;
    const sent = await mcp.call('create_request', {
      ...single,
      confirmationToken: structured<{ confirmation: { token: string } }>(preview).confirmation.token,
    });
    expect(structured<{ outcome: string }>(sent).outcome).toBe('sent');
    expect(seen()).toEqual([
      { method: 'GET', path: '/api/v1/requests', conditional: true, status: 304 },
      { method: 'POST', path: '/api/v1/requests', conditional: false, status: 201 },
    ]);
    const clients = firm.clients.filter((c) => c.status === 'active' && c.email).slice(3, 6);
    const batch = { clients: clients.map((c) => c.id), title: 'Asks nothing new, batch', items: [{ name: 'Bank statements' }], dueDate: '2099-01-31' };
    const batchPreview = await mcp.call('create_request_batch', batch);
    sb.calls.length = 0;
    const batchSent = await mcp.call('create_request_batch', {
      ...batch,
      confirmationToken: structured<{ confirmation: { token: string } }>(batchPreview).confirmation.token,
    });
    expect(batchSent.text).toMatch(/^SENT: 3 sent/);
    expect(seen()).toEqual([
      { method: 'GET', path: '/api/v1/clients', conditional: true, status: 304 },
      { method: 'GET', path: '/api/v1/requests', conditional: true, status: 304 },
      ...clients.map(() => ({ method: 'POST', path: '/api/v1/requests', conditional: false, status: 201 })),
    ]);
  });
});
