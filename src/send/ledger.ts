/**
 * Once-only sending within a process (contract §3.4): locks for sends in flight or awaiting
 * confirmation, a 24-hour memory of what was sent or may have been sent (consulted by the
 * duplicate guard alongside the service's list, which may lag), and what each confirmation token
 * did (a token used twice answers with what the first use did). Everything is keyed by the firm's
 * key fingerprint, so firms sharing a team service never see each other's entries, and bounded.
 */
export const LEDGER_TTL_MS = 24 * 60 * 60_000;
const MAX_ENTRIES = 20_000;

export type SendOutcome = 'sent' | 'may_have_been_sent';

export interface LedgerEntry {
  outcome: SendOutcome;
  at: number;
  requestId: string | null;
  title: string;
}

export class SendLedger {
  private readonly locks = new Set<string>();
  private readonly sends = new Map<string, LedgerEntry>();
  private readonly tokens = new Map<string, { at: number; result: unknown }>();

  constructor(private readonly now: () => number = Date.now) {}

  private static key(firm: string, clientId: string, titleKey: string): string {
    return `${firm}\0${clientId}\0${titleKey}`;
  }

  /** Takes the lock for this recipient and title; undefined when another call holds it. */
  lock(firm: string, clientId: string, titleKey: string): (() => void) | undefined {
    const key = SendLedger.key(firm, clientId, titleKey);
    if (this.locks.has(key)) return undefined;
    this.locks.add(key);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.locks.delete(key);
    };
  }

  record(firm: string, clientId: string, titleKey: string, entry: Omit<LedgerEntry, 'at'>): void {
    this.prune();
    const key = SendLedger.key(firm, clientId, titleKey);
    this.sends.delete(key); // re-insert: Map order is age order
    this.sends.set(key, { ...entry, at: this.now() });
  }

  /** What this server sent (or may have sent) to this client under this title in the last 24 hours. */
  recent(firm: string, clientId: string, titleKey: string): LedgerEntry | undefined {
    const entry = this.sends.get(SendLedger.key(firm, clientId, titleKey));
    return entry && this.now() - entry.at < LEDGER_TTL_MS ? entry : undefined;
  }

  tokenResult<T>(firm: string, tokenId: string): T | undefined {
    return this.tokens.get(`${firm}\0${tokenId}`)?.result as T | undefined;
  }

  rememberToken(firm: string, tokenId: string, result: unknown): void {
    this.prune();
    this.tokens.set(`${firm}\0${tokenId}`, { at: this.now(), result });
  }

  private prune(): void {
    const cutoff = this.now() - LEDGER_TTL_MS;
    for (const map of [this.sends, this.tokens] as Map<string, { at: number }>[]) {
      for (const [key, value] of map) {
        if (value.at >= cutoff && map.size < MAX_ENTRIES) break;
        map.delete(key);
      }
    }
  }
}
