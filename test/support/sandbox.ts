// The sandbox a test file talks to (reset before each test, closed after the file), its keys, the fixed
// day its data is laid out around (TODAY), and the contract's own idea of an open request.
import { afterAll, beforeEach } from 'vitest';
import type { ApiClientOptions } from '../../src/api/client.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/service.js';
import { SANDBOX_KEYS } from '../../src/sandbox/seed.js';

export const ALL_KEYS = Object.values(SANDBOX_KEYS);

export const FAST_API: Partial<ApiClientOptions> = { retryBaseDelayMs: 5 };

/** A fixed day for tests that judge dates, so they read the same on any day they run. */
export const TODAY = '2026-03-16';
/** Sandbox data laid out around TODAY. */
export const AROUND_TODAY = { now: new Date(`${TODAY}T12:00:00Z`) };

/** `day` plus `days`, both YYYY-MM-DD (UTC calendar arithmetic). */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The closing statuses (docs/service-profile.md), written here independently of the code under test. */
export const CLOSING_STATUSES = ['completed', 'complete', 'closed', 'done', 'cancelled', 'canceled', 'archived'];

/** Open per the contract: not in a closing status (any case) and not every checklist item complete. */
export function isOpen(r: { status: string; completedItems: number; totalItems: number }): boolean {
  return !CLOSING_STATUSES.includes(r.status.toLowerCase()) && !(r.totalItems > 0 && r.completedItems >= r.totalItems);
}

/** Forgets injected faults and logged calls, so each test sees only its own. */
function resetSandbox(sb: Sandbox): void {
  sb.clearFaults();
  sb.calls.length = 0;
}

/** A sandbox for this test file: reset before each test, closed after the file. */
export async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sb = await startSandbox(options);
  beforeEach(() => resetSandbox(sb));
  afterAll(() => sb.close());
  return sb;
}
