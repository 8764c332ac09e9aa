import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, getDefaultAutoSelectFamily, setDefaultAutoSelectFamily, type AddressInfo, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPublicJson, forbiddenAddress, type OutboundOptions } from '../src/auth/outbound.js';

/**
 * Fetching a Client ID Metadata Document (src/auth/outbound.ts): the client_id is a URL anyone may
 * choose, so which addresses count as public is checked range by range (first and last address of each
 * blocked range, and the addresses just outside it), and the fetch itself runs against a real server on
 * 127.0.0.1 with the tests' loopback switch on: what is fetched, what is refused before any connection,
 * which answers are not used, and the words `why` is told in each case (they go to the server's log).
 */

// The reasons forbiddenAddress gives, word for word.
const v4Reserved = (a: string) => `${a} is a loopback, private, link-local, shared or reserved address`;
const notIp = (a: string) => `${a} is not an IP address`;
const carries = (a: string, v4: string) => `${a} carries ${v4}, which is not public`;
const loopback6 = (a: string) => `${a} is the loopback address`;
const unspecifiedOrV4 = (a: string) => `${a} is the unspecified address or carries an IPv4 address`;
const notGlobal = (a: string) => `${a} is not a global unicast address (loopback, unique-local, link-local, multicast or reserved)`;
const documentation = (a: string) => `${a} is a documentation address`;
const teredo = (a: string) => `${a} is a Teredo address`;
const sixToFour = (a: string) => `${a} is a 6to4 address`;

/** Every blocked IPv4 range, as its first and last address. */
const V4_BLOCKED: [first: string, last: string, what: string][] = [
  ['0.0.0.0', '0.255.255.255', '"this network"'],
  ['10.0.0.0', '10.255.255.255', 'private'],
  ['100.64.0.0', '100.127.255.255', 'carrier-grade NAT'],
  ['127.0.0.0', '127.255.255.255', 'loopback'],
  ['169.254.0.0', '169.254.255.255', 'link-local, cloud metadata'],
  ['172.16.0.0', '172.31.255.255', 'private'],
  ['192.0.0.0', '192.0.0.255', 'IETF protocol assignments'],
  ['192.0.2.0', '192.0.2.255', 'documentation'],
  ['192.168.0.0', '192.168.255.255', 'private'],
  ['198.18.0.0', '198.19.255.255', 'benchmarking'],
  ['198.51.100.0', '198.51.100.255', 'documentation'],
  ['203.0.113.0', '203.0.113.255', 'documentation'],
  ['224.0.0.0', '239.255.255.255', 'multicast'],
  ['240.0.0.0', '255.255.255.255', 'reserved, broadcast'],
];
/** The addresses just outside each blocked range (where they are not inside the next one), and a few well-known public ones. */
const V4_PUBLIC = [
  '1.0.0.0',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '191.255.255.255',
  '192.0.1.0',
  '192.0.1.255',
  '192.0.3.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '198.51.99.255',
  '198.51.101.0',
  '203.0.112.255',
  '203.0.114.0',
  '223.255.255.255',
  '8.8.8.8',
  '93.184.216.34',
  '193.0.0.1',
];
const V4_BLOCKED_ADDRESSES = V4_BLOCKED.flatMap(([first, last]) => [first, last]);

