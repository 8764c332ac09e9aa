import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { BUILTIN_TEMPLATES } from '../src/templates/builtin.js';
import { expandTemplate } from '../src/templates/expand.js';
import { loadTemplates, parseTemplatesFile } from '../src/templates/load.js';
import { ITEM_TYPES } from '../src/domain/checklist.js';
import { fold } from '../src/text/render.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { addDays, sandbox, TODAY } from './support/sandbox.js';
import { connect, structured, type Connected } from './support/connect.js';

const sb = await sandbox();
const dir = mkdtempSync(join(suiteFolder(), 'templates-'));
// The templates page the README links (docs/templates.md) holds the sample file and the quoted error.
const readme = readFileSync(new URL('../docs/templates.md', import.meta.url), 'utf8');
const SAMPLE = readme.split('<!-- templates-sample')[1]!.split('```yaml\n')[1]!.split('```')[0]!;
const BUILTIN_NAMES = BUILTIN_TEMPLATES.map((t) => t.name);

let files = 0;
/** A templates file with this text, under a name of its own (the server reads each file once). */
function templatesFile(text: string, ext = 'yaml'): string {
  const path = join(dir, `templates-${++files}.${ext}`);
  writeFileSync(path, text);
  return path;
}

const open: Connected[] = [];
async function server(env: Record<string, string> = {}): Promise<Connected> {
  const mcp = await connect(sb, { env, today: TODAY });
  open.push(mcp);
  return mcp;
}
afterAll(() => Promise.all(open.map((m) => m.close())));

interface ListOut {
  total: number;
  templates: { name: string; title: string; itemCount: number; source: string }[];
  items: { name: string; required: boolean; type: string }[] | null;
  problems: string[];
}

const sampleFile = templatesFile(SAMPLE);
const withSample = await server({ DOCREQ_TEMPLATES_FILE: sampleFile });

