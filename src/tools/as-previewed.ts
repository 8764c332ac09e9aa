import type { Client, CreatePayload, RequestRecord } from '../api/records.js';
import { readDay } from '../domain/dates.js';
import { DEFAULT_PROFILE, type Argument, type Kept, type ServiceProfile } from '../domain/service-profile.js';
import type { ToolContext } from './define.js';
import { titleKey } from '../text/invisible.js';
import { oneLine, quoted } from '../text/render.js';
import { nameKey } from '../requests/name-keys.js';

/**
 * As previewed, checked: after the service answers a create with a 2xx, what it says it created is compared with what
 * the person previewed (client, title, due date, number of items, and the correctness mode where the service shows
 * one). The record comes from the answer; when the answer does not show those fields, from the service's list, read
 * once (once for a whole batch). A service that silently drops a field it does not know (`dueDate` where it reads
 * `due_date`) is caught here, and the words name the likely cause and the profile setting that fixes it. A result
 * never says "as previewed" unless this check found it so.
 */

export interface PreviewCheck {
  /** true: the service's record matches the preview; false: it differs (see differences); null: it could not be checked. */
  asPreviewed: boolean | null;
  differences: string[];
  /** Why it could not be checked (asPreviewed null), or what was compared (true). */
  detail: string;
  /** The created request as the service's list shows it, when the list was read to check it. */
  listed?: RequestRecord;
}

const PROFILE = 'the service profile (DOCREQ_SERVICE_PROFILE)';

/** The likely cause of a field the service did not keep: it reads that field under another name. */
function unknownField(profile: ServiceProfile, argument: Argument): string {
  const { name, setting } = profile.fieldOf(argument);
  return `the service probably does not know the field ${JSON.stringify(name)} and dropped it: set ${setting} in ${PROFILE} to the name it uses`;
}

const text = (v: unknown): string | null =>
  v === null || v === undefined || v === '' ? null : typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v);

/** What a list record says the service kept (the list's documented fields). */
function keptFromList(r: RequestRecord): Kept {
  return { title: r.title, dueDate: r.dueDate, items: r.totalItems, clientName: r.clientName };
}

/** Whether a record shows what the check needs (title, due date, items); otherwise the list is read. */
function showsEnough(kept: Kept | null | undefined): kept is Kept {
  return Boolean(kept) && kept!.title !== undefined && kept!.dueDate !== undefined && kept!.items !== undefined;
}

/**
 * The created request in the service's list: by its id when the answer gave one, and then only by it (a list that
 * does not show it yet must not let an older request with this client and title stand in for it); else the newest
 * with this client and title.
 */
function findCreated(requests: readonly RequestRecord[], id: string | null | undefined, client: Client, title: string): RequestRecord | undefined {
  if (id) return requests.find((r) => r.id === id);
  const key = titleKey(title);
  const name = nameKey(client.displayName);
  // Lists are newest first (the API document): the first match is the newest.
  return requests.find((r) => titleKey(r.title) === key && nameKey(r.clientName) === name);
}

