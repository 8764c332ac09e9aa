import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Client } from '../src/api/records.js';
import { candidateTitle, clientResolver, closestClients, likeliest, pickable, resolveClient } from '../src/tools/resolve-client.js';

// Which client a send means (src/tools/resolve-client.ts), called directly: the exact matching both send tools use
// (by id, then e-mail, then display name; never a guess), the batch's indexed form of it, which must answer every
// query as the plain one does, and the likeness rule that names the closest clients and templates when none matches.

const client = (over: Partial<Client> = {}, i = 0): Client => ({
  id: `c-${i}`,
  displayName: `Client ${i}`,
  email: `client${i}@mail.example`,
  status: 'active',
  ...over,
});

/** Both forms of the matching, which must agree on every query. */
function both(clients: Client[], query: string) {
  const plain = resolveClient(clients, query);
  expect(clientResolver(clients)(query)).toEqual(plain);
  return plain;
}

describe('resolveClient and clientResolver: exact matches only, in the order id, e-mail, name', () => {
  const ann = client({ id: 'C-Ann', displayName: 'Ann  Lee', email: ' Ann.Lee@Mail.example ' }, 1);
  const bo = client({ id: 'c-bo', displayName: '\tBo\tLi ', email: 'bo@mail.example' }, 2);
  const list = [ann, bo, client({}, 3)];

  it.each([
    ['the id, in any case and with spaces around', ' c-ann ', ann],
    ['the e-mail, trimmed, in any case', 'ANN.LEE@mail.example', ann],
    ['the display name, white space collapsed on both sides, in any case', 'ann lee', ann],
    ['a name written with a tab and extra spaces', '  BO   li ', bo],
    ['another client by id', 'C-3', list[2]],
  ])('finds %s', (_, query, want) => {
    const found = both(list, query);
    expect(found.client).toBe(want);
    expect(found.candidates).toEqual([want]);
  });

  it.each([
    ['a part of a name', 'ann'],
    ['a part of an e-mail', 'ann.lee'],
    ['a name with its words in another order', 'lee ann'],
    ['nothing at all', ''],
    ['white space', '   '],
    ['a field absent from every record', 'null'],
  ])('finds nothing for %s', (_, query) => {
    const found = both(list, query);
    expect(found.client).toBeUndefined();
    expect(found.candidates).toEqual([]);
  });

  it('reads the id and the e-mail as written: only the name has its inner white space collapsed', () => {
    const spaced = client({ id: 'a  b', email: 'x  y@mail.example', displayName: 'Someone' }, 4);
    expect(both([spaced], 'a  b').client).toBe(spaced);
    expect(both([spaced], 'a b').client).toBeUndefined();
    expect(both([spaced], 'x  y@mail.example').client).toBe(spaced);
    expect(both([spaced], 'x y@mail.example').client).toBeUndefined();
  });

  it('prefers an id to an e-mail and an e-mail to a name, whatever the order of the list', () => {
    const byName = client({ id: 'n-1', displayName: 'Key', email: 'n1@mail.example' }, 5);
    const byEmail = client({ id: 'e-1', displayName: 'Other', email: 'key' }, 6);
    const byId = client({ id: 'KEY', displayName: 'Third', email: 't@mail.example' }, 7);
    for (const order of [
      [byName, byEmail, byId],
      [byId, byEmail, byName],
      [byEmail, byName, byId],
    ])
      expect(both(order, 'key').client).toBe(byId);
    expect(both([byName, byEmail], 'key').client).toBe(byEmail);
    expect(both([byEmail, byName], 'key').client).toBe(byEmail);
    expect(both([byName], 'key').client).toBe(byName);
  });

  it('answers several of one kind as candidates, and does not go on to a later kind', () => {
    const a = client({ id: 'same' }, 8);
    const b = client({ id: 'SAME' }, 9);
    const named = client({ displayName: 'same' }, 10);
    const found = both([a, named, b], 'same');
    expect(found.client).toBeUndefined();
    expect(found.candidates).toEqual([a, b]);
    // Two of a later kind are candidates too, in the list's order.
    const x = client({ displayName: 'Sam Taylor' }, 11);
    const y = client({ displayName: 'sam  taylor' }, 12);
    expect(both([x, client({}, 13), y], 'Sam Taylor')).toEqual({ candidates: [x, y] });
  });

  it('skips records without the field compared, and matches the others', () => {
    const blank = client({ id: null, email: null, displayName: null }, 14);
    const ann2 = client({ id: 'x', email: 'ann@mail.example', displayName: 'Ann' }, 15);
    expect(both([blank, ann2], 'ann')).toEqual({ client: ann2, candidates: [ann2] });
    expect(both([blank, ann2], 'ann@mail.example').client).toBe(ann2);
    expect(both([blank, ann2], 'x').client).toBe(ann2);
    expect(both([blank], 'undefined').candidates).toEqual([]);
  });

  it('the batch form answers any query as the plain one does, over lists with shared fields', () => {
    const word = fc.constantFrom('ann', 'Ann', ' ann ', 'ANN LEE', 'ann  lee', 'x', 'X', 'bo@mail.example', 'BO@MAIL.EXAMPLE', '', 'a b', 'a  b');
    const field = fc.option(word, { nil: null });
    const record = fc.record({ id: field, displayName: field, email: field, status: fc.constant('active') });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), word, (clients, query) => {
        expect(clientResolver(clients)(query)).toEqual(resolveClient(clients, query));
      }),
      { numRuns: 400 },
    );
  });
});