describe('built-in templates', () => {
  it('are the six starters, each kebab-case with typed items within the request limits', () => {
    expect(BUILTIN_NAMES).toEqual([
      'individual-tax-return',
      'business-year-end',
      'bookkeeping-onboarding',
      'payroll-quarter-end',
      'mortgage-application',
      'legal-intake-kyc',
    ]);
    for (const t of BUILTIN_TEMPLATES) {
      expect(t.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(t.items.length).toBeGreaterThanOrEqual(5);
      expect(t.items.length).toBeLessThanOrEqual(100);
      expect(new Set(t.items.map((i) => i.name)).size, t.name).toBe(t.items.length);
      for (const item of t.items) expect(ITEM_TYPES).toContain(item.type);
    }
    // Realistic means more than files: answers of other types appear across the starters.
    expect(new Set(BUILTIN_TEMPLATES.flatMap((t) => t.items.map((i) => i.type)))).toEqual(new Set(ITEM_TYPES));
  });

  it('the sample file in the README loads: one template added, one built-in replaced', () => {
    const catalog = loadTemplates(sampleFile);
    expect(catalog.problems).toEqual([]);
    expect(catalog).toMatchObject({ builtIn: 6, fromFile: 2, overridden: ['individual-tax-return'] });
    expect(catalog.templates.map((t) => t.name)).toEqual([...BUILTIN_NAMES, 'annual-audit']);
    const audit = catalog.templates.find((t) => t.name === 'annual-audit')!;
    expect(audit).toMatchObject({ title: 'Annual audit fieldwork', correctnessMode: 'soft', dueInDays: 21, source: 'file' });
    expect(audit.items[0]).toEqual({ name: 'Trial balance at year end', required: true, type: 'file' });
    expect(audit.items[3]).toEqual({ name: 'Any litigation in progress?', required: false, type: 'boolean' });
    expect(catalog.templates[0]).toMatchObject({
      title: '2025 personal tax return',
      source: 'file',
      items: [{ name: 'W-2 forms from every employer' }, { name: '1099 forms', required: false }],
    });
  });

  it('the error quoted in the README is the one the loader gives', () => {
    const quoted = /e\.g\. `(templates\.yaml, line [^`]+)`/.exec(readme.replace(/\n/g, ' '))![1]!;
    const { problems } = parseTemplatesFile(SAMPLE.replace('type: number', 'type: pdf'), 'templates.yaml');
    expect(problems).toEqual([quoted]);
  });
});

describe('a templates file that cannot be used', () => {
  const problemsOf = (text: string, ext?: string) => loadTemplates(templatesFile(text, ext)).problems;

  it('bad YAML: names the file and the line', () => {
    const path = templatesFile('templates:\n  - name: audit\n    title: [Audit\n    items: []\n');
    const catalog = loadTemplates(path);
    expect(catalog.problems.length).toBeGreaterThan(0);
    expect(catalog.problems[0]).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, line [34]: not valid YAML or JSON`));
    expect(catalog.templates.map((t) => t.name)).toEqual(BUILTIN_NAMES);
  });

  it('unknown item type: the field, the line, the allowed types and what was given', () => {
    const problems = problemsOf('templates:\n  - name: audit\n    title: Audit\n    items:\n      - name: Ledger\n      - name: Scan\n        type: pdf\n');
    expect(problems).toEqual([
      expect.stringMatching(/, line 7: templates\[0\]\.items\[1\]\.type must be one of file, text, date, number, boolean \(got "pdf"\)$/),
    ]);
  });

  it('empty template name and empty item name: each with its line', () => {
    const problems = problemsOf('templates:\n  - name: ""\n    title: Audit\n    items:\n      - name: "  "\n');
    expect(problems).toEqual([
      expect.stringMatching(/, line 2: templates\[0\]\.name must not be empty$/),
      expect.stringMatching(/, line 5: templates\[0\]\.items\[0\]\.name must not be empty$/),
    ]);
  });

  it('a misspelt field, a missing one, a name that is not kebab-case, a duplicate name', () => {
    expect(problemsOf('templates:\n  - name: audit\n    title: Audit\n    itmes:\n      - name: Ledger\n')).toEqual([
      expect.stringMatching(/, line 2: templates\[0\]\.items is missing$/),
      expect.stringMatching(/, line 4: templates\[0\]\.itmes is not a known field/),
    ]);
    expect(problemsOf('version: 2\ntemplates:\n  - { name: audit, title: A, items: [{ name: L, kind: file }] }\n')).toEqual([
      expect.stringMatching(/, line 1: version is not a known field \(the file holds one field, templates\)$/),
      expect.stringMatching(/, line 3: templates\[0\]\.items\[0\]\.kind is not a known field \(an item has name, required, type\)$/),
    ]);
    expect(problemsOf('templates:\n  - name: audit\n    name: audit2\n')).toEqual([
      expect.stringMatching(/, line 3: not valid YAML or JSON: a field is given twice$/),
    ]);
    expect(problemsOf('templates:\n  - name: Annual Audit\n    title: Audit\n    items: [{ name: Ledger }]\n')).toEqual([
      expect.stringMatching(/line 2: templates\[0\]\.name must be kebab-case/),
    ]);
    expect(problemsOf('templates:\n  - { name: audit, title: A, items: [{ name: L }] }\n  - { name: audit, title: B, items: [{ name: L }] }\n')).toEqual([
      expect.stringMatching(/line 3: templates\[1\]\.name "audit" is also the name of templates\[0\]$/),
    ]);
  });

  it('JSON files load, and their errors have lines too', () => {
    const good = loadTemplates(
      templatesFile(JSON.stringify({ templates: [{ name: 'audit', title: 'Audit', items: [{ name: 'Ledger', type: 'text' }] }] }, null, 2), 'json'),
    );
    expect(good.problems).toEqual([]);
    expect(good.templates.at(-1)).toMatchObject({ name: 'audit', items: [{ name: 'Ledger', type: 'text', required: true }] });
    const bad = problemsOf(
      '{\n  "templates": [\n    { "name": "audit", "title": "Audit", "dueInDays": -3,\n      "items": [{ "name": "Ledger" }] }\n  ]\n}\n',
      'json',
    );
    expect(bad).toEqual([expect.stringMatching(/line 3: templates\[0\]\.dueInDays /)]);
  });

  it('a missing file, an empty file and a file that is not a template list', () => {
    expect(loadTemplates(join(dir, 'nope.yaml')).problems).toEqual([`${join(dir, 'nope.yaml')} cannot be read (ENOENT)`]);
    expect(problemsOf('')).toEqual([expect.stringMatching(/is empty: expected a "templates:" list$/)]);
    expect(problemsOf('templates: audit\n')).toEqual([expect.stringMatching(/line 1: templates must be a list \(got "audit"\)$/)]);
  });

  it('over MCP: only the built-ins are offered, the problem is shown, and create_request without a template still sends', async () => {
    const bad = templatesFile('templates:\n  - name: audit\n    title: Audit\n    items:\n      - name: Scan\n        type: pdf\n');
    const mcp = await server({ DOCREQ_TEMPLATES_FILE: bad, DOCREQ_CONFIRM_SEND: 'never' });
    expect(mcp.logs.join('\n')).toContain(`${bad}, line 6: templates[0].items[0].type must be one of`);
    const listed = await mcp.call('list_templates');
    const out = structured<ListOut>(listed);
    expect(out.templates.map((t) => t.name)).toEqual(BUILTIN_NAMES);
    expect(out.problems).toEqual([expect.stringContaining(`${bad}, line 6: templates[0].items[0].type`)]);
    expect(listed.text).toContain("The firm's templates file is not used until it is fixed");
    const client = sb.demoFirm.clients.find((c) => c.status === 'active' && c.displayName !== 'Sam Taylor')!;
    const sent = await mcp.call('create_request', { client: client.id, title: `Templates test ${Date.now()}`, items: [{ name: 'Ledger' }] });
    expect(structured<{ sent: boolean }>(sent).sent).toBe(true);
    const resources = await mcp.client.listResources();
    // The MCP Apps pages (ui://) are listed beside the templates; test/apps.test.ts covers them.
    expect(resources.resources.map((r) => r.uri).filter((u) => !u.startsWith('ui://'))).toEqual([
      'docreq://templates',
      ...BUILTIN_NAMES.map((n) => `docreq://templates/${n}`),
    ]);
  });

  it('docreq-mcp check shows the templates status and the problem, and exits 1 for a bad file', async () => {
    const bin = new URL('../dist/cli.js', import.meta.url).pathname;
    if (!existsSync(bin)) throw new Error('dist/cli.js is missing: run npm run build (npm test does)');
    const run = async (file: string) => {
      const child = spawn(process.execPath, [bin, 'check', '--templates', file], {
        env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      captured.push(out);
      return { code, out };
    };
    const good = await run(sampleFile);
    expect(good.out).toContain(`✓ templates: 6 built-in, 2 from ${sampleFile}, replacing individual-tax-return`);
    expect(good.code).toBe(0);
    const badFile = templatesFile('templates:\n  - name: ""\n    title: Audit\n    items: [{ name: Ledger }]\n');
    const bad = await run(badFile);
    expect(bad.out).toContain("✗ templates: 6 built-in only; the firm's file is not used until fixed:");
    expect(bad.out).toContain(`${badFile}, line 2: templates[0].name must not be empty`);
    expect(bad.code).toBe(1);
  });
});

