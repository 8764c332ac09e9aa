// Signs of more pages in a list answer (the body outside its records, and the Link header), kept
// through revalidation; and the survey of the records' fields beyond the read ones, for `check`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { DocReqApi, type ApiClientOptions } from '../src/api/client.js';
import { ListStreamParser, surveyOf, type ListStreamOptions } from '../src/api/list-stream.js';
import { CLIENT_FIELDS, REQUEST_FIELDS } from '../src/api/records.js';
import { bodyPaging, linkPaging } from '../src/api/unreadable.js';

/** Chunk sizes that cut the body everywhere (1, 2, 5 bytes) and that hand it over whole. */
const SIZES = [1, 2, 5, 13, 1 << 20];

/** Feeds `body` to a fresh parser in chunks of `size` bytes; the parser and its records. */
function feed(body: string | Buffer, size: number, options: ListStreamOptions = { fields: REQUEST_FIELDS }) {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const parser = new ListStreamParser('request', (v) => v, options);
  for (let at = 0; at < bytes.length; at += size) parser.write(bytes.subarray(at, at + size));
  const records = parser.end();
  return { parser, records };
}

/** The paging sentence of `body`, checked to be the same however the body is chunked. */
function pagingOf(body: string): string | undefined {
  const seen = SIZES.map((size) => feed(body, size).parser.paging);
  for (const s of seen) expect(s, body).toBe(seen[0]);
  return seen[0];
}

const three = [
  { id: 'r1', title: 'A' },
  { id: 'r2', title: 'B' },
  { id: 'r3', title: 'C' },
];
/** A list of three records with `extra` beside data: once before it, once after it. */
const around = (extra: Record<string, unknown>) => [JSON.stringify({ ...extra, data: three }), JSON.stringify({ data: three, ...extra })];

