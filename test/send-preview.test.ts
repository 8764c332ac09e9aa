import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { addDays, TODAY } from './support/sandbox.js';
import { sandboxAndClient, structured } from './support/connect.js';

/**
 * What the person agrees to is what the preview says (src/tools/sending.ts describeDraft, draftFromInput):
 * the title, the due day, the correctness mode, every item with its type and whether it is required,
 * the counts, a template's values and the caller's overrides of them, and the warning for a due day
 * more than a year ahead. Through create_request's dryRun, the real server against the real sandbox.
 */

const { sb, firm, mcp } = await sandboxAndClient();
const client = firm.clients[0]!;
const posts = () => sb.calls.filter((c) => c.method === 'POST').length;
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('the preview states the request exactly', () => {
  it('without a template: the given items in order, numbered, typed, required or optional; no due day and the default mode named as such', async () => {
    const before = posts();
    const result = await mcp.call('create_request', {
      client: client.id,
      title: 'Quarter papers',
      items: [{ name: 'Bank statements' }, { name: 'Receipts', type: 'text', required: false }, { name: 'Start date', type: 'date' }],
      dryRun: true,
    });
    const text = textOf(result);
    expect(text).toContain(
      [
        'Title: "Quarter papers"',
        'Due: no due date',
        "Correctness mode: the service's default",
        'Items: 3 items (2 required):',
        '  1. "Bank statements" (file, required)',
        '  2. "Receipts" (text, optional)',
        '  3. "Start date" (date, required)',
      ].join('\n'),
    );
    expect(text).not.toContain('Warnings:');
    expect(posts()).toBe(before);
  });

  it('one item is "1 item"; a due day and a mode given are stated', async () => {
    const result = await mcp.call('create_request', {
      client: client.id,
      title: 'One thing',
      items: [{ name: 'Photo ID', required: false }],
      dueDate: '2099-01-02',
      correctnessMode: 'hard',
      dryRun: true,
    });
    expect(textOf(result)).toContain(
      ['Title: "One thing"', 'Due: 2099-01-02', 'Correctness mode: hard', 'Items: 1 item (0 required):', '  1. "Photo ID" (file, optional)'].join('\n'),
    );
  });

  it("a template's title, mode and items, with the caller's title, due day, mode and extra items taking their place or added", async () => {
    const own = await mcp.call('create_request', { client: client.id, template: 'individual-tax-return', dryRun: true });
    const ownText = textOf(own);
    expect(ownText).toContain('Title: "Individual tax return documents"\n');
    expect(ownText).toContain('Correctness mode: advisory\n');
    expect(ownText).toContain('Items: 9 items (3 required):\n  1. "Wage statements (W-2) from every employer" (file, required)\n');
    expect(ownText).toContain('  9. "Bank account and routing number for a refund" (text, optional)');

    const over = await mcp.call('create_request', {
      client: client.id,
      template: 'individual-tax-return',
      title: 'Tax 2026: the Smiths',
      dueDate: '2099-01-02',
      correctnessMode: 'soft',
      items: [{ name: 'Crypto statements', type: 'file' }],
      dryRun: true,
    });
    const overText = textOf(over);
    expect(overText).toContain('Title: "Tax 2026: the Smiths"\nDue: 2099-01-02\nCorrectness mode: soft\nItems: 10 items (4 required):\n');
    expect(overText).toContain('  10. "Crypto statements" (file, required)');
    expect(structured<{ warnings: string[] }>(over).warnings).toEqual(['The due date 2099-01-02 is more than a year ahead: check it is the one meant.']);
    expect(overText).toContain('Warnings: The due date 2099-01-02 is more than a year ahead: check it is the one meant.');
  });

  it('a due day exactly a year ahead passes quietly; a day later is warned about', async () => {
    const warningsFor = async (dueDate: string) =>
      structured<{ warnings: string[] }>(
        await mcp.call('create_request', { client: client.id, title: 'Year ahead', items: [{ name: 'Photo ID' }], dueDate, dryRun: true }),
      ).warnings;
    expect(await warningsFor(addDays(TODAY, 365))).toEqual([]);
    const later = addDays(TODAY, 366);
    expect(await warningsFor(later)).toEqual([`The due date ${later} is more than a year ahead: check it is the one meant.`]);
  });

  it('an unknown template is refused naming the templates there are; nothing is called', async () => {
    const before = posts();
    const result = await mcp.call('create_request', { client: client.id, template: 'no-such-template', dryRun: true });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /No template is named "no-such-template"; nothing was sent\. Templates: individual-tax-return, business-year-end, bookkeeping-onboarding, payroll-quarter-end, mortgage-application/,
    );
    expect(posts()).toBe(before);
  });
});

describe('a dry run given a valid token previews again, and its words start as a dry run', () => {
  // dryRun is not part of what a token binds: the token a preview gave is valid for the same call with dryRun, which
  // must still send nothing, and must not speak of the token (it was taken, not refused).
  it.each([
    ['create_request', { client: firm.clients[1]!.id, title: 'Dry run with a token', items: [{ name: 'W-2' }] }],
    ['create_request_batch', { clients: [firm.clients[2]!.id, firm.clients[3]!.id], title: 'Dry batch with a token', items: [{ name: 'W-2' }] }],
  ] as const)('%s', async (tool, args) => {
    const before = posts();
    const first = await mcp.call(tool, { ...args, dryRun: true });
    const token = structured<{ confirmation: { token: string } }>(first).confirmation.token;
    expect(token).toMatch(/\S/);
    const again = await mcp.call(tool, { ...args, dryRun: true, confirmationToken: token });
    expect(again.isError).toBeFalsy();
    expect(textOf(again).startsWith('DRY RUN — nothing was sent.')).toBe(true);
    expect(textOf(again)).not.toContain('confirmationToken given');
    expect(posts()).toBe(before);
  });
});
