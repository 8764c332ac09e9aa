import { connect as netConnect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { loadHttpSettings, type HttpService, type HttpServiceOptions } from '../src/transport/http.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

/**
 * Team mode's front door (src/transport/front-door.ts) as a client meets it, over real HTTP on
 * 127.0.0.1 in front of the sandbox: the settings it starts from, the bearer key, Host and Origin,
 * the body cap, the JSON-RPC error answers, and what the access log says of odd messages.
 */

const sb = await sandbox();
const memory = () => loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' });
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const listCall = (id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_clients', arguments: { limit: 1 } } });

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A service whose access-log lines are kept, as JSON objects. */
async function service(overrides: Partial<HttpServiceOptions> = {}): Promise<{ svc: HttpService; log: () => Record<string, unknown>[] }> {
  const lines: string[] = [];
  const svc = await teamService(sb, {
    config: memory(),
    write: (line) => {
      lines.push(line);
      captured.push(line);
    },
    ...overrides,
  });
  const log = () => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { svc, log };
}

/** The service's `count`-th access-log line, once written (on close). */
async function lastEntry(log: () => Record<string, unknown>[], count: number): Promise<Record<string, unknown>> {
  await expect.poll(() => log().length).toBeGreaterThanOrEqual(count);
  return log()[count - 1]!;
}

/** Reads an HTTP/1.x answer off a raw socket until the server closes it. */
function parseAnswer(raw: Buffer): Answer {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let out = '';
    for (;;) {
      const eol = body.indexOf('\r\n');
      const size = parseInt(body.slice(0, eol), 16);
      if (!size) break;
      out += body.slice(eol + 2, eol + 2 + size);
      body = body.slice(eol + 2 + size + 2);
    }
    body = out;
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') };
}

/** Whether `raw` holds a whole answer: its head, then its declared length or the last chunk. */
function complete(raw: Buffer): boolean {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const head = text.slice(0, end).toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length) return Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length[1]);
  return head.includes('transfer-encoding: chunked') && text.endsWith('\r\n0\r\n\r\n');
}

/** Sends these exact bytes on a new connection; the answer, once whole (or once the server closes the connection). */
function exchange(port: number, bytes: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      const answer = parseAnswer(Buffer.concat(chunks));
      captured.push(answer.body);
      resolve(answer);
    };
    const socket = netConnect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (complete(Buffer.concat(chunks))) finish();
    });
    socket.on('error', reject);
    socket.on('close', finish);
  });
}

/** A request through node:http (any header, a body written in chunks when `chunks` is given). */
function send(url: string, options: { headers?: Record<string, string>; body?: string; chunks?: string[] } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest(
      { host: u.hostname, port: u.port, method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, ...options.headers }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          captured.push(body);
          resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body });
        });
      },
    );
    req.on('error', reject);
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else req.end(options.body);
  });
}

const bearer = () => ({ Authorization: `Bearer ${sb.keys.demo}` });

const raw = (head: string, body = '') => `${head.split('\n').join('\r\n')}\r\n\r\n${body}`;

