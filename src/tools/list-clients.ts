import { z } from 'zod';
import { clientRecord, type Client } from '../api/records.js';
import { defineTool } from './define.js';
import { bump, countsText, fold, newCounts, oneLine, pageText, quoted, range } from './render.js';
import { limitField, offsetField, page, pageFields, statusCounts } from './schemas.js';

const DEFAULT_LIMIT = 50;

export function clientLine(c: Client): string {
  return `- ${quoted(c.displayName, 48)} <${oneLine(c.email, 60)}> · ${oneLine(c.status, 20) || 'no status'} · id ${oneLine(c.id, 40)}`;
}

export const listClients = defineTool({
  name: 'list_clients',
  title: 'List clients',
  description:
    "Lists the firm's clients with exact counts (total, matched, by status) and a page of matches, each with its id. " +
    'Use it to find the client a request is for: search by part of a name or e-mail (case- and accent-insensitive), ' +
    'then pass the id to create_request. Pages with limit/offset; nextOffset says where the next page starts.',
  inputSchema: z.strictObject({
    search: z.string().max(200).optional().describe('Part of the display name or e-mail; case- and accent-insensitive.'),
    status: z.string().max(50).optional().describe('Only clients with this status (exact, case-insensitive), e.g. "active".'),
    limit: limitField(DEFAULT_LIMIT),
    offset: offsetField,
  }),
  outputSchema: z.object({
    ...pageFields,
    byStatus: statusCounts.describe("Clients per status, over all the firm's clients."),
    clients: z.array(clientRecord),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(input, ctx) {
    const { search, status } = input;
    const limit = input.limit ?? DEFAULT_LIMIT;
    const offset = input.offset ?? 0;
    await ctx.progress(0, 2, 'Fetching clients');
    const all = await ctx.api.listClients({ signal: ctx.signal, deadline: ctx.deadline });
    await ctx.progress(1, 2, `Filtering ${all.length} clients`);

    const needle = search ? fold(search.trim()) : '';
    const wanted = status?.trim().toLowerCase();
    const byStatus = newCounts();
    const matches: Client[] = [];
    for (const c of all) {
      bump(byStatus, c.status ?? '(none)');
      if (wanted !== undefined && (c.status ?? '').toLowerCase() !== wanted) continue;
      if (needle && !fold(c.displayName).includes(needle) && !fold(c.email).includes(needle)) continue;
      matches.push(c);
    }
    const { slice, nextOffset } = page(matches, offset, limit);

    const filters = [search ? `search ${quoted(search, 60)}` : '', wanted !== undefined ? `status ${quoted(status, 30)}` : ''].filter(Boolean);
    const header =
      `${all.length} clients (${countsText(byStatus) || 'none'}). ` +
      (filters.length ? `${matches.length} match ${filters.join(' and ')}. ` : '') +
      `Showing ${range(offset, slice.length)} of ${matches.length}.`;
    const hint = filters.length ? 'No client matched. Try a shorter or different search, or drop the status filter.' : 'The firm has no clients.';
    return {
      text: pageText(header, slice.map(clientLine), offset, matches.length, hint),
      structured: { total: all.length, matched: matches.length, offset, returned: slice.length, nextOffset, byStatus: { ...byStatus }, clients: slice },
    };
  },
});
