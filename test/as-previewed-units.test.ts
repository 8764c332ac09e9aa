// As previewed, checked (src/tools/as-previewed.ts): after a 2xx create, what the service kept is compared with the preview.
// Pins every comparison's exact words, with a real service profile that renames fields and with the defaults, the
// list read back from the real sandbox over HTTP (found by id, by client and title, not found, unreadable), and checkText.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocReqApi } from '../src/api/client.js';
import type { Client, CreatePayload, RequestRecord } from '../src/api/records.js';
import type { Config } from '../src/config.js';
import type { Kept, ServiceProfile } from '../src/domain/service-profile.js';
import { startSandbox } from '../src/sandbox/service.js';
import { listRecord } from '../src/sandbox/requests.js';
import { SANDBOX_KEYS, type SandboxRequest } from '../src/sandbox/seed.js';
import { readServiceProfile } from '../src/service-profile.js';
import { redactor } from '../src/text/redact.js';
import { checkSends, checkText, type PreviewCheck, type SentToCheck } from '../src/tools/as-previewed.js';
import { FAST_API, sandbox } from './support/sandbox.js';

/** A profile file as a firm writes it, read the way the server reads DOCREQ_SERVICE_PROFILE. */
function profileFile(spec: unknown): ServiceProfile {
  const file = join(process.env.DOCREQ_STATE_DIR!, `profile-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const read = readServiceProfile(file);
  expect(read.problem).toBeUndefined();
  return read.profile;
}

const RENAMED_BODY = { client: 'customer_ref', title: 'subject', dueDate: 'due_on', items: 'checklist', correctnessMode: 'review_mode' };
/** Renamed fields, due dates sent as date-times, modes spelled its own way, 03/04/2026 read day first. */
const NAMED = profileFile({ body: RENAMED_BODY, values: { dueDate: 'date-time', correctnessMode: { hard: 'STRICT' } }, dates: { ambiguous: 'day-first' } });
/** Renamed fields, due dates sent as dates, 03/04/2026 read month first. */
const NAMED_DATE = profileFile({ body: RENAMED_BODY, values: { dueDate: 'date' }, dates: { ambiguous: 'month-first' } });

const P = 'the service profile (DOCREQ_SERVICE_PROFILE)';
const dropped = (name: string, setting: string) =>
  `the service probably does not know the field "${name}" and dropped it: set ${setting} in ${P} to the name it uses`;
const DATE_TIME = ', or it wants a date-time (set values.dueDate to date-time)';
const ALL_SHOWN = "the service's record shows the client, title, due date, items, correctness mode as previewed";
const NOT_YET = "the service's list does not show it yet, so what it kept could not be compared with the preview: check with list_requests later";

/** A guard, not a stand-in: anything that shows enough must never read the service's list. */
let guardReads = 0;
const GUARD = {
  listRequests: () => {
    guardReads++;
    throw new Error('the list was read although the record showed enough');
  },
} as unknown as DocReqApi;

function ctxWith(api: DocReqApi, profile?: ServiceProfile, key: string = SANDBOX_KEYS.demo) {
  return {
    api,
    config: { serviceProfile: profile } as unknown as Config,
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    redact: redactor([key]),
  };
}

const CLIENT: Client = { id: 'cl_1', displayName: 'Lucía Müller', email: 'lucia@mail.example', status: 'active' };
const ITEMS = [
  { name: 'W-2', required: true, type: 'file' },
  { name: 'Bank statements', required: false, type: 'file' },
];
function payload(over: Partial<CreatePayload> = {}, drop: ('dueDate' | 'correctnessMode')[] = []): CreatePayload {
  const p: CreatePayload = { clientId: 'cl_1', title: 'Tax Docs 2025', dueDate: '2026-12-25', items: ITEMS, correctnessMode: 'hard', ...over };
  for (const k of drop) delete p[k];
  return p;
}
const KEPT: Kept = { clientId: 'cl_1', clientName: 'Lucía Müller', title: 'Tax Docs 2025', dueDate: '2026-12-25', items: 2, correctnessMode: 'hard' };

/** One send checked from the answer's own record. */
async function fromAnswer(kept: Kept, p: CreatePayload = payload(), profile?: ServiceProfile): Promise<PreviewCheck> {
  const checks = await checkSends(ctxWith(GUARD, profile), [{ payload: p, client: CLIENT, request: null, kept }]);
  expect(checks).toHaveLength(1);
  return checks[0]!;
}
const differs = (...differences: string[]): PreviewCheck => ({ asPreviewed: false, differences, detail: '' });
const matches = (fields: string): PreviewCheck => ({ asPreviewed: true, differences: [], detail: `the service's record shows the ${fields} as previewed` });

describe('checkSends from the answer: a record showing title, due date and items is compared, the list unread', () => {
  beforeEach(() => {
    guardReads = 0;
  });
  afterEach(() => {
    expect(guardReads).toBe(0);
  });

  it('a record that matches the preview in every field is as previewed, naming the fields compared in order', async () => {
    expect(await fromAnswer(KEPT)).toEqual(matches('client, title, due date, items, correctness mode'));
    expect(await fromAnswer(KEPT, payload(), NAMED)).toEqual(matches('client, title, due date, items, correctness mode'));
  });

  it('several sends that all show enough are each compared, in order, and the list is never read', async () => {
    const sent: SentToCheck[] = [
      { payload: payload(), client: CLIENT, request: null, kept: KEPT },
      { payload: payload(), client: CLIENT, request: null, kept: { ...KEPT, items: 3 } },
    ];
    expect(await checkSends(ctxWith(GUARD), sent)).toEqual([
      { asPreviewed: true, differences: [], detail: ALL_SHOWN },
      differs(`it has 3 checklist items, not 2 as previewed: check body.item and values.itemType in ${P}`),
    ]);
  });

  describe('client', () => {
    it('a different client id is a difference, quoting the kept id and naming the previewed one', async () => {
      expect(await fromAnswer({ ...KEPT, clientId: 'cl_2' })).toEqual(differs('it belongs to client id "cl_2", not cl_1 as previewed'));
    });

    it('a numeric client id is read as its text', async () => {
      expect(await fromAnswer({ ...KEPT, clientId: 42 })).toEqual(differs('it belongs to client id "42", not cl_1 as previewed'));
    });

    it('the client id decides over the name: same id, other name, is as previewed', async () => {
      expect(await fromAnswer({ ...KEPT, clientName: 'Someone Else' })).toEqual(matches('client, title, due date, items, correctness mode'));
    });

    it('an empty client id falls to the name, which matches after folding case, accents and white space', async () => {
      expect(await fromAnswer({ ...KEPT, clientId: '', clientName: '  LUCIA   muller ' })).toEqual(matches('client, title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, clientId: null, clientName: 'lucía müller' })).toEqual(matches('client, title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, clientId: undefined, clientName: 'Lucia Muller' })).toEqual(
        matches('client, title, due date, items, correctness mode'),
      );
    });

    it('a different client name is a difference quoting both names', async () => {
      expect(await fromAnswer({ ...KEPT, clientId: '', clientName: 'Someone Else' })).toEqual(
        differs('it names the client "Someone Else", not "Lucía Müller" as previewed'),
      );
    });

    it('no client id and no (or an empty) name: the client is not compared', async () => {
      expect(await fromAnswer({ ...KEPT, clientId: undefined, clientName: undefined })).toEqual(matches('title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, clientId: '', clientName: '' })).toEqual(matches('title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, clientId: null, clientName: null })).toEqual(matches('title, due date, items, correctness mode'));
    });
  });

  describe('title', () => {
    it('no title kept names the profile field and setting (renamed, and the default)', async () => {
      expect(await fromAnswer({ ...KEPT, title: null }, payload(), NAMED)).toEqual(
        differs(`it has no title (previewed "Tax Docs 2025"): ${dropped('subject', 'body.title')}`),
      );
      expect(await fromAnswer({ ...KEPT, title: '' })).toEqual(differs(`it has no title (previewed "Tax Docs 2025"): ${dropped('title', 'body.title')}`));
    });

    it('a different title quotes both', async () => {
      expect(await fromAnswer({ ...KEPT, title: 'Tax Docs 2024' })).toEqual(differs('its title reads "Tax Docs 2024", not "Tax Docs 2025" as previewed'));
    });

    it('a title that is not text is shown as its JSON', async () => {
      expect(await fromAnswer({ ...KEPT, title: { en: 'Tax Docs 2025' } })).toEqual(
        differs('its title reads "{\\"en\\":\\"Tax Docs 2025\\"}", not "Tax Docs 2025" as previewed'),
      );
      expect(await fromAnswer({ ...KEPT, title: 2025 }, payload({ title: '2025' }))).toEqual(matches('client, title, due date, items, correctness mode'));
    });

    it('a title the same after folding case, invisible characters and white space is as previewed', async () => {
      expect(await fromAnswer({ ...KEPT, title: 'tax\u200bdocs  2025 ' })).toEqual(matches('client, title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, title: 'TAXDOCS2025' })).toEqual(matches('client, title, due date, items, correctness mode'));
    });
  });

  describe('due date', () => {
    it('no due date kept, default profile: names dueDate and adds the date-time cause', async () => {
      const words = `it has no due date (previewed 2026-12-25): ${dropped('dueDate', 'body.dueDate')}${DATE_TIME}`;
      expect(await fromAnswer({ ...KEPT, dueDate: null })).toEqual(differs(words));
      expect(await fromAnswer({ ...KEPT, dueDate: '' })).toEqual(differs(words));
    });

    it('no due date kept, a renamed field: its name, and the date-time cause only when dates are sent as dates', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: null, correctnessMode: 'STRICT' }, payload(), NAMED)).toEqual(
        differs(`it has no due date (previewed 2026-12-25): ${dropped('due_on', 'body.dueDate')}`),
      );
      expect(await fromAnswer({ ...KEPT, dueDate: null }, payload(), NAMED_DATE)).toEqual(
        differs(`it has no due date (previewed 2026-12-25): ${dropped('due_on', 'body.dueDate')}${DATE_TIME}`),
      );
    });

    it('a due date that cannot be read as a day says so, quoting it', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: 'next Friday' })).toEqual(
        differs('its due date reads "next Friday", which this server cannot read as a day (previewed 2026-12-25)'),
      );
      // 03/04/2026 reads either way: only a profile that says which comes first reads it.
      expect(await fromAnswer({ ...KEPT, dueDate: '03/04/2026' })).toEqual(
        differs('its due date reads "03/04/2026", which this server cannot read as a day (previewed 2026-12-25)'),
      );
    });

    it.each([
      ['25/12/2026', '2026-12-25', '; check dates.ambiguous'],
      ['12/25/2026', '2026-12-25', '; check dates.ambiguous'],
      ['25.12.2026', '2026-12-25', '; check dates.ambiguous'],
      ['2026-12-25T10:00:00Z', '2026-12-25', ''],
      ['2026-12-25', '2026-12-25', ''],
      ['2026/12/25', '2026-12-25', ''],
      ['25 December 2026', '2026-12-25', ''],
    ])('a due date of another day, kept as %s, names the day read and the text it was read from', async (kept, day, ambiguous) => {
      expect(await fromAnswer({ ...KEPT, dueDate: kept }, payload({ dueDate: '2026-12-24' }))).toEqual(
        differs(`its due date is ${day}, not 2026-12-24 as previewed (read from ${JSON.stringify(kept)}${ambiguous})`),
      );
    });

    it('a numeric due date is read from its text', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: 20261225 }, payload({ dueDate: '2026-12-24' }))).toEqual(
        differs('its due date is 2026-12-25, not 2026-12-24 as previewed (read from "20261225")'),
      );
    });

    it('03/04/2026 is read day first or month first as the profile says, and so named', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: '03/04/2026', correctnessMode: 'STRICT' }, payload(), NAMED)).toEqual(
        differs('its due date is 2026-04-03, not 2026-12-25 as previewed (read from "03/04/2026"; check dates.ambiguous)'),
      );
      expect(await fromAnswer({ ...KEPT, dueDate: '03.04.2026', correctnessMode: 'STRICT' }, payload(), NAMED)).toEqual(
        differs('its due date is 2026-04-03, not 2026-12-25 as previewed (read from "03.04.2026"; check dates.ambiguous)'),
      );
      expect(await fromAnswer({ ...KEPT, dueDate: '03/04/2026' }, payload(), NAMED_DATE)).toEqual(
        differs('its due date is 2026-03-04, not 2026-12-25 as previewed (read from "03/04/2026"; check dates.ambiguous)'),
      );
    });

    it('the same day in another form is as previewed', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: '2026-12-25T23:30:00-05:00' })).toEqual(matches('client, title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, dueDate: '25/12/2026' })).toEqual(matches('client, title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, dueDate: '04/03/2026' }, payload({ dueDate: '2026-04-03' }), NAMED_DATE)).toEqual(
        matches('client, title, due date, items, correctness mode'),
      );
    });

    it('a due date the preview did not have is the service default, quoted', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: '2026-12-31' }, payload({}, ['dueDate']))).toEqual(
        differs(`it has a due date, "2026-12-31", that the preview did not (the service's own default)`),
      );
      expect(await fromAnswer({ ...KEPT, dueDate: 'whenever' }, payload({}, ['dueDate']))).toEqual(
        differs(`it has a due date, "whenever", that the preview did not (the service's own default)`),
      );
    });

    it('no due date either side is as previewed, the due date counted as compared', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: null }, payload({}, ['dueDate']))).toEqual(matches('client, title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, dueDate: '' }, payload({ dueDate: '' }))).toEqual(matches('client, title, due date, items, correctness mode'));
    });

    it('a blank due date kept is no due date: a difference against a previewed date, none without one', async () => {
      expect(await fromAnswer({ ...KEPT, dueDate: '   ' }, payload({}, ['dueDate']))).toEqual(matches('client, title, due date, items, correctness mode'));
      const blank = await fromAnswer({ ...KEPT, dueDate: '   ' });
      expect(blank.asPreviewed).toBe(false);
      expect(blank.differences).toHaveLength(1);
      expect(blank.differences[0]).toMatch(/^it has no due date \(previewed \d{4}-\d{2}-\d{2}\): the service probably does not know the field "dueDate"/);
    });
  });

  describe('items', () => {
    it('no items kept (null or 0) names the profile items field and setting', async () => {
      expect(await fromAnswer({ ...KEPT, items: null, correctnessMode: 'STRICT' }, payload(), NAMED)).toEqual(
        differs(`it has no checklist items (previewed 2): ${dropped('checklist', 'body.items')}`),
      );
      expect(await fromAnswer({ ...KEPT, items: 0 })).toEqual(differs(`it has no checklist items (previewed 2): ${dropped('items', 'body.items')}`));
    });

    it('one item kept where several were previewed: "item", singular', async () => {
      expect(await fromAnswer({ ...KEPT, items: 1 })).toEqual(
        differs(`it has 1 checklist item, not 2 as previewed: check body.item and values.itemType in ${P}`),
      );
    });

    it('several kept where one was previewed: "items", plural', async () => {
      expect(await fromAnswer({ ...KEPT, items: 2 }, payload({ items: [ITEMS[0]!] }))).toEqual(
        differs(`it has 2 checklist items, not 1 as previewed: check body.item and values.itemType in ${P}`),
      );
    });

    it('as many items as previewed, one or several, is as previewed', async () => {
      expect(await fromAnswer({ ...KEPT, items: 1 }, payload({ items: [ITEMS[0]!] }))).toEqual(matches('client, title, due date, items, correctness mode'));
      expect(await fromAnswer({ ...KEPT, items: 2 })).toEqual(matches('client, title, due date, items, correctness mode'));
    });
  });

  describe('correctness mode', () => {
    it('a mode not previewed is not compared, whatever the record shows', async () => {
      expect(await fromAnswer({ ...KEPT, correctnessMode: 'soft' }, payload({}, ['correctnessMode']))).toEqual(matches('client, title, due date, items'));
      expect(await fromAnswer({ ...KEPT, correctnessMode: null }, payload({}, ['correctnessMode']))).toEqual(matches('client, title, due date, items'));
    });

    it('a record that does not show a mode does not compare it', async () => {
      expect(await fromAnswer({ ...KEPT, correctnessMode: undefined })).toEqual(matches('client, title, due date, items'));
    });

    it('a mode kept as null names the profile field and setting', async () => {
      expect(await fromAnswer({ ...KEPT, correctnessMode: null }, payload(), NAMED)).toEqual(
        differs(`it shows no correctness mode (previewed hard): ${dropped('review_mode', 'body.correctnessMode')}`),
      );
      expect(await fromAnswer({ ...KEPT, correctnessMode: '' })).toEqual(
        differs(`it shows no correctness mode (previewed hard): ${dropped('correctnessMode', 'body.correctnessMode')}`),
      );
    });

    it.each(['STRICT', 'strict', 'hard', 'HARD'])('mode %s is as previewed where the profile spells hard as STRICT', async (mode) => {
      expect(await fromAnswer({ ...KEPT, correctnessMode: mode }, payload(), NAMED)).toEqual(matches('client, title, due date, items, correctness mode'));
    });

    it('mode Hard is as previewed under the default profile', async () => {
      expect(await fromAnswer({ ...KEPT, correctnessMode: 'Hard' })).toEqual(matches('client, title, due date, items, correctness mode'));
    });

    it('a different mode is a difference naming the profile setting', async () => {
      const words = (m: string) =>
        `its correctness mode is "${m}", not hard as previewed: the service may spell modes otherwise (values.correctnessMode in ${P})`;
      expect(await fromAnswer({ ...KEPT, correctnessMode: 'soft' }, payload(), NAMED)).toEqual(differs(words('soft')));
      // STRICT is hard only where the profile says so.
      expect(await fromAnswer({ ...KEPT, correctnessMode: 'STRICT' })).toEqual(differs(words('STRICT')));
    });
  });

  it('every difference at once is listed in the order client, title, due date, items, mode', async () => {
    const kept: Kept = { clientId: 'cl_9', title: 'Other', dueDate: '2027-01-01', items: 5, correctnessMode: 'off' };
    expect(await fromAnswer(kept)).toEqual(
      differs(
        'it belongs to client id "cl_9", not cl_1 as previewed',
        'its title reads "Other", not "Tax Docs 2025" as previewed',
        'its due date is 2027-01-01, not 2026-12-25 as previewed (read from "2027-01-01")',
        `it has 5 checklist items, not 2 as previewed: check body.item and values.itemType in ${P}`,
        `its correctness mode is "off", not hard as previewed: the service may spell modes otherwise (values.correctnessMode in ${P})`,
      ),
    );
  });
});

