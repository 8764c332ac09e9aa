import { describe, expect, it } from 'vitest';

/**
 * The mutation record follows tests that were moved, split or reformatted (scripts/mutation-moved.mjs, `npm run mutate
 * -- --moved-tests`): each recorded test is found again by its full title, and nothing is carried that cannot be found
 * for certain. What the record says a test killed is only as true as this.
 */

type Test = { id: string; name: string; location: { start: { line: number; column: number } } };
const test = (id: string, name: string, line: number): Test => ({ id, name, location: { start: { line, column: 3 } } });
const at = (key: string, line: number) => ({ key, line, column: 3 });

type Rec = ReturnType<typeof record>;
const { carryTests, titleKey } = (await import(new URL('../scripts/mutation-moved.mjs', import.meta.url).href)) as {
  carryTests: (
    r: Rec,
    current: Map<string, { key: string; line: number; column: number }[]>,
    sourceOf: (file: string) => string | undefined,
  ) => { moved: number; dropped: number; orphaned: number };
  titleKey: (name: string) => string;
};

function record(testFiles: Record<string, { source: string; tests: Test[] }>, killedBy: string[][]) {
  return {
    files: { 'src/a.ts': { source: 'a', mutants: killedBy.map((ids, i) => ({ id: String(i), status: 'Killed', killedBy: ids, coveredBy: ids })) } },
    testFiles: testFiles as Record<string, { source: string | undefined; tests: Test[] }>,
  };
}

describe('tests moved, split or reformatted keep their recorded kills', () => {
  it('a test found in its own file at another position is moved there, with the file as it now reads', () => {
    const r = record({ 'test/a.test.ts': { source: 'old', tests: [test('1', 'group first', 10), test('2', 'group second', 20)] } }, [['1'], ['2']]);
    const current = new Map([['test/a.test.ts', [at('group first', 12), at('group second', 25)]]]);
    const result = carryTests(r, current, () => 'new');
    expect(result).toEqual({ moved: 2, dropped: 0, orphaned: 0 });
    expect(r.testFiles['test/a.test.ts']).toEqual({ source: 'new', tests: [test('1', 'group first', 12), test('2', 'group second', 25)] });
  });

  it('a file split in two: each test follows its title into the new file that holds it; the old file leaves the record', () => {
    const r = record({ 'test/old.test.ts': { source: 'old', tests: [test('1', 'a one', 5), test('2', 'b two', 9)] } }, [['1'], ['2', '1']]);
    const current = new Map([
      ['test/x.test.ts', [at('a one', 3)]],
      ['test/y.test.ts', [at('b two', 4)]],
    ]);
    const sources: Record<string, string> = { 'test/x.test.ts': 'x', 'test/y.test.ts': 'y' };
    expect(carryTests(r, current, (f: string) => sources[f])).toEqual({ moved: 2, dropped: 0, orphaned: 0 });
    expect(Object.keys(r.testFiles).sort()).toEqual(['test/x.test.ts', 'test/y.test.ts']);
    expect(r.testFiles['test/x.test.ts']).toEqual({ source: 'x', tests: [test('1', 'a one', 3)] });
    expect(r.testFiles['test/y.test.ts']).toEqual({ source: 'y', tests: [test('2', 'b two', 4)] });
    expect(r.files['src/a.ts'].mutants[1]!.killedBy).toEqual(['2', '1']);
  });

  it('a test found nowhere, or in two new files, is dropped, and a kill left without its test is counted', () => {
    const r = record({ 'test/old.test.ts': { source: 'old', tests: [test('1', 'gone', 5), test('2', 'twice', 9), test('3', 'kept', 12)] } }, [
      ['1'],
      ['2', '3'],
      ['3'],
    ]);
    const current = new Map([
      ['test/x.test.ts', [at('twice', 3), at('kept', 8)]],
      ['test/y.test.ts', [at('twice', 4)]],
    ]);
    expect(carryTests(r, current, (f: string) => (f === 'test/old.test.ts' ? undefined : f))).toEqual({ moved: 1, dropped: 2, orphaned: 1 });
    expect(r.testFiles).toEqual({ 'test/x.test.ts': { source: 'test/x.test.ts', tests: [test('3', 'kept', 8)] } });
    const [lost, shared, own] = r.files['src/a.ts'].mutants;
    expect([lost!.killedBy, shared!.killedBy, own!.killedBy]).toEqual([[], ['3'], ['3']]);
    expect(shared!.coveredBy).toEqual(['3']);
  });

  it('an unchanged file is left as it is, and a title it holds is not taken for a test moved from elsewhere', () => {
    const same = { source: 'same', tests: [test('1', 'alike', 5)] };
    const r = record({ 'test/same.test.ts': same, 'test/old.test.ts': { source: 'old', tests: [test('2', 'alike', 7)] } }, [['1'], ['2']]);
    const current = new Map([['test/same.test.ts', [at('alike', 5)]]]);
    expect(carryTests(r, current, (f: string) => (f === 'test/same.test.ts' ? 'same' : undefined))).toEqual({ moved: 0, dropped: 1, orphaned: 1 });
    expect(r.testFiles).toEqual({ 'test/same.test.ts': same });
  });

  it('a test the record holds twice (two ids, one title) follows its title once, both ids with it', () => {
    const r = record({ 'test/a.test.ts': { source: 'old', tests: [test('1', 'twin', 5), test('2', 'twin', 5)] } }, [['1'], ['2']]);
    const current = new Map([['test/a.test.ts', [at('twin', 8)]]]);
    expect(carryTests(r, current, () => 'new')).toEqual({ moved: 2, dropped: 0, orphaned: 0 });
    expect(r.testFiles['test/a.test.ts']!.tests).toEqual([test('1', 'twin', 8), test('2', 'twin', 8)]);
  });

  it('titles read alike whether their parts are joined by a space (Stryker) or by " > " (vitest list)', () => {
    expect(titleKey('outer > inner > the test')).toBe('outer inner the test');
    expect(titleKey('outer inner the test')).toBe('outer inner the test');
  });
});
