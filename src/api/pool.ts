import type { Dispatcher } from 'undici';
import { UnreachableError } from './errors.js';
import { proxyRoute, proxySettings, type ProxyEnv } from './proxy.js';
import type { Undici } from './undici.js';

/**
 * The keep-alive pool of one API client: routed through the environment's proxy when one is set, trusting the firm's
 * certificate authorities beside the usual ones, and a proxy tunnel that was never made said as such.
 */

/** The proxy closed its connection, or answered other than 200, when asked for a tunnel (CONNECT): the service was not reached. */
export const TUNNEL_CLOSED = 'PROXY_CLOSED_TUNNEL';
export const TUNNEL_REFUSED = 'PROXY_REFUSED_TUNNEL';

/** How a connection the proxy ended reads while the tunnel is asked for: closed (undici's socket error) or reset. */
const CLOSED_BY_PROXY = new Set<unknown>(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * The pool a proxy agent keeps to its proxy, with two differences, both for a tunnel that was never made (so nothing
 * reached the service): a proxy that closes the connection instead of answering CONNECT fails the call (undici reads a
 * closed socket while connecting as worth another try and dials again at once, without end and past the call's
 * deadline: tens of thousands of connections a minute), and a refusal says so with the proxy's status.
 */
function tunnelPool(pool: Dispatcher): Dispatcher {
  // Bound before it is replaced below: the proxy agent calls `connect` on this pool.
  const connect: (options: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData> = pool.connect.bind(pool);
  const tunnel = async (options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> => {
    let made: Dispatcher.ConnectData;
    try {
      made = await connect(options);
    } catch (error) {
      // Closed (undici's socket error) or reset (a close with the CONNECT still unread) once connected: the proxy's doing.
      if (!CLOSED_BY_PROXY.has((error as { code?: unknown }).code)) throw error;
      throw Object.assign(new Error(TUNNEL_CLOSED), { code: TUNNEL_CLOSED });
    }
    if (made.statusCode === 200) return made;
    made.socket.destroy();
    throw Object.assign(new Error(TUNNEL_REFUSED), { code: TUNNEL_REFUSED, proxyStatus: made.statusCode });
  };
  return Object.assign(pool, { connect: tunnel });
}

/** The status a proxy refused a tunnel with (the error made above reaches the exchange as it is). */
export function proxyStatus(error: unknown): number {
  return (error as { proxyStatus: number }).proxyStatus;
}

/** The pool for calls to `baseUrl`: undici's Agent, or its EnvHttpProxyAgent when a proxy is set (a setting that is not a URL: no pool, and why). */
export function newPool(
  { Agent, EnvHttpProxyAgent, Pool, tls: { rootCertificates } }: Undici,
  settings: { baseUrl: string; proxyEnv: ProxyEnv | undefined; ca: string | Buffer | (string | Buffer)[] | undefined },
): Dispatcher {
  const ca = settings.ca === undefined ? undefined : [...rootCertificates, ...(Array.isArray(settings.ca) ? settings.ca : [settings.ca])];
  const tls = ca ? { ca } : {};
  const common = { keepAliveTimeout: 4_000, connections: 16, connect: tls };
  const proxies = proxySettings(settings.proxyEnv);
  if (!proxies.httpProxy && !proxies.httpsProxy) return new Agent(common);
  const route = proxyRoute(settings.baseUrl, settings.proxyEnv);
  if (route.kind === 'invalid') {
    throw new UnreachableError(
      `${route.variable} is not a URL, so nothing could be sent through it: set it to the proxy's address (e.g. http://proxy.example.com:3128) or unset it.`,
      { code: 'ERR_INVALID_URL' },
    );
  }
  return new EnvHttpProxyAgent({ ...common, ...proxies, requestTls: tls, clientFactory: (origin, options) => tunnelPool(new Pool(origin, options)) });
}
