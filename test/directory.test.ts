import { describe, expect, it } from 'vitest';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';

interface CaseRun {
  ok: boolean;
  lines: string[];
  answers: string[];
  counts: { positive: number; negative: number };
}
const { runCases } = (await import(new URL('./fixtures/directory-cases.mjs', import.meta.url).href)) as {
  runCases: (options: { env: Record<string, string> }) => Promise<CaseRun>;
};

// The directory test cases (docs/directory/test-cases.json: the prompts, expected tool calls and
// outcomes a directory review reads) run against the built server on the sandbox, as in CI.
describe('directory test cases', () => {
  it('at least 5 positive and 3 negative cases, all passing', async () => {
    const { ok, lines, answers, counts } = await runCases({ env: childEnv() });
    captured.push(...answers);
    expect(counts.positive).toBeGreaterThanOrEqual(5);
    expect(counts.negative).toBeGreaterThanOrEqual(3);
    expect(
      lines.filter((l) => l.startsWith('✗')),
      lines.join('\n'),
    ).toEqual([]);
    expect(ok).toBe(true);
  }, 60_000);
});
