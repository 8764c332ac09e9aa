import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Person, Policy, Role } from './policy.js';
import type { AuthStore } from './store.js';

/** Sign-in's shapes: what createAuth is given and gives, and what it keeps in its store. */

export interface Identity {
  email: string;
  /** The identity provider's subject. */
  sub: string;
  role: Role;
}

export type Authentication = { ok: true; identity: Identity; apiKey: string } | { ok: false; status: number; wwwAuthenticate: string; message: string };

export interface AuthOptions {
  /** The address hosts reach this service at (no trailing slash): the issuer, and `${publicUrl}/mcp` the resource. */
  publicUrl: string;
  /** Signs access tokens; every replica must have the same. */
  secret: Uint8Array;
  /** The firm's identity provider. */
  idp: { issuer: string; clientId: string; clientSecret: string };
  policy: Policy;
  /** The firm's key: used for the service on behalf of signed-in staff, never shown to anyone. */
  apiKey: string;
  store?: AuthStore;
  /** http:// on loopback for the identity provider (an http issuer on loopback was configured, or the sandbox's). */
  allowLoopbackHttp?: boolean;
  /**
   * @internal Tests only, never a setting: Client ID Metadata Documents may be fetched from loopback
   * (http or https). Otherwise their host must resolve to public addresses only.
   */
  unsafeAllowLoopbackClientDocuments?: boolean;
  /** Hosts whose https redirect URIs clients may register (DOCREQ_AUTH_REDIRECT_HOSTS); loopback http and app schemes always. */
  redirectHosts?: readonly string[];
  accessTokenSeconds?: number;
  /** How long a session lives, refreshes included, before the person signs in at the identity provider again (DOCREQ_AUTH_SESSION_HOURS). */
  sessionSeconds?: number;
  /** Log lines (stderr by default); never given a token or the key. */
  log?: (line: string) => void;
}

export interface Auth {
  readonly resource: string;
  readonly resourceMetadataUrl: string;
  /** Serves sign-in's own routes; false when the request is not one of them. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Checks a request's access token for /mcp. */
  authenticate(req: IncomingMessage): Promise<Authentication>;
  /** Told of each sign-in as it ends: a session started, or the person refused (team mode's metrics). */
  onSignIn?: (outcome: 'signed_in' | 'refused') => void;
}

export const SCOPE = 'docreq';
export const MINUTE = 60_000;
/** How long a sign-in in progress (consent, then the identity provider) may take. */
export const TX_MS = 10 * MINUTE;
/** How long an authorization code lives. */
export const CODE_MS = 1 * MINUTE;

export interface ClientRecord {
  clientName: string | undefined;
  redirectUris: string[];
}

export interface Pending {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  resource: string;
  scope: string;
  /** The digest of the consent cookie of the browser that saw the consent page. */
  browser: string;
  /** The app as the consent page named it (its client_name, else where it returns). */
  app: string;
}

/** What a sign-in gave: who, what they may do, the facts the role was decided on, and the session's bounds. */
interface Grant {
  clientId: string;
  resource: string;
  scope: string;
  identity: Identity;
  person: Person;
  app: string;
  started: number;
  expires: number;
  /** The identity provider's refresh token, sealed; absent where it gives none. */
  idpRefresh?: string;
}
export type CodeGrant = Grant & { redirectUri: string; codeChallenge: string };
/** A session as each refresh token holds it: its family (the session's id) and its entry in the list. */
export type Session = Grant & { family: string; slot: string };
