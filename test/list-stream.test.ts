import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadResponseError } from '../src/api/errors.js';
import { ListStreamParser, MAX_ELEMENT_DEPTH, unreadableIn, type ListStreamOptions } from '../src/api/list-stream.js';
import { listData, toRequest } from '../src/api/records.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 700) * 3;

/** What JSON.parse and the shape check say of the same UTF-8 bytes, or 'error'. */
function reference(text: string): unknown {
  try {
    return listData(JSON.parse(Buffer.from(text, 'utf8').toString('utf8')), 'x');
  } catch {
    return 'error';
  }
}

/** The parser's answer for the body cut at the given fractions of its length, or 'error'. */
function streamed(text: string, cuts: number[]): unknown {
  const bytes = Buffer.from(text, 'utf8');
  return streamedBytes(
    bytes,
    cuts.map((c) => Math.floor(c * bytes.length)),
  );
}

function streamedBytes(bytes: Buffer, offsets: number[]): unknown {
  const parser = new ListStreamParser('x', (v) => v);
  try {
    let from = 0;
    for (const cut of [...offsets.sort((a, b) => a - b), bytes.length]) {
      parser.write(bytes.subarray(from, cut));
      from = cut;
    }
    return parser.end();
  } catch (error) {
    if (!(error instanceof BadResponseError)) throw error; // anything else is a crash, not a refusal
    return 'error';
  }
}

/** Every byte its own chunk. */
const bytewise = (text: string) =>
  streamedBytes(
    Buffer.from(text, 'utf8'),
    Array.from({ length: Buffer.byteLength(text) }, (_, i) => i),
  );

/** Feeds `body` in chunks of `size` bytes to a fresh parser; returns the parser and its records (or the error). */
function feed(body: Buffer, size: number, toRecord: (raw: unknown) => unknown = (v) => v, kind: 'request' | 'client' = 'request', options?: ListStreamOptions) {
  const parser = new ListStreamParser(kind, toRecord, options);
  let result: unknown;
  try {
    for (let at = 0; at < body.length; at += size) parser.write(body.subarray(at, at + size));
    result = parser.end();
  } catch (error) {
    result = error;
  }
  return { parser, result };
}

/** Long strings dense in what a scanner must get right: quotes, backslash runs, "},", unicode. */
const tricky = fc
  .array(fc.constantFrom('\\', '"', '\\"', '},', '}, {', 'a', 'é', '日', '😀', ' ', '[', '{'), { minLength: 20, maxLength: 80 })
  .map((parts) => parts.join(''));
const strings = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  tricky,
  fc.constantFrom('data', '"data"', '\\', '"', '[', ']', '{', '}', ',', ':', '\\u0064ata', '\u2028', 'é', '},{', '"},{"a":"', '}, {', '\\"},'),
);
const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    strings,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(strings, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON white space of every kind, for indenting and for padding the body. */
const space = fc.array(fc.constantFrom(' ', '\t', '\n', '\r'), { maxLength: 4 }).map((a) => a.join(''));

/**
 * JSON text that JSON.stringify never writes: numbers out of range (1e400 parses to Infinity) or
 * spelt oddly, keys spelt with escapes, white space anywhere. Built as text, so duplicate keys are kept.
 */
const rawValue = fc.letrec<{ value: string; key: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    values.map((v) => JSON.stringify(v)),
    fc.constantFrom('1e400', '-1e400', '1E+999', '1e-400', '-0', '0.5e1', '123456789012345678901234567890', '"\\u0064ata"', '"\\ud83d\\ude00"'),
    fc.tuple(space, fc.array(tie('value'), { maxLength: 4 }), space).map(([a, items, b]) => `[${a}${items.join(`${a},${b}`)}${b}]`),
    fc
      .tuple(space, fc.array(fc.tuple(tie('key'), tie('value')), { maxLength: 4 }))
      .map(([w, pairs]) => `{${w}${pairs.map(([k, v]) => `${k}${w}:${w}${v}`).join(`,${w}`)}}`),
  ),
  key: fc.oneof(
    strings.map((k) => JSON.stringify(k)),
    fc.constantFrom('"data"', '"\\u0064ata"', '"d\\u0061ta"', '"dat\\u0061"', '"data "', '"Data"'),
  ),
})).value;
const rawKey = fc.constantFrom('"data"', '"\\u0064ata"', '"d\\u0061ta"', '"meta"', '"total"', '"Data"');
const rawData = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(space, fc.array(rawValue, { maxLength: 8 })).map(([w, items]) => `[${w}${items.join(`,${w}`)}${w}]`) },
  { weight: 1, arbitrary: rawValue },
);
/** Top-level objects with "data" given once, twice or more (spelt plainly or with escapes), among other keys. */
const rawBodies = fc
  .tuple(space, fc.array(fc.tuple(rawKey, rawData), { minLength: 1, maxLength: 4 }), space)
  .map(([w, pairs]) => `${w}{${w}${pairs.map(([k, v]) => `${k}${w}:${w}${v}`).join(`${w},${w}`)}${w}}${w}`);

