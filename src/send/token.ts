import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Confirmation tokens (docs/sending.md): a preview hands out a token bound to the firm's key, to the
 * signed-in person (with --auth oauth) and to the exact request; a send needs it back. Verifying needs no server state, only the secret, so any
 * replica that shares DOCREQ_TOKEN_SECRET accepts a token another one issued. Single use is kept by
 * the send ledger (in a process) and, across processes, by the service honouring the
 * Idempotency-Key derived from the token.
 */
export const TOKEN_TTL_MS = 15 * 60_000;
const PREFIX = 'dr1';
const MAC_BYTES = 18;

/** `other-secret`: the token was issued under another DOCREQ_TOKEN_SECRET (a replica that does not share this one's). */
export type TokenCheck = { ok: true; id: string; expiresAt: number } | { ok: false; reason: 'malformed' | 'expired' | 'mismatch' | 'other-secret' };

/** A nonce is 6 random bytes and a 3-byte tag of the secret that issued it (12 base64url characters in all). */
const NONCE_RANDOM = 6;

/** JSON with object keys sorted, so equal requests always hash the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const b64 = (buf: Buffer) => buf.toString('base64url');

export class Confirmations {
  private readonly secret: Buffer;
  /** A tag of the secret (3 bytes of an HMAC under it: nothing of the secret), carried in every nonce it issues. */
  private readonly tag: Buffer;

  constructor(
    secret: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    // Unset: random per process (tokens then work within this process only).
    this.secret = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
    this.tag = this.hmac('secret tag').subarray(0, 3);
  }

  private hmac(text: string): Buffer {
    return createHmac('sha256', this.secret).update(text).digest();
  }

  /** A short, stable tag of a key that reveals nothing of it: what caches and ledgers are keyed by. */
  fingerprint(apiKey: string): string {
    return this.hmac(`key\0${apiKey}`).toString('hex').slice(0, 16);
  }

  /**
   * `person` (sign-in: the identity provider's subject) binds the token to whoever previewed, so
   * another person signed in under the same firm key cannot confirm it; without it (bearer mode) the
   * MAC is what it always was.
   */
  private mac(exp: string, nonce: string, apiKey: string, binding: unknown, person: string | undefined): Buffer {
    const request = createHash('sha256').update(canonicalJson(binding)).digest('hex');
    const who = person === undefined ? '' : `|person:${createHash('sha256').update(person).digest('hex')}`;
    return this.hmac(`${PREFIX}|${exp}|${nonce}|${this.fingerprint(apiKey)}|${request}${who}`).subarray(0, MAC_BYTES);
  }

  issue(apiKey: string, binding: unknown, person?: string): { token: string; expiresAt: number } {
    const expiresAt = this.now() + TOKEN_TTL_MS;
    const exp = Math.ceil(expiresAt / 1000).toString(36);
    const nonce = b64(Buffer.concat([randomBytes(NONCE_RANDOM), this.tag]));
    return { token: `${PREFIX}.${exp}.${nonce}.${b64(this.mac(exp, nonce, apiKey, binding, person))}`, expiresAt: Number.parseInt(exp, 36) * 1000 };
  }

  verify(token: string, apiKey: string, binding: unknown, person?: string): TokenCheck {
    const parts = token.trim().split('.');
    if (parts.length !== 4 || parts[0] !== PREFIX || !/^[0-9a-z]{1,12}$/.test(parts[1]!) || !/^[\w-]{12}$/.test(parts[2]!) || !/^[\w-]{24}$/.test(parts[3]!)) {
      return { ok: false, reason: 'malformed' };
    }
    const [, exp, nonce, given] = parts as [string, string, string, string];
    const expected = this.mac(exp, nonce, apiKey, binding, person);
    const got = Buffer.from(given, 'base64url');
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
      // Issued under another secret (its nonce carries another tag): said so, for replicas that do not share one.
      const issuedBy = Buffer.from(nonce, 'base64url').subarray(NONCE_RANDOM);
      return { ok: false, reason: issuedBy.equals(this.tag) ? 'mismatch' : 'other-secret' };
    }
    const expiresAt = Number.parseInt(exp, 36) * 1000;
    if (this.now() > expiresAt) return { ok: false, reason: 'expired' };
    return { ok: true, id: given, expiresAt };
  }

  /** The POST's Idempotency-Key for a confirmed send: the same confirmation always gives the same key. */
  idempotencyKey(confirmationId: string, recipient = ''): string {
    return `docreq-${this.hmac(`idem|${confirmationId}|${recipient}`).toString('hex').slice(0, 40)}`;
  }
}
