import type { Dispatcher } from 'undici';

// The one way undici is loaded (the service's exchanges, team mode's shared pool, sign-in's outbound GETs):
// late, after `initialize` (warm()) or at the first call, never at start-up; and only the parts used (its
// Agent, EnvHttpProxyAgent and request): undici's index loads fetch, WebSocket, cookies, caches and mocks too,
// about three times the work before the first call. Node's tls (the root certificates, read only with a CA of
// the firm's) and zlib (the decoders) come with it: no exchange happens before undici is here.
export interface Undici {
  Agent: typeof import('undici').Agent;
  EnvHttpProxyAgent: typeof import('undici').EnvHttpProxyAgent;
  /** The pool a proxy agent keeps to its proxy (already loaded by the Agent). */
  Pool: typeof import('undici').Pool;
  /** undici's request with the dispatcher as `this` (what undici.request(url, { dispatcher }) calls). */
  request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  tls: typeof import('node:tls');
  zlib: typeof import('node:zlib');
}
let undici: Promise<Undici> | undefined;
// CommonJS modules: their namespace's `default` is module.exports. The API methods go onto the
// Dispatcher prototype as undici's index puts them (its proxy agent calls connect on its clients).
export const loadUndici = (): Promise<Undici> =>
  (undici ??= Promise.all([
    import('undici/lib/dispatcher/dispatcher.js'),
    import('undici/lib/api/index.js'),
    import('undici/lib/dispatcher/agent.js'),
    import('undici/lib/dispatcher/env-http-proxy-agent.js'),
    import('undici/lib/dispatcher/pool.js'),
    import('node:tls'),
    import('node:zlib'),
  ]).then(([dispatcher, api, agent, proxy, pool, tls, zlib]) => {
    Object.assign(dispatcher.default.prototype, api.default);
    return { Agent: agent.default, EnvHttpProxyAgent: proxy.default, Pool: pool.default, request: api.default.request, tls, zlib };
  }));
