import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { settingFlagOptions, settingsFromFlags } from '../settings.js';
import { openStore, RedisStore } from '../store/index.js';
import { oneLine } from '../text/render.js';
import type { Role } from './policy.js';
import { authStoreOf, type AuthStore } from './store.js';

/**
 * Sign-in sessions (docs/sign-in.md, "Sessions"): each one from a sign-in at the identity provider to at most
 * DOCREQ_AUTH_SESSION_HOURS later, whatever its refreshes. Each is listed in the shared store under
 * the day it began (a counter per day and one entry per session, both expiring with it), so that
 * `docreq-mcp sessions list | end --email X | end --all` reaches every replica's sessions through the
 * store alone. Ending writes a mark (everything begun before it, for that person or for everyone) and
 * withdraws each listed session; every replica checks both at each request and each refresh.
 */

export interface SessionRecord {
  /** The session's id (its refresh tokens' family): never a token. */
  family: string;
  email: string;
  sub: string;
  role: Role;
  /** The app, as it named itself (or its redirect host). */
  app: string;
  started: number;
  expires: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** DOCREQ_AUTH_SESSION_HOURS at most (SETTINGS); marks and withdrawals are kept this long, whatever a replica's own setting. */
const MAX_SESSION_HOURS = 168;
const KEEP_MS = MAX_SESSION_HOURS * HOUR + DAY;

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');
const dayOf = (ms: number) => Math.floor(ms / DAY);
const endedKey = (email: string) => `ended:${digest(email.toLowerCase())}`;

/** Lists a new session; returns where its entry lives (updated when its role changes at a refresh). */
export async function recordSession(store: AuthStore, session: SessionRecord): Promise<string> {
  const day = dayOf(session.started);
  const n = await store.incr(`sessions:count:${day}`, KEEP_MS);
  const slot = `sessions:${day}:${n}`;
  await store.set(slot, JSON.stringify(session), Math.max(1, session.expires - Date.now()));
  return slot;
}

export async function updateSession(store: AuthStore, slot: string, session: SessionRecord): Promise<void> {
  const left = session.expires - Date.now();
  if (left > 0) await store.set(slot, JSON.stringify(session), left);
}

export const withdraw = (store: AuthStore, family: string) => store.set(`revoked:${family}`, '1', KEEP_MS);

/** Why a session may no longer be used (withdrawn, or begun before an end mark), or undefined. */
export async function sessionEnded(store: AuthStore, session: { family: string; email: string; started: number }): Promise<string | undefined> {
  const [revoked, all, person] = await Promise.all([store.get(`revoked:${session.family}`), store.get('ended:all'), store.get(endedKey(session.email))]);
  if ((all !== undefined && session.started <= Number(all)) || (person !== undefined && session.started <= Number(person)))
    return 'this session was ended by an administrator; sign in again';
  if (revoked !== undefined) return 'this session was signed out (revoked); sign in again';
  return undefined;
}

/** Every live session in the store, oldest first. */
async function listSessions(store: AuthStore, now = Date.now()): Promise<SessionRecord[]> {
  const found: SessionRecord[] = [];
  for (let day = dayOf(now - KEEP_MS); day <= dayOf(now) + 1; day++) {
    const count = Number((await store.get(`sessions:count:${day}`)) ?? 0);
    for (let n = 1; n <= count; n++) {
      const text = await store.get(`sessions:${day}:${n}`);
      if (!text) continue;
      const session = JSON.parse(text) as SessionRecord;
      if (session.expires > now && !(await sessionEnded(store, session))) found.push(session);
    }
  }
  return found.sort((a, b) => a.started - b.started);
}

/** Ends one person's sessions (by e-mail) or everyone's, on every replica sharing the store; how many were live. */
async function endSessions(store: AuthStore, who: { email: string } | { all: true }, now = Date.now()): Promise<number> {
  const live = await listSessions(store, now);
  const ending = 'all' in who ? live : live.filter((s) => s.email === who.email.toLowerCase());
  await store.set('all' in who ? 'ended:all' : endedKey(who.email), String(now), KEEP_MS);
  await Promise.all(ending.map((s) => withdraw(store, s.family)));
  return ending.length;
}

const USAGE = 'usage: docreq-mcp sessions list | sessions end --email ADDRESS | sessions end --all (on the send store: DOCREQ_STORE, DOCREQ_STORE_URL)';

/**
 * `docreq-mcp sessions …`: lists or ends sign-in sessions on the send store the replicas share. The
 * list goes to stdout; each end writes one JSON audit line to stderr (who ran it, whom it ended, how
 * many), never a token. Returns the exit code.
 */
export async function sessionsCli(argv: string[], env: NodeJS.ProcessEnv, out: (line: string) => void, err: (line: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...settingFlagOptions(), email: { type: 'string' }, all: { type: 'boolean' } } });
  } catch (error) {
    err(`docreq-mcp sessions: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [action, ...extra] = parsed.positionals;
  const { email, all } = parsed.values;
  const valid =
    !extra.length &&
    (action === 'list'
      ? email === undefined && !all
      : action === 'end' && (all ? email === undefined : typeof email === 'string' && /^[^\s@]+@[^\s@]+$/.test(email)));
  if (!valid) {
    err(`docreq-mcp sessions: ${USAGE}`);
    return 2;
  }
  const config = loadConfig(settingsFromFlags(parsed.values), env);
  if (config.store.backend === 'memory') {
    err(
      'docreq-mcp sessions: the send store is memory (DOCREQ_STORE=memory): sessions live inside each running service, which this command cannot reach. Use DOCREQ_STORE=redis (replicas) or file (one machine).',
    );
    return 1;
  }
  const send = openStore(config.store, () => undefined);
  try {
    if (send instanceof RedisStore) await send.ready();
    const store = authStoreOf(send);
    if (action === 'list') {
      const sessions = await listSessions(store);
      out(`${sessions.length} sign-in session${sessions.length === 1 ? '' : 's'} on ${send.name}`);
      for (const s of sessions)
        out(
          `${oneLine(s.email, 120)}  ${s.role}  ${oneLine(s.app, 60)}  since ${new Date(s.started).toISOString()}  until ${new Date(s.expires).toISOString()}`,
        );
      return 0;
    }
    const who = all ? ({ all: true } as const) : { email: email!.trim().toLowerCase() };
    const ended = await endSessions(store, who);
    err(
      JSON.stringify({
        time: new Date().toISOString(),
        audit: 'sessions end',
        who: 'all' in who ? 'everyone' : who.email,
        ended,
        by: safeUser(),
        store: send.name,
      }),
    );
    out(
      `Ended ${ended} live session${ended === 1 ? '' : 's'} ${'all' in who ? 'of everyone' : `of ${who.email}`}; anything begun before now is refused on every replica sharing ${send.name}. They sign in again at the identity provider.`,
    );
    return 0;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    err(
      `docreq-mcp sessions: ${send.name} cannot be used${code ? ` (${code})` : ''}: check DOCREQ_STORE / DOCREQ_STORE_URL (the service's own) and that it is reachable from here.`,
    );
    return 1;
  } finally {
    await send.close();
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
