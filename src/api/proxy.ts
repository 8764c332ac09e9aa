import { processEnvironment } from '../config.js';

/** Proxies as the environment sets them, read as curl and undici's EnvHttpProxyAgent read them; named for `check` without credentials. */

/** Proxy settings as the environment gives them (HTTPS_PROXY, HTTP_PROXY, NO_PROXY and lower case). */
export type ProxyEnv = Record<string, string | undefined>;

/** The proxy settings, read as curl reads them: lower case first; HTTPS_PROXY for https, HTTP_PROXY for http. */
export function proxySettings(env: ProxyEnv = processEnvironment()): { httpProxy: string; httpsProxy: string; noProxy: string } {
  const pick = (name: string) => env[name.toLowerCase()] ?? env[name.toUpperCase()] ?? '';
  const httpProxy = pick('http_proxy');
  return { httpProxy, httpsProxy: pick('https_proxy') || httpProxy, noProxy: pick('no_proxy') };
}

/**
 * Which proxy a call to `baseUrl` goes through, for `docreq-mcp check`: the proxy's origin only
 * (never its credentials), the variable it came from, or why it goes direct. Mirrors the rules of
 * undici's EnvHttpProxyAgent, which is what actually routes the calls.
 */
export function describeProxy(baseUrl: string, env: ProxyEnv = processEnvironment()): string {
  const route = proxyRoute(baseUrl, env);
  if (route.kind === 'direct') return route.why;
  if (route.kind === 'invalid') return `a proxy setting that is not a URL (check ${route.variable})`;
  return `through the proxy ${route.origin} (from ${route.variable})`;
}

type ProxyRoute = { kind: 'direct'; why: string } | { kind: 'proxy'; origin: string; variable: string } | { kind: 'invalid'; variable: string };

/**
 * How a call to `baseUrl` is routed: direct, through a proxy (its origin and variable, never its credentials), or a
 * proxy setting that is not a URL: the variable for this scheme first, else any other, since undici's
 * EnvHttpProxyAgent cannot be made while either is so, whichever the service's scheme.
 */
export function proxyRoute(baseUrl: string, env: ProxyEnv = processEnvironment()): ProxyRoute {
  const route = schemeRoute(baseUrl, env);
  if (route.kind === 'invalid') return route;
  const broken = unreadableProxy(env);
  return broken ? { kind: 'invalid', variable: broken } : route;
}

function schemeRoute(baseUrl: string, env: ProxyEnv): ProxyRoute {
  const url = new URL(baseUrl);
  const { httpProxy, httpsProxy, noProxy } = proxySettings(env);
  const proxy = url.protocol === 'https:' ? httpsProxy : httpProxy;
  if (!proxy) return { kind: 'direct', why: 'direct (no HTTPS_PROXY or HTTP_PROXY set)' };
  const host = url.hostname.toLowerCase();
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const entries = noProxy.split(/[,\s]/).filter(Boolean);
  const covered =
    noProxy.trim() === '*' ||
    entries.some((entry) => {
      const m = /^(.+):(\d+)$/.exec(entry);
      const name = (m ? m[1]! : entry).replace(/^\*?\./, '').toLowerCase();
      if (m && Number(m[2]) !== port) return false;
      return host === name || host.endsWith(`.${name}`);
    });
  if (covered) return { kind: 'direct', why: `direct (NO_PROXY covers ${host})` };
  const variable =
    url.protocol === 'https:' && (env.https_proxy ?? env.HTTPS_PROXY)
      ? env.https_proxy !== undefined
        ? 'https_proxy'
        : 'HTTPS_PROXY'
      : env.http_proxy !== undefined
        ? 'http_proxy'
        : 'HTTP_PROXY';
  try {
    return { kind: 'proxy', origin: new URL(proxy).origin, variable };
  } catch {
    return { kind: 'invalid', variable };
  }
}

/** The first proxy variable that is set but is not a URL, as curl would read it (lower case first), or undefined. */
function unreadableProxy(env: ProxyEnv): string | undefined {
  return ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY'].find((name) => {
    const value = env[name];
    return value !== undefined && value !== '' && !URL.canParse(value);
  });
}
