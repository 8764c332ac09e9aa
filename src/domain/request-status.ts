/**
 * The open/closed rule for requests, in one place. The API document does not list request statuses, so which
 * ones end a request is the service profile's to say (`statuses.open`, `statuses.closed`); the defaults below
 * are the statuses a service like ours uses. A request is open unless its status is a closed one or every one
 * of its checklist items is complete. A status named in neither list is "unknown": it is counted as open by
 * that same rule, and every answer that sorts requests into open and closed names it with its count, so a
 * firm whose service says `withdrawn` sees how it was counted and can name it in the profile.
 * Imports nothing of ours.
 */

/** Statuses that end a request, unless the profile says otherwise (compared case-insensitively, `-`, `_` and spaces alike). */
export const DEFAULT_CLOSED_STATUSES = ['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived'] as const;
/** Statuses known to be open, unless the profile says otherwise. */
export const DEFAULT_OPEN_STATUSES = [
  'sent',
  'in_progress',
  'open',
  'pending',
  'new',
  'draft',
  'viewed',
  'awaiting',
  'partially_completed',
  'overdue',
  'active',
] as const;

export type StatusKind = 'open' | 'closed' | 'unknown';

/** A status as the rule compares it: lower case, with `-`, `_` and runs of spaces alike. */
export function statusKey(status: string): string {
  return status
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_');
}

export class StatusRules {
  private readonly open: ReadonlySet<string>;
  private readonly closed: ReadonlySet<string>;

  constructor(open: readonly string[] = DEFAULT_OPEN_STATUSES, closed: readonly string[] = DEFAULT_CLOSED_STATUSES) {
    this.open = new Set(open.map(statusKey));
    this.closed = new Set(closed.map(statusKey));
  }

  /** Whether the profile names this status open, closed, or neither (a missing status is unknown). */
  kind(status: string | null): StatusKind {
    if (status === null) return 'unknown';
    const key = statusKey(status);
    return this.closed.has(key) ? 'closed' : this.open.has(key) ? 'open' : 'unknown';
  }

  /** Open: not in a closing status and not every checklist item complete. */
  isOpen(r: { status: string | null; totalItems: number | null; completedItems: number | null }): boolean {
    if (r.status !== null && this.kind(r.status) === 'closed') return false;
    const allDone = r.totalItems !== null && r.completedItems !== null && r.totalItems > 0 && r.completedItems >= r.totalItems;
    return !allDone;
  }

  /** The statuses named, as the profile lists them (for `check`). */
  describe(): { open: string[]; closed: string[] } {
    return { open: [...this.open], closed: [...this.closed] };
  }
}
