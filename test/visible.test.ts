import { describe, expect, it } from 'vitest';
import { markInvisible, visibleResult, visibleStructured, withoutInvisibles } from '../src/text/visible.js';
import { sandboxAndClient, structured } from './support/connect.js';

/**
 * structuredContent by the renderer's invisible-character rule (src/text/visible.ts): the rule itself, and
 * the real server's answers (hosts such as ChatGPT hand structuredContent to their model).
 */

describe('the rule (src/text/visible.ts)', () => {
  it('removes invisible characters, a run that held a line break a space; marks them where two strings would read alike', () => {
    expect(withoutInvisibles('Tax\u200b Docs\u202e')).toBe('Tax Docs');
    expect(withoutInvisibles('two\u2028lines\nhere')).toBe('two lines here');
    const shown = visibleStructured({
      clients: [{ displayName: 'Acme Ltd' }, { displayName: 'Acme\u200b Ltd' }, { displayName: 'Acme Ltd\u{e0041}' }, { displayName: 'Solo\u200d Co' }],
    });
    expect(shown.clients.map((c) => c.displayName)).toEqual(['Acme Ltd', 'Acme⟨U+200B⟩ Ltd', 'Acme Ltd⟨U+E0041⟩', 'Solo Co']);
    // Idempotent: a page applies it again to what the server sent.
    expect(visibleStructured(shown)).toEqual(shown);
  });

  it('keeps identifiers and the payload exact; marks them only for showing', () => {
    const value = {
      id: 'c-\u200b1',
      clientId: 'c-\u200b1',
      confirmation: { token: 't\u200b' },
      payload: { title: 'T\u200b' },
      byStatus: { 'sent\u200b': 1, sent: 2 },
    };
    const shown = visibleStructured(value);
    expect(shown.id).toBe(value.id);
    expect(shown.clientId).toBe(value.clientId);
    expect(shown.confirmation.token).toBe('t\u200b');
    expect(shown.payload).toEqual(value.payload);
    // Keys are service text too: two statuses that read alike stay apart.
    expect(Object.keys(shown.byStatus)).toEqual(['sent⟨U+200B⟩', 'sent']);
    expect(markInvisible(value.id)).toBe('c-⟨U+200B⟩1');
  });

  it('hands a clean value on as it is (a shared, frozen answer stays shared)', () => {
    const clean = Object.freeze({ groups: Object.freeze([Object.freeze({ clientName: 'Acme Ltd' })]) });
    expect(visibleStructured(clean)).toBe(clean);
    const result = { content: [], structuredContent: clean };
    expect(visibleResult(result)).toBe(result);
  });
});

const { sb, mcp } = await sandboxAndClient();
sb.demoFirm.clients.push(
  { id: 'c-zw\u200b-1', displayName: 'Zed\u2066 Partners\u202e', email: 'zed@partners.example', status: 'active' },
  { id: 'c-zw-2', displayName: 'Zed Partners', email: 'office@zed.example', status: 'active' },
);
sb.invalidateLists();

describe("the server's structuredContent", () => {
  it('shows names by the rule (two that read alike marked apart), keeps ids exact, and an exact id still finds its client', async () => {
    const listed = structured<{ clients: { id: string; displayName: string }[] }>(await mcp.call('list_clients', { search: 'Zed' }));
    expect(listed.clients.map((c) => [c.id, c.displayName]).sort()).toEqual([
      ['c-zw-2', 'Zed Partners'],
      ['c-zw\u200b-1', 'Zed⟨U+2066⟩ Partners⟨U+202E⟩'],
    ]);
    const preview = structured<{ client: { id: string; displayName: string } }>(
      await mcp.call('create_request', { client: 'c-zw\u200b-1', title: 'Engagement letter', items: [{ name: 'Signed letter' }] }),
    );
    // Alone in its answer, the name reads as the text does: invisible characters removed.
    expect(preview.client).toMatchObject({ id: 'c-zw\u200b-1', displayName: 'Zed Partners' });
  });
});
