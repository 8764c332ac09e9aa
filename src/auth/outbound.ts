import { loadUndici } from '../api/undici.js';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Fetching a Client ID Metadata Document names a URL that anyone may choose (the client_id), so the
 * fetch must not become a way into the firm's own network (SSRF). The host name is resolved first and
 * every address it resolves to is checked; the connection then goes to the address that was checked
 * (the check is the socket's own lookup, so there is no second resolution a rebinding DNS server could
 * answer differently). https only, no redirects, a size cap and a time cap.
 */

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}

const V4_LOOPBACK = new BlockList();
V4_LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');

/** The 16 bytes of an IPv6 address (given as isIP() accepts it), or undefined. */
function ipv6Bytes(text: string): number[] | undefined {
  let address = text.split('%')[0]!;
  // An embedded dotted IPv4 tail (::ffff:127.0.0.1) as two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    address = `${address.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const groups = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail] : head;
  if (groups.length !== 8) return undefined;
  return groups.flatMap((g) => {
    const n = Number.parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

/**
 * Why an address must not be fetched from, or undefined when it is a public unicast address.
 * IPv6: only global unicast (2000::/3) outside documentation, Teredo and 6to4; an IPv4 address
 * embedded in IPv6 (IPv4-mapped, IPv4-compatible, NAT64) is judged as the IPv4 address it carries.
 */
export function forbiddenAddress(address: string, allowLoopback = false): string | undefined {
  // A zone (`%eth0`) names an interface, not an address: the address is judged without it.
  const bare = address.split('%')[0]!;
  const family = isIP(bare);
  if (family === 4) {
    if (allowLoopback && V4_LOOPBACK.check(bare, 'ipv4')) return undefined;
    return blocked.check(bare, 'ipv4') ? `${address} is a loopback, private, link-local, shared or reserved address` : undefined;
  }
  if (family !== 6) return `${address} is not an IP address`;
  const bytes = ipv6Bytes(address);
  if (!bytes) return `${address} is not an IP address`;
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const v4 = bytes.slice(12).join('.');
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, and :: and ::1 themselves), 64:ff9b::a.b.c.d (NAT64).
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return forbiddenAddress(v4, allowLoopback) && `${address} carries ${v4}, which is not public`;
  if (zeros(0, 15) && bytes[15] === 1) return allowLoopback ? undefined : `${address} is the loopback address`;
  if (zeros(0, 12)) return `${address} is the unspecified address or carries an IPv4 address`;
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12))
    return forbiddenAddress(v4, false) && `${address} carries ${v4}, which is not public`;
  if ((bytes[0]! & 0xe0) !== 0x20) return `${address} is not a global unicast address (loopback, unique-local, link-local, multicast or reserved)`;
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0x0d && bytes[3] === 0xb8) return `${address} is a documentation address`;
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0x00 && bytes[3] === 0x00) return `${address} is a Teredo address`;
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return `${address} is a 6to4 address`;
  return undefined;
}

class RefusedAddress extends Error {
  readonly code = 'EDOCREQ_REFUSED_ADDRESS';
}

/** A socket lookup that resolves the name and refuses it unless every address it has is public. */
function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(
      hostname,
      { all: true, family: options.family ?? 0, ...(options.hints !== undefined ? { hints: options.hints } : {}) },
      (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 0);
        const reason = addresses.length ? addresses.map((a) => forbiddenAddress(a.address, allowLoopback)).find(Boolean) : `${hostname} has no address`;
        if (reason) return callback(new RefusedAddress(`refused: ${hostname} resolves to ${reason}`), '', 0);
        if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
    );
  };
}

export interface OutboundOptions {
  /** @internal Tests only: loopback addresses (and http on them) are allowed. Never a setting. */
  allowLoopback?: boolean;
  maxBytes: number;
  timeoutMs: number;
}

/**
 * GETs a public https URL's JSON text, or undefined (refused address, not https, a redirect, not 200,
 * too big, too slow, any network error). The reason goes to `why`, never to the client asking.
 */
export async function fetchPublicJson(url: URL, options: OutboundOptions, why: (reason: string) => void = () => undefined): Promise<string | undefined> {
  const allowLoopback = options.allowLoopback === true;
  if (url.protocol !== 'https:' && !(allowLoopback && url.protocol === 'http:')) return void why(`${url.protocol} is not https:`);
  if (url.username || url.password) return void why('the URL carries a user name or password');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A literal address is never looked up by the socket: checked here.
  if (isIP(host)) {
    const reason = forbiddenAddress(host, allowLoopback);
    if (reason) return void why(`refused: ${reason}`);
  } else if (!allowLoopback && (host === 'localhost' || host.endsWith('.localhost'))) {
    return void why('refused: localhost');
  }
  const { Agent, request } = await loadUndici();
  const agent = new Agent({
    connect: { lookup: guardedLookup(allowLoopback), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connections: 1,
  });
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const answer = await request.call(agent, {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      signal,
      headers: { accept: 'application/json' },
    });
    if (answer.statusCode !== 200) {
      await answer.body.dump().catch(() => undefined);
      return void why(`answered ${answer.statusCode}${answer.statusCode >= 300 && answer.statusCode < 400 ? ' (redirects are not followed)' : ''}`);
    }
    const declared = Number(answer.headers['content-length']);
    if (declared > options.maxBytes) {
      // Never read: the error its destruction (and the agent's, below) may raise has no reader to go to, and an
      // error nobody listens for would end the process. A document's host is anyone's choice.
      answer.body.on('error', () => undefined).destroy();
      return void why(`larger than ${options.maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > options.maxBytes) {
        answer.body.destroy();
        return void why(`larger than ${options.maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    const e = error as Error & { code?: string; cause?: Error & { code?: string } };
    const refused = [e, e.cause].find((x) => x?.code === 'EDOCREQ_REFUSED_ADDRESS');
    // A time-out's DOMException has a legacy numeric code (23): its name says what happened.
    return void why(refused ? refused.message : `could not be fetched (${typeof e.code === 'string' ? e.code : e.name})`);
  } finally {
    void agent.destroy().catch(() => undefined);
  }
}
