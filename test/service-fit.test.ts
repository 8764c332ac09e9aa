import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { readyServiceProfile } from '../src/service-profile.js';
import { prng } from '../src/sandbox/seed.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/service.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { AROUND_TODAY, TODAY } from './support/sandbox.js';
import { connect, previewThenSend, type Connected, type ConnectOptions } from './support/connect.js';

const BIN = new URL('../dist/cli.js', import.meta.url).pathname;

/**
 * Services that differ from ours only where the API document is silent (the sandbox's dialects), and the service
 * profile that fits the server to them: every send checked against its preview, statuses and dates the profile
 * does not account for named with their counts, refusals in the common shapes named by the tool argument, limits
 * told apart, and a client who is not active treated alike by both send tools. Each test asserts the words a person
 * and a model get.
 */

const folder = join(suiteFolder(), 'service-fit');
mkdirSync(folder, { recursive: true });
let files = 0;
/** A profile file (JSON or YAML text) in the suite's own folder. */
function profileFile(content: unknown): string {
  const file = join(folder, `profile-${++files}.${typeof content === 'string' ? 'yaml' : 'json'}`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}
await readyServiceProfile('yaml');

/** The profile that fits the sandbox's `other` service (docs/service-profile.md shows the same). */
const OTHER_PROFILE = {
  body: {
    client: 'client_id',
    dueDate: 'due_date',
    items: 'checklist',
    correctnessMode: 'correctness_mode',
    item: { name: 'label', required: 'mandatory', type: 'kind' },
  },
  values: { itemType: { file: 'document', boolean: 'yes_no' }, correctnessMode: { hard: 'strict' } },
  statuses: { open: ['sent', 'in_progress'], closed: ['fulfilled', 'withdrawn', 'expired', 'archived'] },
  dates: { ambiguous: 'day-first' },
  created: { record: 'request' },
};

const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(opened.map((o) => o.close()));
});

async function service(options: SandboxOptions): Promise<Sandbox> {
  const sb = await startSandbox({ ...AROUND_TODAY, ...options });
  opened.push(sb);
  return sb;
}

async function server(sb: Sandbox, env: Record<string, string | undefined> = {}, options: ConnectOptions = {}): Promise<Connected> {
  const mcp = await connect(sb, { today: TODAY, env, ...options });
  opened.push(mcp);
  return mcp;
}

const posted = (sb: Sandbox) => sb.calls.filter((c) => c.method === 'POST');
const activeClient = (sb: Sandbox, n = 0) => {
  const active = sb.demoFirm.clients.filter((c) => c.status === 'active' && !/Sam Taylor/.test(c.displayName));
  return active[(n + 5) % active.length]!;
};
const DUE = '2026-04-30';
const ITEMS = [{ name: 'W-2 forms' }, { name: 'Any new dependants?', type: 'boolean', required: false }];

describe('a service that drops the fields it does not know', () => {
  it('sends, but says plainly that the due date and the checklist were not kept, with the cause and the setting', async () => {
    const sb = await service({ dialect: 'ignoring' });
    const mcp = await server(sb);
    const c = activeClient(sb);
    const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: 'Fit one', dueDate: DUE, items: ITEMS });
    const out = sent.structuredContent as { sent: boolean; outcome: string; asPreviewed: boolean | null; differences: string[] };
    expect(out).toMatchObject({ sent: true, outcome: 'sent', asPreviewed: false });
    expect(out.differences).toEqual([
      'it has no due date (previewed 2026-04-30): the service probably does not know the field "dueDate" and dropped it: set body.dueDate in the service profile (DOCREQ_SERVICE_PROFILE) to the name it uses, or it wants a date-time (set values.dueDate to date-time)',
      'it has no checklist items (previewed 2): the service probably does not know the field "items" and dropped it: set body.items in the service profile (DOCREQ_SERVICE_PROFILE) to the name it uses',
    ]);
    const lines = sent.text.split('\n');
    expect(lines[0]).toMatch(/^SENT, BUT NOT AS PREVIEWED: "Fit one" to /);
    expect(lines[1]).toBe("NOT AS PREVIEWED — the service's record differs from the preview:");
    expect(lines.slice(2, 4)).toEqual(out.differences.map((d) => `- ${d}`));
    // What the client was e-mailed: no due date, an empty checklist (the service's own log).
    expect(sb.emails.at(-1)).toMatchObject({ title: 'Fit one', dueDate: null, items: 0 });
  });

  it('with a profile naming its fields, sends exactly the previewed body, kept as previewed', async () => {
    const sb = await service({ dialect: 'ignoring' });
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile({ body: { dueDate: 'due_date', items: 'checklist' } }) });
    const c = activeClient(sb, 1);
    const { preview, sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: 'Fit two', dueDate: DUE, items: ITEMS });
    const body = JSON.parse(posted(sb).at(-1)!.body!) as Record<string, unknown>;
    expect(body).toEqual({
      clientId: c.id,
      title: 'Fit two',
      due_date: DUE,
      checklist: [
        { name: 'W-2 forms', required: true, type: 'file' },
        { name: 'Any new dependants?', required: false, type: 'boolean' },
      ],
    });
    expect(preview.text).toContain(`Exact body: ${posted(sb).at(-1)!.body}`);
    expect((preview.structuredContent as { payload: unknown }).payload).toEqual(body);
    expect(sent.structuredContent).toMatchObject({ sent: true, outcome: 'sent', asPreviewed: true, differences: [] });
    expect(sent.text).not.toContain('NOT AS PREVIEWED');
    expect(sb.emails.at(-1)).toMatchObject({ title: 'Fit two', dueDate: DUE, items: 2 });
  });
});