describe('the templates setting', () => {
  it('DOCREQ_TEMPLATES_FILE names the file, --templates wins, and unset means built-ins only', () => {
    expect(loadConfig({}, { DOCREQ_TEMPLATES_FILE: '/firm/t.yaml' }).templatesFile).toBe('/firm/t.yaml');
    expect(loadConfig({ templatesFile: '/flag/t.yaml' }, { DOCREQ_TEMPLATES_FILE: '/firm/t.yaml' }).templatesFile).toBe('/flag/t.yaml');
    expect(loadConfig({}, {}).templatesFile).toBeUndefined();
    expect(loadTemplates(undefined)).toMatchObject({ builtIn: 6, fromFile: 0, problems: [], templates: BUILTIN_TEMPLATES });
  });

  it("an edit that breaks the file does not take the firm's templates from a running server", async () => {
    const path = templatesFile('templates:\n  - { name: first, title: First, items: [{ name: A }] }\n');
    const mcp = await server({ DOCREQ_TEMPLATES_FILE: path });
    writeFileSync(path, 'templates: [');
    const out = structured<ListOut>(await mcp.call('list_templates'));
    expect(out.problems).toEqual([]);
    expect(out.templates.map((t) => t.name)).toContain('first');
  });
});

describe('list_templates', () => {
  it("lists every template with its item count, and the firm's marked as such", async () => {
    const result = await withSample.call('list_templates');
    const out = structured<ListOut>(result);
    expect(out.total).toBe(7);
    expect(out.items).toBeNull();
    expect(out.templates.find((t) => t.name === 'annual-audit')).toMatchObject({ itemCount: 4, source: 'file' });
    expect(out.templates.find((t) => t.name === 'payroll-quarter-end')).toMatchObject({ source: 'built-in' });
    const lines = result.text.split('\n');
    expect(lines[0]).toBe("7 templates (5 built-in, 2 the firm's). Call list_templates with name for a template's items.");
    expect(lines).toContain('- annual-audit: "Annual audit fieldwork", 4 items (the firm\'s)');
    expect(lines).toHaveLength(8);
  });

  it('with a name: the items, their types and the defaults', async () => {
    const result = await withSample.call('list_templates', { name: 'Annual-Audit' });
    const out = structured<ListOut>(result);
    expect(out.total).toBe(7);
    expect(out.templates).toEqual([expect.objectContaining({ name: 'annual-audit', dueInDays: 21, correctnessMode: 'soft', itemCount: 4 })]);
    expect(out.items).toEqual(loadTemplates(sampleFile).templates.find((t) => t.name === 'annual-audit')!.items);
    expect(result.text).toContain('Defaults: title "Annual audit fieldwork", correctness mode soft, due 21 days after sending.');
    expect(result.text).toContain('  3. "Number of employees at year end" (number, required)');
    expect(result.text).toContain('  4. "Any litigation in progress?" (boolean, optional)');
  });

  it('an unknown name is an error listing the names', async () => {
    const result = await withSample.call('list_templates', { name: 'tax' });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('No template is named "tax". Templates: individual-tax-return, business-year-end');
  });
});

