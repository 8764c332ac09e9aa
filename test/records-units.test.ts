import { describe, expect, it } from 'vitest';
import { BadResponseError } from '../src/api/errors.js';
import {
  CLIENT_FIELDS,
  clientRecord,
  documentedClient,
  extraValue,
  listData,
  REQUEST_FIELDS,
  requestRecord,
  toClient,
  toRequest,
  type Client,
} from '../src/api/records.js';
import { redactor } from '../src/text/redact.js';

/**
 * The records the service sends, read one by one (src/api/records.ts): every documented field read leniently
 * (missing or null is null, numbers and booleans become text, objects compact JSON, counts from numbers or
 * numeric text), a conforming record kept as it is, every text redacted before it is capped, a client's other
 * fields kept only as bounded scalars and short lists, and the one list shape `{ "data": [...] }`.
 */

/** A secret that redaction lengthens (8 characters become the 10 of "[redacted]"). */
const SECRET = 'drk_K3Y9';
const R = '[redacted]';
/** A redaction that hands back whatever it is given as text: it shows any value that reaches it. */
const marking = (text: string): string => String(text).split(SECRET).join(R);
const REDACTS = [
  ['without a redaction', undefined],
  ['with a redaction', marking],
] as const;

const x = (n: number, c = 'a') => c.repeat(n);

const CLIENT = { id: 'c1', displayName: 'Acme Ltd', email: 'ops@acme.test', status: 'active' };
const REQUEST = {
  id: 'r1',
  title: 'Tax 2024',
  status: 'pending',
  clientName: 'Acme Ltd',
  dueDate: '2025-01-31',
  createdAt: '2024-12-01T09:00:00Z',
  totalItems: 4,
  completedItems: 1,
};
const NULL_CLIENT = { id: null, displayName: null, email: null, status: null };
const NULL_REQUEST = { id: null, title: null, status: null, dueDate: null, createdAt: null, clientName: null, totalItems: null, completedItems: null };

describe('the field lists a list element is read for', () => {
  it('a client: the four documented fields; a request: its six texts and two counts', () => {
    expect(CLIENT_FIELDS).toEqual(['id', 'displayName', 'email', 'status']);
    expect(REQUEST_FIELDS).toEqual(['id', 'title', 'status', 'dueDate', 'createdAt', 'clientName', 'totalItems', 'completedItems']);
  });
});

describe('toClient: a conforming record', () => {
  it('is kept as it is, not copied, with or without a redaction that changes nothing', () => {
    for (const [, redact] of REDACTS) {
      const raw = { ...CLIENT };
      expect(toClient(raw, redact)).toBe(raw);
      const nulls = { ...NULL_CLIENT };
      expect(toClient(nulls, redact)).toBe(nulls);
    }
  });

  it('a text of exactly 2,000 characters still conforms; one of 2,001 is capped to 2,000', () => {
    const edge = { ...CLIENT, displayName: x(2000) };
    expect(toClient(edge)).toBe(edge);
    const over = { ...CLIENT, displayName: x(2001) };
    const client = toClient(over);
    expect(client).not.toBe(over);
    expect(client).toStrictEqual({ ...CLIENT, displayName: x(2000) });
    expect(over.displayName).toHaveLength(2001);
  });

  it('a missing field, an unknown one, or a field of another type makes it read field by field', () => {
    const missing = { id: 'c1', displayName: 'Acme', email: 'a@b.test' };
    expect(toClient(missing)).toStrictEqual({ id: 'c1', displayName: 'Acme', email: 'a@b.test', status: null });
    const swapped = { id: 'c1', displayName: 'Acme', email: 'a@b.test', phone: 5 };
    expect(toClient(swapped)).toStrictEqual({ id: 'c1', displayName: 'Acme', email: 'a@b.test', status: null, extra: { phone: 5 } });
    const listed = { ...CLIENT, id: ['c', 1] };
    expect(toClient(listed)).toStrictEqual({ ...CLIENT, id: '["c",1]' });
    const counted = { ...CLIENT, status: 3 };
    const client = toClient(counted);
    expect(client).not.toBe(counted);
    expect(client).toStrictEqual({ ...CLIENT, status: '3' });
  });

  it('redacted into a copy: every field that held the secret, none other; the record given is left alone', () => {
    const raw = { id: 'c1', displayName: `${SECRET} Ltd`, email: `x${SECRET}@acme.test`, status: null };
    const client = toClient(raw, marking);
    expect(client).toStrictEqual({ id: 'c1', displayName: `${R} Ltd`, email: `x${R}@acme.test`, status: null });
    expect(raw).toStrictEqual({ id: 'c1', displayName: `${SECRET} Ltd`, email: `x${SECRET}@acme.test`, status: null });
    const one = { ...CLIENT, status: SECRET };
    expect(toClient(one, marking)).toStrictEqual({ ...CLIENT, status: R });
  });

  it('a text that redaction lengthens past 2,000 characters is capped after it', () => {
    const raw = { ...CLIENT, displayName: x(1992) + SECRET };
    const client = toClient(raw, marking);
    expect(client.displayName).toBe(x(1992) + R.slice(0, 8));
    expect(client.displayName).toHaveLength(2000);
  });
});