describe('the sandbox playing another service (its names, spellings, statuses, dates, answers)', () => {
  it('with its profile: the body in its names and spellings, the record found under "request", checked as previewed', async () => {
    const sb = await service({ dialect: 'other' });
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile(OTHER_PROFILE) });
    const c = activeClient(sb, 2);
    const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: 'Fit three', dueDate: DUE, items: ITEMS, correctnessMode: 'hard' });
    expect(JSON.parse(posted(sb).at(-1)!.body!)).toEqual({
      client_id: c.id,
      title: 'Fit three',
      due_date: DUE,
      checklist: [
        { label: 'W-2 forms', mandatory: true, kind: 'document' },
        { label: 'Any new dependants?', mandatory: false, kind: 'yes_no' },
      ],
      correctness_mode: 'strict',
    });
    const out = sent.structuredContent as { request: { id: string } | null; asPreviewed: boolean };
    expect(out.asPreviewed).toBe(true);
    expect(out.request?.id).toBeTruthy();
    expect(sent.text).toMatch(new RegExp(`^SENT: "Fit three" to .*: request id ${out.request!.id}, status `));
    expect(sb.emails.at(-1)).toMatchObject({ title: 'Fit three', dueDate: DUE, items: 2, correctnessMode: 'hard' });
  });

  it('without it: the service refuses the body, naming its field, and nothing is sent', async () => {
    const sb = await service({ dialect: 'other' });
    const mcp = await server(sb);
    const c = activeClient(sb, 3);
    const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: 'Fit four', items: ITEMS });
    expect(sent.isError).toBe(true);
    expect(sent.text).toContain('client_id');
    expect(sb.emails.filter((e) => e.title === 'Fit four')).toHaveLength(0);
  });
});

describe('statuses the profile does not name', () => {
  it('are named in list_requests with their counts and how they were counted; the profile settles them', async () => {
    const sb = await service({ dialect: 'other' });
    const statuses = new Map<string, number>();
    for (const r of sb.demoFirm.requests) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const plain = await server(sb);
    const r = await plain.call('list_requests', {});
    const notes = (r.structuredContent as { notes: string[] }).notes;
    const unknown = ['fulfilled', 'withdrawn', 'expired'].filter((s) => statuses.has(s));
    expect(unknown.length).toBeGreaterThanOrEqual(2);
    const note = notes.find((n) => n.includes('names neither open nor closed'))!;
    expect(note).toBeDefined();
    for (const s of unknown) expect(note).toContain(`"${s}" (${statuses.get(s)})`);
    expect(note).toContain('counted as open (and overdue when past due) unless every checklist item is complete');
    expect(note).toContain('list it under statuses.closed in the service profile (DOCREQ_SERVICE_PROFILE)');
    expect(r.text).toContain(`Note: ${note}`);

    const fitted = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile(OTHER_PROFILE) });
    const f = await fitted.call('list_requests', {});
    const s = f.structuredContent as { notes: string[]; open: number; overdue: number };
    expect(s.notes.join(' ')).not.toContain('names neither open nor closed');
    // Counted by the profile: withdrawn, expired and fulfilled requests are closed, so none of them is overdue.
    const closed = new Set(['fulfilled', 'withdrawn', 'expired', 'archived']);
    const open = sb.demoFirm.requests.filter((q) => !closed.has(q.status) && q.completedItems < q.totalItems);
    expect(s.open).toBe(open.length);
    expect(s.overdue).toBe(open.filter((q) => q.dueDate !== null && q.dueDate.slice(0, 10) < TODAY).length);
  });
});

describe('a third vocabulary: statuses in capitals and words, one the defaults do not know', () => {
  it('"Open", "In Progress" and "Done" are counted by the defaults (case and spacing aside); "Void" is named', async () => {
    const sb = await service({ dialect: { statuses: { rename: { sent: 'Open', in_progress: 'In Progress', completed: 'Done', cancelled: 'Void' } } } });
    const plain = await (await server(await service({}))).call('list_requests', {});
    const r = await (await server(sb)).call('list_requests', {});
    const want = plain.structuredContent as { open: number; overdue: number };
    const got = r.structuredContent as { open: number; overdue: number; notes: string[]; byStatus: Record<string, number> };
    const voids = got.byStatus.Void!;
    expect(voids).toBeGreaterThan(0);
    const note = got.notes.find((n) => n.includes('names neither open nor closed'))!;
    expect(note).toMatch(
      new RegExp(`^${voids} requests? ha(s a status|ve statuses) the service profile names neither open nor closed: "Void" \\(${voids}\\)\\.`),
    );
    // Void counted as open unless every item is complete: the open count is the plain service's plus those.
    const voidOpen = sb.demoFirm.requests.filter((q) => q.status === 'Void' && q.completedItems < q.totalItems).length;
    expect(got.open).toBe(want.open + voidOpen);
    const fitted = await (
      await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile({ statuses: { closed: ['done', 'void', 'archived'] } }) })
    ).call('list_requests', {});
    expect((fitted.structuredContent as { open: number }).open).toBe(want.open);
    expect((fitted.structuredContent as { notes: string[] }).notes.join(' ')).not.toContain('names neither open nor closed');
  });
});

