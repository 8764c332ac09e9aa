import { randomBytes } from 'node:crypto';
import type { ClientCapabilities } from '@modelcontextprotocol/server';
import type { SendStore } from '../store/store.js';

/**
 * What team mode knows of a 2025-11-25 connection between its requests. A 2026-07-28 request brings
 * its client's capabilities with it; a 2025 client gives them once, in `initialize`, which any replica
 * may answer. So the answer to a 2025 `initialize` carries an Mcp-Session-Id, and the capabilities are
 * kept under it in the send store (with redis, shared by every replica): every later request of that
 * connection, on any replica, knows whether its host shows pages. Nothing else is kept: each request
 * still gets its own server, so requests stay stateless and replicas interchangeable.
 *
 * Only a connection with something to remember gets one (worthASession): a client that declares
 * capabilities (a host: pages, forms, sampling, roots) keeps them under its session, for every replica.
 * A client that declares none (the SDK clients' default, and so most scripts) gets no Mcp-Session-Id,
 * and each of its requests is answered as its session would have been, with no capability: it leaves
 * nothing in the store, and its calls read nothing from it.
 *
 * A session belongs to whoever opened it (the key's fingerprint, and the signed-in person): another
 * key or person presenting its id is answered as for an ended one. It ends on DELETE, or when unused
 * for SESSION_IDLE_MS; a request naming an ended session is told to reconnect (404, as the
 * specification has it), and nothing of it runs.
 */

/** A session unused this long ends (its entry expires in the store). */
const SESSION_IDLE_MS = 24 * 60 * 60_000;

interface Kept {
  owner: string;
  capabilities: ClientCapabilities;
  /** When the entry was last written (its expiry renewed), epoch ms. */
  at: number;
}

/** Whether a client declared anything to keep for its later requests: a capability of any kind. */
export function worthASession(capabilities: unknown): boolean {
  return typeof capabilities === 'object' && capabilities !== null && !Array.isArray(capabilities) && Object.keys(capabilities).length > 0;
}

export type SessionLookup = { ok: true; capabilities: ClientCapabilities } | { ok: false };

export class ClientSessions {
  constructor(
    private readonly store: Pick<SendStore, 'get' | 'set' | 'delete'>,
    private readonly idleMs = SESSION_IDLE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  private key(id: string): string {
    return `mcp-session:${id}`;
  }

  /** A new session for this owner and the capabilities its client declared; its id. */
  async open(owner: string, capabilities: ClientCapabilities): Promise<string> {
    const id = randomBytes(24).toString('base64url');
    const kept: Kept = { owner, capabilities, at: this.now() };
    await this.store.set(this.key(id), JSON.stringify(kept), this.idleMs);
    return id;
  }

  /**
   * The session's capabilities, for its owner only; `ok: false` for an ended, expired, malformed or
   * foreign one. Its expiry is renewed once half of it has passed (one write a half-life, not per request).
   */
  async find(id: string, owner: string): Promise<SessionLookup> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id)) return { ok: false };
    const text = await this.store.get(this.key(id));
    if (text === undefined) return { ok: false };
    let kept: Kept;
    try {
      kept = JSON.parse(text) as Kept;
    } catch {
      return { ok: false };
    }
    if (kept.owner !== owner) return { ok: false };
    if (this.now() - kept.at > this.idleMs / 2) await this.store.set(this.key(id), JSON.stringify({ ...kept, at: this.now() }), this.idleMs);
    return { ok: true, capabilities: kept.capabilities ?? {} };
  }

  /** Ends the owner's session; false when there was none to end. */
  async end(id: string, owner: string): Promise<boolean> {
    const found = await this.find(id, owner);
    if (!found.ok) return false;
    await this.store.delete(this.key(id));
    return true;
  }
}
