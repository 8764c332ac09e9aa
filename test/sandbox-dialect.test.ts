import { afterEach, describe, expect, it } from 'vitest';
import {
  DIALECTS,
  Sandbox as SandboxService,
  startSandbox,
  type DateForm,
  type ErrorShape,
  type PagingSignal,
  type Sandbox,
  type SandboxDialect,
  type SandboxOptions,
} from '../src/sandbox/service.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';

// The sandbox playing another service, over HTTP with fetch: each part of a dialect, and the presets. The expected
// bodies are written out here from the dialect's description, not computed by the code under test.

const NOW = new Date('2026-11-22T00:00:00Z');
/** The sandbox clock during each test: every created record's createdAt. */
const AT = '2026-11-22T10:30:00.000Z';
const VALIDATION = 'The request could not be created: some fields are invalid.';
const UNAUTHORIZED = 'The bearer key is missing, malformed, unknown or revoked.';

const started: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((sb) => sb.close()));
});

async function start(dialect?: SandboxOptions['dialect'], options: SandboxOptions = {}): Promise<Sandbox> {
  const sb = await startSandbox({ now: NOW, dialect, ...options });
  sb.clock = () => Date.parse(AT);
  started.push(sb);
  return sb;
}

interface Got {
  status: number;
  headers: Headers;
  text: string;
  /** Bodies of many shapes: compared whole, or read through the helpers below. */
  body: unknown;
}

/** A listed or created record (a request or a client), read loosely. */
type Rec = Record<string, unknown> & {
  id: string;
  title: string;
  status: string;
  displayName: string;
  dueDate: unknown;
  createdAt: unknown;
  totalItems: number;
  completedItems: number;
};