/** Compares what the service kept with what was previewed; every difference worded for a person, with its likely cause. */
function compareWithPreview(previewed: CreatePayload, kept: Kept, client: Client, profile: ServiceProfile): PreviewCheck {
  const differences: string[] = [];
  const compared: string[] = [];
  if (kept.clientId !== undefined && text(kept.clientId) !== null) {
    compared.push('client');
    if (text(kept.clientId) !== previewed.clientId)
      differences.push(`it belongs to client id ${quoted(text(kept.clientId), 40)}, not ${oneLine(previewed.clientId, 40)} as previewed`);
  } else if (kept.clientName !== undefined && text(kept.clientName) !== null) {
    compared.push('client');
    if (nameKey(text(kept.clientName)) !== nameKey(client.displayName))
      differences.push(`it names the client ${quoted(text(kept.clientName), 48)}, not ${quoted(client.displayName, 48)} as previewed`);
  }
  if (kept.title !== undefined) {
    compared.push('title');
    const title = text(kept.title);
    if (title === null) differences.push(`it has no title (previewed ${quoted(previewed.title, 80)}): ${unknownField(profile, 'title')}`);
    else if (titleKey(title) !== titleKey(previewed.title))
      differences.push(`its title reads ${quoted(title, 80)}, not ${quoted(previewed.title, 80)} as previewed`);
  }
  if (kept.dueDate !== undefined) {
    compared.push('due date');
    // Blank is no date, as readDay reads it.
    const due = text(kept.dueDate)?.trim() ? text(kept.dueDate) : null;
    const reading = readDay(due, profile.ambiguousDates);
    if (previewed.dueDate && due === null) {
      const dateTime = profile.spec.values.dueDate === 'date' ? ', or it wants a date-time (set values.dueDate to date-time)' : '';
      differences.push(`it has no due date (previewed ${previewed.dueDate}): ${unknownField(profile, 'dueDate')}${dateTime}`);
    } else if (previewed.dueDate && reading && reading.day === null) {
      differences.push(`its due date reads ${quoted(due, 40)}, which this server cannot read as a day (previewed ${previewed.dueDate})`);
    } else if (previewed.dueDate && reading && reading.day !== previewed.dueDate) {
      differences.push(
        `its due date is ${reading.day}, not ${previewed.dueDate} as previewed (read from ${quoted(due, 40)}${reading.form === 'DD/MM/YYYY' || reading.form === 'MM/DD/YYYY' || reading.form === 'DD.MM.YYYY' ? '; check dates.ambiguous' : ''})`,
      );
    } else if (!previewed.dueDate && due !== null) {
      differences.push(`it has a due date, ${quoted(due, 40)}, that the preview did not (the service's own default)`);
    }
  }
  if (kept.items !== undefined) {
    compared.push('items');
    const n = previewed.items.length;
    const items = kept.items;
    if (items === null || items === 0) differences.push(`it has no checklist items (previewed ${n}): ${unknownField(profile, 'items')}`);
    else if (items !== n) {
      differences.push(`it has ${items} checklist item${items === 1 ? '' : 's'}, not ${n} as previewed: check body.item and values.itemType in ${PROFILE}`);
    }
  }
  if (kept.correctnessMode !== undefined && previewed.correctnessMode) {
    compared.push('correctness mode');
    const mode = text(kept.correctnessMode);
    const sent = profile.modeSpelled(previewed.correctnessMode);
    if (mode === null) differences.push(`it shows no correctness mode (previewed ${previewed.correctnessMode}): ${unknownField(profile, 'correctnessMode')}`);
    else if (mode.toLowerCase() !== sent.toLowerCase() && mode.toLowerCase() !== previewed.correctnessMode) {
      differences.push(
        `its correctness mode is ${quoted(mode, 30)}, not ${previewed.correctnessMode} as previewed: the service may spell modes otherwise (values.correctnessMode in ${PROFILE})`,
      );
    }
  }
  if (differences.length) return { asPreviewed: false, differences, detail: '' };
  if (!compared.includes('title') || !compared.includes('items')) {
    return { asPreviewed: null, differences, detail: "the service's record does not show its title and items, so it could not be compared with the preview" };
  }
  return { asPreviewed: true, differences, detail: `the service's record shows the ${compared.join(', ')} as previewed` };
}

/** Not checked: the request could not be found or read back. */
function notChecked(detail: string): PreviewCheck {
  return { asPreviewed: null, differences: [], detail };
}

/**
 * The check's words in a send's result: a list of differences under a heading, or why it could not be checked; nothing
 * when the record matches (the result's own words then stand, as for any service that keeps what it is sent).
 */
export function checkText(check: PreviewCheck): string {
  if (check.asPreviewed === false)
    return `\nNOT AS PREVIEWED — the service's record differs from the preview:\n${check.differences.map((d) => `- ${d}`).join('\n')}`;
  if (check.asPreviewed === true) return '';
  return `\nNot checked against the preview: ${check.detail}.`;
}

/** One send to check: what was previewed, to whom, and what the answer said. */
export interface SentToCheck {
  payload: CreatePayload;
  client: Client;
  request: RequestRecord | null;
  kept: Kept | null | undefined;
}

/**
 * Checks each send against its preview: from the answer's record where it shows enough, else from the service's list,
 * read once for all of them (a batch reads it once, not once per recipient). A list that cannot be read leaves them
 * unchecked, saying why; it never turns into "as previewed".
 */
export async function checkSends(ctx: Pick<ToolContext, 'api' | 'config' | 'signal' | 'deadline' | 'redact'>, sent: SentToCheck[]): Promise<PreviewCheck[]> {
  const profile = ctx.config.serviceProfile ?? DEFAULT_PROFILE;
  let list: RequestRecord[] | undefined;
  let listProblem = '';
  if (sent.some((s) => !showsEnough(s.kept))) {
    try {
      list = await ctx.api.listRequests({ signal: ctx.signal, deadline: ctx.deadline });
    } catch (error) {
      listProblem = `the service's list could not be read to check it (${oneLine(ctx.redact(error instanceof Error ? error.message : String(error)), 200)})`;
    }
  }
  return sent.map((s) => {
    if (showsEnough(s.kept)) return compareWithPreview(s.payload, s.kept, s.client, profile);
    if (!list) return notChecked(listProblem);
    const found = findCreated(list, s.request?.id, s.client, s.payload.title);
    if (!found)
      return notChecked("the service's list does not show it yet, so what it kept could not be compared with the preview: check with list_requests later");
    // What the answer showed stands; the list fills in the rest.
    const fromAnswer = Object.fromEntries(Object.entries(s.kept ?? {}).filter(([, v]) => v !== undefined));
    return { ...compareWithPreview(s.payload, { ...keptFromList(found), ...fromAnswer }, s.client, profile), listed: found };
  });
}