describe('dates in the forms services write', () => {
  /** What list_requests counts over the demo firm, which depends on reading every due date. */
  const counts = async (mcp: Connected) => {
    const r = await mcp.call('list_requests', {});
    const s = r.structuredContent as { overdue: number; dueWithin7Days: number; noDueDate: number; notes: string[] };
    return { overdue: s.overdue, dueWithin7Days: s.dueWithin7Days, noDueDate: s.noDueDate, notes: s.notes };
  };
  const baseline = async () => counts(await server(await service({})));

  for (const form of ['iso-offset', 'slash-ymd', 'epoch-s', 'epoch-ms'] as const) {
    it(`reads ${form} due dates as the same days: the same counts as ISO dates, no note`, async () => {
      const want = await baseline();
      const got = await counts(await server(await service({ dialect: { dateForm: form } })));
      expect(got).toEqual(want);
    });
  }

  it.each([
    ['dot-dmy', 'day-first', /"\d\d\.\d\d\.\d{4}"/],
    ['slash-mdy', 'month-first', /"\d\d\/\d\d\/\d{4}"/],
  ] as const)('names %s dates it cannot tell apart (never as "no due date"); dates.ambiguous: %s reads them', async (dateForm, order, sample) => {
    const want = await baseline();
    const sb = await service({ dialect: { dateForm } });
    const got = await counts(await server(sb));
    expect(got.noDueDate).toBe(want.noDueDate);
    const note = got.notes.find((n) => n.includes('that this server cannot read as a calendar day'))!;
    expect(note).toMatch(/^\d+ requests? \(of \d+\) ha(s a due date|ve due dates) that this server cannot read as a calendar day \(e\.g\. /);
    expect(note).toMatch(sample);
    expect(note).toContain('not counted as overdue, due soon, or without a due date.');
    expect(note).toContain(
      'could be read day-first or month-first: set dates.ambiguous in the service profile (DOCREQ_SERVICE_PROFILE) to day-first or month-first.',
    );
    const fitted = await counts(await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile({ dates: { ambiguous: order } }) }));
    expect(fitted).toEqual(want);
  });

  it('a date no reading can make a day is named with its count', async () => {
    const sb = await service({});
    const r = sb.demoFirm.requests.find((q) => q.dueDate !== null)!;
    const before = r.dueDate;
    r.dueDate = 'next Friday';
    sb.invalidateLists();
    try {
      const got = await counts(await server(sb));
      expect(got.notes).toContain(
        '1 request (of ' +
          sb.demoFirm.requests.length +
          ') has a due date that this server cannot read as a calendar day (e.g. "next Friday"): not counted as overdue, due soon, or without a due date.',
      );
    } finally {
      r.dueDate = before;
      sb.invalidateLists();
    }
  });
});

describe('what a create is answered with: 200, 201, 202, 204, wrapped or bare', () => {
  it.each([
    [{ status: 200, wrap: 'result', fields: 'full' }, 'sent'],
    [{ status: 201, wrap: 'request', fields: 'list' }, 'sent'],
    [{ status: 201, wrap: 'bare', fields: 'id-only' }, 'sent'],
    [{ status: 204 }, 'sent'],
    [{ status: 202 }, 'accepted'],
  ] as const)('%o: %s, and checked against the preview', async (createAnswer, outcome) => {
    const sb = await service({ dialect: { createAnswer: createAnswer } });
    const mcp = await server(sb);
    const c = activeClient(sb, 4);
    const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: `Fit answer ${createAnswer.status}`, dueDate: DUE, items: ITEMS });
    const out = sent.structuredContent as { sent: boolean; outcome: string; asPreviewed: boolean | null; request: { id: string | null } | null };
    expect(out.outcome).toBe(outcome);
    expect(out.sent).toBe(outcome === 'sent');
    expect(sent.text).not.toMatch(/request id ,|status \./);
    if (outcome === 'accepted') {
      expect(sent.text).toMatch(
        /^ACCEPTED, NOT YET KNOWN TO BE E-MAILED: the service queued "Fit answer 202" for .* \(202 Accepted\) and has not said the client was e-mailed; check with list_requests later\. This server will not send it again for 24 hours/,
      );
    } else {
      expect(sent.text).toMatch(/^SENT: "Fit answer \d+" to /);
      expect(out.asPreviewed).toBe(true);
    }
    if (createAnswer.status !== 204) expect(out.request?.id).toBeTruthy();
    // A record found in the answer (bare, or under result or request) is checked from it: the list is not read again.
    const afterPost = sb.calls.slice(sb.calls.findLastIndex((c) => c.method === 'POST') + 1);
    const readBack = afterPost.filter((c) => c.method === 'GET' && c.path.startsWith('/api/v1/requests')).length;
    expect(readBack).toBe('fields' in createAnswer && createAnswer.fields !== 'id-only' ? 0 : 1);
  });

  it('a record that cannot be found in the list is said so, never shown as matching', async () => {
    const sb = await service({ dialect: { createAnswer: { status: 204 } }, listLagMs: 60_000 });
    const mcp = await server(sb);
    const c = activeClient(sb, 5);
    const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: 'Fit lagging', items: ITEMS });
    expect(sent.structuredContent).toMatchObject({ sent: true, outcome: 'sent', asPreviewed: null, request: null });
    expect(sent.text).toContain(
      "\nNot checked against the preview: the service's list does not show it yet, so what it kept could not be compared with the preview: check with list_requests later.",
    );
  });
});