interface Call {
  path?: string;
  method?: string;
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

async function call(sb: Sandbox, init: Call = {}): Promise<Got> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  if (init.key !== null) headers.authorization = `Bearer ${init.key ?? SANDBOX_KEYS.demo}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sb.url}${init.path ?? '/api/v1/requests'}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

const activeClient = (sb: Sandbox) => sb.demoFirm.clients.find((c) => c.status === 'active')!;
/** A list answer's records. */
const records = (got: Got) => (got.body as { data: Rec[] }).data;
const listOf = async (sb: Sandbox, path?: string) => records(await call(sb, { path }));
/** The record a create answered with, under `data` unless said. */
const created = (got: Got, at = 'data') => (got.body as Record<string, Rec>)[at]!;
/** A field of the body. */
const fieldOf = (got: Got, name: string) => (got.body as Record<string, unknown>)[name];
/** The field details of a refusal in our shape. */
const details = (got: Got) => (got.body as { error: { details: unknown } }).error.details;
const lastEmail = (sb: Sandbox) => sb.emails.at(-1)!;

describe('presets', () => {
  it('DIALECTS holds other, ignoring and strict, as described; an unknown name is refused at start', async () => {
    expect(DIALECTS).toEqual({
      other: {
        body: {
          client: 'client_id',
          title: 'title',
          dueDate: 'due_date',
          items: 'checklist',
          correctnessMode: 'correctness_mode',
          item: { name: 'label', required: 'mandatory', type: 'kind' },
        },
        unknownFields: 'ignore',
        itemTypes: { file: 'document', boolean: 'yes_no' },
        correctnessModes: { hard: 'strict' },
        statuses: {
          rename: { completed: 'fulfilled', cancelled: 'withdrawn' },
          closed: ['fulfilled', 'withdrawn', 'archived', 'expired'],
          overdueAs: 'expired',
        },
        clientStatuses: ['blocked', 'archived'],
        dateForm: 'dot-dmy',
        createAnswer: { status: 201, wrap: 'request', fields: 'body' },
        errorShape: 'rfc7807',
      },
      ignoring: { body: { dueDate: 'due_date', items: 'checklist' }, unknownFields: 'ignore' },
      strict: {
        body: { client: 'client_id', dueDate: 'due_at', correctnessMode: 'correctness' },
        unknownFields: 'refuse',
        dueDateIn: 'date-time',
        dateForm: 'epoch-s',
        createAnswer: { status: 202, wrap: 'bare' },
        errorShape: 'fastapi',
        paging: { pageSize: 25, signal: 'has_more' },
      },
    });
    await expect(startSandbox({ dialect: 'nope' as keyof typeof DIALECTS })).rejects.toThrow('no sandbox dialect named "nope" (other, ignoring, strict)');
    expect((await start()).dialect.reads).toBe('ours');
  });

  it('other: our body is refused naming client_id (nothing e-mailed); its own body is kept, echoed by its names in dot-dmy', async () => {
    const sb = await start('other');
    const client = activeClient(sb);
    const ours = await call(sb, { body: { clientId: client.id, title: 'Ours', dueDate: '2027-01-05', items: [{ name: 'A', required: true, type: 'file' }] } });
    expect(ours.status).toBe(422);
    expect(ours.headers.get('content-type')).toBe('application/problem+json');
    expect(ours.body).toEqual({
      type: 'https://problems.docreq.example/validation_failed',
      title: 'Unprocessable Entity',
      status: 422,
      detail: VALIDATION,
      code: 'validation_failed',
      'invalid-params': [{ name: 'client_id', reason: 'is required' }],
    });
    expect(sb.emails).toEqual([]);

    const theirs = await call(sb, {
      body: {
        client_id: client.id,
        title: 'Theirs',
        due_date: '2027-01-05',
        checklist: [{ label: 'W-2', mandatory: false, kind: 'yes_no' }],
        correctness_mode: 'strict',
      },
    });
    const id = lastEmail(sb).requestId;
    expect(theirs.status).toBe(201);
    expect(theirs.body).toEqual({
      request: {
        id,
        status: 'sent',
        client_id: client.id,
        title: 'Theirs',
        due_date: '05.01.2027',
        checklist: [{ label: 'W-2', mandatory: false, kind: 'yes_no' }],
        correctness_mode: 'strict',
      },
    });
    expect(sb.emails).toEqual([{ to: client.email, requestId: id, title: 'Theirs', dueDate: '2027-01-05', items: 1, correctnessMode: 'hard' }]);
    const listed = (await listOf(sb))[0];
    expect(listed).toEqual({
      id,
      title: 'Theirs',
      status: 'sent',
      dueDate: '05.01.2027',
      createdAt: '22.11.2026',
      clientName: client.displayName,
      totalItems: 1,
      completedItems: 0,
    });
  });

  it('strict: refuses our names as unknown (FastAPI), takes its own and answers 202 queued; lists page by 25 with has_more', async () => {
    const sb = await start('strict');
    const client = activeClient(sb);
    const items = [{ name: 'A', required: true, type: 'file' }];
    const ours = await call(sb, { body: { clientId: client.id, title: 'Ours', dueDate: '2027-01-05', items, correctnessMode: 'soft' } });
    expect(ours.status).toBe(422);
    expect(ours.body).toEqual({
      detail: [
        { type: 'missing', loc: ['body', 'client_id'], msg: 'is required' },
        { type: 'extra_forbidden', loc: ['body', 'clientId'], msg: 'is not a known field' },
        { type: 'extra_forbidden', loc: ['body', 'dueDate'], msg: 'is not a known field' },
        { type: 'extra_forbidden', loc: ['body', 'correctnessMode'], msg: 'is not a known field' },
      ],
    });
    const theirs = await call(sb, { body: { client_id: client.id, title: 'Theirs', due_at: '2027-01-05T17:00:00Z', items, correctness: 'soft' } });
    expect(theirs.status).toBe(202);
    expect(theirs.body).toEqual({ id: lastEmail(sb).requestId, status: 'queued' });
    expect(lastEmail(sb)).toMatchObject({ dueDate: '2027-01-05T17:00:00Z', items: 1, correctnessMode: 'soft' });
    const list = await call(sb);
    expect(records(list)).toHaveLength(25);
    expect(fieldOf(list, 'has_more')).toBe(true);
    expect(records(list)[0]).toMatchObject({ id: lastEmail(sb).requestId, dueDate: Date.UTC(2027, 0, 5, 17) / 1000, createdAt: Date.parse(AT) / 1000 });
  });
});

describe('body names and unknown fields', () => {
  it('ignoring: our dueDate and items are dropped silently: 201, no due date, an empty checklist e-mailed; its own names are kept', async () => {
    const sb = await start('ignoring');
    const client = activeClient(sb);
    const items = [
      { name: 'Bank statements', required: true, type: 'file' },
      { name: 'Moved?', required: false, type: 'boolean' },
    ];
    const ours = await call(sb, { body: { clientId: client.id, title: 'Year end', dueDate: '2027-01-05', items, correctnessMode: 'hard' } });
    const id = lastEmail(sb).requestId;
    expect(ours.status).toBe(201);
    expect(ours.body).toEqual({
      data: {
        id,
        title: 'Year end',
        status: 'sent',
        dueDate: null,
        createdAt: AT,
        clientId: client.id,
        clientName: client.displayName,
        totalItems: 0,
        completedItems: 0,
        items: [],
        correctnessMode: 'hard',
      },
    });
    expect(sb.emails).toEqual([{ to: client.email, requestId: id, title: 'Year end', dueDate: null, items: 0, correctnessMode: 'hard' }]);

    const theirs = await call(sb, { body: { clientId: client.id, title: 'Year end', due_date: '2027-01-05', checklist: items } });
    expect(theirs.status).toBe(201);
    expect(created(theirs)).toMatchObject({ dueDate: '2027-01-05', totalItems: 2, items: [items[0], items[1]], correctnessMode: 'advisory' });
    const theirsId = created(theirs).id;
    expect(lastEmail(sb)).toEqual({ to: client.email, requestId: theirsId, title: 'Year end', dueDate: '2027-01-05', items: 2, correctnessMode: null });
  });

  it('refuse: 422 naming every field it does not know, top level and in items, besides what is missing; nothing e-mailed', async () => {
    const sb = await start({ body: DIALECTS.other.body, unknownFields: 'refuse' });
    const client = activeClient(sb);
    const got = await call(sb, {
      body: { clientId: client.id, title: 'T', dueDate: '2027-01-05', items: [{ name: 'A' }], client_id: client.id, checklist: [{ label: 'A', name: 'A' }] },
    });
    expect(got.status).toBe(422);
    expect(got.body).toEqual({
      error: {
        code: 'validation_failed',
        message: VALIDATION,
        details: [
          { field: 'checklist[0].name', message: 'is not a known field' },
          { field: 'clientId', message: 'is not a known field' },
          { field: 'dueDate', message: 'is not a known field' },
          { field: 'items', message: 'is not a known field' },
        ],
      },
    });
    const empty = await call(sb, { body: { client_id: client.id, title: 'T', checklist: [] } });
    expect(details(empty)).toEqual([{ field: 'checklist', message: 'must be a non-empty array' }]);
    expect(sb.emails).toEqual([]);
    // The same body to a service that ignores: created, with what it knows.
    const lenient = await start({ body: DIALECTS.other.body });
    const lenientClient = lenient.demoFirm.clients[0]!.id;
    const kept = await call(lenient, { body: { client_id: lenientClient, title: 'T', checklist: [{ label: 'A', name: 'A' }], items: [{ name: 'B' }] } });
    expect(kept.status).toBe(201);
    expect(lastEmail(lenient)).toMatchObject({ items: 1, dueDate: null });
  });
});

describe('value spellings', () => {
  const spelled: SandboxDialect = {
    itemTypes: { file: 'document', boolean: 'yes_no' },
    correctnessModes: { hard: 'strict' },
    createAnswer: { wrap: 'bare', fields: 'body' },
  };

  it('ignore: a type or mode it does not spell falls back to its default (document, advisory); its own spellings are kept', async () => {
    const sb = await start(spelled);
    const client = activeClient(sb);
    const items = [
      { name: 'A', type: 'yes_no' },
      { name: 'B', type: 'boolean' },
      { name: 'C', type: 'text' },
      { name: 'D', type: 'file' },
    ];
    const got = await call(sb, { body: { clientId: client.id, title: 'T', items, correctnessMode: 'hard' } });
    expect(got.status).toBe(201);
    expect(got.body).toEqual({
      id: lastEmail(sb).requestId,
      status: 'sent',
      clientId: client.id,
      title: 'T',
      dueDate: null,
      items: [
        { name: 'A', required: true, type: 'yes_no' },
        { name: 'B', required: true, type: 'document' },
        { name: 'C', required: true, type: 'text' },
        { name: 'D', required: true, type: 'document' },
      ],
      correctnessMode: 'advisory',
    });
    expect(lastEmail(sb).correctnessMode).toBeNull();
    const strict = await call(sb, { body: { clientId: client.id, title: 'T', items, correctnessMode: 'strict' } });
    expect(fieldOf(strict, 'correctnessMode')).toBe('strict');
    expect(lastEmail(sb).correctnessMode).toBe('hard');
  });

  it('refuse: 422 naming the item type and the mode, with its spellings', async () => {
    const sb = await start({ ...spelled, unknownFields: 'refuse' });
    const items = [
      { name: 'A', type: 'yes_no' },
      { name: 'B', type: 'boolean' },
    ];
    const got = await call(sb, { body: { clientId: activeClient(sb).id, title: 'T', items, correctnessMode: 'hard' } });
    expect(got.status).toBe(422);
    expect(details(got)).toEqual([
      { field: 'correctnessMode', message: 'must be one of off, advisory, soft, strict' },
      { field: 'items[1].type', message: 'must be one of document, text, date, number, yes_no' },
    ]);
    expect(sb.emails).toEqual([]);
  });
});

describe('dueDateIn', () => {
  it('date-time: a plain date is dropped under ignore and refused under refuse; a date-time is kept; a non-date is refused by both', async () => {
    const lenient = await start({ dueDateIn: 'date-time' });
    const strict = await start({ dueDateIn: 'date-time', unknownFields: 'refuse' });
    const body = (sb: Sandbox, due: string) => ({ clientId: activeClient(sb).id, title: 'T', items: [{ name: 'A' }], dueDate: due });
    expect((await call(lenient, { body: body(lenient, '2027-01-05') })).status).toBe(201);
    expect(lastEmail(lenient).dueDate).toBeNull();
    expect(created(await call(lenient, { body: body(lenient, '2027-01-05T17:00:00+02:00') })).dueDate).toBe('2027-01-05T17:00:00+02:00');
    expect(lastEmail(lenient).dueDate).toBe('2027-01-05T17:00:00+02:00');
    for (const sb of [lenient, strict]) {
      const bad = await call(sb, { body: body(sb, '05/01/2027') });
      expect(details(bad)).toEqual([{ field: 'dueDate', message: 'must be an ISO date-time' }]);
    }
    const refused = await call(strict, { body: body(strict, '2027-01-05') });
    expect(refused.status).toBe(422);
    expect(details(refused)).toEqual([{ field: 'dueDate', message: 'must be an ISO date-time' }]);
    expect(strict.emails).toEqual([]);
  });

  it('date (the default): a date-time is dropped under ignore; a plain date is kept', async () => {
    const sb = await start({});
    const body = (due: string) => ({ clientId: activeClient(sb).id, title: 'T', items: [{ name: 'A' }], dueDate: due });
    await call(sb, { body: body('2027-01-05T17:00:00Z') });
    expect(lastEmail(sb).dueDate).toBeNull();
    await call(sb, { body: body('2027-01-05') });
    expect(lastEmail(sb).dueDate).toBe('2027-01-05');
    expect(details(await call(sb, { body: body('2027-02-30') }))).toEqual([{ field: 'dueDate', message: 'must be a date YYYY-MM-DD' }]);
  });
});

describe('statuses', () => {
  const closedByOther = ['fulfilled', 'withdrawn', 'archived', 'expired'];
  const open = (r: { status: string; completedItems: number; totalItems: number }, closed: string[]) =>
    !closed.includes(r.status) && r.completedItems < r.totalItems;

  it('other: completed → fulfilled, cancelled → withdrawn, every other overdue open request expired (the rest stay overdue)', async () => {
    const ours = (await start()).demoFirm.requests;
    const sb = await start('other');
    const listed = await listOf(sb);
    expect(listed.map((r) => r.id)).toEqual(ours.map((r) => r.id));
    const overdueOpen = ours.filter((r) => open(r, ['completed', 'cancelled', 'archived']) && r.dueDate !== null && r.dueDate.slice(0, 10) < '2026-11-22');
    expect(overdueOpen.length).toBeGreaterThan(3);
    const expired = overdueOpen.filter((_, i) => i % 2 === 0).map((r) => r.id);
    listed.forEach((r, i) => {
      const was = ours[i]!.status;
      const expected = expired.includes(r.id) ? 'expired' : (({ completed: 'fulfilled', cancelled: 'withdrawn' } as Record<string, string>)[was] ?? was);
      expect(r.status, `${r.id} was ${was}`).toBe(expected);
    });
    expect(new Set(listed.map((r) => r.status))).toEqual(new Set(['sent', 'in_progress', 'fulfilled', 'withdrawn', 'archived', 'expired']));
    expect(listed.filter((r) => overdueOpen.some((o) => o.id === r.id) && (r.status === 'sent' || r.status === 'in_progress')).length).toBe(
      Math.floor(overdueOpen.length / 2),
    );
    // Its own active-request limit counts by its closed statuses.
    expect(sb.activeRequests(SANDBOX_KEYS.demo)).toBe(listed.filter((r) => open(r, closedByOther)).length);
  });

  it('closed defaults to ours renamed; a renamed sent names new requests too; the active-request limit holds, in the dialect shape', async () => {
    const sb = await start({ statuses: { rename: { cancelled: 'withdrawn', sent: 'open' } }, errorShape: 'rails' });
    const listed = await listOf(sb);
    expect(listed.filter((r) => r.status === 'sent' || r.status === 'cancelled')).toEqual([]);
    // A withdrawn request has items left to do: only its status closes it.
    expect(listed.filter((r) => r.status === 'withdrawn' && r.completedItems < r.totalItems).length).toBeGreaterThan(0);
    expect(sb.activeRequests(SANDBOX_KEYS.demo)).toBe(listed.filter((r) => open(r, ['completed', 'withdrawn', 'archived'])).length);
    sb.setActiveRequestRoom(SANDBOX_KEYS.demo, 1);
    const body = { clientId: activeClient(sb).id, title: 'Room', items: [{ name: 'A' }] };
    expect((await call(sb, { body })).status).toBe(201);
    expect((await listOf(sb))[0]!.status).toBe('open');
    const full = await call(sb, { body });
    expect(full.status).toBe(409);
    const limit = sb.demoFirm.activeRequestLimit;
    expect(full.body).toEqual({
      errors: { base: [`The Professional plan allows ${limit} active requests and the firm has ${limit}. Complete or archive requests, or upgrade the plan.`] },
    });
    expect(sb.emails).toHaveLength(1);
  });
});

describe('client statuses', () => {
  it.each([{}, { clients: 100, requests: 100 }, { clients: 30, requests: 40 }])(
    'other %o: some clients blocked, some archived, deterministically; the well-known clients and every other field unchanged',
    async (sizes) => {
      const ours = await listOf(await start(undefined, sizes), '/api/v1/clients');
      const sb = await start('other', sizes);
      const listed = await listOf(sb, '/api/v1/clients');
      expect(await listOf(await start('other', sizes), '/api/v1/clients')).toEqual(listed);
      const changed = listed.map((c, i) => [c, ours[i]!] as const).filter(([c, o]) => c.status !== o.status);
      expect(changed.every(([c, o]) => o.status === 'active' && ['blocked', 'archived'].includes(c.status))).toBe(true);
      expect(changed.filter(([c]) => c.status === 'blocked').length).toBeGreaterThanOrEqual(1);
      expect(changed.filter(([c]) => c.status === 'archived').length).toBeGreaterThanOrEqual(1);
      expect(listed.map(({ status: _, ...rest }) => rest)).toEqual(ours.map(({ status: _, ...rest }) => rest));
      for (const name of ['Sam Taylor', 'Tomasz Haddad', 'Tomasz Haddad B.']) {
        expect(listed.filter((c) => c.displayName === name)).toEqual(ours.filter((c) => c.displayName === name));
      }
      expect(listed.filter((c) => c.displayName === 'Sam Taylor')).toHaveLength(2);
      // A blocked client is still a client of the firm: the service creates and e-mails.
      const blocked = sb.demoFirm.clients.find((c) => c.status === 'blocked')!;
      expect((await call(sb, { body: { client_id: blocked.id, title: 'T', checklist: [{ label: 'A' }] } })).status).toBe(201);
      expect(lastEmail(sb).to).toBe(blocked.email);
    },
  );

  it('over seed sizes 25 to 80: the well-known clients keep their status, and blocked and archived are both given', () => {
    for (let clients = 25; clients <= 80; clients++) {
      const ours = new SandboxService({ now: NOW, clients, requests: 10 }).demoFirm.clients;
      const theirs = new SandboxService({ now: NOW, clients, requests: 10, dialect: 'other' }).demoFirm.clients;
      const known = (list: typeof ours) => list.filter((c) => ['Sam Taylor', 'Tomasz Haddad', 'Tomasz Haddad B.'].includes(c.displayName));
      expect(known(theirs), `${clients} clients`).toEqual(known(ours));
      expect(new Set(theirs.map((c) => c.status)), `${clients} clients`).toEqual(new Set([...ours.map((c) => c.status), 'blocked', 'archived']));
    }
  });
});

describe('dateForm', () => {
  // Created at AT (2026-11-22T10:30:00.000Z); due 2027-01-05, or 2027-01-05T23:30:00-02:00 (2027-01-06T01:30Z) where dates are date-times.
  const cases: [DateForm, unknown, unknown, unknown][] = [
    ['iso', '2027-01-05', AT, '2027-01-05T23:30:00-02:00'],
    ['iso-offset', '2027-01-05', '2026-11-22T12:30:00.000+02:00', '2027-01-06T03:30:00.000+02:00'],
    ['slash-ymd', '2027/01/05', '2026/11/22', '2027/01/06'],
    ['dot-dmy', '05.01.2027', '22.11.2026', '06.01.2027'],
    ['slash-mdy', '01/05/2027', '11/22/2026', '01/06/2027'],
    ['slash-dmy', '05/01/2027', '22/11/2026', '06/01/2027'],
    ['epoch-s', Date.UTC(2027, 0, 5) / 1000, Date.UTC(2026, 10, 22, 10, 30) / 1000, Date.UTC(2027, 0, 6, 1, 30) / 1000],
    ['epoch-ms', Date.UTC(2027, 0, 5), Date.UTC(2026, 10, 22, 10, 30), Date.UTC(2027, 0, 6, 1, 30)],
  ];

  it.each(cases)('%s: list records write dueDate and createdAt so', async (dateForm, due, created, dueTime) => {
    const sb = await start({ dateForm });
    const client = activeClient(sb);
    await call(sb, { body: { clientId: client.id, title: 'T', items: [{ name: 'A' }], dueDate: '2027-01-05' } });
    expect((await listOf(sb))[0]).toMatchObject({ dueDate: due, createdAt: created });
    const timed = await start({ dateForm, dueDateIn: 'date-time' });
    await call(timed, { body: { clientId: activeClient(timed).id, title: 'T', items: [{ name: 'A' }], dueDate: '2027-01-05T23:30:00-02:00' } });
    const listed = await listOf(timed);
    expect(listed[0]).toMatchObject({ dueDate: dueTime, createdAt: created });
    // A request without a due date keeps null in every form.
    expect(listed.filter((r) => r.dueDate === null).length).toBeGreaterThan(0);
  });

  it('mixed: each record in one of the eight forms, dueDate and createdAt alike, all eight seen, the same on every start', async () => {
    /** The form a date is written in; slash forms told apart where one part is above 12. */
    const formOf = (v: unknown): string | undefined => {
      if (typeof v === 'number') return v > 1e11 ? 'epoch-ms' : 'epoch-s';
      if (typeof v !== 'string') return undefined;
      if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v)) return 'iso';
      if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+02:00$/.test(v)) return 'iso-offset';
      if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return 'plain';
      if (/^\d{4}\/\d{2}\/\d{2}$/.test(v)) return 'slash-ymd';
      if (/^\d{2}\.\d{2}\.\d{4}$/.test(v)) return 'dot-dmy';
      const slash = /^(\d{2})\/(\d{2})\/\d{4}$/.exec(v);
      if (!slash) return undefined;
      return Number(slash[1]) > 12 ? 'slash-dmy' : Number(slash[2]) > 12 ? 'slash-mdy' : 'slash-either';
    };
    const sb = await start({ dateForm: 'mixed' });
    const listed = await listOf(sb);
    const seen = new Set<string>();
    for (const r of listed) {
      const form = formOf(r.createdAt);
      const due = formOf(r.dueDate);
      expect(form, JSON.stringify(r)).toBeDefined();
      seen.add(form!);
      expect(due === undefined, JSON.stringify(r)).toBe(r.dueDate === null);
      // The due date in the record's form too: ISO forms write a plain date as it is; a slash date may read either way.
      const alike =
        due === form ||
        (due === 'plain' && (form === 'iso' || form === 'iso-offset')) ||
        (due === 'slash-either' && ['slash-dmy', 'slash-mdy'].includes(form!)) ||
        (form === 'slash-either' && ['slash-dmy', 'slash-mdy'].includes(due!));
      if (r.dueDate !== null) expect(alike, JSON.stringify(r)).toBe(true);
    }
    for (const form of ['iso', 'iso-offset', 'slash-ymd', 'dot-dmy', 'slash-mdy', 'slash-dmy', 'epoch-s', 'epoch-ms']) expect(seen, form).toContain(form);
    expect(await listOf(await start({ dateForm: 'mixed' }))).toEqual(listed);
  });
});

describe('createAnswer', () => {
  const wraps = ['bare', 'data', 'request', 'result'] as const;
  const fieldsList = ['full', 'list', 'body', 'id-only'] as const;

  it.each(fieldsList.flatMap((fields, f) => wraps.map((wrap, w) => [fields, wrap, (f + w) % 2 ? 200 : 201] as const)))(
    'fields %s under %s, status %i',
    async (fields, wrap, status) => {
      const sb = await start({ createAnswer: { status, wrap, fields } });
      const client = activeClient(sb);
      const body = { clientId: client.id, title: 'Quarterly', dueDate: '2027-01-05', items: [{ name: 'Bank', type: 'text' }], correctnessMode: 'soft' };
      const got = await call(sb, { body });
      const id = lastEmail(sb).requestId;
      const items = [{ name: 'Bank', required: true, type: 'text' }];
      const listed = {
        id,
        title: 'Quarterly',
        status: 'sent',
        dueDate: '2027-01-05',
        createdAt: AT,
        clientName: client.displayName,
        totalItems: 1,
        completedItems: 0,
      };
      const record = {
        full: { ...listed, clientId: client.id, items, correctnessMode: 'soft' },
        list: listed,
        body: { id, status: 'sent', clientId: client.id, title: 'Quarterly', dueDate: '2027-01-05', items, correctnessMode: 'soft' },
        'id-only': { id },
      }[fields];
      expect(got.status).toBe(status);
      expect(got.body).toEqual(wrap === 'bare' ? record : { [wrap]: record });
    },
  );

  it('202: { id, status: queued }, and the request is created, listed and e-mailed all the same', async () => {
    const sb = await start({ createAnswer: { status: 202, wrap: 'result', fields: 'full' } });
    const got = await call(sb, { body: { clientId: activeClient(sb).id, title: 'Queued', items: [{ name: 'A' }] } });
    const id = lastEmail(sb).requestId;
    expect(got.status).toBe(202);
    expect(got.body).toEqual({ result: { id, status: 'queued' } });
    expect((await listOf(sb))[0]).toMatchObject({ id, title: 'Queued', status: 'sent' });
  });

  it('204: no body and no content headers; e-mailed; a repeated Idempotency-Key replays the 204 and sends nothing more', async () => {
    const sb = await start({ createAnswer: { status: 204 } });
    const body = { clientId: activeClient(sb).id, title: 'Silent', items: [{ name: 'A' }] };
    const got = await call(sb, { body, headers: { 'idempotency-key': 'k-204' } });
    expect(got.status).toBe(204);
    expect(got.text).toBe('');
    expect(got.headers.get('content-type')).toBeNull();
    expect(sb.emails.map((e) => e.title)).toEqual(['Silent']);
    const again = await call(sb, { body, headers: { 'idempotency-key': 'k-204' } });
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([204, '', 'true']);
    expect(sb.emails).toHaveLength(1);
  });
});

describe('errorShape', () => {
  // A body refused three ways: a missing field, a bad item field, a field it does not know.
  const dialect = (errorShape: ErrorShape): SandboxDialect => ({
    body: { client: 'client_id', items: 'checklist', item: { name: 'label' } },
    unknownFields: 'refuse',
    errorShape,
  });
  const refused = { title: 'T', checklist: [{ label: '' }], clientId: 'x' };
  const cases: [ErrorShape, string, unknown][] = [
    [
      'ours',
      'application/json; charset=utf-8',
      {
        error: {
          code: 'validation_failed',
          message: VALIDATION,
          details: [
            { field: 'client_id', message: 'is required' },
            { field: 'checklist[0].label', message: 'must be a non-empty string' },
            { field: 'clientId', message: 'is not a known field' },
          ],
        },
      },
    ],
    [
      'rfc7807',
      'application/problem+json',
      {
        type: 'https://problems.docreq.example/validation_failed',
        title: 'Unprocessable Entity',
        status: 422,
        detail: VALIDATION,
        code: 'validation_failed',
        'invalid-params': [
          { name: 'client_id', reason: 'is required' },
          { name: 'checklist[0].label', reason: 'must be a non-empty string' },
          { name: 'clientId', reason: 'is not a known field' },
        ],
      },
    ],
    [
      'jsonapi',
      'application/vnd.api+json',
      {
        errors: [
          {
            status: '422',
            code: 'validation_failed',
            title: 'Unprocessable Entity',
            detail: 'client_id is required',
            source: { pointer: '/data/attributes/client_id' },
          },
          {
            status: '422',
            code: 'validation_failed',
            title: 'Unprocessable Entity',
            detail: 'checklist[0].label must be a non-empty string',
            source: { pointer: '/data/attributes/checklist/0/label' },
          },
          {
            status: '422',
            code: 'validation_failed',
            title: 'Unprocessable Entity',
            detail: 'clientId is not a known field',
            source: { pointer: '/data/attributes/clientId' },
          },
        ],
      },
    ],
    [
      'fastapi',
      'application/json; charset=utf-8',
      {
        detail: [
          { type: 'missing', loc: ['body', 'client_id'], msg: 'is required' },
          { type: 'value_error', loc: ['body', 'checklist', 0, 'label'], msg: 'must be a non-empty string' },
          { type: 'extra_forbidden', loc: ['body', 'clientId'], msg: 'is not a known field' },
        ],
      },
    ],
    [
      'rails',
      'application/json; charset=utf-8',
      { errors: { client_id: ['is required'], 'checklist[0].label': ['must be a non-empty string'], clientId: ['is not a known field'] } },
    ],
  ];

  /** A refusal without field details, in each shape, written out independently. */
  function plain(shape: ErrorShape, status: number, title: string, code: string, message: string): unknown {
    switch (shape) {
      case 'ours':
        return { error: { code, message } };
      case 'rfc7807':
        return { type: `https://problems.docreq.example/${code}`, title, status, detail: message, code };
      case 'jsonapi':
        return { errors: [{ status: String(status), code, title, detail: message }] };
      case 'fastapi':
        return { detail: message };
      case 'rails':
        return { errors: { base: [message] } };
    }
  }

  it.each(cases)('%s: the validation 422, the 401, the 402 and the 409 bodies', async (shape, contentType, validation) => {
    const sb = await start(dialect(shape));
    const got = await call(sb, { body: refused });
    expect(got.status).toBe(422);
    expect(got.headers.get('content-type')).toBe(contentType);
    expect(got.body).toEqual(validation);

    const denied = await call(sb, { key: SANDBOX_KEYS.revoked });
    expect([denied.status, denied.headers.get('content-type')]).toEqual([401, contentType]);
    expect(denied.body).toEqual(plain(shape, 401, 'Unauthorized', 'unauthorized', UNAUTHORIZED));

    const northwind = sb.firms.get(SANDBOX_KEYS.northwind)!;
    const billing = await call(sb, { key: SANDBOX_KEYS.northwind, body: { client_id: northwind.clients[0]!.id, title: 'T', checklist: [{ label: 'A' }] } });
    expect(billing.status).toBe(402);
    const billingWords = "The Free plan's monthly billing limit of 10 requests has been reached. Upgrade the plan or wait for the next billing period.";
    expect(billing.body).toEqual(plain(shape, 402, 'Payment Required', 'billing_limit_reached', billingWords));

    const harbor = sb.firms.get(SANDBOX_KEYS.harbor)!;
    const active = await call(sb, { key: SANDBOX_KEYS.harbor, body: { client_id: harbor.clients[0]!.id, title: 'T', checklist: [{ label: 'A' }] } });
    expect(active.status).toBe(409);
    const activeWords = 'The Starter plan allows 5 active requests and the firm has 5. Complete or archive requests, or upgrade the plan.';
    expect(active.body).toEqual(plain(shape, 409, 'Conflict', 'active_request_limit_reached', activeWords));
    expect(sb.emails).toEqual([]);
  });

  it('a reused Idempotency-Key is named as a header: JSON:API source.header, FastAPI loc header', async () => {
    for (const [shape, expected] of [
      [
        'jsonapi',
        {
          status: '422',
          code: 'idempotency_key_reused',
          title: 'Unprocessable Entity',
          detail: 'Idempotency-Key already used with a different body',
          source: { header: 'Idempotency-Key' },
        },
      ],
      ['fastapi', { type: 'value_error', loc: ['header', 'Idempotency-Key'], msg: 'already used with a different body' }],
    ] as const) {
      const sb = await start({ errorShape: shape });
      const body = (title: string) => ({ clientId: activeClient(sb).id, title, items: [{ name: 'A' }] });
      expect((await call(sb, { body: body('First'), headers: { 'idempotency-key': 'k' } })).status).toBe(201);
      const reused = await call(sb, { body: body('Second'), headers: { 'idempotency-key': 'k' } });
      expect(reused.status).toBe(422);
      expect(fieldOf(reused, shape === 'jsonapi' ? 'errors' : 'detail')).toEqual([expected]);
    }
  });
});

