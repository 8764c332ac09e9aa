/**
 * The checklist's facts live once, in src/domain/checklist.ts, and everything that needs them
 * imports them from there: the tools, the templates, the sandbox's validation. The oracle here is the
 * API document and the contract, written out again, and the arrows between src/ folders.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORRECTNESS_MODES, ITEM_TYPES, MAX_ITEM_NAME, MAX_ITEMS, MAX_TITLE } from '../src/domain/checklist.js';
import { sandboxAndClient } from './support/connect.js';

const { sb, firm, mcp, upstream } = await sandboxAndClient();

// The API document: "type … file, text, date, number, boolean"; "Correctness mode accepts only off, advisory, soft, hard".
const DOCUMENT_TYPES = ['file', 'text', 'date', 'number', 'boolean'];
const DOCUMENT_MODES = ['off', 'advisory', 'soft', 'hard'];
// The product's limits: a title of 1–200 characters, item names of at most 200, 1–100 items in all.

describe("the checklist facts are the API document's and the contract's", () => {
  it('item types, correctness modes and limits', () => {
    expect([...ITEM_TYPES]).toEqual(DOCUMENT_TYPES);
    expect([...CORRECTNESS_MODES]).toEqual(DOCUMENT_MODES);
    expect({ MAX_ITEMS, MAX_TITLE, MAX_ITEM_NAME }).toEqual({ MAX_ITEMS: 100, MAX_TITLE: 200, MAX_ITEM_NAME: 200 });
  });
});

describe('the sandbox validates a create body as the API document says', () => {
  const post = async (body: unknown) => {
    const res = await fetch(`${sb.url}/api/v1/requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sb.keys.demo}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { error?: { details?: { field: string; message: string }[] } } };
  };
  const body = (extra: Record<string, unknown>, item: Record<string, unknown> = {}) => ({
    clientId: firm.clients[0]!.id,
    title: `Domain ${Math.random()}`,
    items: [{ name: 'W-2', required: true, ...item }],
    ...extra,
  });

  it.each(DOCUMENT_TYPES)('accepts an item of type %s', async (type) => {
    expect((await post(body({}, { type }))).status).toBe(201);
  });
  it.each(DOCUMENT_MODES)('accepts correctness mode %s', async (mode) => {
    expect((await post(body({ correctnessMode: mode }))).status).toBe(201);
  });
  it('refuses another type or mode, naming the field and the allowed values', async () => {
    const badType = await post(body({}, { type: 'pdf' }));
    expect(badType.status).toBe(422);
    expect(badType.body.error?.details).toEqual([{ field: 'items[0].type', message: `must be one of ${DOCUMENT_TYPES.join(', ')}` }]);
    const badMode = await post(body({ correctnessMode: 'strict' }));
    expect(badMode.status).toBe(422);
    expect(badMode.body.error?.details).toEqual([{ field: 'correctnessMode', message: `must be one of ${DOCUMENT_MODES.join(', ')}` }]);
  });
});

describe("create_request keeps the contract's limits, at the edge, before any HTTP call", () => {
  const item = (name = 'W-2') => ({ name });

  it('a 200-character title and item name, 100 items: previewed; one more of each: refused, nothing called', async () => {
    const client = firm.clients[0]!.id;
    const ok = await mcp.call('create_request', {
      client,
      title: 't'.repeat(200),
      items: [item('n'.repeat(200)), ...Array.from({ length: 99 }, (_, i) => item(`Item ${i}`))],
      dryRun: true,
    });
    expect(ok.isError, ok.text).toBeFalsy();
    expect((ok.structuredContent as { payload: { items: unknown[] } }).payload.items).toHaveLength(100);
    for (const [args, message] of [
      [{ title: 't'.repeat(201), items: [item()] }, 'title: must be at most 200 characters'],
      [{ title: 'T', items: [item('n'.repeat(201))] }, 'must be at most 200 characters'],
      [{ title: 'T', items: Array.from({ length: 101 }, (_, i) => item(`Item ${i}`)) }, 'items'],
      [{ template: 'individual-tax-return', items: Array.from({ length: 100 }, (_, i) => item(`Extra ${i}`)) }, 'more than the 100 a request may hold'],
    ] as const) {
      const before = upstream();
      const refused = await mcp.call('create_request', { client, ...args, dryRun: true });
      expect(refused.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      expect(refused.text).toContain(message);
      expect(upstream()).toBe(before);
    }
  });
});

describe('no arrow back up: what each folder may import', () => {
  const SRC = new URL('../src/', import.meta.url).pathname;
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : []));
  /** Each file's imports of our own modules, as src-relative paths. */
  const arrows = files(SRC).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => ({
      from: relative(SRC, file),
      to: relative(SRC, join(file, '..', m[1]!)).replace(/\.js$/, '.ts'),
    }));
  });
  const folder = (path: string) => (path.includes('/') ? path.split('/')[0]! : path);

  it('finds the imports it judges', () => {
    expect(arrows.some((a) => a.from.startsWith('tools/') && a.to === 'domain/checklist.ts')).toBe(true);
    expect(arrows.some((a) => a.from.startsWith('templates/') && a.to === 'domain/checklist.ts')).toBe(true);
    expect(arrows.some((a) => a.from === 'sandbox/requests.ts' && a.to === 'domain/checklist.ts')).toBe(true);
  });

  it('domain/ imports nothing of ours; templates/ and text/ nothing above them; the sandbox nothing of the server', () => {
    const allowed: Record<string, string[]> = {
      domain: ['domain'],
      text: ['text'],
      templates: ['templates', 'domain', 'text', 'errors.ts', 'clock.ts', 'yaml.ts'],
      // The demo identity provider draws its pages with the service's page helpers (page.ts, below both).
      sandbox: ['sandbox', 'domain', 'page.ts'],
    };
    const back = arrows.filter((a) => allowed[folder(a.from)] && !allowed[folder(a.from)]!.includes(folder(a.to)) && !allowed[folder(a.from)]!.includes(a.to));
    expect(back).toEqual([]);
  });
});
