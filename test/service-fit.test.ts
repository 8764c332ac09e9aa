import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readyServiceProfile } from '../src/service-profile.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/service.js';
import { AROUND_TODAY, connect, previewThenSend, suiteFolder, TODAY, type Connected, type ConnectOptions } from './helpers.js';

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
  body: { client: 'client_id', dueDate: 'due_date', items: 'checklist', correctnessMode: 'correctness_mode', item: { name: 'label', required: 'mandatory', type: 'kind' } },
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
const activeClient = (sb: Sandbox, n = 0) => sb.demoFirm.clients.filter((c) => c.status === 'active' && !/Sam Taylor/.test(c.displayName))[n + 5]!;
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
    const note = got.notes.find((n) => n.includes('in a form this server does not read'))!;
    expect(note).toMatch(/^\d+ requests? \(of \d+\) ha(s a due date|ve due dates) in a form this server does not read \(e\.g\. /);
    expect(note).toMatch(sample);
    expect(note).toContain('not counted as overdue, due soon, or without a due date.');
    expect(note).toContain('could be read day-first or month-first: set dates.ambiguous in the service profile (DOCREQ_SERVICE_PROFILE) to day-first or month-first.');
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
      expect(got.notes).toContain('1 request (of ' + sb.demoFirm.requests.length + ') has a due date in a form this server does not read (e.g. "next Friday"): not counted as overdue, due soon, or without a due date.');
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
    const sb = await service({ dialect: { createAnswer: createAnswer as never } });
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
  it.each(['rfc7807', 'jsonapi', 'fastapi', 'rails', 'ours'] as const)('%s: the refused due date is named dueDate, with the service name and the setting', async (errorShape) => {
    const sb = await service({ dialect: { body: { dueDate: 'due_at' }, dueDateIn: 'date-time', unknownFields: 'refuse', errorShape } });
    const mcp = await server(sb, { DOCREQ_SERVICE_PROFILE: profileFile({ body: { dueDate: 'due_at' } }) });
    const c = activeClient(sb, 6);
    const { sent } = await previewThenSend(mcp, 'create_request', { client: c.id, title: `Fit refused ${errorShape}`, dueDate: DUE, items: ITEMS });
    expect(sent.isError).toBe(true);
    expect(sent.text).toContain('The service refused the input (422).');
    expect(sent.text).toContain('dueDate (sent as "due_at", named by body.dueDate in the service profile): ');
    expect(posted(sb)).toHaveLength(1);
    expect(sb.emails.filter((e) => e.title === `Fit refused ${errorShape}`)).toHaveLength(0);
  });
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
