// The words list_requests gives a model, exactly: each row, each note, the filters line, the empty-page hints and paging.
import { describe, expect, it } from 'vitest';
import { sandboxAndClient, structured } from './support/connect.js';

// Clients are read afresh on every call (no reuse), so each test's injected lists are the ones answered from.
const { sb, mcp } = await sandboxAndClient({ api: { clientsCacheMs: 0 } });

type Fields = Record<string, unknown>;
interface Out {
  nextOffset: number | null;
  notes: string[];
  averageDaysOverdue: number | null;
  requests: { id: string; overdue: boolean; daysOverdue: number | null }[];
}

const req = (id: string, clientName: string | null, more: Fields = {}): Fields => ({
  id,
  title: `T ${id}`,
  status: 'sent',
  clientName,
  dueDate: null,
  createdAt: '2026-01-05T09:00:00Z',
  totalItems: 2,
  completedItems: 0,
  ...more,
});
const client = (id: string, displayName: string, email: string | null = null): Fields => ({ id, displayName, email, status: 'active' });
/** `n` requests under one client name, ids from its first word. */
const under = (name: string, n: number, more: Fields = {}) =>
  Array.from({ length: n }, (_, i) => req(`${name.split(' ')[0]!.toLowerCase()}-${i + 1}`, name, more));

/** The service's two lists, as this test's calls will read them. */
function lists(requests: Fields[], clients: Fields[] = []): void {
  sb.clearFaults();
  sb.inject('GET /api/v1/requests', { kind: 'raw', status: 200, body: JSON.stringify({ data: requests }) });
  sb.inject('GET /api/v1/clients', { kind: 'raw', status: 200, body: JSON.stringify({ data: clients }) });
}

const FOUR = [
  req('r-a', 'Ada Lovelace', { title: 'Year end 2025', dueDate: '2026-03-10', createdAt: '2026-02-04T09:00:00Z', totalItems: 3, completedItems: 1 }),
  req('r-b', 'Ada Lovelace', { status: 'viewed', dueDate: '2026-03-15T10:00:00Z', createdAt: '2026-02-03T09:00:00Z', totalItems: 1, completedItems: null }),
  req('r-c', 'Sam Taylor', { status: null, createdAt: '2026-02-02T09:00:00Z', totalItems: null, completedItems: null }),
  req('r-d', 'Sam Taylor', { status: 'completed', dueDate: '2026-04-01', createdAt: '2026-02-01T09:00:00Z', totalItems: 2, completedItems: 2 }),
];
const FOUR_CLIENTS = [client('c1', 'Ada Lovelace', 'ada@x.test'), client('c2', 'Sam Taylor', 'sam@x.test'), client('c3', 'Sam Taylor')];

const ROW_A = '- "Year end 2025" · "Ada Lovelace" · sent · 1/3 items · due 2026-03-10 OVERDUE 6 days · created 2026-02-04 · id r-a';
const ROW_B = '- "T r-b" · "Ada Lovelace" · viewed · ?/1 item · due 2026-03-15 OVERDUE 1 day · created 2026-02-03 · id r-b';
const ROW_C = '- "T r-c" · "Sam Taylor" · no status · items ? · no due date · created 2026-02-02 · id r-c';
const ROW_D = '- "T r-d" · "Sam Taylor" · completed · 2/2 items · due 2026-04-01 · created 2026-02-01 · id r-d';
const FACTS =
  'Of them: 3 open, 1 closed, 2 overdue (on average 3.5 days late; oldest due 2026-03-10, 6 days late), 0 open requests due within 7 days; ' +
  '1 with no due date (1 open); checklist items 3/6 complete, 3 outstanding on open requests. By status: sent 1, viewed 1, (none) 1, completed 1.';
const NO_STATUS_NOTE =
  'Note: 1 request has a status the service profile names neither open nor closed: no status (1). It was counted as open (and overdue when past due) unless every checklist item is complete. ' +
  'If such a status ends a request, list it under statuses.closed in the service profile (DOCREQ_SERVICE_PROFILE); under statuses.open if it does not.';