describe('paging', () => {
  const signals: PagingSignal[] = ['next', 'has_more', 'link', 'total'];

  it.each(signals)('%s: pages of 40, newest first, the signal on each, later pages by ?page=N; the calls log keeps the query', async (signal) => {
    const all = await listOf(await start());
    expect(all).toHaveLength(90);
    const sb = await start({ paging: { pageSize: 40, signal } });
    const pages = [await call(sb), await call(sb, { path: '/api/v1/requests?page=2' }), await call(sb, { path: '/api/v1/requests?page=3' })];
    expect(pages.map((p) => records(p).length)).toEqual([40, 40, 10]);
    expect(pages.flatMap(records)).toEqual(all);
    const next = (n: number) => `${sb.url}/api/v1/requests?page=${n}`;
    const expected = {
      next: [{ next: next(2) }, { next: next(3) }, { next: null }],
      has_more: [{ has_more: true }, { has_more: true }, { has_more: false }],
      link: [{}, {}, {}],
      total: [{ total: 90 }, { total: 90 }, { total: 90 }],
    }[signal];
    pages.forEach((p, i) => {
      const { data: _, ...rest } = p.body as Record<string, unknown>;
      expect(rest, `page ${i + 1}`).toEqual(expected[i]);
    });
    const links = signal === 'link' ? [`<${next(2)}>; rel="next"`, `<${next(3)}>; rel="next"`, null] : [null, null, null];
    expect(pages.map((p) => p.headers.get('link'))).toEqual(links);
    expect(sb.calls.map((c) => c.query)).toEqual([undefined, 'page=2', 'page=3']);
    // The clients list pages too: 36 fit on one page.
    const clients = await call(sb, { path: '/api/v1/clients' });
    expect(records(clients)).toHaveLength(36);
    if (signal === 'has_more') expect(fieldOf(clients, 'has_more')).toBe(false);
  });

  it('a page past the end is empty; a page that is not a positive whole number is refused; a create shows on page 1 at once', async () => {
    const sb = await start({ paging: { pageSize: 40, signal: 'total' } });
    expect((await call(sb, { path: '/api/v1/requests?page=9' })).body).toEqual({ data: [], total: 90 });
    const bad = await call(sb, { path: '/api/v1/requests?page=0' });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: { code: string } }).error.code).toBe('invalid_page');
    const page2 = await listOf(sb, '/api/v1/requests?page=2');
    await call(sb, { body: { clientId: activeClient(sb).id, title: 'Newest', items: [{ name: 'A' }] } });
    expect((await listOf(sb))[0]!.title).toBe('Newest');
    expect((await listOf(sb, '/api/v1/requests?page=2'))[0]).not.toEqual(page2[0]);
  });
});