describe('toClient: a record read field by field', () => {
  it('what is not an object reads as a client of nulls', () => {
    for (const [, redact] of REDACTS) {
      for (const raw of [null, undefined, 0, 7, '', 'abcd', true, [], ['x', 'y'], {}]) {
        expect(toClient(raw, redact)).toStrictEqual(NULL_CLIENT);
      }
    }
  });

  it('an array is not a record, even one carrying the documented names', () => {
    const raw = Object.assign(['x'], CLIENT);
    expect(toClient(raw)).toStrictEqual(NULL_CLIENT);
    expect(toRequest(Object.assign(['x'], REQUEST))).toStrictEqual(NULL_REQUEST);
  });

  it('missing and null fields are null, whether a redaction is given or not', () => {
    for (const [, redact] of REDACTS) {
      expect(toClient({ id: 'c1', email: null }, redact)).toStrictEqual({ id: 'c1', displayName: null, email: null, status: null });
    }
  });

  it('numbers, booleans and big integers become their text', () => {
    for (const [, redact] of REDACTS) {
      expect(toClient({ id: 42, displayName: true, email: false, status: 10n }, redact)).toStrictEqual({
        id: '42',
        displayName: 'true',
        email: 'false',
        status: '10',
      });
      expect(toClient({ id: Number.NaN, displayName: Infinity, email: -0.5, status: 0 }, redact)).toStrictEqual({
        id: 'NaN',
        displayName: 'Infinity',
        email: '-0.5',
        status: '0',
      });
    }
  });

  it("numbers and booleans are written as themselves, not passed through the redaction (they are not the service's text)", () => {
    const redact = redactor(['true', 'false', '1234']);
    expect(toClient({ id: 1234, displayName: true, email: false, status: 'true' }, redact)).toStrictEqual({
      id: '1234',
      displayName: 'true',
      email: 'false',
      status: R,
    });
    expect(toRequest({ title: true, status: false }, redact)).toStrictEqual({ ...NULL_REQUEST, title: 'true', status: 'false' });
  });

  it('objects and lists become compact JSON; what cannot be written as JSON becomes null', () => {
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    for (const [, redact] of REDACTS) {
      expect(toClient({ id: { a: 1, b: [true, null] }, displayName: [], email: {}, status: loop }, redact)).toStrictEqual({
        id: '{"a":1,"b":[true,null]}',
        displayName: '[]',
        email: '{}',
        status: null,
      });
    }
  });

  it('other spellings of the documented names are not read as them', () => {
    expect(toClient({ ID: 'c1', name: 'Acme', display_name: 'Acme', mail: 'a@b.test' })).toStrictEqual({
      ...NULL_CLIENT,
      extra: { ID: 'c1', name: 'Acme', display_name: 'Acme', mail: 'a@b.test' },
    });
  });

  it('control and invisible characters are kept as data', () => {
    const odd = 'a\u0000b\u200b\u202e\n\t\u001b[31m';
    const raw = { id: odd, displayName: odd, email: 1, status: odd };
    expect(toClient(raw)).toStrictEqual({ id: odd, displayName: odd, email: '1', status: odd });
  });

  it('texts over 2,000 characters are cut to 2,000, with no marker; 2,000 are kept whole', () => {
    const client = toClient({ id: x(2001, 'i'), displayName: x(2000, 'd'), email: x(5000, 'e'), status: 1 });
    expect(client).toStrictEqual({ id: x(2000, 'i'), displayName: x(2000, 'd'), email: x(2000, 'e'), status: '1' });
  });

  it('the cut keeps a character whole or leaves it out: a pair of surrogates (an emoji) across the cap is not split', () => {
    const emoji = '\u{1F4C4}';
    const client = toClient({ id: x(1999) + emoji, displayName: x(1998) + emoji + 'z', email: { k: x(1993) + emoji }, status: x(1999) + 'é' + emoji }, marking);
    expect(client.id).toBe(x(1999));
    expect(client.displayName).toBe(x(1998) + emoji);
    expect(client.email).toBe(`{"k":"${x(1993)}`);
    expect(client.status).toBe(x(1999) + 'é');
    const extra = toClient({ ...CLIENT, a: x(499) + emoji, b: [x(498) + emoji + 'z'] }).extra;
    expect(extra).toStrictEqual({ a: x(499), b: [x(498) + emoji] });
    // The first and the last high surrogate (U+10000 and U+10FFFF) across the cap; a text within the cap is kept as it came, a lone surrogate at its end included.
    expect(toClient({ ...CLIENT, id: x(1999) + '\u{10000}', displayName: x(1999) + '\u{10FFFF}' })).toMatchObject({ id: x(1999), displayName: x(1999) });
    // (A status that is a number: the record is read field by field, through the cap.)
    expect(toClient({ ...CLIENT, id: x(1999) + '\ud83d', displayName: x(1998) + '\ud83d', status: 1 })).toMatchObject({
      id: x(1999) + '\ud83d',
      displayName: x(1998) + '\ud83d',
    });
    // A text redaction changed, as the record is kept otherwise whole.
    expect(toRequest({ ...REQUEST, title: x(1991) + SECRET + emoji }, marking).title).toBe(x(1991) + R.slice(0, 9));
    expect(toRequest({ ...REQUEST, title: SECRET + x(1989) + emoji + 'z' }, marking).title).toBe(R + x(1989));
  });

  it('JSON of 2,000 characters kept whole; longer JSON cut to 2,000, with no marker', () => {
    const client = toClient({ id: { k: x(3000) }, displayName: [x(1996)], email: [x(1997)] });
    expect(client.id).toBe(`{"k":"${x(1994)}`);
    expect(client.displayName).toBe(`["${x(1996)}"]`);
    expect(client.email).toBe(`["${x(1997)}"`);
    expect(client.email).toHaveLength(2000);
  });

  it('every text is redacted before the cap: a secret across the cap never survives as its prefix', () => {
    const client = toClient(
      { id: x(1996) + SECRET + 'zz', displayName: `${SECRET}`, email: { note: `a ${SECRET}` }, status: { k: x(1990) + SECRET } },
      marking,
    );
    expect(client.id).toBe(x(1996) + '[red');
    expect(client.displayName).toBe(R);
    expect(client.email).toBe(`{"note":"a ${R}"}`);
    expect(client.status).toBe(`{"k":"${x(1990)}${R}`.slice(0, 2000));
    for (const text of [client.id, client.displayName, client.email, client.status]) expect(text).not.toMatch(/drk_/);
  });

  it('a text redaction lengthens past 2,000 characters is capped after it', () => {
    const client = toClient({ id: x(1995) + SECRET, ok: true }, marking);
    expect(client.id).toBe(x(1995) + '[reda');
  });

  it('the real redaction, given the secret, hides it across the cap in the spellings it knows', () => {
    const secret = 'drk_live_0123456789';
    const redact = redactor([secret]);
    const client = toClient({ id: x(1990) + secret, displayName: secret.toUpperCase(), email: { k: secret }, status: 3 }, redact);
    expect(client).toStrictEqual({ id: x(1990) + R, displayName: R, email: `{"k":"${R}"}`, status: '3' });
  });
});

