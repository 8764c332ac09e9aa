import { ApiError, CancelledError, CertificateError, TimedOutError, UnreachableError } from './errors.js';
import { TUNNEL_CLOSED, TUNNEL_REFUSED, proxyStatus } from './pool.js';
import { proxyRoute, type ProxyEnv } from './proxy.js';
import { oneLine } from '../text/render.js';

/** An exchange that ended without an answer, in the words of what to do: a certificate, the deadline, a cancel, the address or the proxy. */

/** Where the exchange was when it failed. */
interface NoAnswerAt {
  isPost: boolean;
  /** The request was handed to the connection (a POST may then have reached the service). */
  written: boolean;
  timedOut: boolean;
  /** The status, when one came before the body failed (0: none). */
  status: number;
  cancelled: boolean;
}

/** What the words name: the service, its proxy route and the time allowed. */
interface NoAnswerSettings {
  baseUrl: string;
  proxyEnv: ProxyEnv | undefined;
  timeoutMs: number;
}

// The TLS handshake refused the service's certificate: a setup mistake, never retried.
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
  'INVALID_CA',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/** The first code along the error's causes that names something (undici's generic socket code names nothing). */
function errorCode(error: unknown): string {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    e = (e as { cause?: unknown }).cause;
  }
  // A code that is not a string (a DOMException's is a number) names nothing a person can act on.
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'network error';
}

/** Failures of the connection itself (not of an answer): where the fix is the address that was dialled. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

const NEVER_CONNECTED = new Set<unknown>([...CONNECT_CODES, TUNNEL_CLOSED, TUNNEL_REFUSED]);

/**
 * The connection never opened, to the service or through the proxy's tunnel, so a POST cannot have reached the
 * service: the one list both the words of a failure (above) and a send's outcome (api/sending.ts) read.
 */
export function neverConnected(code: string | undefined): boolean {
  return NEVER_CONNECTED.has(code);
}

/** What a failure other than an answer means: an untrusted certificate, the deadline, a cancel, or no answer at all. */
export function noAnswer(error: unknown, at: NoAnswerAt, settings: NoAnswerSettings): ApiError {
  const origin = new URL(settings.baseUrl).origin;
  // The person's cancel is what happened, whatever the connection was doing when it came.
  if (at.cancelled && !at.timedOut) return new CancelledError('The call was cancelled before the service answered.');
  const code = errorCode(error);
  if (CERTIFICATE_CODES.has(code)) {
    return new CertificateError(
      `The TLS certificate of ${origin} is not trusted (${code}).${at.isPost ? ' Nothing was sent.' : ''} If the service or a company proxy uses a private certificate authority, point NODE_EXTRA_CA_CERTS at that CA's certificate file (PEM) and restart; otherwise check the base URL's host name and this machine's clock.`,
      { code },
    );
  }
  if (at.timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new TimedOutError(`The service did not answer within ${settings.timeoutMs} ms.`, {
      outcomeUnknown: at.isPost && at.written,
      status: at.status || undefined,
    });
  }
  return new UnreachableError(unreachable(code, error, settings), { code, status: at.status || undefined });
}

/** Why no answer came, naming what to fix: the proxy when the call goes through one, else DOCREQ_BASE_URL. */
function unreachable(code: string, error: unknown, settings: NoAnswerSettings): string {
  const origin = new URL(settings.baseUrl).origin;
  const shown = oneLine(code, 40);
  const route = proxyRoute(settings.baseUrl, settings.proxyEnv);
  if (route.kind === 'proxy') {
    if (code === TUNNEL_CLOSED || code === TUNNEL_REFUSED) {
      const did = code === TUNNEL_CLOSED ? 'closed the connection' : `answered ${proxyStatus(error)}`;
      return `The proxy ${route.origin} (from ${route.variable}) ${did} instead of opening a tunnel to the service at ${origin}, so the service was not reached: check that the proxy lets this machine reach that host and port, or add the service's host to NO_PROXY.`;
    }
    return CONNECT_CODES.has(code)
      ? `Could not reach the proxy ${route.origin} (${shown}; from ${route.variable}), so the service at ${origin} was not reached: check that the proxy runs and ${route.variable} names it, or add the service's host to NO_PROXY.`
      : `Could not reach the service at ${origin} through the proxy ${route.origin} (${shown}; from ${route.variable}).`;
  }
  return CONNECT_CODES.has(code)
    ? `Could not reach the service at ${origin} (${shown}): check DOCREQ_BASE_URL (or --base-url), and that the service runs at that address.`
    : `Could not reach the service at ${origin} (${shown}).`;
}