describe('the settings team mode starts from (loadHttpSettings, as serveHttp reads them)', () => {
  it('values given are the ones served: host, port, rate limit, and listed origins as browsers write them', async () => {
    const { settings, problems } = loadHttpSettings(
      { httpHost: '0.0.0.0', httpPort: '9911', rateLimit: '2' },
      { DOCREQ_ALLOWED_HOSTS: '127.0.0.1', DOCREQ_ALLOWED_ORIGINS: 'HTTPS://App.Example.com/,http://tools.example.net' },
    );
    expect(problems).toEqual([]);
    expect(settings).toEqual({
      host: '0.0.0.0',
      port: 9911,
      allowedHosts: ['127.0.0.1'],
      allowedOrigins: ['https://app.example.com', 'http://tools.example.net'],
      rateLimit: 2,
    });
    // Served as read (on a free port of loopback): the listed origin, as a browser sends it, is let in; the third call in a minute is refused.
    const { svc } = await service({ ...settings, host: '127.0.0.1', port: 0 });
    const first = await send(svc.url, { headers: { ...bearer(), Origin: 'https://app.example.com' }, body: listCall(1) });
    expect(first.status).toBe(200);
    expect(first.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect((await send(svc.url, { headers: bearer(), body: listCall(2) })).status).toBe(200);
    expect((await send(svc.url, { headers: bearer(), body: listCall(3) })).status).toBe(429);
  });

  it('a value that cannot be read is a problem naming its variable, never a crash; the defaults stand meanwhile', () => {
    const { settings, problems } = loadHttpSettings({}, { DOCREQ_HTTP_HOST: '   ', DOCREQ_HTTP_PORT: 'eighty', DOCREQ_RATE_LIMIT: '0' });
    expect(problems.join('\n')).toMatch(/DOCREQ_HTTP_HOST[\s\S]*DOCREQ_HTTP_PORT[\s\S]*DOCREQ_RATE_LIMIT/);
    expect(settings).toMatchObject({ host: '127.0.0.1', port: 8787, rateLimit: 120 });
  });
});

describe('the bearer key', () => {
  const challenge = (a: Answer) => a.headers['www-authenticate'];
  const ABSENT = 'Bearer realm="docreq-mcp"';

  it('an empty Authorization header, or one of nothing but (non-ASCII) white space, is no key: 401 with the plain challenge', async () => {
    const { svc } = await service();
    const before = sb.calls.length;
    const empty = await send(svc.url, { headers: { Authorization: '' }, body: listCall() });
    expect(empty.status).toBe(401);
    expect(challenge(empty)).toBe(ABSENT);
    const head = Buffer.from(
      raw(
        `POST /mcp HTTP/1.1\nHost: 127.0.0.1\nConnection: close\nContent-Type: application/json\nContent-Length: ${listCall().length}\nAuthorization: `,
      ).slice(0, -4),
      'latin1',
    );
    const nbsp = await exchange(svc.port, Buffer.concat([head, Buffer.from([0xa0]), Buffer.from(`\r\n\r\n${listCall()}`, 'latin1')]));
    expect(nbsp.status).toBe(401);
    expect(challenge(nbsp)).toBe(ABSENT);
    expect(sb.calls.length).toBe(before);
  });

  it('"Bearer" with more than one space before the key is read; a scheme that only ends in "Bearer" is malformed', async () => {
    const { svc } = await service();
    expect((await send(svc.url, { headers: { Authorization: `Bearer   ${sb.keys.demo}` }, body: listCall() })).status).toBe(200);
    const before = sb.calls.length;
    for (const header of [`XBearer ${sb.keys.demo}`, `Basic Bearer ${sb.keys.demo}`]) {
      const r = await send(svc.url, { headers: { Authorization: header }, body: listCall() });
      expect(r.status, header).toBe(401);
      expect(challenge(r)).toContain('error="invalid_request"');
    }
    expect(sb.calls.length).toBe(before);
  });

  it('a key of 1,024 characters goes on to the service; one of 1,025 is refused as malformed before anything is called', async () => {
    const { svc } = await service();
    const before = sb.calls.length;
    const long = await send(svc.url, { headers: { Authorization: `Bearer ${'k'.repeat(1025)}` }, body: listCall() });
    expect(long.status).toBe(401);
    expect(challenge(long)).toContain('error="invalid_request"');
    expect(sb.calls.length).toBe(before);
    const atLimit = await send(svc.url, { headers: { Authorization: `Bearer ${'k'.repeat(1024)}` }, body: listCall() });
    expect(atLimit.status).toBe(200);
    expect(atLimit.body).toContain('The service rejected the API key');
    expect(sb.calls.length).toBeGreaterThan(before);
  });
});

describe('the Host header', () => {
  const withHost = (port: number, host: string | undefined, version = '1.1') =>
    exchange(
      port,
      raw(
        `POST /mcp HTTP/${version}\n${host === undefined ? '' : `Host: ${host}\n`}Connection: close\nAuthorization: Bearer ${sb.keys.demo}\nContent-Type: application/json\nAccept: application/json, text/event-stream\nContent-Length: ${listCall().length}`,
        listCall(),
      ),
    );

  it('a bracketed IPv6 name with a port is matched by its name; a port cut from inside a name does not make it another', async () => {
    const { svc } = await service({ allowedHosts: ['[::1]', 'localhost'] });
    expect((await withHost(svc.port, `[::1]:${svc.port}`)).status).toBe(200);
    expect((await withHost(svc.port, '[::1]')).status).toBe(200);
    expect((await withHost(svc.port, `localhost:${svc.port}`)).status).toBe(200);
    // Only a port may follow a bracketed name: other text after the bracket makes another (refused) host.
    for (const host of ['[::1]evil', `[::1]:${svc.port}:90`, '[::1]x:80']) expect((await withHost(svc.port, host)).status, host).toBe(403);
    const inside = await withHost(svc.port, 'local:1host');
    expect(inside.status).toBe(403);
    expect(inside.body).toContain('DOCREQ_ALLOWED_HOSTS');
  });

  it('no Host (HTTP/1.0) and an empty Host are refused with 403, not served and not a 500', async () => {
    const { svc } = await service();
    const before = sb.calls.length;
    for (const [host, version] of [
      [undefined, '1.0'],
      ['', '1.1'],
    ] as const) {
      const r = await withHost(svc.port, host, version);
      expect(r.status, `${version} ${host}`).toBe(403);
      expect(JSON.parse(r.body)).toEqual({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Forbidden: this Host is not accepted (DOCREQ_ALLOWED_HOSTS).' },
        id: null,
      });
    }
    expect(sb.calls.length).toBe(before);
  });

  it('two Host headers: 400, and the access log says why', async () => {
    const { svc, log } = await service();
    const r = await exchange(
      svc.port,
      raw(
        `POST /mcp HTTP/1.1\nHost: 127.0.0.1\nHost: 127.0.0.1\nConnection: close\nAuthorization: Bearer ${sb.keys.demo}\nContent-Type: application/json\nContent-Length: ${listCall().length}`,
        listCall(),
      ),
    );
    expect(r.status).toBe(400);
    expect(await lastEntry(log, 1)).toMatchObject({ status: 400, refused: 'hosts' });
  });
});

describe('a loopback Origin, bound to loopback with none listed', () => {
  const withOrigin = (url: string, origin: string) => send(url, { headers: { ...bearer(), Origin: origin }, body: listCall() });

  it('only an http(s) origin, exactly an origin, is let in: no other scheme, no path', async () => {
    const { svc } = await service();
    for (const origin of ['http://localhost:5173', 'http://localhost:5173/', 'HTTP://LOCALHOST:5173', 'https://[::1]:8443']) {
      const r = await withOrigin(svc.url, origin);
      expect(r.status, origin).toBe(200);
      expect(r.headers['access-control-allow-origin'], origin).toBe(origin);
    }
    const before = sb.calls.length;
    for (const origin of ['ws://localhost:5173', 'ftp://127.0.0.1', 'http://localhost:5173/app', 'http://localhost:5173/?x=1']) {
      const r = await withOrigin(svc.url, origin);
      expect(r.status, origin).toBe(403);
      expect(r.body).toContain('DOCREQ_ALLOWED_ORIGINS');
    }
    expect(sb.calls.length).toBe(before);
  });
});

describe('the body cap', () => {
  const CAP = 2_000;
  /** A tools/list of exactly `size` bytes (JSON white space as padding). */
  const sized = (size: number) => {
    const message = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    return message.slice(0, -1) + ' '.repeat(size - message.length) + '}';
  };
  const head = (length: number) =>
    `POST /mcp HTTP/1.1\nHost: 127.0.0.1\nConnection: close\nAuthorization: Bearer ${sb.keys.demo}\nContent-Type: application/json\nAccept: application/json, text/event-stream\nContent-Length: ${length}`;

  it('a declared length over the cap is answered 413 at once, before the body arrives (none is sent)', async () => {
    const { svc } = await service({ maxBodyBytes: CAP, timeouts: { headersMs: 5_000, requestMs: 5_000, checkMs: 50 } });
    const r = await exchange(svc.port, raw(head(CAP + 1)));
    expect(r.status).toBe(413);
    expect(r.headers.connection).toBe('close');
  });

  it('a body of exactly the cap is read, declared or chunked', async () => {
    const { svc } = await service({ maxBodyBytes: CAP });
    expect(sized(CAP).length).toBe(CAP);
    const declared = await exchange(svc.port, raw(head(CAP), sized(CAP)));
    expect(declared.status).toBe(200);
    expect(declared.body).toContain('"tools"');
    const chunked = await send(svc.url, { headers: bearer(), chunks: [sized(CAP).slice(0, 1_000), sized(CAP).slice(1_000)] });
    expect(chunked.status).toBe(200);
    expect(chunked.body).toContain('"tools"');
  });

  it('a chunked body (no declared length) that grows past the cap: 413, however valid its JSON', async () => {
    const { svc } = await service({ maxBodyBytes: CAP });
    const body = sized(3 * CAP);
    const r = await send(svc.url, { headers: bearer(), chunks: [body.slice(0, CAP), body.slice(CAP, 2 * CAP), body.slice(2 * CAP)] });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toMatchObject({ error: { code: -32000, message: `Request body larger than ${CAP} bytes.` } });
  });
});

describe('JSON-RPC error answers', () => {
  it('are JSON, never cached, with the server-error code -32000 and id null', async () => {
    const { svc } = await service();
    const r = await send(svc.url, { headers: { ...bearer(), Host: 'attacker.example' }, body: listCall() });
    expect(r.status).toBe(403);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(r.body)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Forbidden: this Host is not accepted (DOCREQ_ALLOWED_HOSTS).' },
      id: null,
    });
  });

  it('past the deadline with the answer already streaming (a progress event sent): the stream is ended, nothing more is written', async () => {
    const { svc, log } = await service({ deadlineMs: 1_000 });
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 5_000 }, { times: 1 });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'list_clients', arguments: { limit: 1 }, _meta: { progressToken: 'p1' } },
    });
    const r = await send(svc.url, { headers: bearer(), body });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.body).toContain('notifications/progress');
    expect(r.body).not.toContain('"result"');
    expect(await lastEntry(log, 1)).toMatchObject({ status: 200, deadline: true, tool: 'list_clients' });
  });
});