describe('toClient: the other fields (extra)', () => {
  it('absent when there are none, or none kept', () => {
    const client = toClient({ id: 'c1', obj: { a: 1 }, long: x(21).split(''), nested: [[1]] });
    expect(client).toStrictEqual({ id: 'c1', displayName: null, email: null, status: null });
    expect('extra' in client).toBe(false);
  });

  it('scalars kept as they are: text, finite numbers, booleans, null', () => {
    for (const [, redact] of REDACTS) {
      expect(toClient({ phone: '555', age: 3, score: -1.5, vip: true, gone: false, note: null }, redact).extra).toStrictEqual({
        phone: '555',
        age: 3,
        score: -1.5,
        vip: true,
        gone: false,
        note: null,
      });
    }
  });

  it('non-finite numbers, objects and big integers are left out', () => {
    expect(toClient({ a: Number.NaN, b: Infinity, c: -Infinity, d: {}, e: { length: 0 }, f: 1n, g: undefined, keep: 1 }).extra).toStrictEqual({ keep: 1 });
  });

  it('lists of up to 20 scalars kept; 21, or any non-scalar in them, left out', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => i);
    const extra = toClient({
      twenty,
      mixed: ['a', 1, true, null],
      empty: [],
      many: [...twenty, 20],
      obj: [1, {}],
      nested: [1, [2]],
      nan: [1, Number.NaN],
    }).extra;
    expect(extra).toStrictEqual({ twenty, mixed: ['a', 1, true, null], empty: [] });
  });

  it('texts capped at 500 characters, alone or in a list; 500 kept whole', () => {
    const extra = toClient({ a: x(500), b: x(501), c: [x(501), x(500), 'z'], d: x(2000) }).extra;
    expect(extra).toStrictEqual({ a: x(500), b: x(500), c: [x(500), x(500), 'z'], d: x(500) });
  });

  it('texts redacted before the cap, alone or in a list; numbers and booleans are not turned to text', () => {
    const extra = toClient({ a: `call ${SECRET}`, b: x(496) + SECRET, c: ['x', SECRET, 7, false, null], d: 12, e: true, f: null }, marking).extra;
    expect(extra).toStrictEqual({ a: `call ${R}`, b: x(496) + '[red', c: ['x', R, 7, false, null], d: 12, e: true, f: null });
  });

  it('names up to 64 characters kept; longer ones left out', () => {
    const extra = toClient({ [x(64, 'k')]: 1, [x(65, 'k')]: 2, [x(63, 'k')]: 3 }).extra;
    expect(extra).toStrictEqual({ [x(64, 'k')]: 1, [x(63, 'k')]: 3 });
  });

  it('a field named __proto__ is left out, and nothing of it reaches the record', () => {
    const raw = JSON.parse('{"id":"c1","__proto__":"x"}') as unknown;
    const client = toClient(raw);
    expect(client).toStrictEqual({ id: 'c1', displayName: null, email: null, status: null });
    expect('extra' in client).toBe(false);
    const listed = toClient(JSON.parse('{"__proto__":["x"],"ok":1}') as unknown);
    expect(listed.extra).toStrictEqual({ ok: 1 });
    expect(Object.getPrototypeOf(listed.extra)).toBe(Object.prototype);
  });

  it('the documented fields are never among them', () => {
    expect(toClient({ id: 1, displayName: 'A', email: 'e', status: 's', phone: 'p' }).extra).toStrictEqual({ phone: 'p' });
  });

  it('at most the first 16 kept, counting only fields kept', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`f${i}`, i]));
    expect(toClient({ skip: {}, id: 'c', ...sixteen }).extra).toStrictEqual(sixteen);
    expect(toClient({ ...sixteen, f16: 16, f17: 17 }).extra).toStrictEqual(sixteen);
    const fifteen = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`f${i}`, i]));
    expect(toClient({ ...fifteen, bad: {}, last: 'z' }).extra).toStrictEqual({ ...fifteen, last: 'z' });
  });

  it('every kept value is one the output schema accepts', () => {
    const extra = toClient({ a: 'x', b: 1, c: true, d: null, e: ['x', 2, false, null] }).extra ?? {};
    for (const value of Object.values(extra)) expect(extraValue.safeParse(value).success).toBe(true);
  });
});