describe('expandTemplate', () => {
  const audit = loadTemplates(sampleFile).templates.find((t) => t.name === 'annual-audit')!;

  it("puts the template's items first, then the extra ones, and takes its title, mode and due offset as defaults", () => {
    const out = expandTemplate(
      audit,
      [
        { name: ' Signed engagement letter ', type: 'file' },
        { name: 'Notes', type: 'text', required: false },
      ],
      { today: '2026-01-10' },
    );
    expect(out.title).toBe('Annual audit fieldwork');
    expect(out.correctnessMode).toBe('soft');
    expect(out.dueDate).toBe('2026-01-31');
    expect(out.items.map((i) => i.name)).toEqual([...audit.items.map((i) => i.name), 'Signed engagement letter', 'Notes']);
    expect(out.items.at(-1)).toEqual({ name: 'Notes', type: 'text', required: false });
  });

  it("lets the caller's title, due date and mode win, and refuses more than 100 items in all", () => {
    const out = expandTemplate(audit, [], { today: '2026-01-10', title: 'Audit 2025', dueDate: '2026-03-01', correctnessMode: 'off' });
    expect(out).toMatchObject({ title: 'Audit 2025', dueDate: '2026-03-01', correctnessMode: 'off' });
    const noDue = expandTemplate({ ...audit, dueInDays: undefined, correctnessMode: undefined }, undefined, { today: '2026-01-10' });
    expect(noDue).toMatchObject({ dueDate: undefined, correctnessMode: undefined });
    const many = Array.from({ length: 97 }, (_, i) => ({ name: `Item ${i}` }));
    expect(() => expandTemplate(audit, many, { today: '2026-01-10' })).toThrow(/4 items and 97 more were given: 101 in all, more than the 100/);
  });
});

