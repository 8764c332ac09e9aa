import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { processEnvironment } from '../config.js';
import { FileStore } from './file.js';
import { MemoryStore } from './memory.js';
import { describeRedisUrl, RedisStore } from './redis.js';
import { StoreUnavailableError, type SendStore } from './store.js';

export { describeRedisUrl, FileStore, MemoryStore, RedisStore, StoreUnavailableError, type SendStore };

export interface StoreSettings {
  backend: 'file' | 'redis' | 'memory';
  stateDir: string | undefined;
  url: string | undefined;
}

/** The OS's per-user state folder + docreq-mcp (DOCREQ_STATE_DIR overrides). */
export function defaultStateDir(env: NodeJS.ProcessEnv = processEnvironment(), platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'docreq-mcp');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'docreq-mcp');
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'docreq-mcp');
}

/**
 * A firm's tag in the store: stable across processes and restarts, and nothing of the key. The
 * service's address is part of it: the same key on another service is another firm's account.
 */
export function storeFingerprint(apiKey: string, baseUrl = ''): string {
  return createHash('sha256').update(`docreq-mcp firm\0${baseUrl}\0${apiKey}`).digest('hex').slice(0, 32);
}

export function openStore(settings: StoreSettings, onError?: (message: string) => void): SendStore {
  if (settings.backend === 'memory') return new MemoryStore();
  if (settings.backend === 'redis') return new RedisStore(settings.url ?? 'redis://127.0.0.1:6379', onError);
  return new FileStore(settings.stateDir ?? defaultStateDir());
}

/** What once-only and the rate limit hold across, in words for stderr, /healthz and check. */
export function storeReach(store: SendStore, teamMode: boolean): { shared: boolean; note: string } {
  if (store.scope === 'replicas') return { shared: true, note: `once-only and the rate limit hold across every replica (${store.name})` };
  const once =
    store.scope === 'machine' ? `once-only holds across the processes of this machine only (${store.name})` : 'once-only holds per process only (memory store)';
  if (!teamMode) return { shared: store.scope === 'machine', note: once };
  return {
    shared: false,
    note: `no shared store: ${once}, and the rate limit holds per process only; replicas need DOCREQ_STORE_URL=redis://… to share them`,
  };
}