describe('documentedClient', () => {
  it('the four documented fields only, the others dropped', () => {
    const client: Client = { ...CLIENT, extra: { phone: '555' } };
    expect(documentedClient(client)).toStrictEqual(CLIENT);
    expect(documentedClient({ ...NULL_CLIENT })).toStrictEqual(NULL_CLIENT);
  });
});

describe('toRequest: a conforming record', () => {
  it('is kept as it is, not copied, with or without a redaction that changes nothing', () => {
    for (const [, redact] of REDACTS) {
      const raw = { ...REQUEST };
      expect(toRequest(raw, redact)).toBe(raw);
      const nulls = { ...NULL_REQUEST };
      expect(toRequest(nulls, redact)).toBe(nulls);
    }
  });

  it('texts of exactly 2,000 characters and counts of any finite number still conform', () => {
    const raw = { ...REQUEST, title: x(2000), totalItems: -3, completedItems: 0.5 };
    expect(toRequest(raw)).toBe(raw);
  });

  it('a text over 2,000, a count not finite or given as text, a missing or an unknown field: read field by field', () => {
    expect(toRequest({ ...REQUEST, title: x(2001) })).toStrictEqual({ ...REQUEST, title: x(2000) });
    expect(toRequest({ ...REQUEST, totalItems: Number.NaN })).toStrictEqual({ ...REQUEST, totalItems: null });
    expect(toRequest({ ...REQUEST, completedItems: Infinity })).toStrictEqual({ ...REQUEST, completedItems: null });
    expect(toRequest({ ...REQUEST, totalItems: '5' })).toStrictEqual({ ...REQUEST, totalItems: 5 });
    expect(toRequest({ ...REQUEST, completedItems: '2' })).toStrictEqual({ ...REQUEST, completedItems: 2 });
    const { status: _status, ...missing } = REQUEST;
    expect(toRequest({ ...missing, note: 1 })).toStrictEqual({ ...REQUEST, status: null });
    const { totalItems: _total, ...noTotal } = REQUEST;
    expect(toRequest({ ...noTotal, extra: null })).toStrictEqual({ ...REQUEST, totalItems: null });
    const copied = { ...REQUEST, other: 'x' };
    expect(toRequest(copied)).not.toBe(copied);
    const listed = { ...REQUEST, id: ['r', 1] };
    expect(toRequest(listed)).toStrictEqual({ ...REQUEST, id: '["r",1]' });
    const counted = { ...REQUEST, title: 7 };
    const request = toRequest(counted);
    expect(request).not.toBe(counted);
    expect(request).toStrictEqual({ ...REQUEST, title: '7' });
  });

  it('redacted into a copy, every text field; the counts and the record given are left alone', () => {
    const raw = { ...REQUEST, id: SECRET, title: `t ${SECRET}`, clientName: `${SECRET}${SECRET}`, status: null };
    const before = structuredClone(raw);
    expect(toRequest(raw, marking)).toStrictEqual({ ...REQUEST, id: R, title: `t ${R}`, clientName: R + R, status: null });
    expect(raw).toStrictEqual(before);
    for (const key of ['status', 'dueDate', 'createdAt'] as const) {
      expect(toRequest({ ...REQUEST, [key]: `<${SECRET}>` }, marking)).toStrictEqual({ ...REQUEST, [key]: `<${R}>` });
    }
  });

  it('a text that redaction lengthens past 2,000 characters is capped after it', () => {
    const request = toRequest({ ...REQUEST, title: x(1995) + SECRET }, marking);
    expect(request).toStrictEqual({ ...REQUEST, title: x(1995) + '[reda' });
  });
});