describe('refusals in the common shapes, the field named by the tool argument', () => {
  it.each(['rfc7807', 'jsonapi', 'fastapi', 'rails', 'ours'] as const)(
    '%s: the refused due date is named dueDate, with the service name and the setting',
    async (errorShape) => {
      const sb = await service({ dialect: { body: { dueDate: 'due_at' }, dueDateIn: 'date-time', unknownFields: 'refuse', errorShape } });
      const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile({ body: { dueDate: 'due_at' } }) });
      const c = activeClient(sb, 6);
      const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: `Fit refused ${errorShape}`, dueDate: DUE, items: ITEMS });
      expect(sent.isError).toBe(true);
      expect(sent.text).toContain('The service refused the input (422).');
      expect(sent.text).toContain('dueDate (sent as "due_at", named by body.dueDate in the service profile): ');
      expect(posted(sb)).toHaveLength(1);
      expect(sb.emails.filter((e) => e.title === `Fit refused ${errorShape}`)).toHaveLength(0);
    },
  );
});

describe("limits: the service slowing us down is not the firm's plan", () => {
  const refused = async (status: number, body: unknown) => {
    const sb = await service({});
    const mcp = await server(sb);
    const c = activeClient(sb, 7);
    const args = { client: c.id, title: `Fit limit ${status}`, items: ITEMS };
    const preview = await mcp.call('create_request', args);
    sb.inject('POST /api/v1/requests', { kind: 'status', status, body, headers: status === 429 ? { 'retry-after': '7' } : {} }, { times: 1 });
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    return mcp.call('create_request', { ...args, confirmationToken: token });
  };

  it('429 "rate limit exceeded": wait as Retry-After asks; no word of archiving or upgrading', async () => {
    const r = await refused(429, { error: { code: 'rate_limited', message: 'rate limit exceeded' } });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('The service is rate limiting calls (429).');
    expect(r.text).toContain('Try again in 7 s');
    expect(r.text).not.toMatch(/archive|upgrade|plan limit|billing/i);
  });

  it("429 naming the plan: the firm's plan limit, with what the firm can do", async () => {
    const r = await refused(429, { error: { code: 'plan_quota', message: 'Monthly plan quota exhausted: upgrade your subscription' } });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("The firm's plan limit stops this (429).");
    expect(r.text).toMatch(/upgrade/i);
  });
});

describe('a client who is not active: one rule for both send tools', () => {
  const blockedIn = (sb: Sandbox) => sb.demoFirm.clients.find((c) => c.status === 'blocked')!;

  it('unattended (DOCREQ_CONFIRM_SEND=never): create_request sends nothing and says why', async () => {
    const sb = await service({ dialect: 'other' });
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile(OTHER_PROFILE), DOCREQ_CONFIRM_SEND: 'never' });
    const blocked = blockedIn(sb);
    const r = await mcp.call('create_request', { client: blocked.id, title: 'Fit blocked', items: ITEMS });
    expect(r.isError).toBe(true);
    expect(r.text).toBe(
      'Not sent: the client\'s status is "blocked", not active, and with DOCREQ_CONFIRM_SEND=never nobody confirms sending to such a client. Nothing was sent.',
    );
    expect(posted(sb)).toHaveLength(0);
  });

  it('unattended: create_request_batch skips the same client with the same words, and sends to the others', async () => {
    const sb = await service({ dialect: 'other' });
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile(OTHER_PROFILE), DOCREQ_CONFIRM_SEND: 'never' });
    const blocked = blockedIn(sb);
    const c = activeClient(sb, 8);
    const r = await mcp.call('create_request_batch', { clients: [blocked.id, c.id], title: 'Fit blocked batch', items: ITEMS });
    const out = r.structuredContent as { recipients: { outcome: string; reason: string | null }[] };
    expect(out.recipients.map((x) => x.outcome)).toEqual(['skipped', 'sent']);
    expect(out.recipients[0]!.reason).toBe(
      'not sent: the client\'s status is "blocked", not active, and with DOCREQ_CONFIRM_SEND=never nobody confirms sending to such a client',
    );
    expect(posted(sb)).toHaveLength(1);
  });

  it('with a person to confirm: both preview it with a warning naming the status, and send it with the go-ahead', async () => {
    const sb = await service({ dialect: 'other' });
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile(OTHER_PROFILE) });
    const blocked = blockedIn(sb);
    const single = await previewThenSend(mcp, 'create_request', { client: blocked.id, title: 'Fit blocked, confirmed', items: ITEMS });
    expect(single.preview.text).toContain('\nWarnings: The client\'s status is "blocked", not active.');
    expect(single.sent.structuredContent).toMatchObject({ sent: true, outcome: 'sent' });
    const c = activeClient(sb, 9);
    const batch = await previewThenSend(mcp, 'create_request_batch', { clients: [blocked.id, c.id], title: 'Fit blocked batch, confirmed', items: ITEMS });
    expect(batch.preview.text).toContain(`: The client's status is "blocked", not active.`);
    expect((batch.sent.structuredContent as { sent: number }).sent).toBe(2);
  });
});