describe('paging signals in the body', () => {
  const set: [string, Record<string, unknown>][] = [
    ['next', { next: 'https://svc.example/api/v1/requests?page=2' }],
    ['next_cursor', { next_cursor: 'abc' }],
    ['nextCursor', { nextCursor: 'abc' }],
    ['next_page', { next_page: 2 }],
    ['nextPage', { nextPage: 2 }],
    ['nextPageToken', { nextPageToken: 'tok' }],
    ['next_page_token', { next_page_token: 'tok' }],
    ['cursor', { cursor: 'c2' }],
    ['next_page_url', { next_page_url: '/x?page=2' }],
    ['@odata.nextLink', { '@odata.nextLink': '/x?$skip=3' }],
    ['links.next', { links: { self: '/x', next: '/x?page=2' } }],
    ['_links.next', { _links: { next: { href: '/x?page=2' } } }],
    ['meta.next', { meta: { next: '/x?page=2' } }],
    ['meta.next_cursor', { meta: { next_cursor: 'abc' } }],
    ['pagination.next', { pagination: { next: '/x?page=2' } }],
    ['pagination.next_page', { pagination: { next_page: 2 } }],
  ];
  it.each(set)('names "%s" when it is set, before or after data, however the body is chunked', (name, extra) => {
    for (const body of around(extra)) expect(pagingOf(body)).toBe(`the answer's "${name}" is set`);
  });

  const flags: [string, Record<string, unknown>][] = [
    ['has_more', { has_more: true }],
    ['hasMore', { hasMore: true }],
    ['more', { more: true }],
    ['hasNextPage', { pageInfo: { hasNextPage: true } }],
    ['meta.has_more', { meta: { has_more: true } }],
    ['meta.hasMore', { meta: { hasMore: true } }],
    ['pagination.has_more', { pagination: { has_more: true } }],
  ];
  it.each(flags)('names "%s" when it is true', (name, extra) => {
    const path = name === 'hasNextPage' ? 'pageInfo.hasNextPage' : name;
    for (const body of around(extra)) expect(pagingOf(body)).toBe(`the answer's "${path}" is true`);
  });

  it('gives no signal for values that point nowhere, flags that are not exactly true, or other keys', () => {
    const none: Record<string, unknown>[] = [
      {},
      { next: null, next_cursor: '', nextCursor: '  ', cursor: false, next_page: [], nextPage: {} },
      { has_more: false, hasMore: 'true', more: 1 },
      { links: { self: '/x', next: null, prev: '/x?page=0' } },
      { meta: { has_more: false, next: null, request_id: 'q1' } },
      { links: ['next'], meta: 'next', pagination: null },
      { previous: '/x?page=0', nextcursor: 'abc', Next: 'x', HAS_MORE: true },
    ];
    for (const extra of none) for (const body of around(extra)) expect(pagingOf(body), body).toBeUndefined();
  });

  it('reads keys however JSON spells them, and never the records: a record\'s own "next" or "has_more" is no signal', () => {
    expect(pagingOf('{"data":[{"id":"r1"}],"has_\\u006dore":true}')).toBe('the answer\'s "has_more" is true');
    expect(pagingOf('{"\\u006eext":"2","data":[]}')).toBe('the answer\'s "next" is set');
    const inside = JSON.stringify({ data: [{ id: 'r1', next: 'r2', has_more: true, total: 99, meta: { next: 'x' }, links: { next: 'y' } }], total: 1 });
    expect(pagingOf(inside)).toBeUndefined();
    // Only the last "data" holds the records, as JSON.parse says: the total is weighed against it.
    expect(pagingOf('{"data":[{"id":"a"},{"id":"b"}],"total":2,"data":[{"id":"c"}]}')).toBe('the answer\'s "total" is 2 but it holds 1 record');
  });

  it('names a total larger than the records given, and gives none for a total equal to them or smaller', () => {
    const totals: [Record<string, unknown>, string | undefined][] = [
      [{ total: 250 }, 'the answer\'s "total" is 250 but it holds 3 records'],
      [{ total_count: 4 }, 'the answer\'s "total_count" is 4 but it holds 3 records'],
      [{ totalCount: 1_000_000 }, 'the answer\'s "totalCount" is 1,000,000 but it holds 3 records'],
      [{ count: 9 }, 'the answer\'s "count" is 9 but it holds 3 records'],
      [{ meta: { total: 10 } }, 'the answer\'s "meta.total" is 10 but it holds 3 records'],
      [{ pagination: { total: 10 } }, 'the answer\'s "pagination.total" is 10 but it holds 3 records'],
      [{ meta: { total_pages: 4, page: 1 } }, 'the answer\'s "meta.total_pages" is 4 but it is page 1'],
      [{ last_page: 2 }, 'the answer\'s "last_page" is 2 but it is page 1'],
      [{ total: 3 }, undefined],
      [{ total: 3, count: 3, meta: { total: 3 }, pagination: { total: 3 } }, undefined],
      [{ total: 2 }, undefined],
      [{ total: '250', count: null }, undefined],
      [{ meta: { total_pages: 4, page: 4 } }, undefined],
      [{ total_pages: 1 }, undefined],
    ];
    for (const [extra, want] of totals) for (const body of around(extra)) expect(pagingOf(body), body).toBe(want);
    expect(pagingOf('{"total":1,"data":[]}')).toBe('the answer\'s "total" is 1 but it holds 0 records');
    // Explicit signs are named before a total.
    expect(pagingOf(JSON.stringify({ total: 10, meta: { has_more: true }, data: three }))).toBe('the answer\'s "meta.has_more" is true');
  });

  it('reads the signal after a body large enough for the fast path, and a total against every record it kept', () => {
    const records = Array.from({ length: 3_000 }, (_, i) => ({ id: `r${i}`, title: `Tax ${i}`, totalItems: i }));
    for (const [total, want] of [
      [3_001, 'the answer\'s "total" is 3,001 but it holds 3,000 records'],
      [3_000, undefined],
    ] as const) {
      const body = JSON.stringify({ data: records, total, after: { data: 1 } });
      expect(body.length).toBeGreaterThan(128 * 1024);
      for (const size of [1 << 20, 64 * 1024, 4_000, 333]) {
        const { parser, records: got } = feed(body, size);
        expect(got).toHaveLength(3_000);
        expect(parser.paging).toBe(want);
      }
    }
  });

  it('bodyPaging reads nothing inherited and nothing from a body that is not an object', () => {
    expect(bodyPaging(Object.assign(Object.create({ next: 'x', has_more: true, total: 9 }) as object, { data: [] }), 0)).toBeUndefined();
    expect(bodyPaging(JSON.parse('{"__proto__":{"next":"x","has_more":true},"data":[]}'), 0)).toBeUndefined();
    expect(bodyPaging([], 0)).toBeUndefined();
    expect(bodyPaging(null, 0)).toBeUndefined();
  });
});