describe('resources', () => {
  it('lists the index, each template, and the template URI', async () => {
    const { resources } = await withSample.client.listResources();
    expect(resources[0]).toMatchObject({ uri: 'docreq://templates', mimeType: 'application/json' });
    expect(resources.map((r) => r.uri)).toContain('docreq://templates/annual-audit');
    expect(resources.filter((r) => !r.uri.startsWith('ui://'))).toHaveLength(8);
    const { resourceTemplates } = await withSample.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'docreq://templates/{name}', mimeType: 'application/json' })]);
  });

  it('reads the index and one template as JSON', async () => {
    const index = await withSample.client.readResource({ uri: 'docreq://templates' });
    const all = JSON.parse((index.contents[0] as { text: string }).text) as { templates: { name: string; itemCount: number }[]; problems: string[] };
    expect(all.templates).toHaveLength(7);
    expect(all.problems).toEqual([]);
    const one = await withSample.client.readResource({ uri: 'docreq://templates/mortgage-application' });
    expect(one.contents[0]).toMatchObject({ uri: 'docreq://templates/mortgage-application', mimeType: 'application/json' });
    const template = JSON.parse((one.contents[0] as { text: string }).text) as { name: string; items: { type: string }[]; source: string };
    expect(template).toMatchObject({ name: 'mortgage-application', source: 'built-in' });
    expect(template.items).toEqual(BUILTIN_TEMPLATES.find((t) => t.name === 'mortgage-application')!.items);
  });

  it('an unknown template is "resource not found" (-32602 with data.uri, as SDK v2 answers it in both eras)', async () => {
    const error = await withSample.client.readResource({ uri: 'docreq://templates/nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toContain('Resource not found');
  });
});

describe('prompts', () => {
  it('lists the three workflows with their arguments; read-only drops the one that sends', async () => {
    const { prompts } = await withSample.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['send-checklist', 'chase-overdue', 'weekly-status']);
    expect(prompts[0]!.arguments).toEqual([
      expect.objectContaining({ name: 'client', required: true }),
      expect.objectContaining({ name: 'template', required: true }),
    ]);
    expect(prompts[1]!.arguments).toEqual([expect.objectContaining({ name: 'client', required: false })]);
    const readOnly = await server({ DOCREQ_READ_ONLY: 'true' });
    expect((await readOnly.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['chase-overdue', 'weekly-status']);
  });

  it('send-checklist carries the template as create_request arguments, with a preview before any send', async () => {
    const prompt = await withSample.client.getPrompt({ name: 'send-checklist', arguments: { client: 'Sam Taylor', template: 'annual-audit' } });
    expect(prompt.messages).toHaveLength(1);
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toContain('call list_clients with search "Sam Taylor"');
    expect(text).toContain('never guess');
    const args = JSON.parse(/\n(\{[\s\S]*?\n\})\n/.exec(text)![1]!) as Record<string, unknown>;
    expect(args).toMatchObject({ title: 'Annual audit fieldwork', correctnessMode: 'soft', dryRun: true, dueDate: addDays(TODAY, 21) });
    expect(args.items).toEqual(loadTemplates(sampleFile).templates.find((t) => t.name === 'annual-audit')!.items);
    expect(text).toContain('Only after I agree');
  });

  it('send-checklist refuses an unknown template or a missing client', async () => {
    await expect(withSample.client.getPrompt({ name: 'send-checklist', arguments: { client: 'x', template: 'nope' } })).rejects.toThrow(
      /No template is named "nope"\. Templates: individual-tax-return/,
    );
    await expect(withSample.client.getPrompt({ name: 'send-checklist', arguments: { template: 'annual-audit' } })).rejects.toThrow(/needs client/);
    await expect(withSample.client.getPrompt({ name: 'nope' })).rejects.toThrow(/Unknown prompt "nope"/);
  });

  it('chase-overdue asks for every overdue request per client and drafts, never sends', async () => {
    const all = await withSample.client.getPrompt({ name: 'chase-overdue' });
    const text = (all.messages[0]!.content as { text: string }).text;
    expect(text).toContain('Call list_requests with overdue: true, sort: "due_soonest", limit: 500');
    expect(text).toContain('DRAFT message');
    expect(text).toContain('The service cannot send reminders');
    expect(text).toContain('Do not call create_request');
    const one = await withSample.client.getPrompt({ name: 'chase-overdue', arguments: { client: 'Sam' } });
    expect((one.messages[0]!.content as { text: string }).text).toContain('overdue: true, client: "Sam"');
  });

  it('weekly-status asks for exact counts, overdue and due this week', async () => {
    const prompt = await withSample.client.getPrompt({ name: 'weekly-status' });
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toContain(`as of ${TODAY}`);
    expect(text).toContain(`dueAfter: "${TODAY}"`);
    expect(text).toContain('overdue: true');
  });
});

