/** A create's parts apart from the sandbox's own state: the Idempotency-Key memory, the plan limits a create meets, the record it makes. */
import { createHash } from 'node:crypto';
import type { Answer } from './answer.js';
import { openAtService, type Kept } from './requests.js';
import type { SandboxFirm, SandboxRequest } from './seed.js';

const DAY_MS = 86_400_000;

interface Remembered {
  at: number;
  /** sha1 of the body the key was first used with. */
  fingerprint: string;
  answer: Answer;
}

/** sha1 of a create's body as received (a body too large to read counts as empty). */
export function bodyFingerprint(text: string | null): string {
  return createHash('sha1')
    .update(text ?? '')
    .digest('base64url');
}

/** Idempotency-Keys, scoped by firm (`${firm.id} ${key}`), each with the answer its first use got. */
export class IdempotencyKeys {
  private readonly remembered = new Map<string, Remembered>();

  /**
   * What a key already stands for, once keys older than the window (default a day) are forgotten: its
   * first answer, marked replayed; 'reused' when it came with another body; undefined when it is new.
   */
  recall(scope: string, fingerprint: string, now: number, windowMs: number | undefined): Answer | 'reused' | undefined {
    const window = windowMs ?? DAY_MS;
    for (const [k, v] of this.remembered) if (now - v.at >= window) this.remembered.delete(k);
    const first = this.remembered.get(scope);
    if (first && first.fingerprint !== fingerprint) return 'reused';
    if (first) return { ...first.answer, headers: { ...first.answer.headers, 'idempotent-replayed': 'true' } };
    return undefined;
  }

  remember(scope: string, fingerprint: string, answer: Answer, now: number): void {
    this.remembered.set(scope, { at: now, fingerprint, answer });
  }
}

/** The plan limit a create would go over, as its refusal's status, code and words; undefined: there is room. */
export function planLimit(firm: SandboxFirm, closed: ReadonlySet<string>): { status: number; code: string; message: string } | undefined {
  const active = firm.requests.filter((r) => openAtService(r, closed)).length;
  if (active >= firm.activeRequestLimit) {
    const words = `The ${firm.plan} plan allows ${firm.activeRequestLimit} active requests and the firm has ${active}.`;
    return { status: 409, code: 'active_request_limit_reached', message: `${words} Complete or archive requests, or upgrade the plan.` };
  }
  if (firm.createdThisMonth >= firm.monthlyRequestLimit) {
    const words = `The ${firm.plan} plan's monthly billing limit of ${firm.monthlyRequestLimit} requests has been reached.`;
    return { status: 402, code: 'billing_limit_reached', message: `${words} Upgrade the plan or wait for the next billing period.` };
  }
  return undefined;
}

/** The request a create makes of what the service kept: sent to the client, nothing completed yet. */
export function newRequest(id: string, kept: Kept, client: SandboxFirm['clients'][number], status: string, now: number): SandboxRequest {
  return {
    id,
    title: kept.title,
    status,
    dueDate: kept.dueDate,
    createdAt: new Date(now).toISOString(),
    clientId: client.id,
    clientName: client.displayName,
    totalItems: kept.items.length,
    completedItems: 0,
    items: kept.items,
    correctnessMode: kept.correctnessMode ?? 'advisory',
  };
}