describe('lists that signal more pages: every count "at least", the signal named', () => {
  it.each([
    ['next', /^AT LEAST: the answer's "next" is set, /],
    ['has_more', /^AT LEAST: the answer's "has_more" is true, /],
    ['link', /^AT LEAST: the answer has a Link header with rel="next", /],
    ['total', /^AT LEAST: the answer's "total" is \d+ but it holds 10 records, /],
  ] as const)('%s', async (signal, words) => {
    const sb = await service({ dialect: { paging: { pageSize: 10, signal } } });
    const mcp = await server(sb);
    const requests = await mcp.call('list_requests', {});
    const notes = (requests.structuredContent as { notes: string[]; total: number }).notes;
    expect(notes[0]).toMatch(words);
    expect(notes[0]).toContain(
      'so the service may hold more requests than it listed. The API document says its lists are whole; this one signals more pages, so every count here is a lower bound and a request on a later page is not seen.',
    );
    expect(requests.text.split('\n')[1]).toBe(`Note: ${notes[0]}`);
    const clients = await mcp.call('list_clients', {});
    expect((clients.structuredContent as { notes: string[] }).notes[0]).toMatch(/^AT LEAST: .*a client on a later page is not seen\.$/);
    // A client the service did not list (on its second page) is not simply "not found".
    const later = sb.demoFirm.clients.filter((c) => c.status === 'active').at(-1)!;
    const r = await mcp.call('create_request', { client: later.email, title: 'Fit paging', items: ITEMS });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/\nThe service's client list signals more pages \(.+\): the client may be on a page it did not list\.$/);
  });
});

describe('counts that cannot be', () => {
  it('completed above total is flagged, not summed silently', async () => {
    const sb = await service({});
    const r = sb.demoFirm.requests[3]!;
    const before = r.completedItems;
    r.completedItems = r.totalItems + 2;
    sb.invalidateLists();
    try {
      const out = await (await server(sb)).call('list_requests', {});
      expect((out.structuredContent as { notes: string[] }).notes).toContain(
        `1 request (of ${sb.demoFirm.requests.length}) has checklist counts that cannot be (completed above total, or below zero): summed as the service gave them, so the checklist totals are not exact.`,
      );
    } finally {
      r.completedItems = before;
      sb.invalidateLists();
    }
  });
});

describe('the profile file', () => {
  it.each([
    [{ body: { dueDate: '' } }, 'has problems: body.dueDate: must not be empty'],
    [{ body: { dueDate: 'due_date', items: 'due_date' } }, 'has problems: body.items: names the same field as body.dueDate ("due_date")'],
    [{ statuses: { open: ['expired'], closed: ['Expired'] } }, 'has problems: statuses.closed: "Expired" is listed as open too'],
    [{ bodies: {} }, 'has problems: (the whole file): has a field it does not know: bodies'],
    ['body: [unclosed\n', 'is not valid YAML'],
  ])('that cannot be used disables sending, named; reads keep working (%o)', async (content, words) => {
    const sb = await service({});
    const file = profileFile(content);
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: file });
    const r = await mcp.call('create_request', { client: activeClient(sb).id, title: 'Fit bad profile', items: ITEMS });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`Nothing was sent: sending is disabled until this is fixed: DOCREQ_SERVICE_PROFILE (${file}) ${words}`);
    expect((await mcp.call('list_requests', {})).isError).toBeFalsy();
    expect(posted(sb)).toHaveLength(0);
  });

  it('a path that cannot be read disables sending too', async () => {
    const sb = await service({});
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: join(folder, 'no-such-profile.yaml') });
    const r = await mcp.call('create_request', { client: activeClient(sb).id, title: 'Fit no profile', items: ITEMS });
    expect(r.text).toContain('cannot be read (ENOENT); sending is disabled until it is fixed.');
  });
});

describe('the preview shows the exact body POSTed, under any profile', () => {
  it('40 random profiles, each against a service reading those names and spellings: Exact body = the body POSTed, kept as previewed', async () => {
    // The sandbox seed's own deterministic generator: the suite never depends on chance.
    const rand = prng(20261127);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const names = [
      'client_id',
      'customerId',
      'client',
      'title',
      'subject',
      'name_of_request',
      'due_date',
      'dueOn',
      'deadline',
      'items',
      'checklist',
      'documents',
      'mode',
      'correctness',
      'check_mode',
    ];
    const distinct = (n: number, pool: readonly string[]) => {
      const out: string[] = [];
      while (out.length < n) {
        const x = pick(pool);
        if (!out.includes(x)) out.push(x);
      }
      return out;
    };
    const sb = await service({});
    for (let n = 0; n < 40; n++) {
      const [client, title, dueDate, items, correctnessMode] = distinct(5, names);
      const [name, required, type] = distinct(3, ['name', 'label', 'title', 'required', 'mandatory', 'type', 'kind', 'format']);
      const itemType = rand() < 0.5 ? { file: pick(['document', 'upload', 'file']), number: pick(['numeric', 'number']) } : {};
      const mode = rand() < 0.5 ? { hard: pick(['strict', 'hard']), soft: pick(['lenient', 'soft']) } : {};
      const dueIn = pick(['date', 'date-time'] as const);
      const body = {
        client: client!,
        title: title!,
        dueDate: dueDate!,
        items: items!,
        correctnessMode: correctnessMode!,
        item: { name: name!, required: required!, type: type! },
      };
      const profile = { body, values: { itemType, correctnessMode: mode, dueDate: dueIn } };
      const dialected = await service({ dialect: { body, itemTypes: itemType, correctnessModes: mode, dueDateIn: dueIn, unknownFields: 'refuse' } });
      const mcp = await server(dialected, { DOCREQ_SERVICE_PROFILE: profileFile(profile) });
      const c = activeClient(dialected, n % 10);
      const args = {
        client: c.id,
        title: `Fit property ${n}`,
        ...(rand() < 0.7 ? { dueDate: DUE } : {}),
        items: [{ name: 'A', type: pick(['file', 'number', 'text'] as const), required: rand() < 0.5 }, { name: `B ${n}` }],
        ...(rand() < 0.6 ? { correctnessMode: pick(['off', 'advisory', 'soft', 'hard'] as const) } : {}),
      };
      const { preview, sent } = await previewThenSend(mcp, 'create_request', args);
      const exact = /\nExact body: (.*)\n/.exec(preview.text)![1]!;
      const post = posted(dialected).at(-1)!.body!;
      expect(post).toBe(exact);
      expect(JSON.parse(post)).toEqual((preview.structuredContent as { payload: unknown }).payload);
      expect(sent.structuredContent).toMatchObject({ sent: true, asPreviewed: true });
      void sb;
    }
  });
});

