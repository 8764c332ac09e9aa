import { afterAll, describe, expect, it } from 'vitest';
import { AROUND_TODAY, sandbox, TODAY } from './support/sandbox.js';
import { connect } from './support/connect.js';

// Contract §3.3: with default arguments every list text stays under 8,000 characters at any firm size.
const sb = await sandbox({ ...AROUND_TODAY, clients: 10_000, requests: 100_000 });
const mcp = await connect(sb, { today: TODAY });
afterAll(() => mcp.close());
const BUDGET = 8_000;

describe('list texts at 100,000 requests and 10,000 clients', () => {
  it.each([
    ['list_requests', {}],
    ['list_requests', { groupBy: 'client' }],
    ['list_requests', { groupBy: 'client', sort: 'most_open' }],
    ['list_requests', { groupBy: 'client', sort: 'most_overdue', state: 'open' }],
    ['list_requests', { client: 'Sam Taylor' }],
    ['list_requests', { client: 'a' }],
    ['list_requests', { client: 'a', groupBy: 'client' }],
    // Answers v3: days overdue, no due date, items outstanding, a part of a name many clients share, other fields.
    ['list_requests', { overdue: true }],
    ['list_requests', { hasDueDate: false, state: 'open' }],
    ['list_requests', { groupBy: 'client', sort: 'most_outstanding' }],
    ['list_requests', { client: 'Siobhan' }],
    ['list_clients', {}],
    ['list_clients', { details: true }],
    ['list_clients', { search: 'priority' }],
    ['list_clients', { requests: 'open' }],
    ['list_clients', { requests: 'none_open' }],
    ['list_clients', { requests: 'overdue' }],
  ] as const)(
    '%s %j stays under 8,000 characters',
    async (name, args) => {
      const result = await mcp.call(name, args);
      expect(result.isError).toBeFalsy();
      expect(result.text.length).toBeLessThan(BUDGET);
      if (process.env.BUDGET_REPORT) process.stderr.write(`${name} ${JSON.stringify(args)}: ${result.text.length} chars\n`);
    },
    60_000,
  );
});
