import { createHash, randomUUID } from 'node:crypto';
import { MemoryStore } from '../store/memory.js';
import type { SendStore } from '../store/store.js';

/**
 * Once-only sending (docs/sending.md), kept in the send store so that it holds across restarts
 * (file) and replicas (redis): claims for sends in flight or awaiting confirmation, the 24-hour
 * record of what was sent or may have been sent (written BEFORE the POST as "pending", settled
 * after), and what each confirmation token did. Keys are the firm's fingerprint and hashes, never
 * the key or client text; the store bounds each firm on its own.
 */
export const LEDGER_TTL_MS = 24 * 60 * 60_000;
/**
 * A claim is a lease: it guards only the window while a send is confirmed and written, and its owner
 * renews it while that lasts (a person may take up to 10 minutes to answer). A process killed
 * mid-send stops renewing, so its claim clears about a minute later; from then on the pre-POST
 * record (24 hours, "may have been sent") is what answers the same send.
 */
const CLAIM_TTL_MS = 60_000;
const CLAIM_RENEW_MS = 15_000;

/** `pending`: the POST was about to be written and no outcome was recorded (in flight, or its process died). */
type SendOutcome = 'sent' | 'may_have_been_sent' | 'pending';

export interface LedgerEntry {
  outcome: SendOutcome;
  at: number;
  requestId: string | null;
  title: string;
  /** With sign-in (docs/sign-in.md): the person who sent it. */
  by?: { email: string; sub: string } | undefined;
}

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 40);

export class SendLedger {
  /** Whose claims are whose: one id per ledger (process), so only its owner releases a claim. */
  private readonly owner = randomUUID();

  constructor(
    readonly store: SendStore = new MemoryStore(),
    private readonly now: () => number = Date.now,
    /** The claim's lease and how often its owner renews it (shorter in tests). */
    private readonly lease = { ttlMs: CLAIM_TTL_MS, renewMs: CLAIM_RENEW_MS },
  ) {}

  private static sendKey(firm: string, clientId: string, titleKey: string): string {
    return `${firm}:send:${digest(clientId, titleKey)}`;
  }

  /** Takes the claim for this recipient and title, renewed until released; undefined when another call (any process) holds it. */
  async lock(firm: string, clientId: string, titleKey: string): Promise<(() => Promise<void>) | undefined> {
    const key = `${firm}:claim:${digest(clientId, titleKey)}`;
    const value = `${this.owner}:${randomUUID()}`;
    if (!(await this.store.claim(key, value, this.lease.ttlMs))) return undefined;
    let renewing: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      // A renewal that fails (the store is down) leaves the claim to expire; the pre-POST record, not the claim, keeps a send once.
      renewing = renewing.then(() => this.store.renew(key, value, this.lease.ttlMs)).catch(() => undefined);
    }, this.lease.renewMs);
    timer.unref();
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      clearInterval(timer);
      await renewing; // a renewal in flight must not write the claim back after it is released
      // A claim that cannot be released expires by its TTL.
      await this.store.release(key, value).catch(() => undefined);
    };
  }

  /** Whether some call (any process sharing the store) holds the claim for this recipient and title. */
  async claimed(firm: string, clientId: string, titleKey: string): Promise<boolean> {
    return (await this.store.get(`${firm}:claim:${digest(clientId, titleKey)}`)) !== undefined;
  }

  async record(firm: string, clientId: string, titleKey: string, entry: Omit<LedgerEntry, 'at'>): Promise<void> {
    await this.store.set(SendLedger.sendKey(firm, clientId, titleKey), JSON.stringify({ ...entry, at: this.now() }), LEDGER_TTL_MS);
  }

  /** A definite failure after a pending record: nothing was written, so the record goes. */
  async forget(firm: string, clientId: string, titleKey: string): Promise<void> {
    await this.store.delete(SendLedger.sendKey(firm, clientId, titleKey));
  }

  /** What this server sent (or may have sent) to this client under this title in the last 24 hours. */
  async recent(firm: string, clientId: string, titleKey: string): Promise<LedgerEntry | undefined> {
    const text = await this.store.get(SendLedger.sendKey(firm, clientId, titleKey));
    if (text === undefined) return undefined;
    try {
      const entry = JSON.parse(text) as LedgerEntry;
      return this.now() - entry.at < LEDGER_TTL_MS ? entry : undefined;
    } catch {
      // Unreadable: treated as "may have been sent", never as "nothing".
      return { outcome: 'may_have_been_sent', at: this.now(), requestId: null, title: '' };
    }
  }

  /** Single use anywhere the store reaches: true for the first caller only (an MRTR request state). */
  async claimOnce(firm: string, id: string, ttlMs: number): Promise<boolean> {
    return this.store.claim(`${firm}:once:${digest(id)}`, this.owner, ttlMs);
  }

  async tokenResult<T>(firm: string, tokenId: string): Promise<T | undefined> {
    const text = await this.store.get(`${firm}:token:${digest(tokenId)}`);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  async rememberToken(firm: string, tokenId: string, result: unknown): Promise<void> {
    await this.store.set(`${firm}:token:${digest(tokenId)}`, JSON.stringify(result), LEDGER_TTL_MS);
  }
}
