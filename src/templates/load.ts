import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import type { Document, LineCounter } from 'yaml';
import { readyYaml, yamlReader } from '../yaml.js';
import { z } from 'zod';
import { checklistItem, CORRECTNESS_MODES, itemIn, MAX_ITEMS, MAX_TITLE } from '../domain/checklist.js';
import { BUILTIN_TEMPLATES, type Template } from './builtin.js';

/**
 * The firm's own templates, from DOCREQ_TEMPLATES_FILE (YAML or JSON; JSON is read as YAML, which
 * gives both the same line numbers). A file that cannot be used disables only the firm's templates:
 * the built-ins stay, and sending without a template is untouched.
 */

const MAX_FILE_BYTES = 1024 * 1024;
const MAX_TEMPLATES = 100;
const MAX_PROBLEMS = 10;

const nonEmptyText = (max: number) =>
  z
    .string()
    .refine((s) => s.trim().length > 0, { message: 'must not be empty', abort: true })
    .refine((s) => [...s.trim()].length <= max, `must be at most ${max} characters`);

const templateIn = z.strictObject({
  name: z
    .string()
    .min(1, { message: 'must not be empty', abort: true })
    .max(64, { message: 'must be at most 64 characters', abort: true })
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be kebab-case: lower-case letters, digits and single hyphens, e.g. "annual-audit"'),
  title: nonEmptyText(MAX_TITLE),
  description: z.string().max(500).optional(),
  items: z.array(itemIn).min(1).max(MAX_ITEMS),
  correctnessMode: z.enum(CORRECTNESS_MODES).optional(),
  dueInDays: z.number().int().min(0).max(366).optional(),
});

const fileIn = z.strictObject({ templates: z.array(templateIn).max(MAX_TEMPLATES) });

export interface TemplateCatalog {
  /** Every usable template: the built-ins, then the file's (a file's template replaces a built-in of the same name). */
  templates: Template[];
  builtIn: number;
  fromFile: number;
  /** The built-ins the file replaced. */
  overridden: string[];
  file: string | undefined;
  /** Why the file's templates are not used; empty when there is no file or it is fine. */
  problems: string[];
}

type Path = readonly PropertyKey[];

/** Loads the YAML reader when `file` names a templates file; resolves at once otherwise (src/yaml.ts). */
export async function readyTemplates(file: string | undefined): Promise<void> {
  if (file) await readyYaml();
}

function pathText(path: Path): string {
  return (
    path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('')
      .replace(/^\./, '') || '(the whole file)'
  );
}

/** The 1-based line of the deepest node on `path` (or of `key` inside it) that the document has. */
function lineOf(doc: Document, lines: LineCounter, path: Path, key?: string): number | undefined {
  const { isMap, isNode, isPair, isScalar } = yamlReader()!;
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth) as unknown[], true);
    if (!isNode(node) || !node.range) continue;
    if (key !== undefined && depth === path.length && isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
      if (pair && isNode(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
    }
    return lines.linePos(node.range[0]).line;
  }
  return undefined;
}