describe('toRequest: a record read field by field', () => {
  it('what is not an object reads as a request of nulls', () => {
    for (const [, redact] of REDACTS) {
      for (const raw of [null, undefined, 0, 'abcd', false, [], [REQUEST], {}]) {
        expect(toRequest(raw, redact)).toStrictEqual(NULL_REQUEST);
      }
    }
  });

  it('each text field: null and missing are null, numbers and booleans their text, objects JSON', () => {
    for (const [, redact] of REDACTS) {
      expect(toRequest({ id: 9, title: false, status: null, dueDate: 1735603200000, createdAt: { at: 1 } }, redact)).toStrictEqual({
        ...NULL_REQUEST,
        id: '9',
        title: 'false',
        dueDate: '1735603200000',
        createdAt: '{"at":1}',
      });
      expect(toRequest({ clientName: true, dueDate: 20n, totalItems: 1 }, redact)).toStrictEqual({
        ...NULL_REQUEST,
        clientName: 'true',
        dueDate: '20',
        totalItems: 1,
      });
    }
  });

  it('dates are kept as given, in any form, never read or reformatted', () => {
    const forms = ['2025-01-31', '31/01/2025', 'next week', '2025-01-31T00:00:00.000+02:00', ''];
    for (const dueDate of forms) expect(toRequest({ dueDate, createdAt: dueDate, x: 1 })).toStrictEqual({ ...NULL_REQUEST, dueDate, createdAt: dueDate });
  });

  it('other spellings of the documented names are not read as them', () => {
    expect(toRequest({ ID: 'r', name: 't', client_name: 'c', due_date: 'd', total_items: 3, completed: 1, items: [1, 2] })).toStrictEqual(NULL_REQUEST);
  });

  it('texts capped at 2,000 characters after redaction; a secret across the cap does not survive', () => {
    const request = toRequest({ id: x(2001), title: x(1996) + SECRET + 'tail', status: x(2000), clientName: { n: x(1992) + SECRET } }, marking);
    expect(request.id).toBe(x(2000));
    expect(request.title).toBe(x(1996) + '[red');
    expect(request.status).toBe(x(2000));
    expect(request.clientName).toBe(`{"n":"${x(1992)}[r`);
    expect(request.clientName).toHaveLength(2000);
  });

  it('control and invisible characters are kept as data', () => {
    const odd = '\u0007a\u00adb\ufeff\r\n';
    expect(toRequest({ title: odd, clientName: odd })).toStrictEqual({ ...NULL_REQUEST, title: odd, clientName: odd });
  });
});

