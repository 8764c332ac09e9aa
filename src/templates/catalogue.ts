import { statSync, unwatchFile, watchFile } from 'node:fs';
import { UserInputError } from '../errors.js';
import { fold, quoted } from '../text/render.js';
import type { Template } from './builtin.js';
import { loadTemplates, type TemplateCatalog } from './load.js';
import { problemsText, shownCatalog, type ShownCatalog } from './render.js';

/** A name no template has: the one refusal of it, naming every template there is. */
export class UnknownTemplateError extends UserInputError {
  override name = 'UnknownTemplateError';
}

/** The catalogue a server offers: the built-ins and the firm's file, as the file is now. */
export interface Templates {
  /**
   * The catalogue as it is now, with what the answers show of it: the same object until the file
   * changes (a stat per call tells), so answers worked out from it may be kept against it.
   */
  current(): ShownCatalog;
  /**
   * The template `name` names (case- and accent-insensitive, spaces around ignored), in `catalog` when
   * an answer is being worked out from one, else in the current one. Throws UnknownTemplateError,
   * which says `so` after the name when given: what the refusal means for the call (a send's
   * "nothing was sent").
   */
  find(name: string, how?: { catalog?: TemplateCatalog; so?: string }): Template;
  /**
   * Calls `onChange` each time the names the file gives change (tools/list and the template resources
   * show them): the file is polled every second, not held open. Returns the stop; without a file
   * there is nothing to watch.
   */
  watchNames(onChange: () => void): (() => void) | undefined;
}

/** What tells a changed file: its modification time, size and inode (or why it cannot be read). */
function stampOf(file: string | undefined): string {
  if (!file) return '';
  try {
    const s = statSync(file);
    return `${s.mtimeMs}:${s.size}:${s.ino}`;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'unreadable';
  }
}

function find(catalog: TemplateCatalog, name: string, so: string | undefined): Template {
  const wanted = fold(name.trim());
  const found = catalog.templates.find((t) => t.name === wanted);
  if (found) return found;
  throw new UnknownTemplateError(
    `No template is named ${quoted(name, 60)}${so ? `; ${so}` : ''}. Templates: ${catalog.templates.map((t) => t.name).join(', ')}.${problemsText(catalog)}`,
  );
}

/**
 * The file is read when the catalogue is first asked for and again only after it changed, so an
 * edited file is used without a restart. An edit that leaves the file unusable (half written, a
 * typo) keeps the last good templates: a running server never loses the firm's templates to it;
 * `check` and a restart report the problem.
 */
function catalogueOf(file: string | undefined): Templates {
  let kept: { catalog: ShownCatalog; stamp: string } | undefined;
  const current = (): ShownCatalog => {
    const stamp = stampOf(file);
    if (kept && kept.stamp === stamp) return kept.catalog;
    const fresh = loadTemplates(file);
    const last = kept?.catalog;
    const catalog = last && fresh.problems.length > 0 && last.problems.length === 0 ? last : shownCatalog(fresh);
    kept = { catalog, stamp };
    return catalog;
  };
  return {
    current,
    find: (name, how) => find(how?.catalog ?? current(), name, how?.so),
    watchNames(onChange) {
      if (!file) return undefined;
      let names = current().names;
      const check = () => {
        const now = current().names;
        if (now === names) return;
        names = now;
        onChange();
      };
      watchFile(file, { interval: 1000, persistent: false }, check);
      return () => unwatchFile(file, check);
    },
  };
}

const byFile = new Map<string, Templates>();

/** The one catalogue of `file` (DOCREQ_TEMPLATES_FILE) in this process, whichever server or entry asks. */
export function templateCatalogue(file: string | undefined): Templates {
  const key = file ?? '';
  let templates = byFile.get(key);
  if (!templates) byFile.set(key, (templates = catalogueOf(file)));
  return templates;
}
