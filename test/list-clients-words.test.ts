// list_clients word for word: the rows, notes, hints, filters line and structured fields a model reads, over a small known firm.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { suiteFolder } from './support/folders.js';
import { TODAY } from './support/sandbox.js';
import { connect, sandboxAndClient, structured } from './support/connect.js';

const { sb, firm, mcp } = await sandboxAndClient();

type FirmClient = (typeof firm.clients)[number];
type FirmRequest = (typeof firm.requests)[number];
const template = firm.requests[0]!;

const client = (id: string, displayName: string, status: string | null, extra: Record<string, unknown> = {}): FirmClient =>
  ({ id, displayName, email: `${id.slice(2)}@example.com`, status, ...extra }) as FirmClient;
const request = (id: string, clientName: string, status: string, dueDate: string | null, clientId = ''): FirmRequest => ({
  ...template,
  id,
  title: `Request ${id}`,
  status,
  dueDate,
  clientId,
  clientName,
  totalItems: 3,
  completedItems: 0,
  items: template.items.slice(0, 3),
});

/** Six clients: a tag list holding a number, one without status, a name two clients share, a text tag. */
const CLIENTS = (): FirmClient[] => [
  client('c-ann', 'Ann Archer', 'active', { tags: [7, 'vip'] }),
  client('c-ben', 'Ben Brook', null),
  client('c-sam1', 'Sam Taylor', 'active'),
  client('c-sam2', 'Sam Taylor', 'inactive'),
  client('c-cy', 'Cy Dunn', 'inactive', { tags: 'Payroll', phone: '555-0101' }),
  client('c-di', 'Di Eve', 'active'),
];
/** Ann: 2 open (1 overdue); Sam Taylor: 2 open (1 overdue); Cy: none open; Di: 1 open, not overdue. */
const REQUESTS = (): FirmRequest[] => [
  request('r1', 'Ann Archer', 'sent', '2026-03-01'),
  request('r2', 'Ann Archer', 'in_progress', '2026-04-30'),
  request('r3', 'Sam Taylor', 'sent', '2026-03-10'),
  request('r4', 'sam  taylor', 'sent', null),
  request('r5', 'Cy Dunn', 'completed', '2026-03-01'),
  request('r6', 'Di Eve', 'sent', '2026-05-01'),
];

/** Puts these records in the demo firm, as the service lists them from now on. */
function install(clients: FirmClient[] = CLIENTS(), requests: FirmRequest[] = REQUESTS()): void {
  Object.assign(firm, { clients, requests });
  sb.invalidateLists();
}
install();

const REVALIDATED = '\n(Revalidated: the service confirmed the list is unchanged since the last call.)';
/** The text a model reads (a 304's revalidated line, which depends on the calls before, left out). */
const textOf = (result: CallToolResult & { text: string }) => result.text.replace(REVALIDATED, '');
async function ask(args: Record<string, unknown>, via = mcp): Promise<{ text: string; out: ClientsOut }> {
  const result = await via.call('list_clients', args);
  return { text: textOf(result), out: structured<ClientsOut>(result) };
}

interface ClientsOut {
  byStatus: Record<string, number>;
  clients: Record<string, unknown>[];
  notes: string[];
}

const STATUSES = 'By status: active 3, inactive 2, (none) 1.';
const SAM_NOTE =
  '"Sam Taylor" is the name of 2 clients (id c-sam1 <sam1@example.com>; id c-sam2 <sam2@example.com>). ' +
  "Requests carry only the client's name, so the 2 open requests under this name may belong to any of them; they are not merged into one client.";
const ROW = {
  ann: '- "Ann Archer" <ann@example.com> · active · id c-ann',
  ben: '- "Ben Brook" <ben@example.com> · no status · id c-ben',
  sam1: '- "Sam Taylor" <sam1@example.com> · active · id c-sam1',
  sam2: '- "Sam Taylor" <sam2@example.com> · inactive · id c-sam2',
  cy: '- "Cy Dunn" <cy@example.com> · inactive · id c-cy',
  di: '- "Di Eve" <di@example.com> · active · id c-di',
};

