import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Client, RequestRecord } from '../src/api/records.js';
import { MAX_ITEMS } from '../src/domain/checklist.js';
import { BUILTIN_TEMPLATES } from '../src/templates/builtin.js';
import { templateCatalogue } from '../src/templates/catalogue.js';
import { cannotAsk, draftFromInput, duplicateOpen, previewNext, tokenRefused } from '../src/tools/sending.js';
import { suiteFolder } from './support/folders.js';

/**
 * What both send tools share before sending (src/tools/sending.ts), exactly: the preview's last line,
 * a refused token, a host that cannot ask, the duplicate guard's match, and a draft refused before any
 * HTTP call (too many items, none, an unknown template, the firm's file unusable).
 */
const AT = Date.UTC(2026, 2, 16, 9, 5, 42);

describe('the words around a preview', () => {
  it('previewNext: with a token needed, with one offered, with none', () => {
    expect(previewNext(true, 'dr1.tok', AT, 'create_request')).toBe(
      'Next: show the person this preview. Only once they agree, call create_request again with the same arguments plus confirmationToken: "dr1.tok" (single use, valid until 2026-03-16 09:05 UTC). Do not send without their go-ahead.',
    );
    expect(previewNext(false, 'dr1.tok', AT, 'create_request_batch')).toBe(
      'Next: show the person this preview; once they agree, call create_request_batch again without dryRun (you may pass confirmationToken: "dr1.tok").',
    );
    expect(previewNext(false, '', AT, 'create_request')).toBe('Next: show the person this preview; once they agree, call create_request again without dryRun.');
  });

  it('tokenRefused: expired, or not this exact request; cannotAsk names the setting and what to do', () => {
    expect(tokenRefused('expired', 'request')).toBe('The confirmationToken given has expired (tokens last 15 minutes); nothing was sent. ');
    expect(tokenRefused('mismatch', 'request (client, title)')).toBe(
      'The confirmationToken given does not belong to this exact request (client, title) and key (and person, when signed in); nothing was sent. ',
    );
    expect(tokenRefused('malformed', 'batch')).toBe(
      'The confirmationToken given does not belong to this exact batch and key (and person, when signed in); nothing was sent. ',
    );
    expect(cannotAsk().message).toBe(
      'Nothing was sent: DOCREQ_CONFIRM_SEND is "always", which needs the person to confirm through MCP elicitation, and this host does not support it. ' +
        'Use a host with elicitation, or ask whoever runs the server to set DOCREQ_CONFIRM_SEND=auto (confirmation by token).',
    );
  });
});

describe('duplicateOpen: an open request of the same title to a client of the same name', () => {
  const client = { id: 'c1', displayName: '  Ana   Müller ', email: 'a@x.example', status: 'active' } as Client;
  const request = (over: Partial<RequestRecord>) => ({
    id: 'r1',
    title: '2025 Tax Return',
    status: 'sent',
    clientName: 'ana muller',
    createdAt: '2026-03-01T10:00:00Z',
    dueDate: null,
    totalItems: 1,
    completedItems: 0,
    ...over,
  });

  it('names folded and spaces collapsed on both sides; titles compared as titleKey does', () => {
    expect(duplicateOpen(client, '2025 tax return', [request({})])).toBe(
      'the client already has an open request "2025 Tax Return" (id r1, status sent, created 2026-03-01)',
    );
    expect(duplicateOpen(client, '2025 tax return', [request({ clientName: ' ANA  MÜLLER' })])).toContain('(id r1,');
    expect(duplicateOpen({ ...client, displayName: 'Ana Müller' }, '2025 tax return', [request({ clientName: 'Ana\tMüller' })])).toContain('(id r1,');
  });

  it('not for another client, another title, a closed request, or a client without a name', () => {
    expect(duplicateOpen(client, '2025 tax return', [request({ clientName: 'Ana Mullers' })])).toBeUndefined();
    expect(duplicateOpen(client, '2024 tax return', [request({})])).toBeUndefined();
    expect(duplicateOpen(client, '2025 tax return', [request({ status: 'completed' })])).toBeUndefined();
    expect(duplicateOpen({ ...client, displayName: null }, '2025 tax return', [request({ clientName: null })])).toBeDefined();
  });
});

describe('a draft refused before any HTTP call', () => {
  const ctx = (templatesFile?: string) => ({ today: '2026-03-16', config: { templatesFile }, templates: templateCatalogue(templatesFile) }) as never;
  const refused = (input: Parameters<typeof draftFromInput>[0], templatesFile?: string) => {
    try {
      draftFromInput(input, ctx(templatesFile));
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('every problem named, one line each', () => {
    expect(refused({ title: 'T\u200b', items: [] })).toBe(
      'Invalid request; nothing was called or sent:\n- title: must not contain invisible or control characters (found U+200B), which would make the e-mail differ from the preview\n- items: give at least one item (or a template)',
    );
  });

  it('no items, or more than the limit, named with the count', () => {
    expect(refused({ title: 'T' })).toBe('Invalid request; nothing was called or sent:\n- items: give at least one item (or a template)');
    const many = Array.from({ length: MAX_ITEMS + 1 }, (_, n) => ({ name: `Item ${n}` }));
    expect(refused({ title: 'T', items: many })).toBe(
      `Invalid request; nothing was called or sent:\n- items: at most ${MAX_ITEMS} in all (there are ${MAX_ITEMS + 1})`,
    );
    expect(draftFromInput({ title: 'T', items: many.slice(1) }, ctx()).items).toHaveLength(MAX_ITEMS);
  });

  it('an unknown template names every template; an unusable templates file says why it is not used', () => {
    const names = BUILTIN_TEMPLATES.map((t) => t.name).join(', ');
    expect(refused({ template: 'nope' })).toBe(`No template is named "nope"; nothing was sent. Templates: ${names}.`);
    const dir = mkdtempSync(join(suiteFolder(), 'sending-'));
    const bad = join(dir, 'templates.yaml');
    writeFileSync(bad, 'templates: [');
    expect(refused({ template: 'nope' }, bad)).toMatch(
      new RegExp(
        `^No template is named "nope"; nothing was sent\\. Templates: ${names.replace(/[-.]/g, '\\$&')}\\.\\nThe firm's templates file is not used until it is fixed \\(only the built-ins are available\\):\\n- ${bad.replace(/[/.-]/g, '\\$&')}, line \\d+: not valid YAML or JSON`,
      ),
    );
  });

  it('a template gives its title, due date and mode unless the call gives its own', () => {
    const t = BUILTIN_TEMPLATES[0]!;
    expect(draftFromInput({ template: t.name }, ctx()).title).toBe(t.title);
    const own = draftFromInput({ template: t.name, title: 'Own title', dueDate: '2026-04-30', correctnessMode: 'hard' }, ctx());
    expect(own).toMatchObject({ title: 'Own title', dueDate: '2026-04-30', correctnessMode: 'hard' });
    expect(own.items.length).toBeGreaterThan(0);
  });
});
