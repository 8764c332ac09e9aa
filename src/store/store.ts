import { UserInputError } from '../errors.js';

/**
 * The send store (docs/sending.md, "The send store"): everything "once" depends on, behind one small interface, so that
 * it holds across restarts (file) and replicas (redis), not only inside one process (memory).
 * Keys are `<namespace>:<kind>:<hash>`: the namespace is a firm's key fingerprint (or a feature's
 * name, e.g. `oauth`), never a key or client text. Each namespace is bounded on its own, so one
 * firm's volume never evicts another's entries.
 */
export interface SendStore {
  /** `memory`, `file` or `redis`. */
  readonly backend: 'memory' | 'file' | 'redis';
  /** What it is, for messages: e.g. `the file store at /home/a/.local/state/docreq-mcp` or `redis at 10.0.0.5:6379/0` (never a password). */
  readonly name: string;
  /** Who shares it: one process, every process of this user on this machine, or every replica. */
  readonly scope: 'process' | 'machine' | 'replicas';
  /** Takes `key` for `value` if nobody holds it (SET NX PX): true when taken. */
  claim(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Extends a live claim by `ttlMs` from now, only if it still holds `value` (its owner's): true when extended. */
  renew(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Gives `key` up, only if it still holds `value` (its owner's): true when released. */
  release(key: string, value: string): Promise<boolean>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Adds `by` (default 1) to a counter that lives `ttlMs` from its first increment; the new count. */
  incr(key: string, ttlMs: number, by?: number): Promise<number>;
  close(): Promise<void>;
}

/** The store cannot be read or written: nothing may be sent (fail closed); reads are not affected. */
export class StoreUnavailableError extends UserInputError {
  constructor(storeName: string, detail: string) {
    super(
      `Nothing was sent: the send store (${storeName}) cannot be used (${detail}), so this server cannot guarantee the request is sent only once. Sending works again once it is back; reading is not affected.`,
    );
    this.name = 'StoreUnavailableError';
  }
}

/** Entries kept per namespace (per firm) at most; the oldest of that namespace go first. */
export const MAX_PER_NAMESPACE = 50_000;

export function namespaceOf(key: string): string {
  const at = key.indexOf(':');
  return at > 0 ? key.slice(0, at) : '_';
}