describe('messages the access log summarises (the rate limit counts from the same reading)', () => {
  /** Posts `body`; the answer's status and the request's access-log line. */
  const logged = async (svc: HttpService, log: () => Record<string, unknown>[], body: string) => {
    const count = log().length;
    const { status } = await send(svc.url, { headers: bearer(), body });
    return { status, entry: await lastEntry(log, count + 1) };
  };

  it('messages that are not requests (null, a method that is not a string, an answer, a call without params or name) are answered by the SDK, not a 500', async () => {
    const { svc, log } = await service();
    const cases: [string, number, string | undefined][] = [
      ['null', 400, undefined],
      [`[null,${listCall()}]`, 400, 'list_clients'],
      ['{"jsonrpc":"2.0","id":1,"method":5}', 400, undefined],
      ['{"jsonrpc":"2.0","id":1,"result":{}}', 202, undefined],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call"}', 200, '?'],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}', 200, '?'],
    ];
    for (const [body, status, tool] of cases) {
      const r = await logged(svc, log, body);
      expect(r.status, body).toBe(status);
      expect(r.entry.tool, body).toBe(tool);
    }
  });

  it('names are cut at 64 characters, and a batch lists its first 100 messages only', async () => {
    const { svc, log } = await service();
    const name = 'n'.repeat(100);
    const call = await logged(svc, log, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } }));
    expect(call.entry).toMatchObject({ rpc: 'tools/call', tool: 'n'.repeat(64) });
    const method = await logged(svc, log, JSON.stringify({ jsonrpc: '2.0', id: 2, method: name }));
    expect(method.entry.rpc).toBe('n'.repeat(64));
    const batch = await logged(svc, log, JSON.stringify(Array.from({ length: 150 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'm' }))));
    expect(batch.entry.rpc).toBe(Array.from({ length: 100 }, () => 'm').join(','));
    const calls = await logged(
      svc,
      log,
      JSON.stringify(Array.from({ length: 150 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 't' } }))),
    );
    expect(calls.entry.tool).toBe(Array.from({ length: 100 }, () => 't').join(','));
  });
});
