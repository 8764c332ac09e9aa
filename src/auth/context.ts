import { SETTINGS } from '../settings.js';
import { consentBinding } from './consent.js';
import { secretKeys } from './crypto.js';
import { DEFAULT_REDIRECT_HOSTS } from './redirect-uris.js';
import { withdraw, type SessionRecord } from './sessions.js';
import { MemoryAuthStore } from './store.js';
import type { AuthOptions, Session } from './types.js';

/** What every part of sign-in shares, built once by createAuth from its options. */
export function authContext(options: AuthOptions, signedIn: (outcome: 'signed_in' | 'refused') => void) {
  const base = options.publicUrl.replace(/\/+$/, '');
  const store = options.store ?? new MemoryAuthStore();
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  return {
    options,
    base,
    issuer: base,
    resource: `${base}/mcp`,
    resourceMetadataUrl: `${base}/.well-known/oauth-protected-resource/mcp`,
    store,
    log,
    signedIn,
    accessSeconds: options.accessTokenSeconds ?? 600,
    sessionMs: (options.sessionSeconds ?? Number(SETTINGS.authSessionHours.default) * 3600) * 1000,
    redirectHosts: new Set((options.redirectHosts ?? DEFAULT_REDIRECT_HOSTS).map((h) => h.toLowerCase())) as ReadonlySet<string>,
    keys: secretKeys(options.secret),
    consent: consentBinding(base),
    /** Ends a session on every replica; an audit line says whose and why. */
    async endSession(grant: Session, why: string): Promise<void> {
      await withdraw(store, grant.family);
      log(JSON.stringify({ audit: 'session ended', why, email: grant.identity.email, sub: grant.identity.sub }));
    },
  };
}

export type AuthContext = ReturnType<typeof authContext>;

export const sessionRecord = (s: Session): SessionRecord => ({
  family: s.family,
  email: s.identity.email,
  sub: s.identity.sub,
  role: s.identity.role,
  app: s.app,
  started: s.started,
  expires: s.expires,
});