describe('list_clients rows and header, word for word', () => {
  it('lists every client with its status or "no status", and counts "(none)" by status', async () => {
    const { text, out } = await ask({});
    expect(text).toBe([`6 clients. ${STATUSES} Showing 1–6 of 6 clients.`, ROW.ann, ROW.ben, ROW.sam1, ROW.sam2, ROW.cy, ROW.di].join('\n'));
    expect(out.byStatus).toEqual({ active: 3, '(none)': 1, inactive: 2 });
    expect(out.clients[1]).toEqual({ id: 'c-ben', displayName: 'Ben Brook', email: 'ben@example.com', status: null });
    expect(out.notes).toEqual([]);
  });

  it('shows one matched client\'s other fields, and "none" when it has none', async () => {
    const cy = await ask({ search: 'payroll' });
    expect(cy.text).toBe(
      [
        `6 clients, 1 match search "payroll" (name, e-mail or tag). ${STATUSES} Showing 1–1 of 1 client.`,
        ROW.cy,
        '  other fields: tags "Payroll"; phone "555-0101"',
      ].join('\n'),
    );
    expect(cy.out.clients).toEqual([
      { id: 'c-cy', displayName: 'Cy Dunn', email: 'cy@example.com', status: 'inactive', fields: { tags: 'Payroll', phone: '555-0101' } },
    ]);
    const ben = await ask({ search: '  Ben  ', details: true });
    expect(ben.text).toBe(
      [`6 clients, 1 match search "Ben" (name, e-mail or tag). ${STATUSES} Showing 1–1 of 1 client.`, ROW.ben, '  other fields: none'].join('\n'),
    );
    expect(ben.out.clients[0]).toMatchObject({ id: 'c-ben', fields: {} });
  });

  it('searches the text items of a tags list, and finds nothing in a client without tags', async () => {
    const vip = await ask({ search: 'VIP' });
    expect(vip.text.split('\n').slice(1)).toEqual([ROW.ann, '  other fields: tags [7, "vip"]']);
    const er = await ask({ search: 'er' });
    expect(er.text).toBe(
      [`6 clients, 1 match search "er" (name, e-mail or tag). ${STATUSES} Showing 1–1 of 1 client.`, ROW.ann, '  other fields: tags [7, "vip"]'].join('\n'),
    );
  });

  it('filters an empty status to the clients without one, saying so in the filters line', async () => {
    const { text } = await ask({ status: '' });
    expect(text).toBe([`6 clients, 1 match status "". ${STATUSES} Showing 1–1 of 1 client.`, ROW.ben, '  other fields: none'].join('\n'));
  });

  it('names every filter in order: search, status, then the requests join', async () => {
    const { text } = await ask({ search: 'sam', status: 'ACTIVE', requests: 'open' });
    expect(text.split('\n')[0]).toBe(
      '6 clients, 1 match search "sam" (name, e-mail or tag), status "ACTIVE", with an open request (requests joined by client name). ' +
        `${STATUSES} Showing 1–1 of 1 client.`,
    );
  });
});