describe('likeliest: the one likeness rule for clients and templates', () => {
  const texts = (x: string | string[]) => (Array.isArray(x) ? x : [x]);

  it('scores a text holding the query, or held by a query of more than three letters, as 1', () => {
    expect(likeliest(['annual return'], 'annual', texts, 0)).toEqual([{ item: 'annual return', score: 1 }]);
    expect(likeliest(['anne'], 'anne lee', texts, 0)).toEqual([{ item: 'anne', score: 1 }]);
    expect(likeliest(['ann'], 'anne', texts, 0)).toEqual([{ item: 'ann', score: 1 }]);
    // A query of three letters or fewer holding the text is not enough: the letter pairs decide.
    expect(likeliest(['an'], 'ann', texts, 0)).toEqual([{ item: 'an', score: (2 * 1) / (2 + 1) }]);
  });

  it('else scores the Dice similarity of the two texts letter pairs', () => {
    // night: ni ig gh ht; nacht: na ac ch ht; one pair in common of four and four.
    expect(likeliest(['nacht'], 'night', texts, 0)).toEqual([{ item: 'nacht', score: 0.25 }]);
    // Pairs are counted once: "aaaa" has one pair (aa), "aab" two (aa ab).
    expect(likeliest(['aab'], 'aaaa', texts, 0)).toEqual([{ item: 'aab', score: (2 * 1) / (1 + 2) }]);
    // The last letter makes no pair of its own.
    expect(likeliest(['xyb'], 'xya', texts, 0)).toEqual([{ item: 'xyb', score: (2 * 1) / (2 + 2) }]);
    // Two single letters have no pairs: 0, not a division by zero.
    expect(likeliest(['b'], 'a', texts, 0)).toEqual([{ item: 'b', score: 0 }]);
  });

  it('scores an empty text 0, even against an empty query', () => {
    expect(likeliest([''], '', texts, 0)).toEqual([{ item: '', score: 0 }]);
    expect(likeliest([''], 'anything', texts, 0.01)).toEqual([]);
  });

  it('keeps the items at or above the floor, by their best text, closest first', () => {
    const items = [['zzzz', 'nacht'], 'night shift', 'nicht', 'qqqq'];
    const ranked = likeliest(items, 'night', texts, 0.25);
    expect(ranked.map((x) => x.item)).toEqual(['night shift', 'nicht', ['zzzz', 'nacht']]);
    expect(ranked.map((x) => x.score)).toEqual([1, 0.5, 0.25]);
    expect(likeliest(items, 'night', texts, 0.26).map((x) => x.item)).toEqual(['night shift', 'nicht']);
  });
});

describe('closestClients: the clients named when none matches', () => {
  const list = [
    client({ displayName: 'Ann Lee', email: 'ann@mail.example' }, 1),
    client({ displayName: 'Anna Leigh', email: 'al@mail.example' }, 2),
    client({ displayName: 'Zed Quinn', email: 'zq@other.example' }, 3),
    client({ displayName: 'Bo Li', email: 'bo.li@mail.example' }, 4),
    client({ displayName: 'Ánn Lèe', email: 'ann2@mail.example' }, 5),
  ];

  it('ranks by name or e-mail, accents and case folded, the query trimmed; three at most by default', () => {
    const { shown, tied } = closestClients(list, '  ANN LEE ');
    expect(shown.map((c) => c.id)).toEqual(['c-1', 'c-5', 'c-2']);
    expect(tied).toBe(2);
    expect(closestClients(list, 'zq@other').shown.map((c) => c.id)).toEqual(['c-3']);
    expect(closestClients(list, 'ann lee', 1).shown.map((c) => c.id)).toEqual(['c-1']);
  });

  it('reads the query trimmed: white space around it is not part of the likeness', () => {
    // Trimmed, "ann lee" is held by both names (1 and 1: a tie); with its spaces, the letter pairs would rank them apart.
    const two = [client({ displayName: 'Ann Lee', email: null }, 1), client({ displayName: 'Ann Leeson', email: null }, 2)];
    expect(closestClients(two, '  ann lee  ')).toEqual({ shown: two, tied: 2 });
  });

  it('names none below the floor, and counts every tie however many are shown', () => {
    expect(closestClients(list, 'xxxxxxxx')).toEqual({ shown: [], tied: 0 });
    const many = Array.from({ length: 6 }, (_, i) => client({ displayName: `Same Name ${i}` }, i));
    const { shown, tied } = closestClients(many, 'same name');
    expect(shown).toHaveLength(3);
    expect(tied).toBe(6);
  });
});

describe('pickable and candidateTitle: what the host form offers', () => {
  it('offers up to twenty candidates, each with its own id', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => client({}, i));
    expect(pickable(twenty)).toBe(true);
    expect(pickable([...twenty, client({}, 20)])).toBe(false);
    expect(pickable([client({ id: 'a' }, 1), client({ id: 'a' }, 2)])).toBe(false);
    expect(pickable([client({ id: null }, 1), client({ id: 'b' }, 2)])).toBe(false);
    expect(pickable([client({}, 1)])).toBe(true);
  });

  it('titles a candidate by name, e-mail and id, each through the renderer', () => {
    expect(candidateTitle(client({ displayName: 'Ann\nLee', email: 'ann@mail.example', id: 'c-1' }))).toBe('Ann Lee <ann@mail.example> (id c-1)');
    expect(candidateTitle(client({ displayName: 'x'.repeat(60) })).startsWith(`${'x'.repeat(47)}…`)).toBe(true);
  });
});