const samNote = (what: string) =>
  `"Sam Taylor" is the name of 2 clients (id c2 <sam@x.test>; id c3). Requests carry only the client's name, so ${what} under this name may belong to any of them; they are not merged into one client.`;

describe('the rows and paging of a plain list', () => {
  it('writes each row: title, client, status or "no status", items or "items ?", due or OVERDUE, created, id', async () => {
    lists(FOUR, FOUR_CLIENTS);
    const result = await mcp.call('list_requests');
    expect(result.text).toBe(
      [
        `As of 2026-03-16: 4 requests. ${FACTS} Showing 1–4 of 4 requests, newest first.`,
        NO_STATUS_NOTE,
        `Note: ${samNote('the 2 requests shown on this page')}`,
        ROW_A,
        ROW_B,
        ROW_C,
        ROW_D,
      ].join('\n'),
    );
    const out = structured<Out>(result);
    expect(out.requests.map((r) => [r.id, r.overdue, r.daysOverdue])).toEqual([
      ['r-a', true, 6],
      ['r-b', true, 1],
      ['r-c', false, null],
      ['r-d', false, null],
    ]);
  });

  it('notes a name several clients share only for the rows on the page, counting those rows', async () => {
    lists(FOUR, FOUR_CLIENTS);
    const first = structured<Out>(await mcp.call('list_requests', { limit: 1 }));
    expect(first.notes).toEqual([NO_STATUS_NOTE.slice('Note: '.length)]);
    const third = await mcp.call('list_requests', { limit: 1, offset: 2 });
    expect(structured<Out>(third).notes.at(-1)).toBe(samNote('the 1 request shown on this page'));
    expect(third.text.split('\n').slice(-2)).toEqual([ROW_C, '…1 more; use offset=3']);
  });

  it('gives nextOffset only while more rows remain, and the offset that shows them', async () => {
    lists(FOUR, FOUR_CLIENTS);
    const page = async (args: Fields) => {
      const result = await mcp.call('list_requests', args);
      return [structured<Out>(result).nextOffset, result.text.split('\n').at(-1)];
    };
    expect(await page({ limit: 2 })).toEqual([2, '…2 more; use offset=2']);
    expect(await page({ limit: 2, offset: 2 })).toEqual([null, ROW_D]);
    expect(await page({ limit: 4 })).toEqual([null, ROW_D]);
    expect(await page({ limit: 1, offset: 1 })).toEqual([2, '…2 more; use offset=2']);
  });

  it('counts a due day no calendar has (2026-00-15, 2026-02-30) as unread: not overdue, named in a note', async () => {
    lists([
      req('r-x', 'Ada Lovelace', { dueDate: '2026-00-15' }),
      req('r-y', 'Ada Lovelace', { dueDate: '2026-02-30T17:00:00Z' }),
      req('r-z', 'Ada Lovelace', { dueDate: '0999-01-05' }),
    ]);
    const result = await mcp.call('list_requests');
    expect(result.text.split('\n')[0]).toContain(' 0 overdue, 0 open requests due within 7 days; 0 with no due date (0 open);');
    expect(structured<Out>(result).averageDaysOverdue).toBeNull();
    expect(structured<{ notes: string[] }>(result).notes).toContain(
      '3 requests (of 3) have due dates that this server cannot read as a calendar day (e.g. "2026-00-15", "2026-02-30T17:00:00Z", "0999-01-05"): not counted as overdue, due soon, or without a due date.',
    );
    expect(result.text).not.toContain('OVERDUE');
  });
});