describe('the Link header', () => {
  const sentence = 'the answer has a Link header with rel="next"';
  it('finds rel="next" quoted or not, in any case, among several types, links and lines', () => {
    const yes = [
      '<https://svc.example/api/v1/requests?page=2>; rel="next"',
      '<https://svc.example/api/v1/requests?page=2>; rel=next',
      '<https://svc.example/api/v1/requests?page=2>;rel=NEXT',
      '<https://svc.example/api/v1/requests?page=2> ; REL = "Next"',
      '<https://svc.example/x?page=1>; rel="prev", <https://svc.example/x?page=3>; rel="next"',
      '<https://svc.example/x?page=9>; rel="last next"',
      '<https://svc.example/x?a=1,2;b=3>; title="a, b; c"; rel="next"',
      '<https://svc.example/x?page=2>; title="page \\" two"; rel="next"',
    ];
    for (const link of yes) expect(linkPaging(link), link).toBe(sentence);
    expect(linkPaging(['<https://svc.example/x?page=1>; rel="prev"', '<https://svc.example/x?page=3>; rel="next"'])).toBe(sentence);
  });

  it("finds none in other types, in a target or in another parameter's value", () => {
    const no = [
      undefined,
      '',
      '<https://svc.example/x?page=1>; rel="prev"',
      '<https://svc.example/x?page=1>; rel="nextpage"',
      '<https://svc.example/x?page=1>; rel="https://svc.example/rels/next"',
      '<https://svc.example/x;rel=next;a=b>; rel="self"',
      '<https://svc.example/x>; title="; rel=next"',
      '<https://svc.example/x>; anchor="#a"; next',
      '<https://svc.example/x; rel=next',
    ];
    for (const link of no) expect(linkPaging(link), String(link)).toBeUndefined();
    expect(linkPaging(['<https://svc.example/x>; rel="prev"', '<https://svc.example/y>; rel="first"'])).toBeUndefined();
  });
});

describe('the survey of fields beyond the read ones', () => {
  it('is absent without survey', () => {
    const { parser } = feed(JSON.stringify({ data: [{ id: 'r1', priority: 'high' }] }), 5);
    expect(parser.surveyed).toBeUndefined();
  });

  it('counts, per record, each top-level key that is not read, however the body is chunked and on every path', () => {
    const data = [
      { id: 'r1', title: 'A', priority: 'high', tags: ['x'], nested: { deep: { priority: 1 } } },
      { id: 'r2', priority: 'low', assignee: { id: 'u1' } },
      { id: 'r3', title: 'C' },
      'not an object',
      [1, 2],
      null,
      { id: 'r4', title: 'B', priority: null },
    ];
    const body = JSON.stringify({ data, total: 7 });
    for (const size of SIZES) {
      const { parser } = feed(body, size, { fields: REQUEST_FIELDS, survey: true });
      expect(Object.fromEntries(parser.surveyed!)).toEqual({ priority: 3, tags: 1, nested: 1, assignee: 1 });
    }
    // A body large enough for the fast path: the same counts.
    const many = Array.from({ length: 3_000 }, (_, i) => (i % 3 ? { id: `r${i}`, title: 'T' } : { id: `r${i}`, title: 'T', priority: i }));
    for (const size of [1 << 20, 64 * 1024, 777]) {
      const { parser } = feed(JSON.stringify({ data: many }), size, { fields: REQUEST_FIELDS, survey: true });
      expect(Object.fromEntries(parser.surveyed!)).toEqual({ priority: 1_000 });
    }
  });

  it('counts a key whose value nests too deep to read (skipped unread), and starts again at a repeated "data"', () => {
    const deep = '{"a":'.repeat(100) + '1' + '}'.repeat(100);
    const body = `{"data":[{"id":"r1","odd":${deep}},{"id":"r2","odd":1}]}`;
    for (const size of [1, 7, 1 << 20]) {
      const { parser, records } = feed(body, size, { fields: REQUEST_FIELDS, survey: true });
      expect(records).toHaveLength(2);
      expect(Object.fromEntries(parser.surveyed!)).toEqual({ odd: 2 });
    }
    const twice = '{"data":[{"id":"a","x":1},{"id":"b","x":2}],"data":[{"id":"c","y":1}]}';
    for (const size of [1, 1 << 20]) expect(Object.fromEntries(feed(twice, size, { fields: REQUEST_FIELDS, survey: true }).parser.surveyed!)).toEqual({ y: 1 });
  });

  it('keeps at most 50 distinct keys and never counts "__proto__"', () => {
    const wide = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`f${i}`, i]));
    const body = `{"data":[{"__proto__":{"x":1},"id":"r0","f0":1},${JSON.stringify({ id: 'r1', ...wide })},{"id":"r2","f79":1,"f0":1}]}`;
    const { parser } = feed(body, 9, { fields: CLIENT_FIELDS, survey: true });
    const counted = parser.surveyed!;
    expect(counted.size).toBe(50);
    expect(counted.get('f0')).toBe(3);
    expect(counted.has('f79')).toBe(false);
    expect(counted.has('__proto__')).toBe(false);
    // Nor does the survey a list answer gives, whatever the counts it is made from.
    const fields = surveyOf(
      new Map([
        ['__proto__', 2],
        ['tags', 1],
      ]),
      (text) => text,
    ).fields;
    expect(Object.keys(fields)).toEqual(['tags']);
    expect(Object.getPrototypeOf(fields)).toBeNull();
  });
});

