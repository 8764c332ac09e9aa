import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { connect, isoToday, sandbox, structured } from './helpers.js';

const sb = await sandbox();
const firm = sb.demoFirm;
const mcp = await connect(sb);
afterAll(() => mcp.close());

beforeEach(() => {
  sb.clearFaults();
  sb.calls.length = 0;
});

const CLOSED = ['completed', 'cancelled', 'archived'];
const isOpen = (r: { status: string; completedItems: number; totalItems: number }) => !CLOSED.includes(r.status) && r.completedItems < r.totalItems;
const upstream = () => sb.calls.length;

interface ClientsOut {
  total: number;
  matched: number;
  returned: number;
  nextOffset: number | null;
  byStatus: Record<string, number>;
  clients: { id: string; displayName: string }[];
}
interface RequestsOut {
  asOf: string;
  total: number;
  matched: number;
  returned: number;
  offset: number;
  nextOffset: number | null;
  byStatus: Record<string, number>;
  overdue: number;
  dueWithin7Days: number;
  checklist: { totalItems: number; completedItems: number };
  requests: { id: string; status: string; dueDate: string | null; overdue: boolean; createdAt: string; clientName: string }[];
}

describe('list_clients', () => {
  it('gives exact counts over all clients and a page of the default size', async () => {
    const result = await mcp.call('list_clients');
    const out = structured<ClientsOut>(result);
    expect(out.total).toBe(firm.clients.length);
    expect(out.matched).toBe(firm.clients.length);
    expect(out.returned).toBe(Math.min(50, firm.clients.length));
    const expected: Record<string, number> = {};
    for (const c of firm.clients) expected[c.status] = (expected[c.status] ?? 0) + 1;
    expect(out.byStatus).toEqual(expected);
    expect(result.text.split('\n')[0]).toContain(`${firm.clients.length} clients`);
    for (const c of out.clients) expect(result.text).toContain(`id ${c.id}`);
  });

  it('searches names case- and accent-insensitively', async () => {
    const accented = firm.clients.find((c) => /[À-ž]/.test(c.displayName))!;
    const plain = accented.displayName.normalize('NFD').replace(/\p{M}/gu, '').toUpperCase();
    const out = structured<ClientsOut>(await mcp.call('list_clients', { search: plain }));
    expect(out.clients.map((c) => c.id)).toContain(accented.id);
  });

  it('filters by status, keeping byStatus over all clients', async () => {
    const out = structured<ClientsOut>(await mcp.call('list_clients', { status: 'INACTIVE' }));
    expect(out.matched).toBe(firm.clients.filter((c) => c.status === 'inactive').length);
    expect(out.matched).toBeGreaterThan(0);
    expect(Object.values(out.byStatus).reduce((a, b) => a + b, 0)).toBe(firm.clients.length);
  });

  it('pages with limit and offset, saying where the next page starts', async () => {
    const first = await mcp.call('list_clients', { limit: 10 });
    expect(structured<ClientsOut>(first).nextOffset).toBe(10);
    expect(first.text).toContain(`…${firm.clients.length - 10} more; use offset=10`);
    const second = structured<ClientsOut>(await mcp.call('list_clients', { limit: 10, offset: 10 }));
    expect(second.clients[0]!.id).toBe(firm.clients[10]!.id);
    const last = structured<ClientsOut>(await mcp.call('list_clients', { offset: firm.clients.length - 1 }));
    expect(last.nextOffset).toBeNull();
  });

  it('hints at a broader search when nothing matched', async () => {
    const result = await mcp.call('list_clients', { search: 'zzzz-no-such' });
    expect(structured<ClientsOut>(result).matched).toBe(0);
    expect(result.text).toMatch(/Try a shorter or different search/);
  });
});