/** Bodies of every shape: the documented one, data among other keys or nested, wrong shapes. */
const objects = fc.array(fc.dictionary(strings, values, { maxKeys: 4 }), { maxLength: 40 });
const bodies = fc.oneof(
  objects.map((data) => JSON.stringify({ data })),
  objects.map((data) => JSON.stringify({ data, after: data.slice(0, 3) }, null, 1)),
  fc.array(values, { maxLength: 30 }).map((data) => JSON.stringify({ data })),
  fc
    .tuple(fc.dictionary(strings, values, { maxKeys: 3 }), fc.array(values, { maxLength: 10 }), fc.dictionary(strings, values, { maxKeys: 3 }))
    .map(([a, data, b]) => JSON.stringify({ ...a, data, ...b })),
  fc.array(values, { maxLength: 10 }).map((data) => JSON.stringify({ meta: { data: [1, 2] }, data }, null, 2)),
  fc.array(values, { maxLength: 10 }).map((data) => `{"data":${JSON.stringify(data)},"data":[7]}`),
  values.map((v) => JSON.stringify(v)),
  fc.json(),
  rawBodies,
  fc
    .tuple(objects, fc.constantFrom(' ', '\t', '\r\n', ' \n\t'))
    .map(([data, indent]) => JSON.stringify({ meta: { data: data.slice(0, 2) }, data: data.map((d) => ({ data: d })) }, null, indent)),
);

/** Valid bodies, then cut short or with one character inserted or removed. */
const broken = fc.tuple(bodies, fc.nat(), fc.constantFrom('', ',', '[', ']', '{', '}', '"', ':', '\\', ' ', 'x', '1')).map(([text, at, ch]) => {
  const i = at % (text.length + 1);
  return ch === '' ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + ch + text.slice(i);
});