describe('groups by client name', () => {
  it('words each group: open, overdue with the oldest due day, items, next due or none', async () => {
    lists(FOUR, FOUR_CLIENTS);
    const result = await mcp.call('list_requests', { groupBy: 'client' });
    expect(result.text).toBe(
      [
        `As of 2026-03-16: 4 requests. ${FACTS} Showing 1–2 of 2 client names, by newest request first.`,
        NO_STATUS_NOTE,
        `Note: ${samNote('the 2 matched requests')}`,
        '- "Ada Lovelace" · 2 requests: 2 open, 2 overdue (oldest due 2026-03-10) · 1/4 items complete, 3 outstanding on open ones · next due 2026-03-10',
        '- "Sam Taylor" · 2 requests: 1 open, 0 overdue · 2/2 items complete, 0 outstanding on open ones · nothing open with a due date',
      ].join('\n'),
    );
    expect(structured<Out>(await mcp.call('list_requests', { groupBy: 'client', limit: 1 })).nextOffset).toBe(1);
    expect(structured<Out>(await mcp.call('list_requests', { groupBy: 'client', limit: 1, offset: 1 })).nextOffset).toBeNull();
  });
});

describe('the order each page says it is in', () => {
  // What the model reads after "Showing …": the order asked, in words, for a page of requests and for a page of groups.
  const FLAT = { newest: 'newest first', oldest: 'oldest first', due_soonest: 'soonest due first', least_complete: 'least complete first' };
  const GROUPED = {
    newest: 'by newest request first',
    oldest: 'by oldest request first',
    due_soonest: 'by next due day first',
    least_complete: 'least complete first',
    most_open: 'most open requests first',
    most_overdue: 'most overdue requests first',
    most_outstanding: 'most items outstanding on open requests first',
  };
  it.each(Object.entries(FLAT))('sort %s: "Showing 1–4 of 4 requests, %s."', async (sort, words) => {
    lists(FOUR, FOUR_CLIENTS);
    expect((await mcp.call('list_requests', { sort })).text).toContain(` Showing 1–4 of 4 requests, ${words}.\n`);
  });
  it.each(Object.entries(GROUPED))('groupBy client, sort %s: "Showing 1–2 of 2 client names, %s."', async (sort, words) => {
    lists(FOUR, FOUR_CLIENTS);
    expect((await mcp.call('list_requests', { groupBy: 'client', sort })).text).toContain(` Showing 1–2 of 2 client names, ${words}.\n`);
  });
  it.each(['most_open', 'most_overdue', 'most_outstanding'])('sort %s without groupBy is refused: it orders client names, not requests', async (sort) => {
    lists(FOUR, FOUR_CLIENTS);
    const result = await mcp.call('list_requests', { sort });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(`sort ${sort} orders client groups: add groupBy: "client", or sort requests by newest, oldest, due_soonest or least_complete.`);
  });
});

describe('the filters line', () => {
  const head = async (args: Fields) => (await mcp.call('list_requests', args)).text.split('\n')[0];

  it('names every filter asked, in a fixed order, and counts "these"', async () => {
    lists(FOUR, FOUR_CLIENTS);
    const args = { client: 'ada', state: 'open', search: 'year', overdue: true, hasDueDate: true, dueAfter: '2026-03-01', dueBefore: '2026-03-31' };
    expect(await head({ ...args, createdAfter: '2026-02-04', createdBefore: '2026-02-05', status: ['sent', 'Viewed'] })).toBe(
      'As of 2026-03-16: 4 requests, 1 match open, status sent|viewed, client name contains "ada", title contains "year", overdue, with a due date, ' +
        'due ≥ 2026-03-01, due ≤ 2026-03-31, created ≥ 2026-02-04, created ≤ 2026-02-05. ' +
        'Of these: 1 open, 0 closed, 1 overdue (on average 6 days late; oldest due 2026-03-10, 6 days late), 0 open requests due within 7 days; ' +
        '0 with no due date (0 open); checklist items 1/3 complete, 2 outstanding on open requests. By status: sent 1. Showing 1–1 of 1 request, newest first.',
    );
  });

  it('says "not overdue", "no due date", and takes a due range of one day', async () => {
    lists(FOUR, FOUR_CLIENTS);
    expect(await head({ state: 'closed', overdue: false, dueAfter: '2026-04-01', dueBefore: '2026-04-01' })).toBe(
      'As of 2026-03-16: 4 requests, 1 match closed, not overdue, due ≥ 2026-04-01, due ≤ 2026-04-01. ' +
        'Of these: 0 open, 1 closed, 0 overdue, 0 open requests due within 7 days; 0 with no due date (0 open); ' +
        'checklist items 2/2 complete, 0 outstanding on open requests. By status: completed 1. Showing 1–1 of 1 request, newest first.',
    );
    expect(await head({ hasDueDate: false })).toMatch(/^As of 2026-03-16: 4 requests, 1 match no due date\. Of these: 1 open, 0 closed, /);
  });
});