describe('through the API client', () => {
  const KEY = 'sk_test_paging_9f3a7c';
  const apis: DocReqApi[] = [];
  afterAll(async () => {
    await Promise.all(apis.map((a) => a.close()));
  });
  function api(baseUrl: string, options: Partial<ApiClientOptions> = {}): DocReqApi {
    const a = new DocReqApi({ baseUrl, apiKey: KEY, timeoutMs: 5_000, retryBaseDelayMs: 5, maxRetries: 0, proxyEnv: {}, ...options });
    apis.push(a);
    return a;
  }

  interface Seen {
    path: string;
    ifNoneMatch: string | undefined;
    ifModifiedSince: string | undefined;
  }
  interface Answer {
    body: unknown;
    headers?: Record<string, string | string[]>;
    delayMs?: number;
    /** Validate with Last-Modified alone (no ETag). */
    lastModifiedOnly?: boolean;
    /** Answer 304 whatever was asked. */
    notModified?: boolean;
  }
  const LAST_MODIFIED = 'Wed, 25 Nov 2026 10:00:00 GMT';
  /** A loopback service: each GET is answered by `answer`; a validator equal to the one it gave gets 304. */
  async function service(answer: (req: IncomingMessage) => Answer) {
    const seen: Seen[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push({ path: req.url!, ifNoneMatch: req.headers['if-none-match'], ifModifiedSince: req.headers['if-modified-since'] });
      const { body, headers = {}, delayMs = 0, lastModifiedOnly = false, notModified = false } = answer(req);
      const text = JSON.stringify(body);
      const etag = `"${text.length}"`;
      const validator = lastModifiedOnly ? { 'last-modified': LAST_MODIFIED } : { etag };
      const fresh = lastModifiedOnly ? req.headers['if-modified-since'] === LAST_MODIFIED : req.headers['if-none-match'] === etag;
      setTimeout(() => {
        if (fresh || notModified) {
          res.writeHead(304, validator);
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', ...validator, ...headers });
        res.end(text);
      }, delayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    server.on('connection', (s) => afterAll(() => void s.destroy()));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
  }

  const requests = [
    { id: 'r1', title: 'A', status: 'open', priority: 'high' },
    { id: 'r2', title: 'B', status: 'open' },
  ];

  it('reads a Link header with rel="next"; a signal in the body is named first; none without either', async () => {
    let body: unknown = { data: requests };
    let link: string | string[] | undefined = '<http://x/api/v1/requests?page=2>; rel="next"';
    const svc = await service(() => (link ? { body, headers: { link } } : { body }));
    expect((await api(svc.url).fetchRequests()).paging).toBe('the answer has a Link header with rel="next"');
    link = ['<http://x/api/v1/requests?page=0>; rel="prev"', '<http://x/api/v1/requests?page=2>; rel="next"'];
    expect((await api(svc.url).fetchRequests()).paging).toBe('the answer has a Link header with rel="next"');
    body = { data: requests, has_more: true };
    expect((await api(svc.url).fetchRequests()).paging).toBe('the answer\'s "has_more" is true');
    link = '<http://x/api/v1/requests?page=0>; rel="prev"';
    body = { data: requests, total: 2 };
    const plain = await api(svc.url).fetchRequests();
    expect(plain.paging).toBeUndefined();
    expect('survey' in plain).toBe(false);
  });

  it('a 304 keeps the signal of the copy it reuses (from the body or the Link header, which a 304 does not repeat)', async () => {
    for (const [answer, want] of [
      [{ body: { data: requests, meta: { next_cursor: 'c2' } } }, 'the answer\'s "meta.next_cursor" is set'],
      [{ body: { data: requests }, headers: { link: '<http://x/?page=2>; rel=next' } }, 'the answer has a Link header with rel="next"'],
      [{ body: { data: requests, total: 2 } }, undefined],
    ] as const) {
      const svc = await service(() => answer);
      const a = api(svc.url);
      const first = await a.fetchRequests();
      const second = await a.fetchRequests();
      expect(second.revalidated).toBe(true);
      expect(second.records).toBe(first.records);
      expect(first.paging).toBe(want);
      expect(second.paging).toBe(want);
    }
  });

  it('a client list reused from the one kept keeps its signal', async () => {
    const svc = await service(() => ({ body: { data: [{ id: 'c1', displayName: 'Ann' }], nextPageToken: 't2' } }));
    const a = api(svc.url);
    expect((await a.fetchClients()).paging).toBe('the answer\'s "nextPageToken" is set');
    const reused = await a.fetchClients({ reuse: true });
    expect(svc.seen).toHaveLength(1);
    expect(reused.paging).toBe('the answer\'s "nextPageToken" is set');
  });

  it('surveys the fields beyond the documented ones, redacting the key from their names and capping them', async () => {
    const long = `x${'y'.repeat(100)}`;
    const clients = [
      { id: 'c1', displayName: 'Ann', email: 'a@x', status: 'active', phone: '1', tags: ['vip'] },
      { id: 'c2', displayName: 'Bo', email: 'b@x', status: 'active', phone: '2', [`field_${KEY}`]: 1, [long]: 1 },
      { id: 'c3', displayName: 'Cy', email: 'c@x', status: 'active' },
    ];
    const svc = await service(() => ({ body: { data: clients } }));
    const a = api(svc.url);
    const surveyed = await a.fetchClients({ survey: true });
    expect(surveyed.survey).toBeDefined();
    const fields = surveyed.survey!.fields;
    expect(Object.getPrototypeOf(fields)).toBeNull();
    expect({ ...fields }).toEqual({ phone: 2, tags: 1, 'field_[redacted]': 1, [`${long.slice(0, 63)}…`]: 1 });
    expect(Object.keys(fields).every((k) => k.length <= 64)).toBe(true);
    expect(JSON.stringify(fields)).not.toContain(KEY);
    expect(surveyed.records).toHaveLength(3);
    expect('survey' in (await a.fetchClients())).toBe(false);
    const requestSurvey = await a.fetchRequests({ survey: true });
    expect({ ...requestSurvey.survey!.fields }).toEqual({ phone: 2, tags: 1, displayName: 3, email: 3, 'field_[redacted]': 1, [`${long.slice(0, 63)}…`]: 1 });
  });

  it('a survey is never answered from the copy kept, and leaves it as it was for the calls without one', async () => {
    const svc = await service(() => ({ body: { data: requests, has_more: true } }));
    const a = api(svc.url);
    const first = await a.fetchRequests();
    const copy = a.state.copies.get(`${svc.url}/api/v1/requests`);
    expect(copy).toBeDefined();
    const surveyed = await a.fetchRequests({ survey: true });
    expect(svc.seen[1]!.ifNoneMatch).toBeUndefined();
    expect(surveyed.revalidated).toBe(false);
    expect({ ...surveyed.survey!.fields }).toEqual({ priority: 1 });
    expect(surveyed.paging).toBe('the answer\'s "has_more" is true');
    expect(a.state.copies.get(`${svc.url}/api/v1/requests`)).toBe(copy);
    const after = await a.fetchRequests();
    expect(svc.seen[2]!.ifNoneMatch).toBe(copy!.etag);
    expect(after.revalidated).toBe(true);
    expect(after.records).toBe(first.records);
    expect('survey' in after).toBe(false);
  });

  it('a survey drops no copy: not one kept with Last-Modified alone, nor on a 304 it did not ask for', async () => {
    const byDate = await service(() => ({ body: { data: requests }, lastModifiedOnly: true }));
    const a = api(byDate.url);
    const first = await a.fetchRequests();
    const copy = a.state.copies.get(`${byDate.url}/api/v1/requests`);
    expect(copy).toMatchObject({ etag: undefined, lastModified: LAST_MODIFIED });
    expect((await a.fetchRequests({ survey: true })).survey).toBeDefined();
    expect(byDate.seen[1]!.ifModifiedSince).toBeUndefined();
    expect(a.state.copies.get(`${byDate.url}/api/v1/requests`)).toBe(copy);
    expect((await a.fetchRequests()).records).toBe(first.records);

    let calls = 0;
    const unasked = await service(() => ({ body: { data: requests }, notModified: ++calls === 2 }));
    const b = api(unasked.url, { maxRetries: 1 });
    const kept = await b.fetchRequests();
    const surveyed = await b.fetchRequests({ survey: true });
    expect(unasked.seen.map((s) => s.ifNoneMatch === undefined)).toEqual([true, true, true]);
    expect({ ...surveyed.survey!.fields }).toEqual({ priority: 1 });
    const again = await b.fetchRequests();
    expect(again.revalidated).toBe(true);
    expect(again.records).toBe(kept.records);
  });

  it('a survey of clients is never answered from the client list kept for reuse', async () => {
    const svc = await service(() => ({ body: { data: [{ id: 'c1', displayName: 'Ann', phone: '1' }] } }));
    const a = api(svc.url);
    await a.fetchClients();
    const surveyed = await a.fetchClients({ reuse: true, survey: true });
    expect(svc.seen).toHaveLength(2);
    expect({ ...surveyed.survey!.fields }).toEqual({ phone: 1 });
  });

  it('a survey shares a GET only with another survey, never with a call without one', async () => {
    const svc = await service(() => ({ body: { data: requests }, delayMs: 100 }));
    const a = api(svc.url);
    const [plain, surveyed, plain2, surveyed2] = await Promise.all([
      a.fetchRequests(),
      a.fetchRequests({ survey: true }),
      a.fetchRequests(),
      a.fetchRequests({ survey: true }),
    ]);
    expect(svc.seen).toHaveLength(2);
    expect(plain2.records).toBe(plain.records);
    expect(surveyed2.records).toBe(surveyed.records);
    expect('survey' in plain).toBe(false);
    expect({ ...surveyed.survey!.fields }).toEqual({ priority: 1 });
  });
});

describe('the fast path without a survey', () => {
  it('still takes a large first chunk at once where data opens (seen through its private state, as nothing public shows it)', () => {
    const records = Array.from({ length: 3_000 }, (_, i) => ({ id: `r${i}`, title: `Tax ${i}` }));
    const body = Buffer.from(JSON.stringify({ data: records, has_more: true }));
    for (const survey of [false, true]) {
      const parser = new ListStreamParser('request', (v) => v, { fields: REQUEST_FIELDS, survey });
      parser.write(body.subarray(0, body.length - 100));
      expect(Reflect.get(parser, 'fast'), `survey: ${survey}`).toBe(true);
      parser.write(body.subarray(body.length - 100));
      expect(parser.end()).toHaveLength(3_000);
      expect(parser.paging).toBe('the answer\'s "has_more" is true');
      expect(parser.surveyed === undefined).toBe(!survey);
    }
  });
});
