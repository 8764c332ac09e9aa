import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLoopbackHost, readSettings, settingDefault, settingValue } from '../config.js';
import { type FlagValues, type SettingName } from '../settings.js';

/**
 * Team mode's front door: its settings, and what is checked or read of a request before any MCP
 * processing (bearer key, Host, Origin, the body and its size, a summary of the JSON-RPC it holds for
 * the rate limit and the access log), and the JSON-RPC error answers it gives.
 */

export interface HttpSettings {
  host: string;
  port: number;
  allowedHosts: string[];
  allowedOrigins: string[];
  rateLimit: number;
  /** Prometheus metrics on 127.0.0.1 at this port (0: any free one); off when undefined. */
  metricsPort?: number;
}

const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
export const CORS_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID';

/** Reads the team-mode settings from the one reading of flags and environment (config.ts); a value that cannot be read is a problem, and team mode does not start. */
export function loadHttpSettings(flags: FlagValues, env: NodeJS.ProcessEnv): { settings: HttpSettings; problems: string[] } {
  const reading = readSettings(flags, env);
  const problems: string[] = [];
  const read = <N extends SettingName>(name: N) => {
    const { value, problem } = settingValue(reading, name);
    if (problem) problems.push(problem);
    return value;
  };
  const settings: HttpSettings = {
    host: read('httpHost') ?? settingDefault('httpHost'),
    port: read('httpPort') ?? settingDefault('httpPort'),
    allowedHosts: (read('allowedHosts') ?? []).map((h) => h.toLowerCase()),
    allowedOrigins: (read('allowedOrigins') ?? []).map((o) => o.replace(/\/$/, '').toLowerCase()),
    rateLimit: read('rateLimit') ?? settingDefault('rateLimit'),
    metricsPort: read('metricsPort'),
  };
  return { settings, problems };
}

/** The bearer key of a request, or why there is none. */
export function bearerKey(header: string | undefined): { key: string } | { missing: 'absent' | 'malformed' } {
  if (header === undefined || header.trim() === '') return { missing: 'absent' };
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || !TOKEN.test(match[1]!) || match[1]!.length > 1024) return { missing: 'malformed' };
  return { key: match[1]! };
}

/** An http(s) origin on a loopback name or address (localhost, *.localhost, 127.0.0.0/8, [::1]), any port. */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.origin === origin.toLowerCase().replace(/\/$/, '') &&
      isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ''))
    );
  } catch {
    return false;
  }
}

export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (!host) return false;
  const full = host.toLowerCase();
  // The name without its port: `[::1]:8080` → `[::1]`; anything else after a bracketed name stays, so `[::1]evil` is not `[::1]`.
  const name = full.replace(/:\d+$/, '');
  return allowed.includes(full) || allowed.includes(name);
}

interface RpcSummary {
  rpc: string[];
  tools: string[];
  toolCalls: number;
}

export function summarise(body: unknown): RpcSummary {
  const messages = Array.isArray(body) ? body : [body];
  const out: RpcSummary = { rpc: [], tools: [], toolCalls: 0 };
  // Every tool call in a batch counts against the rate limit; only the access log's lists are capped.
  for (const [n, m] of messages.entries()) {
    if (!m || typeof m !== 'object') continue;
    const method = (m as { method?: unknown }).method;
    if (typeof method !== 'string') continue;
    if (n < 100) out.rpc.push(method.slice(0, 64));
    if (method === 'tools/call') {
      out.toolCalls++;
      const name = (m as { params?: { name?: unknown } }).params?.name;
      if (n < 100) out.tools.push(typeof name === 'string' ? name.slice(0, 64) : '?');
    }
  }
  return out;
}

export function jsonError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
  id: string | number | null = null,
): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }));
}

/** Reads the body up to `cap` bytes: the text, or undefined when it is larger. */
export function readBody(req: IncomingMessage, cap: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > cap) return resolve(undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) {
        req.off('data', onData);
        req.resume(); // discard the rest; the connection is closed after the 413
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Front-door checks on the raw request, before any routing or MCP processing: what no proxy or
 * client may send. More than one Host header is refused (only the first would be checked against
 * DOCREQ_ALLOWED_HOSTS, while something behind may read another).
 */
export function frontDoor(req: IncomingMessage): { status: number; message: string; why: string } | undefined {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return { status: 400, message: 'Bad request: more than one Host header.', why: 'hosts' };
  return undefined;
}