describe('streaming list parser', () => {
  it('agrees with JSON.parse on valid bodies of every shape, however they are chunked', () => {
    fc.assert(
      fc.property(bodies, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), (text, cuts) => {
        expect(streamed(text, cuts)).toEqual(reference(text));
      }),
      { numRuns: RUNS },
    );
  });

  it('agrees with JSON.parse on broken bodies: truncated, or one character inserted or removed', () => {
    fc.assert(
      fc.property(broken, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), (text, cuts) => {
        expect(streamed(text, cuts)).toEqual(reference(text));
      }),
      { numRuns: RUNS },
    );
  });

  it('hands a large first chunk to the fast path where data opens, and still agrees with JSON.parse', () => {
    // More than 64 KiB after "data": [ in the first chunk: the exact scanner stops at the bracket.
    const records = Array.from({ length: 3_000 }, (_, i) => ({
      id: `r${i}`,
      title: i % 7 ? `Tax ${i}` : 'a "},{" in a title \\ [',
      clientName: 'Zoë',
      totalItems: i,
    }));
    const text = JSON.stringify({ total: records.length, data: records, after: { data: 1 } });
    for (const cuts of [[], [0.5], [0.9, 0.95]]) {
      const parser = new ListStreamParser('request', (v) => v);
      const bytes = Buffer.from(text);
      let from = 0;
      for (const cut of [...cuts, 1]) {
        const to = Math.round(cut * bytes.length);
        parser.write(bytes.subarray(from, to));
        from = to;
      }
      expect(parser.end()).toEqual(records);
      expect(parser.examined).toBeLessThanOrEqual(5 * bytes.length);
    }
  });

  it('reads byte by byte, multi-byte characters split across chunks included', () => {
    const text = JSON.stringify({ total: 2, data: [{ name: 'Zoë "Z" Müller', note: '日本語 \\ [x]' }, 'a,b', [1, { data: [] }]] });
    const cuts = Array.from({ length: Buffer.byteLength(text) }, (_, i) => i / Buffer.byteLength(text));
    expect(streamed(text, cuts)).toEqual(reference(text));
  });

  it('agrees with JSON.parse when every byte is its own chunk', () => {
    fc.assert(
      fc.property(fc.oneof(bodies, broken), (text) => {
        expect(bytewise(text)).toEqual(reference(text));
      }),
      { numRuns: Math.ceil(RUNS / 10) },
    );
  });

  it('takes the last of repeated "data" keys, however spelt, as JSON.parse does', () => {
    const cases: [string, unknown][] = [
      ['{"data":[{"a":1}],"data":[]}', []],
      ['{"data":[],"data":[{"a":1}]}', [{ a: 1 }]],
      ['{"data":[{"a":1},{"b":2}],"total":2,"data":[{"c":3}]}', [{ c: 3 }]],
      ['{"data":[{"a":1}],"\\u0064ata":[]}', []],
      ['{"d\\u0061ta":[{"a":1}],"data":[{"b":2}],"dat\\u0061":[{"c":3}]}', [{ c: 3 }]],
      ['{"data":[{"a":1}],"data":5}', 'error'],
      ['{"data":5,"data":[{"a":1}]}', [{ a: 1 }]],
      ['{"data":[{"a":1}],"data":{"data":[2]}}', 'error'],
      ['{"meta":{"data":[1,2]},"data":[{"data":[{"x":1}]}],"more":[{"data":[3]}]}', [{ data: [{ x: 1 }] }]],
      ['[{"data":[1]}]', 'error'],
      ['["data",[1]]', 'error'],
      ['{"data":[\u0001{"a":1}]}', 'error'],
      ['{"data":[{"a":1},\u000b{"b":2}]}', 'error'],
      [' \r\n\t{ "data" :\t[ {"a":1} ,\n{"b":2}\r] } \n', [{ a: 1 }, { b: 2 }]],
    ];
    for (const [text, want] of cases) {
      expect(reference(text), text).toEqual(want);
      expect(streamed(text, []), text).toEqual(want);
      expect(bytewise(text), text).toEqual(want);
    }
  });

  it('passes out-of-range numbers through as JSON.parse does (1e400 is Infinity); records make them null', () => {
    const text = '{"data":[{"id":"r1","totalItems":1e400,"completedItems":-1e400},{"id":"r2","totalItems":1e-400,"completedItems":-0}]}';
    expect(streamed(text, [0.5])).toEqual(reference(text));
    expect(bytewise(text)).toEqual([
      { id: 'r1', totalItems: Infinity, completedItems: -Infinity },
      { id: 'r2', totalItems: 0, completedItems: -0 },
    ]);
    const records = feed(Buffer.from(text), 7, toRequest).result as ReturnType<typeof toRequest>[];
    expect(records.map((r) => [r.totalItems, r.completedItems])).toEqual([
      [null, null],
      [0, -0],
    ]);
  });

  describe('bounded nesting', () => {
    const nested = (levels: number, inner = '1') => '{"a":'.repeat(levels - 1) + `[${inner}]` + '}'.repeat(levels - 1);
    const list = (element: string, copies = 3) => Buffer.from(`{"data":[${Array(copies).fill(element).join(',')}],"total":${copies}}`);

    it(`keeps elements ${MAX_ELEMENT_DEPTH} levels deep and refuses deeper ones with a clear message, on every path`, () => {
      for (const size of [1, 7, 64, 1 << 16]) {
        expect(feed(list(nested(MAX_ELEMENT_DEPTH)), size).result).toHaveLength(3);
        // Objects (the cut-and-parse path) and arrays (the exact scanner).
        for (const deep of [nested(MAX_ELEMENT_DEPTH + 1), `${'['.repeat(MAX_ELEMENT_DEPTH + 1)}${']'.repeat(MAX_ELEMENT_DEPTH + 1)}`]) {
          const { result } = feed(list(deep), size);
          expect(result).toBeInstanceOf(BadResponseError);
          expect((result as Error).message).toBe(
            `The service's request list holds an element nested more than ${MAX_ELEMENT_DEPTH} levels deep; no request record is, so the list was refused.`,
          );
        }
      }
    });

    it("refuses a million levels without overflowing the stack; deep values outside data are JSON.parse's business", () => {
      const deep = Buffer.from(`{"data":[${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}]}`);
      expect(feed(deep, 1 << 16).result).toBeInstanceOf(BadResponseError);
      const meta = `{"meta":${'['.repeat(10_000)}${']'.repeat(10_000)},"data":[{"a":1}]}`;
      expect(streamed(meta, [0.3, 0.6])).toEqual([{ a: 1 }]);
    });

    describe('nothing too deep refuses a list read for its fields: skipped unread, a read field flagged', () => {
      const fields = ['id', 'displayName'];
      const feedFields = (body: Buffer, size: number, maxDepth?: number) =>
        feed(body, size, (v) => v, 'client', { fields, ...(maxDepth !== undefined ? { maxDepth } : {}) });
      const LEVELS = 200_000;
      const deepArrays = `${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}`;
      const deepObjects = `${'{"a":'.repeat(LEVELS)}1${'}'.repeat(LEVELS)}`;
      const client = (i: number, extra?: string) => `{"id":"c${i}","displayName":"Client ${i}"${extra ? `,"extra":${extra},"after":"x"` : ''}}`;
      const body = (extra: string) => Buffer.from(`{"data":[${client(1)},${client(2, extra)},${client(3)}],"total":3}`);

      it('keeps every record when an unknown field nests 200,000 levels deep, on every path, in linear work', () => {
        for (const deep of [deepArrays, deepObjects]) {
          const bytes = body(deep);
          for (const size of [7, 4096, 64 * 1024, 1 << 20]) {
            const { parser, result } = feedFields(bytes, size);
            expect(result).not.toBeInstanceOf(Error);
            const records = result as Record<string, unknown>[];
            expect(records.map((r) => r.id)).toEqual(['c1', 'c2', 'c3']);
            expect(records[1]!.after).toBe('x');
            // Cut where it grows too deep: MAX_ELEMENT_DEPTH levels kept, the record counted, then null.
            let v: unknown = records[1]!.extra;
            let levels = 1; // the record
            while (v !== null && typeof v === 'object') {
              v = Array.isArray(v) ? v[0] : (v as Record<string, unknown>).a;
              levels++;
            }
            expect(v).toBeNull();
            expect(levels).toBe(MAX_ELEMENT_DEPTH);
            expect(parser.examined).toBeLessThanOrEqual(5 * bytes.length);
          }
        }
      });

      it('a read field nested too deep stands as null in its record, which is flagged; the others are kept whole', () => {
        for (const deep of [deepArrays, deepObjects]) {
          const bytes = Buffer.from(`{"data":[${client(1)},{"id":"c2","displayName":${deep},"after":"x"},${client(3)}]}`);
          for (const size of [7, 4096, 64 * 1024, 1 << 20]) {
            const { parser, result } = feedFields(bytes, size);
            expect(result).not.toBeInstanceOf(Error);
            const records = result as Record<string, unknown>[];
            expect(records).toEqual([
              { id: 'c1', displayName: 'Client 1' },
              { id: 'c2', displayName: null, after: 'x' },
              { id: 'c3', displayName: 'Client 3' },
            ]);
            expect(unreadableIn(records)).toEqual([{ index: 1, fields: ['displayName'] }]);
            expect(parser.examined).toBeLessThanOrEqual(5 * bytes.length);
          }
        }
        // Spelt with an escape, it is the same field; two read fields too deep in one record.
        const escapedKey = Buffer.from(`{"data":[{"id":${'['.repeat(100)}${']'.repeat(100)},"display\\u004eame":${'['.repeat(100)}${']'.repeat(100)}}]}`);
        for (const size of [3, 1 << 20]) {
          const records = feedFields(escapedKey, size).result as unknown[];
          expect(records).toEqual([{ id: null, displayName: null }]);
          expect(unreadableIn(records)).toEqual([{ index: 0, fields: ['id', 'displayName'] }]);
        }
        const shallow = Buffer.from(`{"data":[{"id":"c1","tier":"gold","tags":["a","b"],"n":3}]}`);
        expect(feedFields(shallow, 5).result).toEqual([{ id: 'c1', tier: 'gold', tags: ['a', 'b'], n: 3 }]);
      });

      it('agrees with JSON.parse (too deep: cut to null outside the read fields, a read field null and flagged) however the body is chunked', () => {
        const keys = fc.constantFrom('id', 'displayName', 'extra', 'x', 'data');
        const element = fc.oneof({ weight: 4, arbitrary: fc.dictionary(keys, values, { maxKeys: 4 }) }, { weight: 1, arbitrary: values });
        const maxDepth = 2;
        const cut = (v: unknown, left: number): unknown =>
          v === null || typeof v !== 'object'
            ? v
            : left <= 0
              ? null
              : Array.isArray(v)
                ? v.map((x) => cut(x, left - 1))
                : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cut(x, left - 1)]));
        const depthOf = (v: unknown): number =>
          v === null || typeof v !== 'object' ? 0 : 1 + Math.max(0, ...(Array.isArray(v) ? v : Object.values(v)).map(depthOf));
        const expected = (data: unknown[]): unknown => {
          const out: unknown[] = [];
          for (const e of data) {
            if (e === null || typeof e !== 'object' || Array.isArray(e)) {
              out.push(cut(e, maxDepth));
              continue;
            }
            const rec: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(e)) {
              const tooDeep = fields.includes(k) && depthOf(v) > maxDepth - 1;
              if (tooDeep) flagged.push({ index: out.length, field: k });
              rec[k] = fields.includes(k) ? (tooDeep ? null : v) : cut(v, maxDepth - 1);
            }
            out.push(rec);
          }
          return out;
        };
        let flagged: { index: number; field: string }[] = [];
        fc.assert(
          fc.property(fc.array(element, { maxLength: 12 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }), (data, cuts) => {
            const bytes = Buffer.from(JSON.stringify({ data }));
            const parser = new ListStreamParser('client', (v) => v, { fields, maxDepth });
            let got: unknown;
            try {
              let from = 0;
              for (const c of [...cuts.map((x) => Math.floor(x * bytes.length)).sort((a, b) => a - b), bytes.length]) {
                parser.write(bytes.subarray(from, c));
                from = c;
              }
              got = parser.end();
            } catch (error) {
              if (!(error instanceof BadResponseError)) throw error;
              got = 'error';
            }
            // What the wire carries (JSON has no -0), as JSON.parse reads it.
            flagged = [];
            expect(got).toEqual(expected((JSON.parse(bytes.toString()) as { data: unknown[] }).data));
            expect(unreadableIn(got as unknown[]).flatMap((u) => u.fields.map((field) => ({ index: u.index, field })))).toEqual(flagged);
          }),
          { numRuns: RUNS },
        );
      });
    });

    it('takes the limit as an option', () => {
      const parser = new ListStreamParser('request', (v) => v, { maxDepth: 2 });
      parser.write(Buffer.from('{"data":[{"a":{"b":1}}]}'));
      expect(parser.end()).toEqual([{ a: { b: 1 } }]);
      const strict = new ListStreamParser('request', (v) => v, { maxDepth: 2 });
      expect(() => strict.write(Buffer.from('{"data":[[[[1]]]]}'))).toThrow(BadResponseError);
    });
  });

  describe('linear work: every byte is examined a bounded number of times, whatever the chunking', () => {
    const MB24 = 24 * 1024 * 1024;
    const cases: [string, () => Buffer][] = [
      ['one record holding a 24 MB string', () => Buffer.from(JSON.stringify({ data: [{ id: 'x', title: 'a'.repeat(MB24) }] }))],
      ['one 24 MB string full of "}," and escaped quotes', () => Buffer.from(JSON.stringify({ data: [{ id: 'x', note: '"},{"a":1},\\'.repeat(MB24 / 16) }] }))],
      ['a 24 MB key before data', () => Buffer.from(`{${JSON.stringify('k'.repeat(MB24))}:1,"data":[{"a":1}]}`)],
      [
        '10,000 records full of "},"',
        () => Buffer.from(JSON.stringify({ data: Array.from({ length: 10_000 }, (_, i) => ({ i, t: '},{"x":1},'.repeat(20) })) })),
      ],
    ];
    for (const [name, make] of cases) {
      it(`${name}, in 64 KiB chunks`, () => {
        const body = make();
        const { parser, result } = feed(body, 64 * 1024);
        expect(result).toEqual(listData(JSON.parse(body.toString('utf8')), 'x'));
        // Scanning, copying, decoding and parsing each count every byte they pass over.
        expect(parser.examined).toBeLessThanOrEqual(5 * body.length);
      });
    }

    it('256 KB of records and one long string, byte by byte and in 3-byte chunks', () => {
      const body = Buffer.from(
        JSON.stringify({ data: [...Array.from({ length: 800 }, (_, i) => ({ id: `r${i}`, title: `Müller "${i}" },{` })), { note: '\\"},'.repeat(20_000) }] }),
      );
      for (const size of [1, 3]) {
        const { parser, result } = feed(body, size);
        expect(result).toHaveLength(801);
        expect(parser.examined).toBeLessThanOrEqual(5 * body.length);
      }
    });
  });
});