describe('list_clients requests join, word for word', () => {
  it('gives open and overdue counts beside each row, marks a shared name and explains it in a note', async () => {
    const { text, out } = await ask({ requests: 'open' });
    expect(text).toBe(
      [
        `6 clients, 4 match with an open request (requests joined by client name). ${STATUSES} Showing 1–4 of 4 clients.`,
        `Note: ${SAM_NOTE}`,
        '- "Ann Archer" <ann@example.com> · active · 2 open, 1 overdue · id c-ann',
        '- "Sam Taylor" <sam1@example.com> · active · 2 open, 1 overdue (name shared, see notes) · id c-sam1',
        '- "Sam Taylor" <sam2@example.com> · inactive · 2 open, 1 overdue (name shared, see notes) · id c-sam2',
        '- "Di Eve" <di@example.com> · active · 1 open, 0 overdue · id c-di',
      ].join('\n'),
    );
    expect(out.notes).toEqual([SAM_NOTE]);
    expect(out.clients.map((c) => [c.id, c.openRequests, c.overdueRequests])).toEqual([
      ['c-ann', 2, 1],
      ['c-sam1', 2, 1],
      ['c-sam2', 2, 1],
      ['c-di', 1, 0],
    ]);
  });

  it.each([
    ['open', 'with an open request'],
    ['none_open', 'with no open request'],
    ['overdue', 'with an overdue request'],
  ])('names the join requests: %s in the filters line as "%s"', async (requests, words) => {
    const { text } = await ask({ requests });
    expect(text.split('\n')[0]).toMatch(new RegExp(`^6 clients, \\d+ match(es)? ${words} \\(requests joined by client name\\)\\. `));
  });

  it('marks the shared name on a later page by the row shown, not the first match', async () => {
    const { text } = await ask({ requests: 'overdue', offset: 1, limit: 1 });
    expect(text.split('\n').slice(1)).toEqual([
      `Note: ${SAM_NOTE}`,
      '- "Sam Taylor" <sam1@example.com> · active · 2 open, 1 overdue (name shared, see notes) · id c-sam1',
      '…1 more; use offset=2',
    ]);
  });

  it('notes only shared names among the matches, and lists clients with none open at 0 and 0', async () => {
    const ann = await ask({ search: 'ann', requests: 'open' });
    expect(ann.out.notes).toEqual([]);
    expect(ann.text.split('\n').slice(1)).toEqual([
      '- "Ann Archer" <ann@example.com> · active · 2 open, 1 overdue · id c-ann',
      '  other fields: tags [7, "vip"]',
    ]);
    expect(ann.out.clients[0]).toMatchObject({ openRequests: 2, overdueRequests: 1, fields: { tags: [7, 'vip'] } });
    const none = await ask({ requests: 'none_open' });
    expect(none.text.split('\n').slice(1)).toEqual([
      '- "Ben Brook" <ben@example.com> · no status · 0 open, 0 overdue · id c-ben',
      '- "Cy Dunn" <cy@example.com> · inactive · 0 open, 0 overdue · id c-cy',
    ]);
  });

  it("notes the joined list's statuses the profile does not name, and its signal of more pages", async () => {
    try {
      install(CLIENTS(), [...REQUESTS(), request('r7', 'Cy Dunn', 'withdrawn', null)]);
      const { text, out } = await ask({ search: 'cy', requests: 'open' });
      const unknown =
        '1 request has a status the service profile names neither open nor closed: "withdrawn" (1). It was counted as open (and overdue when past due) unless every checklist item is complete. ' +
        'If such a status ends a request, list it under statuses.closed in the service profile (DOCREQ_SERVICE_PROFILE); under statuses.open if it does not.';
      expect(out.notes).toEqual([unknown]);
      expect(text.split('\n').slice(1)).toEqual([
        `Note: ${unknown}`,
        '- "Cy Dunn" <cy@example.com> · inactive · 1 open, 0 overdue · id c-cy',
        '  other fields: tags "Payroll"; phone "555-0101"',
      ]);
    } finally {
      install();
    }
    const body = JSON.stringify({ data: REQUESTS(), next: 'https://service.example/api/v1/requests?page=2' });
    sb.inject('GET /api/v1/requests', { kind: 'raw', body, contentType: 'application/json' }, { times: 1 });
    const paged = await ask({ search: 'di', requests: 'open' });
    const more =
      'AT LEAST: the answer\'s "next" is set, so the service may hold more requests than it listed. The API document says its lists are whole; this one signals more pages, so every count here is a lower bound and a request on a later page is not seen.';
    expect(paged.out.notes).toEqual([more]);
    expect(paged.text.split('\n').slice(1)).toEqual([
      `Note: ${more}`,
      '- "Di Eve" <di@example.com> · active · 1 open, 0 overdue · id c-di',
      '  other fields: none',
    ]);
  });

  it('counts by the configured service profile: a status it closes is not open, and no note asks about it', async () => {
    const profile = join(suiteFolder(), 'list-clients-words-profile.json');
    writeFileSync(profile, JSON.stringify({ statuses: { closed: ['completed', 'withdrawn'] } }));
    const fitted = await connect(sb, { today: TODAY, env: { DOCREQ_SERVICE_PROFILE: profile } });
    try {
      install(CLIENTS(), [...REQUESTS(), request('r7', 'Cy Dunn', 'withdrawn', '2026-03-01')]);
      const { text, out } = await ask({ requests: 'none_open' }, fitted);
      expect(out.notes).toEqual([]);
      expect(text.split('\n').slice(1)).toEqual([
        '- "Ben Brook" <ben@example.com> · no status · 0 open, 0 overdue · id c-ben',
        '- "Cy Dunn" <cy@example.com> · inactive · 0 open, 0 overdue · id c-cy',
      ]);
    } finally {
      install();
      await fitted.close();
    }
  });
});

describe('list_clients empty pages, word for word', () => {
  it('names the statuses that occur when no client has the status asked for', async () => {
    const { text } = await ask({ status: 'archived' });
    expect(text).toBe(
      [
        `6 clients, 0 match status "archived". ${STATUSES} Showing none of 0 clients.`,
        'No client has status "archived". Statuses that occur: active 3, inactive 2, (none) 1.',
      ].join('\n'),
    );
  });

  it('suggests a broader search when the status occurs but nothing else matched', async () => {
    const { text } = await ask({ search: 'zz', status: 'Active' });
    expect(text).toBe(
      [
        `6 clients, 0 match search "zz" (name, e-mail or tag), status "Active". ${STATUSES} Showing none of 0 clients.`,
        'No client matched. Try a shorter or different search, or drop the status filter.',
      ].join('\n'),
    );
  });

  it('says the firm has no clients, and with a status filter that nothing matched', async () => {
    try {
      install([], []);
      expect((await ask({})).text).toBe('0 clients. By status: none. Showing none of 0 clients.\nThe firm has no clients.');
      expect((await ask({ status: 'active' })).text).toBe(
        '0 clients, 0 match status "active". By status: none. Showing none of 0 clients.\nNo client matched. Try a shorter or different search, or drop the status filter.',
      );
    } finally {
      install();
    }
  });
});

describe('list_clients progress', () => {
  it('reports what it fetches and how many clients it filters', async () => {
    const seen: string[] = [];
    const onprogress = (p: { message?: string }) => void seen.push(p.message ?? '');
    await mcp.callWith('list_clients', {}, { onprogress });
    await mcp.callWith('list_clients', { requests: 'overdue' }, { onprogress });
    expect(seen).toEqual(['Fetching clients', 'Filtering 6 clients', 'Fetching clients and requests', 'Filtering 6 clients']);
  });
});