function valueAt(data: unknown, path: Path): unknown {
  let value = data;
  for (const p of path) value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[p] : undefined;
  return value;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** What may appear where a field was not known: the file, a template, or an item. */
function knownFields(path: Path): string {
  const depth = path.length - (typeof path[0] === 'number' ? 0 : 1);
  if (path.length === 0) return 'the file holds one field, templates';
  if (depth === 1) return 'a template has name, title, description, items, correctnessMode, dueInDays';
  return 'an item has name, required, type';
}

const YAML_ERRORS: Record<string, string> = {
  DUPLICATE_KEY: 'a field is given twice',
  MULTIPLE_DOCS: 'more than one YAML document (---): keep one',
};

function issueMessage(issue: z.core.$ZodIssue, data: unknown): string {
  const got = valueAt(data, issue.path);
  switch (issue.code) {
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')} (got ${shown(got)})`;
    case 'invalid_type':
      return got === undefined ? 'is missing' : `must be ${issue.expected === 'array' ? 'a list' : `a ${issue.expected}`} (got ${shown(got)})`;
    case 'too_small':
      return issue.origin === 'array' ? `must list at least ${String(issue.minimum)} item${issue.minimum === 1 ? '' : 's'}` : issue.message;
    default:
      return issue.message;
  }
}

/** Parses and checks a templates file's text; `file` names it in every problem. */
export function parseTemplatesFile(text: string, file: string): { templates: Template[]; problems: string[] } {
  const yaml = yamlReader();
  if (!yaml)
    return {
      templates: [],
      problems: [`${file} was not read: the YAML reader was not loaded (a bug in docreq-mcp: readyTemplates was not awaited before the server started)`],
    };
  const lines = new yaml.LineCounter();
  const doc = yaml.parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    return {
      templates: [],
      problems: doc.errors
        .slice(0, MAX_PROBLEMS)
        .map((e) => `${file}, line ${lines.linePos(e.pos[0]).line}: not valid YAML or JSON: ${YAML_ERRORS[e.code] ?? e.message.split('\n')[0]}`),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { templates: [], problems: [`${file}: cannot be read as YAML or JSON (${(error as Error).message.split('\n')[0]})`] };
  }
  if (data === null || data === undefined) return { templates: [], problems: [`${file} is empty: expected a "templates:" list`] };
  // A bare list of templates is accepted too.
  const parsed = Array.isArray(data) ? fileIn.shape.templates.safeParse(data) : fileIn.safeParse(data);
  const problems: string[] = [];
  if (!parsed.success) {
    const found: { line: number; text: string }[] = [];
    for (const issue of parsed.error.issues.slice(0, MAX_PROBLEMS)) {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
      for (const key of keys) {
        const line = lineOf(doc, lines, issue.path, key) ?? 0;
        const field = key === undefined ? pathText(issue.path) : pathText([...issue.path, key]);
        const message = key === undefined ? issueMessage(issue, data) : `is not a known field (${knownFields(issue.path)})`;
        found.push({ line, text: `${file}${line ? `, line ${line}` : ''}: ${field} ${message}` });
      }
    }
    // In file order, as a person fixes them.
    problems.push(...found.sort((a, b) => a.line - b.line).map((p) => p.text));
    if (parsed.error.issues.length > MAX_PROBLEMS) problems.push(`…and ${parsed.error.issues.length - MAX_PROBLEMS} more problems in ${file}`);
    return { templates: [], problems };
  }
  const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.templates;
  const prefix: Path = Array.isArray(data) ? [] : ['templates'];
  const seen = new Map<string, number>();
  list.forEach((t, i) => {
    const first = seen.get(t.name);
    if (first !== undefined)
      problems.push(
        `${file}, line ${lineOf(doc, lines, [...prefix, i, 'name'])}: ${pathText([...prefix, i, 'name'])} "${t.name}" is also the name of ${pathText([...prefix, first])}`,
      );
    else seen.set(t.name, i);
  });
  if (problems.length) return { templates: [], problems };
  return {
    templates: list.map((t) => ({
      name: t.name,
      title: t.title.trim(),
      description: t.description?.trim() ?? '',
      items: t.items.map(checklistItem),
      ...(t.correctnessMode ? { correctnessMode: t.correctnessMode } : {}),
      ...(t.dueInDays !== undefined ? { dueInDays: t.dueInDays } : {}),
      source: 'file' as const,
    })),
    problems: [],
  };
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Reads the file with a bound, so start-up never blocks: it is opened without waiting (a FIFO nobody
 * writes would otherwise hang `initialize` and `check`), refused unless it is a regular file, and read
 * up to the size cap. Reading a regular file of bounded size does not wait on anyone.
 */
function readText(file: string): { text?: string; problem?: string } {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { problem: `${file} is ${kindOf(stats)}; DOCREQ_TEMPLATES_FILE must name a regular YAML or JSON file` };
    if (stats.size > MAX_FILE_BYTES) return { problem: `${file} is ${stats.size} bytes; a templates file may be at most ${MAX_FILE_BYTES} bytes` };
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let size = 0;
    for (let n = -1; n !== 0 && size < buffer.length; size += n) n = readSync(fd, buffer, size, buffer.length - size, null);
    if (size > MAX_FILE_BYTES) return { problem: `${file} is over ${MAX_FILE_BYTES} bytes; a templates file may be at most ${MAX_FILE_BYTES} bytes` };
    return { text: buffer.subarray(0, size).toString('utf8') };
  } catch (error) {
    return { problem: `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The built-ins plus the file's templates (when a file is named and usable). Never throws. */
export function loadTemplates(file: string | undefined): TemplateCatalog {
  const builtIn = [...BUILTIN_TEMPLATES];
  const base = { builtIn: builtIn.length, file, overridden: [] as string[] };
  if (!file) return { ...base, templates: builtIn, fromFile: 0, problems: [] };
  const { text, problem } = readText(file);
  const loaded = text === undefined ? { templates: [], problems: [problem!] } : parseTemplatesFile(text, file);
  if (loaded.problems.length) return { ...base, templates: builtIn, fromFile: 0, problems: loaded.problems };
  const byName = new Map(loaded.templates.map((t) => [t.name, t]));
  const overridden = builtIn.filter((t) => byName.has(t.name)).map((t) => t.name);
  return {
    ...base,
    overridden,
    templates: [...builtIn.map((t) => byName.get(t.name) ?? t), ...loaded.templates.filter((t) => !overridden.includes(t.name))],
    fromFile: loaded.templates.length,
    problems: [],
  };
}
