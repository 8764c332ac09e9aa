import { readFileSync, statSync } from 'node:fs';
import { DEFAULT_PROFILE, ServiceProfile, serviceProfileSchema } from './domain/service-profile.js';
import { readyYaml, yamlReader } from './yaml.js';

/**
 * The service profile file (DOCREQ_SERVICE_PROFILE, YAML or JSON; docs/service-profile.md): read and checked once
 * at start. A file that cannot be read or checked leaves the defaults in force for reading and disables sending,
 * since a body built by the wrong names could e-mail a client something other than what was previewed.
 */

const MAX_BYTES = 256 * 1024;

/** Loads the YAML reader when the profile file needs it (anything but JSON); awaited before the settings are read. */
export async function readyServiceProfile(file: string | undefined): Promise<void> {
  if (file) await readyYaml();
}

function pathText(path: readonly PropertyKey[]): string {
  return (
    path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('')
      .replace(/^\./, '') || '(the whole file)'
  );
}

/** The profile in `file`, or the defaults with why the file cannot be used (each problem names the file and the field). */
export function readServiceProfile(file: string | undefined): { profile: ServiceProfile; problem?: string } {
  if (!file) return { profile: DEFAULT_PROFILE };
  const fail = (why: string) => ({ profile: DEFAULT_PROFILE, problem: `DOCREQ_SERVICE_PROFILE (${file}) ${why}; sending is disabled until it is fixed.` });
  let text: string;
  try {
    const found = statSync(file);
    if (!found.isFile()) return fail('is not a regular file');
    if (found.size > MAX_BYTES) return fail(`is larger than ${MAX_BYTES / 1024} KB`);
    // A byte order mark (editors on Windows write one) is not part of the JSON or YAML text.
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    // Not a file this machine has: the value is not echoed, since a key pasted here instead of a path must reach no log.
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return {
      profile: DEFAULT_PROFILE,
      problem: `DOCREQ_SERVICE_PROFILE must be the path of the profile file (the value set is not shown), and names a file that cannot be read (${code}); sending is disabled until it is fixed.`,
    };
  }
  let data: unknown;
  if (/^\s*\{/.test(text)) {
    try {
      data = JSON.parse(text);
    } catch (error) {
      // Node's message may quote the start of the text: only where it went wrong is kept.
      const where = /at position \d+(?: \(line \d+ column \d+\))?/.exec((error as Error).message)?.[0];
      return fail(`is not valid JSON${where ? ` (${where})` : ''}`);
    }
  } else {
    const yaml = yamlReader();
    if (!yaml) return fail('was not read: the YAML reader was not loaded (a bug in docreq-mcp: readyServiceProfile was not awaited)');
    const doc = yaml.parseDocument(text, { prettyErrors: false, uniqueKeys: true });
    if (doc.errors.length) return fail(`is not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`);
    try {
      data = doc.toJS({ maxAliasCount: 100 }) ?? {};
    } catch (error) {
      // Aliases that expand past the bound (a file built to exhaust memory): refused like any unreadable file.
      return fail(`is not valid YAML (${(error as Error).message.split('\n')[0]})`);
    }
  }
  const parsed = serviceProfileSchema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => {
      const unknown = i.code === 'unrecognized_keys' ? `has a field it does not know: ${i.keys.join(', ')}` : i.message;
      return `${pathText(i.path)}: ${unknown}`;
    });
    return fail(`has problems: ${issues.join('; ')}`);
  }
  return { profile: new ServiceProfile(parsed.data, file) };
}