describe('list_requests', () => {
  const today = isoToday();

  it('counts overdue, due soon, statuses and checklist items exactly over all requests', async () => {
    const out = structured<RequestsOut>(await mcp.call('list_requests'));
    expect(out.asOf).toBe(today);
    expect(out.total).toBe(firm.requests.length);
    const due = (d: string | null) => (d ? d.slice(0, 10) : null);
    const overdue = firm.requests.filter((r) => isOpen(r) && due(r.dueDate) !== null && due(r.dueDate)! < today);
    expect(out.overdue).toBe(overdue.length);
    expect(out.overdue).toBeGreaterThan(0);
    const weekEnd = new Date(Date.parse(`${today}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10);
    expect(out.dueWithin7Days).toBe(firm.requests.filter((r) => isOpen(r) && due(r.dueDate) && due(r.dueDate)! >= today && due(r.dueDate)! <= weekEnd).length);
    expect(out.checklist.totalItems).toBe(firm.requests.reduce((n, r) => n + r.totalItems, 0));
    expect(Object.values(out.byStatus).reduce((a, b) => a + b, 0)).toBe(firm.requests.length);
    expect(out.returned).toBe(25);
    expect(out.requests.map((r) => r.id)).toEqual(firm.requests.slice(0, 25).map((r) => r.id));
  });

  it('filters overdue only, and every one shown is overdue and open', async () => {
    const result = await mcp.call('list_requests', { overdue: true, limit: 500 });
    const out = structured<RequestsOut>(result);
    expect(out.matched).toBe(out.overdue);
    for (const r of out.requests) {
      expect(r.overdue).toBe(true);
      expect(r.dueDate!.slice(0, 10) < today).toBe(true);
      expect(CLOSED).not.toContain(r.status);
    }
    expect(result.text).toContain('OVERDUE');
  });

  it('filters by any of several statuses, case-insensitively, also when sent as JSON text', async () => {
    const want = firm.requests.filter((r) => r.status === 'sent' || r.status === 'completed').length;
    const direct = structured<RequestsOut>(await mcp.call('list_requests', { status: ['SENT', 'Completed'] }));
    const encoded = structured<RequestsOut>(await mcp.call('list_requests', { status: '["sent","completed"]' }));
    expect(direct.matched).toBe(want);
    expect(encoded.matched).toBe(want);
    expect(Object.keys(direct.byStatus).sort()).toEqual(['completed', 'sent']);
  });

  it('filters by client name and by title substring', async () => {
    const target = firm.requests[0]!;
    const part = target.title.slice(3, 11).toUpperCase();
    const out = structured<RequestsOut>(await mcp.call('list_requests', { client: target.clientName.toLowerCase(), search: part }));
    expect(out.matched).toBe(firm.requests.filter((r) => r.clientName === target.clientName && r.title.toUpperCase().includes(part)).length);
    expect(out.matched).toBeGreaterThan(0);
    expect(out.requests.every((r) => r.clientName === target.clientName)).toBe(true);
  });

  it('filters a due-date range inclusively and sorts by due date', async () => {
    const days = firm.requests.map((r) => r.dueDate?.slice(0, 10)).filter((d): d is string => !!d).sort();
    const from = days[10]!;
    const to = days[30]!;
    const out = structured<RequestsOut>(await mcp.call('list_requests', { dueAfter: from, dueBefore: to, sort: 'due_soonest', limit: 500 }));
    expect(out.matched).toBe(days.filter((d) => d >= from && d <= to).length);
    const shown = out.requests.map((r) => r.dueDate!.slice(0, 10));
    expect(shown).toEqual([...shown].sort());
    expect(shown[0]).toBe(from);
  });

  it('sorts oldest first and least complete first', async () => {
    const oldest = structured<RequestsOut>(await mcp.call('list_requests', { sort: 'oldest', limit: 3 }));
    expect(oldest.requests[0]!.id).toBe(firm.requests.at(-1)!.id);
    const least = structured<RequestsOut>(await mcp.call('list_requests', { sort: 'least_complete', limit: 500 }));
    const ratios = least.requests.map((r) => (r as unknown as { completedItems: number; totalItems: number })).map((r) => r.completedItems / r.totalItems);
    expect(ratios).toEqual([...ratios].sort((a, b) => a - b));
  });

  it('refuses an impossible date range and bad dates before any HTTP call', async () => {
    const swapped = await mcp.call('list_requests', { dueAfter: '2026-12-01', dueBefore: '2026-01-01' });
    expect(swapped.isError).toBe(true);
    expect(swapped.text).toContain('Swap them');
    const bad = await mcp.call('list_requests', { dueAfter: '2026-02-30' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('dueAfter: is not a real calendar date');
    expect(upstream()).toBe(0);
  });
});

describe('create_request: refusals send nothing', () => {
  const item = [{ name: 'Photo ID' }];

  it.each([
    ['an empty item name', { client: 'x', title: 'T', items: [{ name: '   ' }] }, 'items[0].name: must not be empty'],
    ['no items', { client: 'x', title: 'T', items: [] }, 'items:'],
    ['an unknown item type', { client: 'x', title: 'T', items: [{ name: 'a', type: 'pdf' }] }, 'items[0].type'],
    ['an unknown mode', { client: 'x', title: 'T', items: item, correctnessMode: 'strict' }, 'correctnessMode'],
    ['a misspelt field', { client: 'x', title: 'T', items: item, due_date: '2030-01-01' }, 'unknown field "due_date"'],
    ['a 201-character title', { client: 'x', title: 'a'.repeat(201), items: item }, 'title: must be at most 200 characters'],
    ['a malformed due date', { client: 'x', title: 'T', items: item, dueDate: '01/02/2030' }, 'dueDate: must be a date YYYY-MM-DD'],
  ])('refuses %s before any HTTP call', async (_, args, message) => {
    const result = await mcp.call('create_request', args);
    expect(result.isError).toBe(true);
    expect(result.text).toContain(message);
    expect(result.text).toContain('nothing was called or sent');
    expect(upstream()).toBe(0);
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
    expect(result.text).toMatch(/^DRY RUN: nothing was sent/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
    expect(sb.emails.length).toBe(emails);
  });

  it('carries the service words and what to do on a plan limit, after one POST', async () => {
    const harbor = await connect(sb, { key: SANDBOX_KEYS.harbor });
    const client = sb.firms.get(SANDBOX_KEYS.harbor)!.clients[0]!;
    const result = await harbor.call('create_request', { client: client.id, title: 'Engagement letter', items: item });
    await harbor.close();
    expect(result.isError).toBe(true);
    expect(result.text).toContain('active_request_limit_reached');
    expect(result.text).toMatch(/complete or archive open requests/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
  });
});

describe('create_request: sending', () => {
  const args = (title: string) => ({ client: firm.clients[2]!.id, title, items: [{ name: 'Bank statements' }], dueDate: '2099-01-31' });

  it('sends once when the host cannot ask, says so, and returns the created request', async () => {
    const emails = sb.emails.length;
    const result = await mcp.call('create_request', args('Send without elicitation'));
    const out = structured<{ sent: boolean; request: { id: string; status: string }; warnings: string[] }>(result);
    expect(out.sent).toBe(true);
    expect(out.request.status).toBe('sent');
    expect(out.warnings.join(' ')).toContain('cannot ask the person to confirm');
    expect(result.text).toContain(`request id ${out.request.id}`);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
    expect(sb.emails.length).toBe(emails + 1);
    const listed = structured<RequestsOut>(await mcp.call('list_requests', { limit: 1 }));
    expect(listed.requests[0]!.id).toBe(out.request.id);
  });

  it('asks the person through elicitation and sends when they accept', async () => {
    const asked: string[] = [];
    const host = await connect(sb, { elicit: (m) => (asked.push(m), { action: 'accept', content: { confirm: true } }) });
    const result = await host.call('create_request', args('Confirmed send'));
    await host.close();
    expect(structured<{ sent: boolean }>(result).sent).toBe(true);
    expect(asked[0]).toContain('Confirmed send');
    expect(asked[0]).toContain(firm.clients[2]!.email);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
  });

  it.each([
    ['declines', { action: 'decline' as const }],
    ['cancels', { action: 'cancel' as const }],
    ['accepts without ticking confirm', { action: 'accept' as const, content: { confirm: false } }],
  ])('sends nothing when the person %s', async (_, answer) => {
    const host = await connect(sb, { elicit: () => answer });
    const result = await host.call('create_request', args(`Declined ${answer.action}`));
    await host.close();
    expect(result.isError).toBeFalsy();
    expect(structured<{ sent: boolean }>(result).sent).toBe(false);
    expect(result.text).toMatch(/^NOT SENT/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('refuses to send without elicitation when DOCREQ_CONFIRM_SEND=always', async () => {
    const strict = await connect(sb, { env: { DOCREQ_CONFIRM_SEND: 'always' } });
    const result = await strict.call('create_request', args('Always confirm'));
    await strict.close();
    expect(result.isError).toBe(true);
    expect(result.text).toContain('DOCREQ_CONFIRM_SEND');
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('does not ask when DOCREQ_CONFIRM_SEND=never', async () => {
    let asked = 0;
    const host = await connect(sb, { env: { DOCREQ_CONFIRM_SEND: 'never' }, elicit: () => (asked++, { action: 'decline' }) });
    const result = await host.call('create_request', args('Never ask'));
    await host.close();
    expect(structured<{ sent: boolean }>(result).sent).toBe(true);
    expect(asked).toBe(0);
  });

  it('reports a lost answer as "may have been sent" and does not resend', async () => {
    sb.inject('POST /api/v1/requests', { kind: 'resetMidBody' });
    const emails = sb.emails.length;
    const result = await mcp.call('create_request', args('Lost answer'));
    expect(result.isError).toBe(true);
    expect(result.text).toContain('may have been sent: check with list_requests');
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
    expect(sb.emails.length).toBe(emails + 1);
  });
});

describe('modes and configuration', () => {
  it('does not offer create_request in read-only mode, and refuses a call to it', async () => {
    const ro = await connect(sb, { env: { DOCREQ_READ_ONLY: 'true' } });
    const names = (await ro.client.listTools()).tools.map((t) => t.name);
    const result = await ro.call('create_request', { client: 'x', title: 'T', items: [{ name: 'a' }] });
    await ro.close();
    expect(names).toEqual(['list_clients', 'list_requests', 'list_templates']);
    expect(result.isError).toBe(true);
    expect(result.text).toContain('read-only');
    expect(upstream()).toBe(0);
  });

  it('answers every tool call with the variables to set when not configured', async () => {
    const bare = await connect(undefined, { env: { DOCREQ_API_KEY: undefined, DOCREQ_BASE_URL: 'http://example.com' } });
    for (const tool of ['list_clients', 'list_requests']) {
      const result = await bare.call(tool);
      expect(result.isError).toBe(true);
      expect(result.text).toContain('DOCREQ_API_KEY is not set');
      expect(result.text).toContain('DOCREQ_BASE_URL (or --base-url) must use https://');
      expect(result.text).toContain('--sandbox');
    }
    await bare.close();
  });
});

describe('progress', () => {
  it('reports progress when the caller asks for it', async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    await mcp.client.callTool({ name: 'list_requests', arguments: {} }, undefined, { onprogress: (p) => seen.push(p) });
    expect(seen.map((p) => p.progress)).toEqual([0, 1]);
    expect(seen[1]!.message).toMatch(/^Filtering \d+ requests$/);
  });
});

describe('confirmation failures', () => {
  it('sends nothing and says so when the host fails to ask the person', async () => {
    const host = await connect(sb, {
      elicit: () => {
        throw new Error('the dialog crashed');
      },
    });
    const result = await host.call('create_request', { client: firm.clients[2]!.id, title: 'Elicitation fails', items: [{ name: 'x' }] });
    await host.close();
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Nothing was sent: asking the person to confirm failed/);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });
});