describe('rateLimit', () => {
  it('after afterCalls calls per key: 429, Retry-After: 1 and its words in its shape; other keys unaffected; nothing e-mailed', async () => {
    const words = 'monthly plan quota exhausted: upgrade your subscription';
    const sb = await start({ rateLimit: { afterCalls: 3, words, code: 'quota_exhausted' }, errorShape: 'rfc7807' });
    for (let i = 0; i < 3; i++) expect((await call(sb)).status).toBe(200);
    const limited = await call(sb, { body: { clientId: activeClient(sb).id, title: 'T', items: [{ name: 'A' }] } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    const type = 'https://problems.docreq.example/quota_exhausted';
    expect(limited.body).toEqual({ type, title: 'Too Many Requests', status: 429, detail: words, code: 'quota_exhausted' });
    expect(sb.emails).toEqual([]);
    expect((await call(sb, { key: SANDBOX_KEYS.harbor, path: '/api/v1/clients' })).status).toBe(200);
    expect(sb.calls.map((c) => c.status)).toEqual([200, 200, 200, 429, 200]);
    sb.resetRateLimits();
    expect((await call(sb)).status).toBe(200);
  });

  it('windowMs: the count starts again once the window has passed by the sandbox clock; the default code is rate_limited', async () => {
    const sb = await start({ rateLimit: { afterCalls: 1, words: 'rate limit exceeded', windowMs: 1_000 } });
    expect((await call(sb)).status).toBe(200);
    const limited = await call(sb);
    expect([limited.status, limited.body]).toEqual([429, { error: { code: 'rate_limited', message: 'rate limit exceeded' } }]);
    sb.clock = () => Date.parse(AT) + 1_000;
    expect((await call(sb)).status).toBe(200);
  });
});

describe('faults and the calls log under a dialect', () => {
  it('other: echo into a refusal and a created record, an injected status in its shape, a gateway error after a create', async () => {
    const sb = await start('other');
    const key = `Bearer ${SANDBOX_KEYS.demo}`;
    sb.inject('POST /api/v1/requests', { kind: 'echo' }, { times: 2 });
    const refusedBody = { title: 'T' };
    const refused = await call(sb, { body: refusedBody });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      type: 'https://problems.docreq.example/validation_failed',
      title: 'Unprocessable Entity',
      status: 422,
      detail: `${VALIDATION} (got ${key})`,
      code: 'validation_failed',
      'invalid-params': [
        { name: 'client_id', reason: 'is required' },
        { name: 'authorization', reason: key },
        { name: 'body', reason: JSON.stringify(refusedBody) },
      ],
    });
    const createdBody = { client_id: activeClient(sb).id, title: 'Echoed', checklist: [{ label: 'A' }] };
    const echoed = await call(sb, { body: createdBody });
    expect(echoed.status).toBe(201);
    expect(created(echoed, 'request')).toMatchObject({ id: lastEmail(sb).requestId, title: 'Echoed', authorization: key, echo: JSON.stringify(createdBody) });

    sb.inject('GET /api/v1/clients', { kind: 'status', status: 503 }, { times: 1 });
    const injected = await call(sb, { path: '/api/v1/clients' });
    expect([injected.status, injected.headers.get('content-type')]).toEqual([503, 'application/problem+json']);
    const type = 'https://problems.docreq.example/injected';
    expect(injected.body).toEqual({ type, title: 'Service Unavailable', status: 503, detail: 'Injected 503.', code: 'injected' });

    sb.inject('POST /api/v1/requests', { kind: 'status', status: 502 }, { times: 1, after: true });
    const gateway = await call(sb, { body: { ...createdBody, title: 'Behind a gateway' } });
    expect(gateway.status).toBe(502);
    expect(sb.emails.map((e) => e.title)).toEqual(['Echoed', 'Behind a gateway']);
    expect(sb.calls.map((c) => [c.method, c.status])).toEqual([
      ['POST', 422],
      ['POST', 201],
      ['GET', 503],
      ['POST', 502],
    ]);
    expect(sb.callsTo('POST', '/api/v1/requests')[0]!.body).toBe(JSON.stringify(refusedBody));
  });

  it('other: a repeated Idempotency-Key replays its 201 and sends once; a reused one is refused in RFC 7807', async () => {
    const sb = await start('other');
    const body = { client_id: activeClient(sb).id, title: 'Once', checklist: [{ label: 'A' }] };
    const first = await call(sb, { body, headers: { 'idempotency-key': 'k' } });
    const again = await call(sb, { body, headers: { 'idempotency-key': 'k' } });
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([201, first.text, 'true']);
    const reused = await call(sb, { body: { ...body, title: 'Twice' }, headers: { 'idempotency-key': 'k' } });
    expect(fieldOf(reused, 'invalid-params')).toEqual([{ name: 'Idempotency-Key', reason: 'already used with a different body' }]);
    expect(sb.emails).toHaveLength(1);
  });
});