/** The IPv4 address as the two hex groups an IPv6 address carries it in (10.0.0.1 -> a00:1). */
const hexGroups = (v4: string) => {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

describe('which addresses are public: IPv4', () => {
  it('every blocked range is refused from its first address to its last', () => {
    for (const address of V4_BLOCKED_ADDRESSES) expect(forbiddenAddress(address), address).toBe(v4Reserved(address));
    for (const address of ['10.1.2.3', '169.254.169.254', '172.20.0.1', '192.168.1.1', '100.100.100.100', '198.18.255.255']) {
      expect(forbiddenAddress(address), address).toBe(v4Reserved(address));
    }
  });

  it('the addresses just outside each blocked range are public', () => {
    expect(V4_PUBLIC.filter((a) => forbiddenAddress(a) !== undefined)).toEqual([]);
  });

  it("the tests' loopback switch lets 127.0.0.0/8 through and nothing else", () => {
    expect(forbiddenAddress('127.0.0.0', true)).toBeUndefined();
    expect(forbiddenAddress('127.0.0.1', true)).toBeUndefined();
    expect(forbiddenAddress('127.255.255.255', true)).toBeUndefined();
    for (const address of V4_BLOCKED_ADDRESSES.filter((a) => !a.startsWith('127.'))) expect(forbiddenAddress(address, true), address).toBe(v4Reserved(address));
    expect(V4_PUBLIC.filter((a) => forbiddenAddress(a, true) !== undefined)).toEqual([]);
  });
});

describe('which addresses are public: IPv6', () => {
  it('the unspecified and loopback addresses are refused, and ::1 only is let through by the loopback switch', () => {
    for (const address of ['::1', '0:0:0:0:0:0:0:1', '::0.0.0.1']) {
      expect(forbiddenAddress(address), address).toBe(loopback6(address));
      expect(forbiddenAddress(address, true), address).toBeUndefined();
    }
    for (const address of ['::', '0:0:0:0:0:0:0:0', '::2', '::0.0.0.0']) {
      expect(forbiddenAddress(address), address).toBe(unspecifiedOrV4(address));
      expect(forbiddenAddress(address, true), address).toBe(unspecifiedOrV4(address));
    }
  });

  it('outside 2000::/3 nothing is public: link-local, unique-local, multicast, reserved, and the edges of 2000::/3 itself', () => {
    const refused = [
      'fe80::',
      'fe80::1',
      'fe80:0:0:0:0:0:0:1',
      'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      'fc00::',
      'fc00::1',
      'fd12:3456::1',
      'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      'ff00::',
      'ff02::1',
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      '100::1',
      '1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      '4000::',
      '::ff:808:808', // not ::ffff:8.8.8.8: one byte short of the IPv4-mapped prefix
      '::ff00:808:808',
      '64:fe9b::808:808', // not the NAT64 prefix 64:ff9b::/96
      '64:ff9a::808:808',
      '65:ff9b::808:808',
      '64:ff9b:1::808:808', // the local-use NAT64 prefix (RFC 8215)
      'fc00::808:808', // a non-global address whose last 32 bits are a public IPv4 address is not NAT64
      'fc00::ffff:808:808',
    ];
    for (const address of refused) expect(forbiddenAddress(address), address).toBe(notGlobal(address));
  });

  it('inside 2000::/3, documentation (2001:db8::/32), Teredo (2001::/32) and 6to4 (2002::/16) are refused, from first to last address', () => {
    const refused: [string, (a: string) => string][] = [
      ['2001:db8::', documentation],
      ['2001:db8::1', documentation],
      ['2001:0db8:0:0:0:0:0:1', documentation],
      ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', documentation],
      ['2001::', teredo],
      ['2001::1', teredo],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', teredo],
      ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', teredo],
      ['2002::', sixToFour],
      ['2002:7f00:1::1', sixToFour],
      ['2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', sixToFour],
    ];
    for (const [address, reason] of refused) expect(forbiddenAddress(address), address).toBe(reason(address));
  });

  it('global unicast addresses are public, the neighbours of every refused prefix among them', () => {
    const allowed = [
      '2000::',
      '2000::1',
      '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      '2606:4700:4700::1111',
      '2606:4700:4700:0:0:0:0:1111', // written out in full, no ::
      '2606:4700:4700:0000:0000:0000:0000:1111',
      '2606:4700::', // a trailing ::
      '2606:4700::1',
      '2606::1',
      '2a00:1450:4001:80b::200e',
      // Next to 2001:db8::/32.
      '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
      '2001:db9::',
      '2001:eb8::1',
      '2003:db8::1',
      '2a01:db8::1',
      '2606:db8::1',
      '2606:47b8::1',
      // Next to 2001::/32.
      '2001:1::',
      '2001:4:112::1',
      '2001:200::1',
      '2003::1',
      '2a01::1',
      // Next to 2002::/16.
      '2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      '2003::',
      '2602::1',
      // Global addresses that end like IPv4-mapped or NAT64 ones, carrying a private IPv4 address.
      '2606:4700::ff:a00:1',
      '2606:4700::ff00:a00:1',
      '2606:4700::ffff:a00:1',
      '2606:ff9b::a00:1',
      '2606:4f9b::a00:1',
      '2a64:ff9b::a00:1',
    ];
    expect(allowed.filter((a) => forbiddenAddress(a) !== undefined)).toEqual([]);
    expect(allowed.filter((a) => forbiddenAddress(a, true) !== undefined)).toEqual([]);
  });
});

describe('an IPv4 address carried in IPv6 is judged as the IPv4 address it carries', () => {
  it('IPv4-mapped (::ffff:0:0/96), dotted or in hex: every blocked range refused, its public neighbours allowed', () => {
    for (const v4 of V4_BLOCKED_ADDRESSES) {
      for (const address of [`::ffff:${v4}`, `::ffff:${hexGroups(v4)}`, `0:0:0:0:0:ffff:${hexGroups(v4)}`]) {
        expect(forbiddenAddress(address), address).toBe(carries(address, v4));
      }
    }
    const mapped = V4_PUBLIC.flatMap((v4) => [`::ffff:${v4}`, `::ffff:${hexGroups(v4)}`, `0:0:0:0:0:ffff:${v4}`]);
    expect(mapped.filter((a) => forbiddenAddress(a) !== undefined)).toEqual([]);
  });

  it('NAT64 (64:ff9b::/96): every blocked range refused, its public neighbours allowed', () => {
    for (const v4 of V4_BLOCKED_ADDRESSES) {
      for (const address of [`64:ff9b::${v4}`, `64:ff9b::${hexGroups(v4)}`]) expect(forbiddenAddress(address), address).toBe(carries(address, v4));
    }
    const nat64 = V4_PUBLIC.flatMap((v4) => [`64:ff9b::${v4}`, `64:ff9b::${hexGroups(v4)}`, `64:ff9b:0:0:0:0:${v4}`]);
    expect(nat64.filter((a) => forbiddenAddress(a) !== undefined)).toEqual([]);
  });

  it('IPv4-compatible (::a.b.c.d, deprecated) is refused whatever it carries', () => {
    for (const address of ['::8.8.8.8', '::808:808', '::93.184.216.34', '::10.0.0.1', '::255.255.255.255']) {
      expect(forbiddenAddress(address), address).toBe(unspecifiedOrV4(address));
    }
  });

  it("the loopback switch lets mapped loopback through (the socket's own form of 127.0.0.1), never NAT64 loopback", () => {
    expect(forbiddenAddress('::ffff:127.0.0.1', true)).toBeUndefined();
    expect(forbiddenAddress('::ffff:7f00:1', true)).toBeUndefined();
    expect(forbiddenAddress('::ffff:10.0.0.1', true)).toBe(carries('::ffff:10.0.0.1', '10.0.0.1'));
    expect(forbiddenAddress('64:ff9b::127.0.0.1', true)).toBe(carries('64:ff9b::127.0.0.1', '127.0.0.1'));
    expect(forbiddenAddress('64:ff9b::7f00:1', true)).toBe(carries('64:ff9b::7f00:1', '127.0.0.1'));
  });
});

describe('text that is not one public address', () => {
  it('a zone id does not change the verdict', () => {
    expect(forbiddenAddress('fe80::1%eth0')).toBe(notGlobal('fe80::1%eth0'));
    expect(forbiddenAddress('fe80::1%')).toBe(notGlobal('fe80::1%'));
    expect(forbiddenAddress('::1%lo')).toBe(loopback6('::1%lo'));
    expect(forbiddenAddress('::ffff:10.0.0.1%1')).toBe(carries('::ffff:10.0.0.1%1', '10.0.0.1'));
    expect(forbiddenAddress('2001:db8::1%2')).toBe(documentation('2001:db8::1%2'));
    expect(forbiddenAddress('2606:4700::1%eth0')).toBeUndefined();
    // An IPv4 address with a zone is judged without it.
    expect(forbiddenAddress('10.0.0.1%eth0')).toBe('10.0.0.1%eth0 is a loopback, private, link-local, shared or reserved address');
    expect(forbiddenAddress('127.0.0.1%1')).toBe('127.0.0.1%1 is a loopback, private, link-local, shared or reserved address');
    expect(forbiddenAddress('127.0.0.1%1', true)).toBeUndefined();
    expect(forbiddenAddress('8.8.8.8%eth0')).toBeUndefined();
    expect(forbiddenAddress('::ffff:8.8.8.8%eth0')).toBeUndefined();
  });

  it('anything that is not an IP address is refused as such', () => {
    const malformed = [
      '',
      'example.com',
      'localhost',
      '1.2.3',
      '1.2.3.4.5',
      '256.0.0.1',
      '01.2.3.4',
      '[::1]',
      'g::1',
      '2606:4700:4700::1111x',
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      '::ffff:01.2.3.4',
      '2606:4700:4700:0:0:0:0',
    ];
    for (const text of malformed) {
      expect(forbiddenAddress(text), text).toBe(notIp(text));
      expect(forbiddenAddress(text, true), text).toBe(notIp(text));
    }
  });
});

// A server on 127.0.0.1 (and ::1 where there is one) that plays the client's host: each path an answer.
const hits: string[] = [];
const sockets: Socket[] = [];
let server: Server;
let server6: Server | undefined;
let origin: string;
let port: number;

function answer(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  hits.push(url.pathname);
  const status = /^\/status\/(\d{3})$/.exec(url.pathname);
  const sized = /^\/sized\/(\d+)$/.exec(url.pathname);
  if (url.pathname === '/doc') {
    // A host that negotiates: the document only to whoever asks for JSON.
    if (req.headers.accept !== 'application/json') return void res.writeHead(406, { 'content-type': 'text/plain' }).end('JSON only');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"client_id":"doc"}');
  } else if (status) {
    res.writeHead(Number(status[1]), { location: '/doc', 'content-type': 'text/plain' }).end('not a document');
  } else if (sized) {
    const body = 'x'.repeat(Number(sized[1]));
    if (url.searchParams.has('chunked')) {
      // No Content-Length: the size is only known as the body comes.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(body.slice(0, 40));
      setImmediate(() => res.end(body.slice(40)));
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body);
    }
  } else if (url.pathname === '/declared-large') {
    // Declares a million bytes, sends ten, and then nothing.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000000' });
    res.write('x'.repeat(10));
  } else if (url.pathname === '/silent') {
    // Never answers.
  } else {
    res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = createServer(answer);
  // The server keeps an idle connection open for ten minutes: closing it is the fetcher's job.
  server.keepAliveTimeout = 600_000;
  server.on('connection', (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  // localhost may resolve to ::1 first: the same answers there too, where this machine has it.
  const six = createServer(answer);
  six.keepAliveTimeout = 600_000;
  six.on('connection', (socket: Socket) => sockets.push(socket));
  server6 = await new Promise<Server | undefined>((resolve) => {
    six.once('error', () => resolve(undefined));
    six.listen(port, '::1', () => resolve(six));
  });
});

afterAll(async () => {
  for (const s of [server, server6]) {
    if (!s) continue;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** fetchPublicJson with the tests' loopback switch on unless told otherwise: its text and what `why` was told. */
async function fetchDocument(url: string, options: Partial<OutboundOptions> = {}): Promise<{ text: string | undefined; why: string[] }> {
  const why: string[] = [];
  const text = await fetchPublicJson(new URL(url), { allowLoopback: true, maxBytes: 100, timeoutMs: 2_000, ...options }, (reason) => why.push(reason));
  return { text, why };
}

/** Resolves when the socket is closed, or after `ms` with 'still open'. */
const closedWithin = (socket: Socket, ms: number): Promise<'closed' | 'still open'> =>
  new Promise((resolve) => {
    if (socket.closed) return resolve('closed');
    const timer = setTimeout(() => resolve('still open'), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });

describe('fetching a metadata document', () => {
  it("returns a 200 answer's text, asking for JSON, and tells `why` nothing", async () => {
    hits.length = 0;
    expect(await fetchDocument(`${origin}/doc`)).toEqual({ text: '{"client_id":"doc"}', why: [] });
    expect(hits).toEqual(['/doc']);
  });

  it("resolves a name with the socket's own lookup, with Happy Eyeballs on and off", async () => {
    expect(await fetchDocument(`http://localhost:${port}/doc`)).toEqual({ text: '{"client_id":"doc"}', why: [] });
    const before = getDefaultAutoSelectFamily();
    setDefaultAutoSelectFamily(false); // node --no-network-family-autoselection: the lookup is asked for one address
    try {
      expect(await fetchDocument(`http://localhost:${port}/doc`)).toEqual({ text: '{"client_id":"doc"}', why: [] });
    } finally {
      setDefaultAutoSelectFamily(before);
    }
  });

  it('closes its connection once the fetch is over, even when the host would keep it open', async () => {
    const before = sockets.length;
    expect((await fetchDocument(`${origin}/doc`)).text).toBe('{"client_id":"doc"}');
    const opened = sockets.slice(before);
    expect(opened).toHaveLength(1);
    expect(await closedWithin(opened[0]!, 2_000)).toBe('closed');
  });
});

describe('what is refused before any connection is made', () => {
  it('https only: http is refused unless the loopback switch is on, and any other scheme always', async () => {
    const before = sockets.length;
    expect(await fetchDocument(`${origin}/doc`, { allowLoopback: false })).toEqual({ text: undefined, why: ['http: is not https:'] });
    expect(await fetchDocument(`ftp://127.0.0.1:${port}/doc`)).toEqual({ text: undefined, why: ['ftp: is not https:'] });
    expect(await fetchDocument(`ws://127.0.0.1:${port}/doc`)).toEqual({ text: undefined, why: ['ws: is not https:'] });
    expect(await fetchDocument(`ftp://127.0.0.1:${port}/doc`, { allowLoopback: false })).toEqual({ text: undefined, why: ['ftp: is not https:'] });
    expect(sockets.length).toBe(before);
  });

  it('a URL carrying a user name, a password or both is refused', async () => {
    const before = sockets.length;
    for (const userinfo of ['client@', ':secret@', 'client:secret@']) {
      expect(await fetchDocument(`http://${userinfo}127.0.0.1:${port}/doc`), userinfo).toEqual({
        text: undefined,
        why: ['the URL carries a user name or password'],
      });
    }
    expect(sockets.length).toBe(before);
  });

  it('a literal address that is not public is refused, IPv4 or IPv6 in any of its forms', async () => {
    const before = sockets.length;
    expect(await fetchDocument(`https://127.0.0.1:${port}/doc`, { allowLoopback: false })).toEqual({
      text: undefined,
      why: [`refused: ${v4Reserved('127.0.0.1')}`],
    });
    expect(await fetchDocument(`https://[::1]:${port}/doc`, { allowLoopback: false })).toEqual({ text: undefined, why: [`refused: ${loopback6('::1')}`] });
    // The URL parser writes the mapped address in hex: that is the form `why` is told.
    expect(await fetchDocument(`https://[::ffff:127.0.0.1]:${port}/doc`, { allowLoopback: false })).toEqual({
      text: undefined,
      why: [`refused: ${carries('::ffff:7f00:1', '127.0.0.1')}`],
    });
    expect(await fetchDocument(`https://169.254.169.254/latest/meta-data/`, { allowLoopback: false })).toEqual({
      text: undefined,
      why: [`refused: ${v4Reserved('169.254.169.254')}`],
    });
    // With the switch on, only loopback is let through.
    expect(await fetchDocument(`http://10.0.0.1:${port}/doc`)).toEqual({ text: undefined, why: [`refused: ${v4Reserved('10.0.0.1')}`] });
    expect(await fetchDocument(`http://[fe80::1]:${port}/doc`)).toEqual({ text: undefined, why: [`refused: ${notGlobal('fe80::1')}`] });
    expect(sockets.length).toBe(before);
  });

  it('localhost and names under .localhost are refused without being looked up', async () => {
    const before = sockets.length;
    for (const host of ['localhost', 'app.localhost', 'a.b.localhost']) {
      expect(await fetchDocument(`https://${host}:${port}/doc`, { allowLoopback: false }), host).toEqual({ text: undefined, why: ['refused: localhost'] });
    }
    expect(sockets.length).toBe(before);
  });

  it('a name that resolves to an address that is not public is never connected to', async (ctx) => {
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    const reasons = addresses.map((a) => forbiddenAddress(a.address)).filter((r): r is string => r !== undefined);
    // This machine's own name resolves to one of its own addresses: loopback or private nearly everywhere.
    if (!reasons.length || name === 'localhost' || name.endsWith('.localhost')) return ctx.skip();
    const connections: string[] = [];
    const tcp = createTcpServer((socket) => {
      connections.push(socket.remoteAddress ?? '?');
      socket.destroy();
    });
    // On the address the name resolves to, where this machine can listen there.
    await new Promise<void>((resolve) => {
      tcp.once('error', () => tcp.listen(0, '127.0.0.1', resolve));
      tcp.listen(0, addresses[0]!.address, resolve);
    });
    try {
      const { text, why } = await fetchDocument(`https://${name}:${(tcp.address() as AddressInfo).port}/doc`, { allowLoopback: false });
      expect(text).toBeUndefined();
      expect(reasons.map((reason) => `refused: ${name} resolves to ${reason}`)).toContain(why[0]);
      expect(why).toHaveLength(1);
      expect(connections).toEqual([]);
    } finally {
      tcp.close();
    }
  });
});

describe('answers that are not used', () => {
  it('an answer other than 200 is not used, and a redirect is not followed', async () => {
    const expected: [number, string][] = [
      [201, 'answered 201'],
      [299, 'answered 299'],
      [300, 'answered 300 (redirects are not followed)'],
      [301, 'answered 301 (redirects are not followed)'],
      [302, 'answered 302 (redirects are not followed)'],
      [307, 'answered 307 (redirects are not followed)'],
      [399, 'answered 399 (redirects are not followed)'],
      [400, 'answered 400'],
      [404, 'answered 404'],
      [500, 'answered 500'],
    ];
    for (const [status, why] of expected) {
      hits.length = 0;
      expect(await fetchDocument(`${origin}/status/${status}`), String(status)).toEqual({ text: undefined, why: [why] });
      // Each answer carries Location: /doc, never asked for.
      expect(hits, String(status)).toEqual([`/status/${status}`]);
    }
  });

  it('a body of exactly maxBytes is fetched, whether its length is declared or only streamed', async () => {
    expect(await fetchDocument(`${origin}/sized/100`)).toEqual({ text: 'x'.repeat(100), why: [] });
    expect(await fetchDocument(`${origin}/sized/100?chunked`)).toEqual({ text: 'x'.repeat(100), why: [] });
    expect(await fetchDocument(`${origin}/sized/20000`, { maxBytes: 20_000 })).toEqual({ text: 'x'.repeat(20_000), why: [] });
  });

  it('a streamed body (no Content-Length) one byte over maxBytes, or far over, is refused', async () => {
    expect(await fetchDocument(`${origin}/sized/101?chunked`)).toEqual({ text: undefined, why: ['larger than 100 bytes'] });
    expect(await fetchDocument(`${origin}/sized/5000?chunked`)).toEqual({ text: undefined, why: ['larger than 100 bytes'] });
  });

  // The unread body is destroyed: the error that raises (and the agent's closing) must reach no one, since an
  // error nobody listens for ends the server's process, and a document's host is anyone's choice.
  it('a complete body whose declared length is over maxBytes is refused, and nothing is left to fail later', async () => {
    expect(await fetchDocument(`${origin}/sized/101`)).toEqual({ text: undefined, why: ['larger than 100 bytes'] });
    expect(await fetchDocument(`${origin}/sized/20001`, { maxBytes: 20_000 })).toEqual({ text: undefined, why: ['larger than 20000 bytes'] });
    // The uncaught error came a turn of the event loop after the refusal: give it that turn, inside this test.
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it('a declared length over maxBytes is refused at once, without waiting for the body', async () => {
    // The rest of the body never comes: only the declared length can tell, before the time cap.
    expect(await fetchDocument(`${origin}/declared-large`, { timeoutMs: 3_000 })).toEqual({ text: undefined, why: ['larger than 100 bytes'] });
  });

  it('a host that does not answer within timeoutMs is given up on', async () => {
    const { text, why } = await fetchDocument(`${origin}/silent`, { timeoutMs: 200 });
    expect(text).toBeUndefined();
    // Whichever cap fires first: the abort signal (a DOMException named TimeoutError, not its legacy numeric code 23) or undici's headers timeout.
    expect(why).toHaveLength(1);
    expect(why[0]).toMatch(/^could not be fetched \((TimeoutError|UND_ERR_HEADERS_TIMEOUT)\)$/);
  });

  it('a connection refused, and a name that does not resolve, are told as what went wrong', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await fetchDocument(`http://127.0.0.1:${closedPort}/doc`)).toEqual({ text: undefined, why: ['could not be fetched (ECONNREFUSED)'] });
    // .invalid never resolves (RFC 6761); EAI_AGAIN where no name server is reachable at all.
    const { text, why } = await fetchDocument('https://client.invalid/doc', { allowLoopback: false });
    expect(text).toBeUndefined();
    expect(why).toHaveLength(1);
    expect(why[0]).toMatch(/^could not be fetched \((ENOTFOUND|EAI_AGAIN)\)$/);
  });
});