describe('what an empty page says', () => {
  const said = async (args: Fields) => (await mcp.call('list_requests', args)).text.split('\n').slice(1);

  it('names the statuses that occur when no request has any status asked', async () => {
    lists(FOUR, FOUR_CLIENTS);
    expect(await said({ status: ['Nope', 'lost'] })).toEqual([
      'No request has status "nope" or "lost". Statuses that occur: sent 1, viewed 1, (none) 1, completed 1.',
    ]);
  });

  it('suggests fewer filters when a status asked occurs but other filters leave nothing', async () => {
    lists(FOUR, FOUR_CLIENTS);
    const fewer = ['No request matched. Try fewer filters, a shorter client or title search, or a wider date range.'];
    expect(await said({ status: ['SENT'], search: 'zzz' })).toEqual(fewer);
    expect(await said({ status: ['Nope', 'SENT'], search: 'zzz' })).toEqual(fewer);
  });

  it('says the firm has no requests, and suggests fewer filters for a status asked of an empty list', async () => {
    lists([]);
    const plain = await mcp.call('list_requests');
    expect(plain.text.split('\n')).toEqual([
      'As of 2026-03-16: 0 requests. Of them: 0 open, 0 closed, 0 overdue, 0 open requests due within 7 days; 0 with no due date (0 open); ' +
        'checklist items 0/0 complete, 0 outstanding on open requests. By status: none. Showing none of 0 requests, newest first.',
      'The firm has no requests.',
    ]);
    expect(await said({ status: ['sent'] })).toEqual(['No request matched. Try fewer filters, a shorter client or title search, or a wider date range.']);
  });
});