describe('check shows the fit (the built CLI, the sandbox playing another service)', () => {
  const page = readFileSync(new URL('../docs/service-profile.md', import.meta.url), 'utf8');
  const run = (env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [BIN, 'check', '--sandbox', '--sandbox-service', 'other'], {
      env: { ...childEnv(), DOCREQ_STATE_DIR: join(folder, 'check-state'), ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
  /** Counts and dates move with the day the sandbox is seeded on: the words are compared. */
  const words = (text: string) =>
    text
      .replace(/\d{4}-\d\d-\d\d|\d\d\.\d\d\.\d{4}/g, 'D')
      .replace(/\d+/g, 'N')
      .trim();

  it('without a profile: the statuses, dates and fields it does not account for, marked, and the body a send would POST; never a POST', () => {
    const r = run();
    expect(r.status).toBe(0);
    const fit = /✓ service profile:[\s\S]*?✓ a send would POST[^\n]*\n/.exec(r.stdout)![0];
    const documented = /<!-- check-other[^\n]*\n```\n([\s\S]*?)```/.exec(page)![1]!;
    expect(words(fit)).toBe(words(documented));
    expect(fit).toMatch(/^! statuses the profile names neither open nor closed: .*fulfilled \d+/m);
    expect(fit).toMatch(/^! \d+ dates not read \(e\.g\. "\d\d\.\d\d\.\d{4}"/m);
    expect(fit).toMatch(/^✓ client statuses seen \(\d+ clients\): .*blocked \d+/m);
    expect(fit).toContain('"clientId":');
  });

  it("with the page's sample profile: the body in the service's names, nothing marked", () => {
    const sample = /<!-- profile-sample[^\n]*\n```yaml\n([\s\S]*?)```/.exec(page)![1]!;
    // The page's sample is this file's profile for the same service.
    expect(parseYaml(sample)).toEqual(OTHER_PROFILE);
    const file = profileFile(sample);
    const r = run({ DOCREQ_SERVICE_PROFILE: file });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`✓ service profile: ${file}`);
    expect(r.stdout).not.toMatch(/^!/m);
    expect(r.stdout).toMatch(
      /✓ a send would POST .*: \{"client_id":"[^"]+","title":"Example: documents for your \d{4} return","due_date":"\d{4}-\d\d-\d\d","checklist":\[\{"label":"W-2 forms","mandatory":true,"kind":"document"\}/,
    );
  });
});

describe('a batch: checked against its preview with one read of the list, whatever the number of recipients', () => {
  it('a service answering 204: three sends, one list read after them, each recipient checked', async () => {
    const sb = await service({ dialect: { createAnswer: { status: 204 } } });
    const mcp = await server(sb);
    const clients = [activeClient(sb, 10), activeClient(sb, 11), activeClient(sb, 12)];
    const preview = await mcp.call('create_request_batch', { clients: clients.map((c) => c.id), title: 'Fit batch 204', dueDate: DUE, items: ITEMS });
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    sb.calls.length = 0;
    const sent = await mcp.call('create_request_batch', {
      clients: clients.map((c) => c.id),
      title: 'Fit batch 204',
      dueDate: DUE,
      items: ITEMS,
      confirmationToken: token,
    });
    const after = sb.calls.slice(sb.calls.findLastIndex((c) => c.method === 'POST') + 1);
    expect(posted(sb)).toHaveLength(3);
    expect(after.filter((c) => c.method === 'GET' && c.path.startsWith('/api/v1/requests'))).toHaveLength(1);
    const out = sent.structuredContent as { sent: number; recipients: { asPreviewed: boolean | null; request: { id: string | null } | null }[] };
    expect(out.sent).toBe(3);
    expect(out.recipients.map((r) => r.asPreviewed)).toEqual([true, true, true]);
    for (const r of out.recipients) expect(r.request?.id).toBeTruthy();
  });

  it('a service that drops fields: each recipient NOT AS PREVIEWED, in the line and the head', async () => {
    const sb = await service({ dialect: 'ignoring' });
    const mcp = await server(sb);
    const clients = [activeClient(sb, 13), activeClient(sb, 14)];
    const { sent } = await previewThenSend(mcp, 'create_request_batch', {
      clients: clients.map((c) => c.id),
      title: 'Fit batch ignoring',
      dueDate: DUE,
      items: ITEMS,
    });
    expect(sent.text.split('\n')[0]).toBe('SENT, BUT 2 NOT AS PREVIEWED: 2 sent, 0 may have been sent, 0 not sent, 0 skipped (of 2).');
    expect(sent.text).toContain(': sent, request id ');
    expect(sent.text).toContain(' — NOT AS PREVIEWED: it has no due date (previewed 2026-04-30): the service probably does not know the field "dueDate"');
    const out = sent.structuredContent as { recipients: { asPreviewed: boolean | null; differences: string[] }[] };
    expect(out.recipients.map((r) => r.asPreviewed)).toEqual([false, false]);
    expect(out.recipients[0]!.differences).toHaveLength(2);
  });

  it('a service answering 202: each recipient accepted, not sent', async () => {
    const sb = await service({ dialect: { createAnswer: { status: 202 } } });
    const mcp = await server(sb);
    const clients = [activeClient(sb, 15), activeClient(sb, 16)];
    const { sent } = await previewThenSend(mcp, 'create_request_batch', { clients: clients.map((c) => c.id), title: 'Fit batch 202', items: ITEMS });
    expect(sent.text.split('\n')[0]).toBe(
      'ACCEPTED: 0 sent, 0 may have been sent, 0 not sent, 0 skipped, 2 accepted (queued by the service, not yet known to be e-mailed) (of 2).',
    );
    expect((sent.structuredContent as { sent: number; recipients: { outcome: string }[] }).recipients.map((r) => r.outcome)).toEqual(['accepted', 'accepted']);
  });
});

describe('the duplicate guard counts open requests by the profile', () => {
  it('a withdrawn request of the same title blocks a send until the profile says withdrawn is closed', async () => {
    const sb = await service({ dialect: 'other' });
    const done = sb.demoFirm.requests.find(
      (r) =>
        r.status === 'withdrawn' &&
        r.completedItems < r.totalItems &&
        sb.demoFirm.clients.filter((c) => c.displayName === r.clientName && c.status === 'active').length === 1 &&
        !sb.demoFirm.requests.some((o) => o !== r && o.clientName === r.clientName && o.title === r.title),
    )!;
    const c = sb.demoFirm.clients.find((x) => x.displayName === done.clientName)!;
    const body = { body: OTHER_PROFILE.body, values: OTHER_PROFILE.values, created: OTHER_PROFILE.created };
    const unknown = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile(body) });
    const refused = await unknown.call('create_request', { client: c.id, title: done.title, items: ITEMS, dryRun: true });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(`the client already has an open request "${done.title}" (id ${done.id}, status withdrawn,`);
    const fitted = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile(OTHER_PROFILE) });
    const ok = await fitted.call('create_request', { client: c.id, title: done.title, items: ITEMS, dryRun: true });
    expect(ok.text).toMatch(/^DRY RUN/);
  });
});

