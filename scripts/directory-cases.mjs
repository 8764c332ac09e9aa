#!/usr/bin/env node
// node scripts/directory-cases.mjs (after npm run build): runs docs/directory/test-cases.json against the
// built server on the embedded sandbox, one line per case; exit 1 on any failed case. The runner itself,
// runCases, is test/fixtures/directory-cases.mjs, which test/directory.test.ts runs in CI.
import { runCases } from '../test/fixtures/directory-cases.mjs';

const { ok, lines, counts } = await runCases();
process.stdout.write(`${lines.join('\n')}\n${counts.positive} positive and ${counts.negative} negative cases: ${ok ? 'all pass' : 'FAILED'}\n`);
process.exitCode = ok ? 0 : 1;