describe('toRequest: the counts', () => {
  const count = (v: unknown) => toRequest({ totalItems: v, completedItems: v, extra: 1 });

  it('a finite number as it is', () => {
    for (const n of [0, 3, -2, 1.5, 1e6]) expect(count(n)).toStrictEqual({ ...NULL_REQUEST, totalItems: n, completedItems: n });
  });

  it('numeric text as its number, spaces around it allowed', () => {
    const cases: [string, number][] = [
      ['7', 7],
      [' 12 ', 12],
      ['0', 0],
      ['-1', -1],
      ['2.5', 2.5],
      ['1e3', 1000],
      ['0x10', 16],
      ['\t3\n', 3],
    ];
    for (const [text, n] of cases) expect(count(text)).toStrictEqual({ ...NULL_REQUEST, totalItems: n, completedItems: n });
  });

  it('null otherwise: missing, null, empty or blank text, words, non-finite, booleans, objects', () => {
    for (const v of [
      undefined,
      null,
      '',
      '   ',
      'four',
      '3 items',
      'Infinity',
      '-Infinity',
      'NaN',
      Number.NaN,
      Infinity,
      -Infinity,
      true,
      false,
      {},
      [3],
      ['3'],
      5n,
    ]) {
      expect(count(v)).toStrictEqual(NULL_REQUEST);
    }
  });

  it('the two counts read independently', () => {
    expect(toRequest({ totalItems: '4', completedItems: 'x' })).toStrictEqual({ ...NULL_REQUEST, totalItems: 4 });
    expect(toRequest({ totalItems: null, completedItems: 2 })).toStrictEqual({ ...NULL_REQUEST, completedItems: 2 });
  });
});