describe('the words of a send, each part of them', () => {
  const label = (c: { displayName: string; email: string; id: string }) => `"${c.displayName}" <${c.email}> (id ${c.id})`;

  it('a batch to a client on a page the service did not list: skipped, saying the list signals more pages; nothing checked yet', async () => {
    const sb = await service({ dialect: { paging: { pageSize: 10, signal: 'has_more' } } });
    const mcp = await server(sb);
    const later = sb.demoFirm.clients.filter((c) => c.status === 'active').at(-1)!;
    const r = await mcp.call('create_request_batch', { clients: [later.email, activeClient(sb, 0).id], title: 'Fit batch paging', items: ITEMS, dryRun: true });
    const out = r.structuredContent as { recipients: { outcome: string; reason: string | null; asPreviewed: boolean | null; differences: string[] }[] };
    expect(out.recipients[0]!.reason).toMatch(
      /^no client has this id, e-mail or exact name(; closest: .*)?; the service's client list signals more pages \(the answer's "has_more" is true\), so it may be on a page it did not list$/,
    );
    // Nothing was sent, so nothing was checked against a preview.
    expect(out.recipients.map((x) => [x.asPreviewed, x.differences])).toEqual([
      [null, []],
      [null, []],
    ]);
  });

  it('a batch whose new requests the list does not show yet: sent, each "not checked", never "not as previewed"', async () => {
    const sb = await service({ dialect: { createAnswer: { status: 204 } }, listLagMs: 60_000 });
    const mcp = await server(sb);
    const clients = [activeClient(sb, 17), activeClient(sb, 18)];
    const { sent } = await previewThenSend(mcp, 'create_request_batch', { clients: clients.map((c) => c.id), title: 'Fit batch lagging', items: ITEMS });
    const lines = sent.text.split('\n');
    expect(lines[0]).toBe('SENT: 2 sent, 0 may have been sent, 0 not sent, 0 skipped (of 2).');
    expect(lines[1]).toBe(
      `  1. ${label(clients[0]!)}: sent — The service answered 204 with an empty body (no record of the new request). — not checked against the preview: the service's list does not show it yet, so what it kept could not be compared with the preview: check with list_requests later`,
    );
    expect((sent.structuredContent as { recipients: { asPreviewed: boolean | null }[] }).recipients.map((x) => x.asPreviewed)).toEqual([null, null]);
  });

  it('a batch to a service that drops fields: each recipient line lists its differences, joined by "; "', async () => {
    const sb = await service({ dialect: 'ignoring' });
    const mcp = await server(sb);
    const c = activeClient(sb, 19);
    const { sent } = await previewThenSend(mcp, 'create_request_batch', {
      clients: [c.id, activeClient(sb, 20).id],
      title: 'Fit batch joined',
      dueDate: DUE,
      items: ITEMS,
    });
    const out = sent.structuredContent as { recipients: { request: { id: string }; differences: string[] }[] };
    const first = out.recipients[0]!;
    expect(sent.text.split('\n')[1]).toBe(`  1. ${label(c)}: sent, request id ${first.request.id} — NOT AS PREVIEWED: ${first.differences.join('; ')}`);
  });

  it('a 202 batch with a recipient skipped: ACCEPTED, the skipped one counted', async () => {
    const sb = await service({ dialect: { createAnswer: { status: 202 } } });
    const mcp = await server(sb);
    const { sent } = await previewThenSend(mcp, 'create_request_batch', {
      clients: [activeClient(sb, 21).id, 'Nobody Atall', activeClient(sb, 22).id],
      title: 'Fit batch 202 mixed',
      items: ITEMS,
    });
    expect(sent.text.split('\n')[0]).toBe(
      'ACCEPTED: 0 sent, 0 may have been sent, 0 not sent, 1 skipped, 2 accepted (queued by the service, not yet known to be e-mailed) (of 3).',
    );
  });

  it('an answer that names only the id: the request shown as the list shows it (title and all), single and batch', async () => {
    const sb = await service({ dialect: { createAnswer: { status: 201, wrap: 'bare', fields: 'id-only' } } });
    const mcp = await server(sb);
    const c = activeClient(sb, 23);
    const single = (await previewThenSend(mcp, 'create_request', { client: c.id, title: 'Fit id only', items: ITEMS })).sent;
    expect(single.structuredContent).toMatchObject({ request: { title: 'Fit id only', clientName: c.displayName, status: 'sent' }, asPreviewed: true });
    const batch = (
      await previewThenSend(mcp, 'create_request_batch', {
        clients: [activeClient(sb, 24).id, activeClient(sb, 25).id],
        title: 'Fit id only batch',
        items: ITEMS,
      })
    ).sent;
    const rows = (batch.structuredContent as { recipients: { request: { title: string } | null }[] }).recipients;
    expect(rows.map((x) => x.request?.title)).toEqual(['Fit id only batch', 'Fit id only batch']);
  });

  it("an answer whose record names the request stands as the service's answer; a list without its id leaves it unchecked", async () => {
    const sb = await service({});
    const mcp = await server(sb);
    const c = activeClient(sb, 26);
    const args = { client: c.id, title: 'Fit answered record', items: ITEMS };
    const preview = await mcp.call('create_request', args);
    sb.inject(
      'POST /api/v1/requests',
      { kind: 'raw', status: 201, body: JSON.stringify({ id: 'answered-1', title: 'Fit answered record', status: 'sent' }) },
      { times: 1, after: true },
    );
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    const sent = await mcp.call('create_request', { ...args, confirmationToken: token });
    // The list holds the sandbox's own id, not the answer's: no other request with this client and title stands in for it.
    expect(sent.structuredContent).toMatchObject({ request: { id: 'answered-1', title: 'Fit answered record' }, asPreviewed: null });
    const b = [activeClient(sb, 27), activeClient(sb, 28)];
    const bargs = { clients: b.map((x) => x.id), title: 'Fit answered batch', items: ITEMS };
    const bpreview = await mcp.call('create_request_batch', bargs);
    sb.inject(
      'POST /api/v1/requests',
      { kind: 'raw', status: 201, body: JSON.stringify({ id: 'answered-2', title: 'Fit answered batch', status: 'sent' }) },
      { times: 1, after: true },
    );
    const btoken = (bpreview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    const bsent = await mcp.call('create_request_batch', { ...bargs, confirmationToken: btoken });
    expect((bsent.structuredContent as { recipients: { request: { id: string } }[] }).recipients[0]!.request.id).toBe('answered-2');
  });

  it('a send whose new request the list does not show yet: its first line names no empty id or status', async () => {
    const sb = await service({ dialect: { createAnswer: { status: 204 } }, listLagMs: 60_000 });
    const mcp = await server(sb);
    const c = activeClient(sb, 29);
    const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: 'Fit lagging words', items: ITEMS });
    expect(sent.text.split('\n')[0]).toBe(`SENT: "Fit lagging words" to ${label(c)}.`);
  });

  it('a status of "Active" with spaces or capitals is active: no warning', async () => {
    const sb = await service({});
    const c = activeClient(sb, 30);
    c.status = '  Active ';
    sb.invalidateLists();
    const r = await (await server(sb)).call('create_request', { client: c.id, title: 'Fit spaced status', items: ITEMS, dryRun: true });
    expect((r.structuredContent as { warnings: string[] }).warnings).toEqual([]);
  });
});

