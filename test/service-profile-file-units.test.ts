// The service profile file (src/service-profile.ts readServiceProfile): what each kind of file gives, word for word.
// A good YAML or JSON file gives its profile; one that cannot be used gives the defaults and the one sentence an
// operator reads (file named, value of a path that cannot be read not echoed, only where JSON went wrong, the first
// five schema problems by field path), and sending is disabled until it is fixed. Real files in a temp folder.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_PROFILE } from '../src/domain/service-profile.js';
import { readServiceProfile, readyServiceProfile } from '../src/service-profile.js';

await readyServiceProfile('x.yaml');

const dir = mkdtempSync(join(tmpdir(), 'docreq-profile-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
/** A profile file holding exactly `text`; its path. */
function file(text: string, ext = 'yaml'): string {
  const path = join(dir, `profile-${++count}.${ext}`);
  writeFileSync(path, text);
  return path;
}

const disabled = (path: string, why: string) => `DOCREQ_SERVICE_PROFILE (${path}) ${why}; sending is disabled until it is fixed.`;
const unreadable = (code: string) =>
  'DOCREQ_SERVICE_PROFILE must be the path of the profile file (the value set is not shown), and names a file that cannot be read ' +
  `(${code}); sending is disabled until it is fixed.`;

/** The defaults with `why` for the file holding `text`. */
function refused(text: string, why: string, ext = 'yaml'): void {
  const path = file(text, ext);
  const read = readServiceProfile(path);
  expect(read.problem).toBe(disabled(path, why));
  expect(read.profile).toBe(DEFAULT_PROFILE);
}

/** The profile read from the file holding `text`, which must have no problem. */
function accepted(text: string, ext = 'yaml') {
  const path = file(text, ext);
  const read = readServiceProfile(path);
  expect(read).toEqual({ profile: read.profile });
  expect(read.problem).toBeUndefined();
  expect(read.profile).not.toBe(DEFAULT_PROFILE);
  expect(read.profile.source).toBe(path);
  return read.profile;
}

// Node 22 and later add "(line L column C)" after "at position N"; Node 20 does not. Each is kept as Node says it.
const LINE_COLUMN = (() => {
  try {
    JSON.parse('{"a" 1}');
  } catch (error) {
    return /\(line \d+ column \d+\)/.test((error as Error).message);
  }
  return false;
})();
const at = (position: number, line: number, column: number) => `at position ${position}${LINE_COLUMN ? ` (line ${line} column ${column})` : ''}`;

const HAS_PROBLEMS = 'has problems: ';
const whole = (message: string) => `${HAS_PROBLEMS}(the whole file): ${message}`;

describe('the YAML reader', () => {
  // The suite's setup loads it for every file (test/setup.ts, as main.ts does for a templates file), so this reads
  // the profile module afresh, as a server with a profile file and no templates file starts.
  it('is loaded by readyServiceProfile for a profile file, and not without one', async () => {
    vi.resetModules();
    const yaml = await import('../src/yaml.js');
    const fresh = await import('../src/service-profile.js');
    const path = file('body:\n  title: subject\n');
    await fresh.readyServiceProfile(undefined);
    await fresh.readyServiceProfile('');
    expect(yaml.yamlReader()).toBeUndefined();
    expect(fresh.readServiceProfile(path).problem).toBe(
      disabled(path, 'was not read: the YAML reader was not loaded (a bug in docreq-mcp: readyServiceProfile was not awaited)'),
    );
    await fresh.readyServiceProfile(path);
    expect(yaml.yamlReader()).toBeDefined();
    expect(fresh.readServiceProfile(path).problem).toBeUndefined();
    vi.resetModules();
  });
});

describe('no file', () => {
  it('undefined and the empty string give the defaults, with no problem key at all', () => {
    for (const none of [undefined, '']) {
      const read = readServiceProfile(none);
      expect(read).toEqual({ profile: DEFAULT_PROFILE });
      expect(Object.keys(read)).toEqual(['profile']);
      expect(read.profile).toBe(DEFAULT_PROFILE);
    }
  });
});

describe('a file that cannot be read', () => {
  it('a path that does not exist names ENOENT and never echoes the value set', () => {
    const path = join(dir, 'sk_live_not-a-path.yaml');
    const read = readServiceProfile(path);
    expect(read).toEqual({ profile: DEFAULT_PROFILE, problem: unreadable('ENOENT') });
    expect(read.profile).toBe(DEFAULT_PROFILE);
    expect(read.problem).not.toContain('sk_live');
  });

  it('a path through a file names ENOTDIR; a value too long for a name (a pasted key) ENAMETOOLONG', () => {
    expect(readServiceProfile(join(file('{}'), 'inside.yaml'))).toEqual({ profile: DEFAULT_PROFILE, problem: unreadable('ENOTDIR') });
    const key = `sk_live_${'k'.repeat(300)}`;
    const read = readServiceProfile(key);
    expect(read).toEqual({ profile: DEFAULT_PROFILE, problem: unreadable('ENAMETOOLONG') });
    expect(read.problem).not.toContain('sk_live');
  });

  it('a directory is not a regular file', () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    const read = readServiceProfile(folder);
    expect(read).toEqual({ profile: DEFAULT_PROFILE, problem: disabled(folder, 'is not a regular file') });
    expect(read.profile).toBe(DEFAULT_PROFILE);
  });

  it('a file of exactly 256 KB is read; one byte more is larger than 256 KB', () => {
    const limit = 256 * 1024;
    const padded = `{"dates":{"ambiguous":"day-first"}}`;
    const profile = accepted(padded + ' '.repeat(limit - padded.length), 'json');
    expect(profile.spec.dates.ambiguous).toBe('day-first');
    refused(padded + ' '.repeat(limit - padded.length + 1), 'is larger than 256 KB', 'json');
  });
});

describe('JSON', () => {
  it('a valid JSON file gives its names and values', () => {
    const profile = accepted(JSON.stringify({ body: { title: 'subject', item: { name: 'label' } }, values: { dueDate: 'date-time' } }), 'json');
    expect(profile.fieldOf('title')).toEqual({ name: 'subject', setting: 'body.title' });
    expect(profile.fieldOf('client')).toEqual({ name: 'clientId', setting: 'body.client' });
    expect(profile.spec.body.item).toEqual({ name: 'label', required: 'required', type: 'type' });
    expect(profile.spec.values).toEqual({ itemType: {}, correctnessMode: {}, dueDate: 'date-time' });
  });

  it('spaces and newlines before { still read as JSON: a repeated key is taken last, not refused', () => {
    const profile = accepted('  \n {"dates":{"ambiguous":"day-first"},"dates":{"ambiguous":"month-first"}}', 'json');
    expect(profile.spec.dates).toEqual({ ambiguous: 'month-first' });
    expect(profile.ambiguousDates).toBe('month-first');
    refused('\n  {"a" 1}', `is not valid JSON (${at(8, 2, 7)})`, 'json');
  });

  it('broken JSON keeps only where Node says it went wrong', () => {
    refused('{"a" 1}', `is not valid JSON (${at(5, 1, 6)})`, 'json');
    refused('{\n  "a": 1,\n}', `is not valid JSON (${at(12, 3, 1)})`, 'json');
    refused('{}x', `is not valid JSON (${at(2, 1, 3)})`, 'json');
    refused('{"a":1}{', `is not valid JSON (${at(7, 1, 8)})`, 'json');
  });

  it('broken JSON where Node names no position, or quotes the text, says only that it is not valid JSON', () => {
    refused('{"a":', 'is not valid JSON', 'json');
    refused(`{"key": 'sk_live_quoted'}`, 'is not valid JSON', 'json');
  });

  it('a UTF-8 byte order mark is not part of the text: JSON and YAML are read past it', () => {
    expect(accepted('\uFEFF{"dates":{"ambiguous":"day-first"}}', 'json').spec.dates.ambiguous).toBe('day-first');
    expect(accepted('\uFEFFdates: {ambiguous: day-first}').spec.dates.ambiguous).toBe('day-first');
  });

  it('only a mark at the very start is taken off: one inside a status name stays part of that name', () => {
    expect(accepted('\uFEFF{"statuses":{"closed":["with\uFEFFdrawn"]}}', 'json').spec.statuses.closed).toEqual(['with\uFEFFdrawn']);
    expect(accepted('statuses: {closed: ["with\uFEFFdrawn"]}').spec.statuses.closed).toEqual(['with\uFEFFdrawn']);
  });

  it('text that does not start with { is read as YAML: [1] is a list, "  x{" a string, neither a profile', () => {
    refused('[1]', whole('Invalid input: expected object, received array'), 'json');
    refused('  x{', whole('Invalid input: expected object, received string'), 'json');
  });
});

describe('YAML', () => {
  it('a valid YAML file gives its names, spellings, statuses, dates and created record', () => {
    const profile = accepted(
      [
        'body:',
        '  client: client_id',
        '  items: checklist',
        '  item: { name: label, type: kind }',
        'values:',
        '  itemType: { file: &doc document, text: *doc }',
        '  correctnessMode: { hard: strict }',
        'statuses:',
        '  open: [sent]',
        '  closed: [fulfilled, withdrawn]',
        'dates: { ambiguous: day-first }',
        'created: { record: result.request }',
      ].join('\n'),
    );
    expect(profile.spec).toEqual({
      body: {
        client: 'client_id',
        title: 'title',
        dueDate: 'dueDate',
        items: 'checklist',
        correctnessMode: 'correctnessMode',
        item: { name: 'label', required: 'required', type: 'kind' },
      },
      values: { itemType: { file: 'document', text: 'document' }, correctnessMode: { hard: 'strict' }, dueDate: 'date' },
      statuses: { open: ['sent'], closed: ['fulfilled', 'withdrawn'] },
      dates: { ambiguous: 'day-first' },
      created: { record: 'result.request' },
    });
    expect(profile.fieldOf('items')).toEqual({ name: 'checklist', setting: 'body.items' });
    expect(profile.modeSpelled('hard')).toBe('strict');
  });

  it('an empty file, a comment alone, null and ~ are the defaults with no problem', () => {
    for (const text of ['', '# only a comment\n', 'null', '~']) {
      const profile = accepted(text);
      expect(profile.spec).toEqual(DEFAULT_PROFILE.spec);
      expect(profile.describe()).toEqual(DEFAULT_PROFILE.describe());
    }
  });

  it('invalid YAML gives the first line of the reader message, with no line and column appended', () => {
    refused('a: [', 'is not valid YAML (Flow sequence in block collection must be sufficiently indented and end with a ])');
    refused('a: b: c', 'is not valid YAML (Nested mappings are not allowed in compact mappings)');
    refused('key: "unterminated', 'is not valid YAML (Missing closing "quote)');
    refused('a:\n\tb: 1', 'is not valid YAML (Tabs are not allowed as indentation)');
    refused('a: 1\n---\nb: 2', 'is not valid YAML (Source contains multiple documents; please use YAML.parseAllDocuments())');
  });

  it('of several YAML errors only the first is named', () => {
    refused('a: 1\na: 2\nb: [', 'is not valid YAML (Map keys must be unique)');
    refused('a: [\nb: 1\nb: 2', 'is not valid YAML (Flow sequence in block collection must be sufficiently indented and end with a ])');
  });

  it('a key given twice in one mapping is refused, not taken last', () => {
    refused('dates: { ambiguous: day-first }\ndates: { ambiguous: month-first }', 'is not valid YAML (Map keys must be unique)');
    refused('body:\n  title: a\n  title: b', 'is not valid YAML (Map keys must be unique)');
  });

  it('an alias bomb beyond 100 aliases is refused with a problem sentence, sending disabled', () => {
    refused(
      'a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n',
      'is not valid YAML (Excessive alias count indicates a resource exhaustion attack)',
    );
  });

  it('a YAML scalar or list at the top is a problem of the whole file', () => {
    refused('42', whole('Invalid input: expected object, received number'));
    refused('true', whole('Invalid input: expected object, received boolean'));
    refused('"text"', whole('Invalid input: expected object, received string'));
    refused('- a\n- b', whole('Invalid input: expected object, received array'));
  });
});

describe('schema problems', () => {
  it('unknown top-level fields are listed together, joined by ", ", as a problem of the whole file', () => {
    refused('x: 1\ny: 2', whole('has a field it does not know: x, y'));
    refused('body: { title: t, colour: red }', `${HAS_PROBLEMS}body: has a field it does not know: colour`);
  });

  it('a path names keys dotted and array places in brackets, with no leading dot', () => {
    refused('{"statuses":{"open":["a",""]}}', `${HAS_PROBLEMS}statuses.open[1]: must not be empty`, 'json');
    refused('body: { item: { name: "a b" } }', `${HAS_PROBLEMS}body.item.name: must be a plain field name (letters, digits, _ - . : $ @)`);
    refused('body: 3', `${HAS_PROBLEMS}body: Invalid input: expected object, received number`);
    refused('values: { dueDate: bad }', `${HAS_PROBLEMS}values.dueDate: Invalid option: expected one of "date"|"date-time"`);
  });

  it('more than five problems: only the first five, joined by "; "', () => {
    const number = (field: string) => `body.${field}: Invalid input: expected string, received number`;
    refused(
      'body: { client: 1, title: 2, dueDate: 3, items: 4, correctnessMode: 5, item: { name: 6 } }',
      HAS_PROBLEMS + ['client', 'title', 'dueDate', 'items', 'correctnessMode'].map(number).join('; '),
    );
    refused('body: { client: 1, title: 2 }', `${HAS_PROBLEMS}${number('client')}; ${number('title')}`);
  });

  it('two fields named alike, and a status listed both open and closed, say which', () => {
    refused('body:\n  client: title', `${HAS_PROBLEMS}body.title: names the same field as body.client ("title")`);
    refused('body:\n  item:\n    name: x\n    type: x', `${HAS_PROBLEMS}body.item.type: names the same field as body.item.name ("x")`);
    refused('statuses:\n  open: [sent, Done]\n  closed: [done]', `${HAS_PROBLEMS}statuses.closed: "done" is listed as open too`);
  });
});

describe('the sentence frame', () => {
  it('names the file as given, then why, then that sending is disabled until it is fixed', () => {
    const folder = join(dir, 'a folder (profiles)');
    mkdirSync(folder);
    const path = join(folder, 'service profile.yml');
    writeFileSync(path, '42');
    expect(readServiceProfile(path).problem).toBe(
      `DOCREQ_SERVICE_PROFILE (${path}) has problems: (the whole file): Invalid input: expected object, received number; ` +
        'sending is disabled until it is fixed.',
    );
  });
});
