import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListStreamParser } from '../src/api/list-stream.js';
import { listData } from '../src/api/records.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 700) * 3;

/** What JSON.parse and the shape check say of the same UTF-8 bytes, or 'error'. */
function reference(text: string): unknown {
  try {
    return listData(JSON.parse(Buffer.from(text, 'utf8').toString('utf8')), 'x');
  } catch {
    return 'error';
  }
}

function streamed(text: string, cuts: number[]): unknown {
  const bytes = Buffer.from(text, 'utf8');
  const parser = new ListStreamParser('x', (v) => v);
  try {
    let from = 0;
    for (const cut of [...cuts.map((c) => Math.floor(c * bytes.length)).sort((a, b) => a - b), bytes.length]) {
      parser.write(bytes.subarray(from, cut));
      from = cut;
    }
    return parser.end();
  } catch {
    return 'error';
  }
}

const strings = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('data', '"data"', '\\', '"', '[', ']', '{', '}', ',', ':', '\\u0064ata', '\u2028', 'é', '},{', '"},{"a":"', '}, {', '\\"},'));
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

/** Bodies of every shape: the documented one, data among other keys or nested, wrong shapes. */
const objects = fc.array(fc.dictionary(strings, values, { maxKeys: 4 }), { maxLength: 40 });
const bodies = fc.oneof(
  objects.map((data) => JSON.stringify({ data })),
  objects.map((data) => JSON.stringify({ data, after: data.slice(0, 3) }, null, 1)),
  fc.array(values, { maxLength: 30 }).map((data) => JSON.stringify({ data })),
  fc.tuple(fc.dictionary(strings, values, { maxKeys: 3 }), fc.array(values, { maxLength: 10 }), fc.dictionary(strings, values, { maxKeys: 3 })).map(([a, data, b]) => JSON.stringify({ ...a, data, ...b })),
  fc.array(values, { maxLength: 10 }).map((data) => JSON.stringify({ meta: { data: [1, 2] }, data }, null, 2)),
  fc.array(values, { maxLength: 10 }).map((data) => `{"data":${JSON.stringify(data)},"data":[7]}`),
  values.map((v) => JSON.stringify(v)),
  fc.json(),
);

/** Valid bodies, then cut short or with one character inserted or removed. */
const broken = fc.tuple(bodies, fc.nat(), fc.constantFrom('', ',', '[', ']', '{', '}', '"', ':', '\\', ' ', 'x', '1')).map(([text, at, ch]) => {
  const i = at % (text.length + 1);
  return ch === '' ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + ch + text.slice(i);
});

describe('streaming list parser', () => {
  it('agrees with JSON.parse on valid bodies of every shape, however they are chunked', () => {
    fc.assert(fc.property(bodies, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), (text, cuts) => {
      expect(streamed(text, cuts)).toEqual(reference(text));
    }), { numRuns: RUNS });
  });

  it('agrees with JSON.parse on broken bodies: truncated, or one character inserted or removed', () => {
    fc.assert(fc.property(broken, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), (text, cuts) => {
      expect(streamed(text, cuts)).toEqual(reference(text));
    }), { numRuns: RUNS });
  });

  it('reads byte by byte, multi-byte characters split across chunks included', () => {
    const text = JSON.stringify({ total: 2, data: [{ name: 'Zoë "Z" Müller', note: '日本語 \\ [x]' }, 'a,b', [1, { data: [] }]] });
    const cuts = Array.from({ length: Buffer.byteLength(text) }, (_, i) => i / Buffer.byteLength(text));
    expect(streamed(text, cuts)).toEqual(reference(text));
  });
});