describe("check on a firm at its plan's limit (the built CLI): the limit is named as not checked, never passed over", () => {
  it('the active-request limit reached: "sending is offered" comes with the open count and what a refused send does', async () => {
    const { execFile } = await import('node:child_process');
    const { SANDBOX_KEYS } = await import('../src/sandbox/seed.js');
    const sb = await service({});
    try {
      const stdout = await new Promise<string>((resolve, reject) => {
        const env = { ...childEnv(), DOCREQ_STATE_DIR: join(folder, 'check-limit'), DOCREQ_BASE_URL: sb.url, DOCREQ_API_KEY: SANDBOX_KEYS.harbor };
        execFile(process.execPath, [BIN, 'check'], { env, encoding: 'utf8', timeout: 60_000 }, (error, out) =>
          error && !out ? reject(new Error(error.message)) : resolve(out),
        );
      });
      const open = sb.firms.get(SANDBOX_KEYS.harbor)!.requests.filter((r) => r.status === 'sent' || r.status === 'in_progress').length;
      expect(stdout).toContain('✓ sending is offered; before each send: the person confirms it');
      expect(stdout).toContain(`  plan limits: not checked (the service publishes them only when it refuses a send); the firm has ${open} open requests now.`);
      expect(stdout).toContain('nothing is e-mailed');
      expect(stdout).not.toContain(SANDBOX_KEYS.harbor);
    } finally {
      await sb.close();
    }
  });
});