describe('the output schemas accept what the readers produce', () => {
  const raws: unknown[] = [CLIENT, REQUEST, null, 'x', { id: 1, title: { a: 1 }, totalItems: '3', completedItems: 'NaN' }, { id: x(3000), status: true }];

  it('every client and every request read', () => {
    for (const raw of raws) {
      expect(clientRecord.parse(documentedClient(toClient(raw)))).toStrictEqual(documentedClient(toClient(raw)));
      expect(requestRecord.parse(toRequest(raw))).toStrictEqual(toRequest(raw));
    }
  });

  it('and refuse fields of another type', () => {
    expect(clientRecord.safeParse({ ...CLIENT, id: 1 }).success).toBe(false);
    expect(clientRecord.safeParse({ ...CLIENT, status: undefined }).success).toBe(false);
    expect(requestRecord.safeParse({ ...REQUEST, totalItems: '4' }).success).toBe(false);
    expect(requestRecord.safeParse({ ...REQUEST, title: 4 }).success).toBe(false);
  });

  it('an extra value: a scalar or a list of scalars, nothing deeper', () => {
    for (const ok of ['a', 1, true, null, [], ['a', 1, false, null]]) expect(extraValue.safeParse(ok).success).toBe(true);
    for (const bad of [{}, [[1]], [{}], undefined]) expect(extraValue.safeParse(bad).success).toBe(false);
  });
});

describe('listData', () => {
  it('the "data" array of an object, as it is', () => {
    const data = [{ id: 'a' }, 1, null];
    const body = { data, more: true };
    expect(listData(body, 'client')).toBe(data);
    expect(listData({ data: [] }, 'request')).toEqual([]);
  });

  it('anything but an object: a bad response naming what came', () => {
    const cases: [unknown, string][] = [
      [null, 'object'],
      [undefined, 'undefined'],
      [0, 'number'],
      ['', 'string'],
      ['{"data":[]}', 'string'],
      [false, 'boolean'],
      [[], 'an array'],
      [[{ data: [] }], 'an array'],
    ];
    for (const [body, got] of cases) {
      const thrown = (() => {
        try {
          listData(body, 'client');
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(thrown).toBeInstanceOf(BadResponseError);
      expect((thrown as Error).message).toBe(`The service's client list is not a JSON object with a "data" array (got ${got}).`);
    }
  });

  it('an object without a "data" array: a bad response naming what data is', () => {
    const cases: [unknown, string][] = [
      [{}, 'missing'],
      [{ data: undefined }, 'missing'],
      [{ data: null }, 'object'],
      [{ data: {} }, 'object'],
      [{ data: { 0: 'a', length: 1 } }, 'object'],
      [{ data: 'abc' }, 'string'],
      [{ data: 3 }, 'number'],
      [{ items: [] }, 'missing'],
    ];
    for (const [body, is] of cases) {
      expect(() => listData(body, 'request')).toThrow(BadResponseError);
      expect(() => listData(body, 'request')).toThrow(`The service's request list has no "data" array (data is ${is}).`);
    }
  });
});