describe('completion', () => {
  const complete = (name: string, argument: string, value: string) =>
    withSample.client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: argument, value } });

  it('completes template names by prefix, then by substring, case-insensitively', async () => {
    expect((await complete('send-checklist', 'template', 'PAY')).completion.values).toEqual(['payroll-quarter-end']);
    expect((await complete('send-checklist', 'template', 'tax')).completion.values).toEqual(['individual-tax-return']);
    expect((await complete('send-checklist', 'template', '')).completion).toMatchObject({ total: 7, hasMore: false });
    const byUri = await withSample.client.complete({
      ref: { type: 'ref/resource', uri: 'docreq://templates/{name}' },
      argument: { name: 'name', value: 'annual' },
    });
    expect(byUri.completion.values).toEqual(['annual-audit']);
  });

  it("completes client names from the firm's clients: prefix matches first, each name once", async () => {
    const names = sb.demoFirm.clients.map((c) => c.displayName);
    const sam = await complete('chase-overdue', 'client', 'sam t');
    expect(sam.completion.values).toEqual(['Sam Taylor']);
    const any = await complete('send-checklist', 'client', 'a');
    // Accent-insensitive: "Siobhán Rossi" matches "a".
    const folded = any.completion.values.map(fold);
    const firstInside = folded.findIndex((v) => !v.startsWith('a'));
    expect(firstInside).toBeGreaterThan(0);
    expect(folded.slice(0, firstInside).every((v) => v.startsWith('a'))).toBe(true);
    expect(folded.slice(firstInside).every((v) => !v.startsWith('a') && v.includes('a'))).toBe(true);
    expect(any.completion.values).toContain('Siobhán Rossi');
    expect(any.completion.total).toBe(new Set(names.filter((n) => fold(n).includes('a'))).size);
    expect(any.completion.values.length).toBeLessThanOrEqual(100);
  });

  it('caps at 100 with hasMore on a large firm, and gives nothing for arguments it does not know', async () => {
    const big = await sandbox({ clients: 300, requests: 0 });
    const mcp = await connect(big);
    open.push(mcp);
    const all = await mcp.client.complete({ ref: { type: 'ref/prompt', name: 'send-checklist' }, argument: { name: 'client', value: '' } });
    expect(all.completion.values).toHaveLength(100);
    expect(all.completion.hasMore).toBe(true);
    expect((await complete('weekly-status', 'client', 'a')).completion.values).toEqual([]);
    expect((await complete('chase-overdue', 'template', 'a')).completion.values).toEqual([]);
  });
});