describe('checkText', () => {
  it('a record that differs: the heading, then one "- " line per difference', () => {
    expect(checkText(differs('first thing', 'second thing'))).toBe(
      "\nNOT AS PREVIEWED — the service's record differs from the preview:\n- first thing\n- second thing",
    );
  });

  it('a record as previewed adds nothing', () => {
    expect(checkText(matches('title, items'))).toBe('');
  });

  it('a check that could not be made says why, as a sentence', () => {
    expect(checkText({ asPreviewed: null, differences: [], detail: 'the list was busy' })).toBe('\nNot checked against the preview: the list was busy.');
  });
});

const sb = await sandbox();

describe('checkSends from the list: the real sandbox over HTTP, read once', () => {
  const apis: DocReqApi[] = [];
  function api(key: string = SANDBOX_KEYS.demo, baseUrl = sb.url): DocReqApi {
    const a = new DocReqApi({ baseUrl, apiKey: key, timeoutMs: 5_000, ...FAST_API });
    apis.push(a);
    return a;
  }
  afterAll(async () => {
    for (const a of apis) await a.close();
  });
  const listGets = () => sb.callsTo('GET', '/api/v1/requests').length;

  /** The list record a sandbox request is shown as (the API document's fields, as the sandbox's list writes them). */
  const shownAs = (r: SandboxRequest): RequestRecord => listRecord(r);
  let minute = 0;
  /** Requests put in the demo firm's list, the first newest. */
  function put(...records: Partial<SandboxRequest>[]): SandboxRequest[] {
    const made = records.map((r) => ({
      id: randomUUID(),
      title: 'Untitled',
      status: 'sent',
      dueDate: null,
      createdAt: new Date(Date.UTC(2026, 10, 28, 12, minute++)).toISOString(),
      clientId: 'cl_1',
      clientName: 'Lucía Müller',
      totalItems: 2,
      completedItems: 0,
      items: [],
      correctnessMode: 'advisory',
      ...r,
    }));
    sb.demoFirm.requests.unshift(...made);
    sb.invalidateLists();
    return made;
  }
  const ask = (over: Partial<SentToCheck> & { title: string }): SentToCheck => ({
    payload: payload({ title: over.title, correctnessMode: 'advisory' }),
    client: CLIENT,
    request: null,
    kept: undefined,
    ...over,
  });

  it('finds the created request by the id the answer gave, even with another title and client, and returns it', async () => {
    const title = `By id ${randomUUID()}`;
    const [target] = put({ title: 'What the service kept', clientName: 'Someone Else', dueDate: '2026-12-25' }, { title: 'Filler' }, { title });
    const request = { ...shownAs(target!), title: null };
    const [check] = await checkSends(ctxWith(api()), [ask({ title, request })]);
    expect(check).toEqual({
      asPreviewed: false,
      differences: [
        'it names the client "Someone Else", not "Lucía Müller" as previewed',
        `its title reads "What the service kept", not ${JSON.stringify(title)} as previewed`,
      ],
      detail: '',
      listed: shownAs(target!),
    });
    expect(listGets()).toBe(1);
  });

  it('a request found by id that matches is as previewed, the listed record returned', async () => {
    const title = `Matches ${randomUUID()}`;
    const [target] = put({ title, dueDate: '2026-12-25' }, { title: 'Newer filler' });
    const [check] = await checkSends(ctxWith(api()), [ask({ title, request: shownAs(target!), kept: null })]);
    expect(check).toEqual({ asPreviewed: true, differences: [], detail: matches('client, title, due date, items').detail, listed: shownAs(target!) });
  });

  it('an id the list lacks is not checked: an older request with this client and title does not stand in for it', async () => {
    const title = `Lagging ${randomUUID()}`;
    const [older] = put({ title, clientName: 'Lucía Müller', dueDate: '2026-12-25' });
    const request = { ...shownAs(older!), id: 'not-in-the-list' };
    const [check] = await checkSends(ctxWith(api()), [ask({ title, request })]);
    expect(check).toEqual({
      asPreviewed: null,
      differences: [],
      detail: "the service's list does not show it yet, so what it kept could not be compared with the preview: check with list_requests later",
    });
  });

  it('no id at all (no request, or an empty id) is found by client and title', async () => {
    const title = `No id ${randomUUID()}`;
    const [target] = put({ title, dueDate: '2026-12-25' });
    const expected = { asPreviewed: true, differences: [], detail: matches('client, title, due date, items').detail, listed: shownAs(target!) };
    const checks = await checkSends(ctxWith(api()), [ask({ title }), ask({ title, request: { ...shownAs(target!), id: '' } })]);
    expect(checks).toEqual([expected, expected]);
  });

  it('a request the list does not show: not checked, "does not show it yet", nothing listed', async () => {
    const title = `Missing ${randomUUID()}`;
    put({ title, clientName: 'Someone Else' }, { title: 'Other', clientName: 'Lucía Müller' });
    const gone = { ...shownAs(sb.demoFirm.requests[0]!), id: 'gone' };
    const checks = await checkSends(ctxWith(api()), [ask({ title, kept: null }), ask({ title, request: gone })]);
    expect(checks).toEqual([
      { asPreviewed: null, differences: [], detail: NOT_YET },
      { asPreviewed: null, differences: [], detail: NOT_YET },
    ]);
  });

  it("what the answer showed stands over the list's fields; fields it left undefined come from the list", async () => {
    const title = `From answer ${randomUUID()}`;
    const [target] = put({ title: 'List title', clientName: 'Someone Else', dueDate: '2026-12-25', totalItems: 7 });
    const request = shownAs(target!);
    const kept: Kept = { clientId: 'cl_1', title, dueDate: undefined, items: 2, correctnessMode: undefined };
    const [check] = await checkSends(ctxWith(api()), [ask({ title, request, kept })]);
    // The client compared by the answer's id (not the list's name), its title and items, the list's due date.
    expect(check).toEqual({ asPreviewed: true, differences: [], detail: matches('client, title, due date, items').detail, listed: request });
    const [other] = await checkSends(ctxWith(api()), [ask({ title, request, kept: { title: 'Answer title', correctnessMode: 'soft' } })]);
    expect(other).toEqual({
      asPreviewed: false,
      differences: [
        'it names the client "Someone Else", not "Lucía Müller" as previewed',
        `its title reads "Answer title", not ${JSON.stringify(title)} as previewed`,
        `it has 7 checklist items, not 2 as previewed: check body.item and values.itemType in ${P}`,
        `its correctness mode is "soft", not advisory as previewed: the service may spell modes otherwise (values.correctnessMode in ${P})`,
      ],
      detail: '',
      listed: request,
    });
  });

  it('an answer without the title, or without the items, is not enough: the list is read and fills them in', async () => {
    const title = `Half shown ${randomUUID()}`;
    const [target] = put({ title, dueDate: '2026-12-25', totalItems: 2 });
    const request = shownAs(target!);
    const checks = await checkSends(ctxWith(api()), [
      ask({ title, request, kept: { clientId: 'cl_1', dueDate: '2026-12-25', items: 2 } }),
      ask({ title, request, kept: { clientId: 'cl_1', title, dueDate: '2026-12-25' } }),
    ]);
    const expected = { asPreviewed: true, differences: [], detail: matches('client, title, due date, items').detail, listed: request };
    expect(checks).toEqual([expected, expected]);
    expect(listGets()).toBe(1);
  });

  it('a list that shows no ids: an answer without an id is matched by client and title, not by the missing id', async () => {
    const title = `No ids ${randomUUID()}`;
    const none = null as unknown as string;
    const [, target] = put({ id: none, title: 'Newer, another title' }, { id: none, title, dueDate: '2026-12-25' });
    const listed = shownAs(target!);
    expect(listed.id).toBeNull();
    const checks = await checkSends(ctxWith(api()), [ask({ title, request: listed }), ask({ title, request: null })]);
    const expected = { asPreviewed: true, differences: [], detail: matches('client, title, due date, items').detail, listed };
    expect(checks).toEqual([expected, expected]);
  });

  it('a batch reads the list once for all the sends that need it; one that shows enough is compared alone', async () => {
    const title = `Batch ${randomUUID()}`;
    const [a, b] = put({ title, dueDate: '2026-12-25' }, { title, clientName: 'Someone Else', dueDate: '2026-12-25' });
    const other: Client = { ...CLIENT, id: 'cl_2', displayName: 'Someone Else' };
    const checks = await checkSends(ctxWith(api()), [
      ask({ title, kept: { ...KEPT, title, correctnessMode: 'advisory', items: 1 } }),
      ask({ title, request: shownAs(a!) }),
      ask({ title, client: other, kept: null }),
      ask({ title: `${title} missing`, kept: undefined }),
    ]);
    const fine = matches('client, title, due date, items').detail;
    expect(checks).toEqual([
      differs(`it has 1 checklist item, not 2 as previewed: check body.item and values.itemType in ${P}`),
      { asPreviewed: true, differences: [], detail: fine, listed: shownAs(a!) },
      { asPreviewed: true, differences: [], detail: fine, listed: shownAs(b!) },
      { asPreviewed: null, differences: [], detail: NOT_YET },
    ]);
    expect(listGets()).toBe(1);
  });

  it('a batch where every send shows enough reads no list at all', async () => {
    const checks = await checkSends(ctxWith(api()), [ask({ title: 'Tax Docs 2025', kept: { ...KEPT, correctnessMode: 'advisory' } })]);
    expect(checks).toEqual([matches('client, title, due date, items, correctness mode')]);
    expect(listGets()).toBe(0);
  });

  it('the renamed profile words a field the list shows missing', async () => {
    const title = `Renamed ${randomUUID()}`;
    const [target] = put({ title, dueDate: null, totalItems: 0 });
    const [check] = await checkSends(ctxWith(api(), NAMED), [ask({ title, request: shownAs(target!) })]);
    expect(check).toEqual({
      asPreviewed: false,
      differences: [
        `it has no due date (previewed 2026-12-25): ${dropped('due_on', 'body.dueDate')}`,
        `it has no checklist items (previewed 2): ${dropped('checklist', 'body.items')}`,
      ],
      detail: '',
      listed: shownAs(target!),
    });
  });

  const unreadable = (why: string): PreviewCheck => ({
    asPreviewed: null,
    differences: [],
    detail: `the service's list could not be read to check it (${why})`,
  });

  it('a list refused for a wrong key leaves every send needing it unchecked, saying why, without the key', async () => {
    const wrong = 'drk_sandbox_wrong_5d1e0c3b9a7f2e64';
    const checks = await checkSends(ctxWith(api(wrong), undefined, wrong), [
      ask({ title: 'Tax Docs 2025', kept: { ...KEPT, correctnessMode: 'advisory' } }),
      ask({ title: 'Any', kept: null }),
      ask({ title: 'Other', request: { ...shownAs(sb.demoFirm.requests[0]!) } }),
    ]);
    const why = unreadable(
      'The service rejected the API key (401: missing, malformed, unknown or revoked). The service said: ' +
        '"The bearer key is missing, malformed, unknown or revoked." ("unauthorized").',
    );
    expect(checks).toEqual([matches('client, title, due date, items, correctness mode'), why, why]);
    expect(JSON.stringify(checks)).not.toContain(wrong);
    expect(listGets()).toBe(1);
  });

  it('a refusal that echoes the key is shown with the key redacted', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'echo', status: 400 });
    const checks = await checkSends(ctxWith(api()), [ask({ title: 'Any' })]);
    expect(checks).toEqual([
      unreadable(
        'The service refused the input (400). The service said: "Request refused: got Bearer [redacted] and a body of 0 bytes." ("echo"). ' +
          'Fields: "authorization": "Bearer [redacted]"; "body": "".',
      ),
    ]);
    expect(JSON.stringify(checks)).not.toContain(SANDBOX_KEYS.demo);
  });

  it('a call cancelled while the check reads the list stops that read: unchecked, saying the call was cancelled', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'latency', ms: 3_000 }, { times: 1 });
    const ctx = ctxWith(api());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const checks = await checkSends({ ...ctx, signal: controller.signal }, [ask({ title: 'Any' })]);
    expect(checks).toEqual([unreadable('The call was cancelled.')]);
  });

  it('a call whose deadline passes while the check reads the list stops that read: unchecked, saying the service did not answer in time', async () => {
    sb.inject('GET /api/v1/requests', { kind: 'latency', ms: 3_000 }, { times: 1 });
    const checks = await checkSends({ ...ctxWith(api()), deadline: Date.now() + 100 }, [ask({ title: 'Any' })]);
    expect(checks).toEqual([unreadable('The service did not answer within 5000 ms.')]);
  });

  it('a stopped service leaves the send unchecked, naming the address it could not reach', async () => {
    const gone = await startSandbox();
    const url = gone.url;
    await gone.close();
    const checks = await checkSends(ctxWith(api(SANDBOX_KEYS.demo, url)), [ask({ title: 'Any' })]);
    expect(checks).toEqual([
      unreadable(`Could not reach the service at ${url} (ECONNREFUSED): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address.`),
    ]);
  });
});