describe('notes on client names', () => {
  // Seven names contain "haddad": counts 4, 3, 2, 2, 1, 1, 1 (one closed); 0 to 4 clients per name.
  const HADDADS = [
    ...under('Bea Haddad', 1),
    ...under('Ada Haddad', 1),
    ...under('Haddad & Co', 1, { status: 'completed' }),
    ...under('Omar Haddad', 2),
    ...under('Nadia Haddad', 2),
    ...under('Tomasz Haddad', 3),
    ...under('Zaid Haddad', 4),
  ];
  const HADDAD_CLIENTS = [
    client('h1', 'Tomasz Haddad'),
    client('h2', 'Tomasz Haddad'),
    ...['o1', 'o2', 'o3', 'o4'].map((id) => client(id, 'Omar Haddad')),
    ...['n1', 'n2', 'n3'].map((id) => client(id, 'Nadia Haddad')),
    client('b1', 'Bea Haddad'),
    client('co', 'Haddad & Co'),
    client('z1', 'Zaid Haddad'),
  ];
  const shown =
    '"Zaid Haddad" (id z1; 4 requests), "Tomasz Haddad" (2 clients, ids h1, h2; 3 requests), "Nadia Haddad" (3 clients, ids n1, n2, n3; 2 requests), ' +
    '"Omar Haddad" (4 clients, ids o1, o2, o3, …; 2 requests), "Ada Haddad" (no client has this name now; 1 request), "Bea Haddad" (id b1; 1 request)';
  const sharedNotes = [
    '"Tomasz Haddad" is the name of 2 clients (id h1; id h2). Requests carry only the client\'s name, so the 3 matched requests under this name may belong to any of them; they are not merged into one client.',
    '"Omar Haddad" is the name of 4 clients (id o1; id o2; id o3; id o4). Requests carry only the client\'s name, so the 2 matched requests under this name may belong to any of them; they are not merged into one client.',
    '"Nadia Haddad" is the name of 3 clients (id n1; id n2; id n3). Requests carry only the client\'s name, so the 2 matched requests under this name may belong to any of them; they are not merged into one client.',
  ];

  it('names each client name part of a name is met in: ids, requests, most first, and how many more', async () => {
    lists(HADDADS, HADDAD_CLIENTS);
    expect(structured<Out>(await mcp.call('list_requests', { client: 'haddad', limit: 1 })).notes).toEqual([
      `"haddad" is part of 7 different client names, so these counts cover all of them: ${shown}, and 1 other name. They are different clients; pass a whole name for one of them.`,
      ...sharedNotes,
    ]);
  });

  it('adds no "and other names" when six names are met', async () => {
    lists(HADDADS, HADDAD_CLIENTS);
    expect(structured<Out>(await mcp.call('list_requests', { client: 'HADDAD', state: 'open', limit: 1 })).notes[0]).toBe(
      `"HADDAD" is part of 6 different client names, so these counts cover all of them: ${shown}. They are different clients; pass a whole name for one of them.`,
    );
  });

  it('says which other names contain a whole name: one, five, or the five with most requests and "…"', async () => {
    const kims = (counts: number[]) => [...under('Kim', 1), ...counts.flatMap((n) => under(`Kim ${'ABCDEF'[n - 1]}`, n))];
    const note = async (counts: number[]) => {
      lists(kims(counts));
      return structured<Out>(await mcp.call('list_requests', { client: 'kim', limit: 1 })).notes;
    };
    const top = '"Kim E" (5 requests), "Kim D" (4 requests), "Kim C" (3 requests), "Kim B" (2 requests)';
    expect(await note([1])).toEqual(['Matched the whole name only; another name contains it: "Kim A" (1 request). Pass that whole name to see those.']);
    expect(await note([1, 2, 3, 4, 5])).toEqual([
      `Matched the whole name only; 5 other names contain it: ${top}, "Kim A" (1 request). Pass that whole name to see those.`,
    ]);
    expect(await note([1, 2, 3, 4, 5, 6])).toEqual([
      `Matched the whole name only; 6 other names contain it: "Kim F" (6 requests), ${top}, …. Pass that whole name to see those.`,
    ]);
  });
});

describe('around the answer', () => {
  it('reports progress: fetching requests (and clients when a name is asked), then filtering', async () => {
    lists(FOUR, FOUR_CLIENTS);
    const messages: (string | undefined)[] = [];
    await mcp.callWith('list_requests', { limit: 1 }, { onprogress: (p) => messages.push(p.message) });
    await mcp.callWith('list_requests', { limit: 1, client: 'ada' }, { onprogress: (p) => messages.push(p.message) });
    expect(messages).toEqual(['Fetching requests', 'Filtering 4 requests', 'Fetching requests and clients', 'Filtering 4 requests']);
  });

  it('answers a plain list when the client list cannot be read, leaving out the shared-name note', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'raw', status: 200, body: JSON.stringify({ data: FOUR }) });
    sb.inject('GET /api/v1/clients', { kind: 'status', status: 500 });
    const result = await mcp.call('list_requests');
    expect(structured<Out>(result).notes).toEqual([NO_STATUS_NOTE.slice('Note: '.length)]);
    expect(result.text.split('\n').slice(-4)).toEqual([ROW_A, ROW_B, ROW_C, ROW_D]);
  });
});

describe('a cancelled call', () => {
  it('stops its GET, so the list is not kept for the next call to revalidate', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'latency', ms: 400 }, { times: 1 });
    const controller = new AbortController();
    const cancelled = mcp.callWith('list_requests', {}, { signal: controller.signal }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    expect(await cancelled).toBeInstanceOf(Error);
    // Long after the slow answer would have come: a GET left running would have kept the list by now.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const next = await mcp.call('list_requests', { limit: 1 });
    expect(next.isError).toBeFalsy();
    expect(next.text).not.toContain('(Revalidated');
  });
});
