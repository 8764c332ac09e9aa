import { describe, expect, it } from 'vitest';
import type { SandboxFirm } from '../src/sandbox/seed.js';
import { AROUND_TODAY, sandbox } from './support/sandbox.js';
import { APPS_HOST, serversOn } from './support/connect.js';

/**
 * Which client create_request means when the caller's words name no single one (src/tools/resolve-client.ts
 * findClient): the client list a call reuses and when it looks again, fresh; the answer when a name is shared
 * (by up to twenty, by more, by clients the service lists under one id), the choice a page is given and the form
 * a host is asked; and the answer when nothing matches, with the closest clients and how many tie. The real
 * server against the real sandbox over real HTTP; every expected line is written here from the sandbox's records.
 */

type SandboxClient = SandboxFirm['clients'][number];

const sb = await sandbox(AROUND_TODAY);
const firm = sb.demoFirm;
const server = serversOn(sb);
const clientGets = () => sb.callsTo('GET', '/api/v1/clients').length;
const posts = () => sb.callsTo('POST', '/api/v1/requests').length;
const template = firm.clients.find((c) => c.status === 'active' && c.email)!;
const line = (c: SandboxClient) => `- "${c.displayName}" <${c.email}> · ${c.status} · id ${c.id}`;
const draft = (client: string) => ({ client, title: 'Which client', items: [{ name: 'W-2' }], dryRun: true });

/** `count` new clients of the firm named `name`, each with its own id (or all with `sharedId`). */
function namesakes(name: string, count: number, sharedId?: string): SandboxClient[] {
  const slug = name.toLowerCase().replace(/\W+/g, '-');
  const made = Array.from({ length: count }, (_, i) => ({
    ...template,
    id: sharedId ?? `${slug}-${i + 1}`,
    displayName: name,
    email: `${slug}${i + 1}@namesake.example`,
  }));
  firm.clients.push(...made);
  sb.invalidateLists();
  return made;
}

describe('the client list a call reads', () => {
  it('is reused by the next call within the cache window, for a client found, a name shared and a name unknown alike', async () => {
    const mcp = await server();
    const shared = namesakes('Reuse Namesake', 2);
    await mcp.call('create_request', draft(template.id));
    const before = clientGets();
    expect((await mcp.call('create_request', draft(template.id))).isError).toBeFalsy();
    expect(clientGets()).toBe(before);
    expect((await mcp.call('create_request', draft(shared[0]!.displayName))).isError).toBe(true);
    expect(clientGets()).toBe(before);
    // A name no client has is looked for once more, fresh: the cached list may predate the client.
    expect((await mcp.call('create_request', draft('Nobody By This Name'))).isError).toBe(true);
    expect(clientGets()).toBe(before + 1);
  });

  it('a client added after the list was cached is found by a second, fresh look', async () => {
    const mcp = await server();
    await mcp.call('create_request', draft(template.id));
    const [late] = namesakes('Late Arrival', 1);
    const r = await mcp.call('create_request', draft(late!.id));
    expect(r.isError).toBeFalsy();
    expect(r.text).toContain(`"${late!.displayName}"`);
    expect(posts()).toBe(0);
  });
});

describe('a name several clients share', () => {
  it('lists each (one line each) and asks for the id; a host without pages gets no choice in _meta', async () => {
    const two = namesakes('Pat Twofold', 2);
    const r = await (await server()).call('create_request', draft('Pat Twofold'));
    expect(r.isError).toBe(true);
    expect(r.text).toBe(`"Pat Twofold" matches 2 clients; nothing was sent. Pass the id of the one you mean as client:\n${two.map(line).join('\n')}`);
    expect(r._meta?.['docreq-mcp/choose']).toBeUndefined();
  });

  it('on a host that shows pages, the page is given the choice: the words given and each candidate', async () => {
    const two = namesakes('Pat Paged', 2);
    const r = await (await server({ capabilities: APPS_HOST })).call('create_request', draft('  Pat Paged '));
    expect(r.isError).toBe(true);
    expect(r._meta?.['docreq-mcp/choose']).toEqual({
      given: 'Pat Paged',
      candidates: two.map((c) => ({ id: c.id, displayName: c.displayName, email: c.email })),
    });
  });

  it('twenty are listed in full; of twenty-one, the first twenty and how many more', async () => {
    const twenty = namesakes('Pat Score', 20);
    const all = await (await server()).call('create_request', draft('Pat Score'));
    expect(all.text).toBe(`"Pat Score" matches 20 clients; nothing was sent. Pass the id of the one you mean as client:\n${twenty.map(line).join('\n')}`);
    const more = namesakes('Pat Crowd', 21);
    const r = await (await server()).call('create_request', draft('Pat Crowd'));
    expect(r.text).toBe(
      `"Pat Crowd" matches 21 clients; nothing was sent. Pass the id of the one you mean as client:\n${more.slice(0, 20).map(line).join('\n')}\n…and 1 more`,
    );
  });

  it('clients the service lists under one id: no id can tell them apart, so none is offered, on a page or in a form', async () => {
    const same = namesakes('Pat Sameid', 2, 'shared-id-1');
    const asked: string[] = [];
    const expected = `"Pat Sameid" matches 2 clients that share the same id in the service's answer; nothing was sent. No argument can tell them apart: the firm should fix these records in the dashboard.\n${same.map(line).join('\n')}`;
    const withForm = await server({ elicit: (message) => (asked.push(message), { action: 'cancel' }) });
    expect((await withForm.call('create_request', draft('Pat Sameid'))).text).toBe(expected);
    expect(asked).toEqual([]);
    const paged = await (await server({ capabilities: APPS_HOST })).call('create_request', draft('Pat Sameid'));
    expect(paged.text).toBe(expected);
    expect(paged._meta?.['docreq-mcp/choose']).toBeUndefined();
  });

  it('a host that can ask is asked in a form: a field titled Client, each candidate by name, e-mail and id', async () => {
    const two = namesakes('Pat Formed', 2);
    const forms: unknown[] = [];
    const mcp = await server({ elicit: (_, form) => (forms.push(form?.requestedSchema), { action: 'accept', content: { client: two[1]!.id } }) });
    const r = await mcp.call('create_request', draft('Pat Formed'));
    expect(r.isError).toBeFalsy();
    expect(r.text).toContain(`id ${two[1]!.id}`);
    const field = (forms[0] as { properties: { client: { title: string; oneOf: { const: string; title: string }[] } } }).properties.client;
    expect(field.title).toBe('Client');
    expect(field.oneOf).toEqual([
      ...two.map((c) => ({ const: c.id, title: `${c.displayName} <${c.email}> (id ${c.id})` })),
      { const: ':none', title: 'None of these (nothing is sent)' },
    ]);
  });
});

describe('a name no client has', () => {
  it('names the closest, one line each, and asks for the id', async () => {
    const [near] = namesakes('Quentin Rarename', 1);
    const r = await (await server()).call('create_request', draft('Quentin Rarenam'));
    expect(r.text).toBe(
      `No client has the id, e-mail or exact name "Quentin Rarenam"; nothing was sent. Closest:\n${line(near!)}\nPass the id of the right one as client.`,
    );
  });

  it('counts the clients that tie when more tie than are shown', async () => {
    const four = namesakes('Tied Foursome', 4);
    const r = await (await server()).call('create_request', draft('Tied Foursom'));
    expect(r.text).toBe(
      'No client has the id, e-mail or exact name "Tied Foursom"; nothing was sent. ' +
        `Closest (4 clients look equally close; 3 shown — use list_clients with a search to narrow them):\n${four.slice(0, 3).map(line).join('\n')}\nPass the id of the right one as client.`,
    );
    const three = namesakes('Tied Threesome', 3);
    const r3 = await (await server()).call('create_request', draft('Tied Threesom'));
    expect(r3.text).toBe(
      `No client has the id, e-mail or exact name "Tied Threesom"; nothing was sent. Closest:\n${three.map(line).join('\n')}\nPass the id of the right one as client.`,
    );
  });

  it('with none close, says how to find the client, and nothing of pages the list does not signal', async () => {
    const r = await (await server()).call('create_request', draft('zzqqxxjj'));
    expect(r.text).toBe(
      'No client has the id, e-mail or exact name "zzqqxxjj"; nothing was sent. Use list_clients with a search to find the client, then pass its id.',
    );
  });
});
