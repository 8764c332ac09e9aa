import { TOOLS } from '../src/tools/index.js';
import { APP_ONLY_TOOLS } from '../src/ui/apps.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { KeyFingerprinter, KeyScopeStore, RateBucket } from '../src/transport/key-scope.js';
import { bearerKey, loadHttpSettings, type HttpService, type HttpServiceOptions } from '../src/transport/http.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { ALL_KEYS, sandbox } from './support/sandbox.js';
import { connect } from './support/connect.js';
import { teamService } from './support/team-service.js';

const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
const sb = await sandbox();
const harbor = sb.firms.get(sb.keys.harbor)!;
const logLines: string[] = [];

async function service(overrides: Partial<HttpServiceOptions> = {}): Promise<HttpService> {
  const config = loadConfig({ confirmSend: 'never' }, { DOCREQ_BASE_URL: sb.url });
  return teamService(sb, {
    allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
    config,
    write: (line) => {
      logLines.push(line);
      captured.push(line);
    },
    ...overrides,
  });
}

async function connectHttp(url: string, key: string | undefined, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...headers } },
  });
  const client = new Client({ name: 'team-test', version: '1' });
  await client.connect(transport);
  return {
    client,
    async call(name: string, args: Record<string, unknown> = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      captured.push(JSON.stringify(result));
      return result;
    },
  };
}

/** A raw request with any headers (fetch cannot set Host). */
function raw(url: string, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest(
      { host: u.hostname, port: u.port, method: options.method ?? 'POST', path: options.path ?? '/mcp', headers: options.headers, agent: false },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const listCall = (id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_clients', arguments: { limit: 1 } } });

describe('team mode over Streamable HTTP (in process)', () => {
  let svc: HttpService;
  beforeAll(async () => {
    svc = await service();
  });

  it('serves two firms at once, each request with its own key, each seeing only its own data', async () => {
    const [demo, other] = await Promise.all([connectHttp(svc.url, sb.keys.demo), connectHttp(svc.url, sb.keys.harbor)]);
    const rounds = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? other : demo).call('list_clients', { limit: 500 })));
    for (const [i, result] of rounds.entries()) {
      const firm = i % 2 ? harbor : sb.demoFirm;
      const s = result.structuredContent as { total: number; clients: { id: string }[] };
      expect(result.isError).toBeFalsy();
      expect(s.total).toBe(firm.clients.length);
      expect(new Set(s.clients.map((c) => c.id))).toEqual(new Set(firm.clients.map((c) => c.id)));
    }
    expect(harbor.clients.length).not.toBe(sb.demoFirm.clients.length);
    const tools = (await demo.client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(TOOLS.filter((t) => !APP_ONLY_TOOLS.includes(t.name)).map((t) => t.name));
    await Promise.all([demo.client.close(), other.client.close()]);
  });

  it('answers 401 with WWW-Authenticate: Bearer before any MCP processing when no key is sent', async () => {
    const before = sb.calls.length;
    const none = await raw(svc.url, { headers: MCP_HEADERS, body: listCall() });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
    const malformed = await raw(svc.url, { headers: { ...MCP_HEADERS, Authorization: 'Basic abc' }, body: listCall() });
    expect(malformed.status).toBe(401);
    expect(malformed.headers['www-authenticate']).toContain('invalid_request');
    await expect(connectHttp(svc.url, undefined)).rejects.toThrow(/401|Unauthorized/);
    expect(sb.calls.length).toBe(before);
  });

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin with 403, and allows a listed Origin', async () => {
    const host = await raw(svc.url, { headers: { ...MCP_HEADERS, Host: 'attacker.example', Authorization: `Bearer ${sb.keys.demo}` }, body: listCall() });
    expect(host.status).toBe(403);
    expect(host.body).toContain('DOCREQ_ALLOWED_HOSTS');
    const origin = await raw(svc.url, {
      headers: { ...MCP_HEADERS, Origin: 'https://attacker.example', Authorization: `Bearer ${sb.keys.demo}` },
      body: listCall(),
    });
    expect(origin.status).toBe(403);
    expect(origin.body).toContain('DOCREQ_ALLOWED_ORIGINS');
    await expect(connectHttp(svc.url, sb.keys.demo, { Origin: 'https://attacker.example' })).rejects.toThrow(/Origin is not allowed/);

    const withOrigin = await service({ allowedOrigins: ['https://app.example.com'] });
    const ok = await raw(withOrigin.url, {
      headers: { ...MCP_HEADERS, Origin: 'https://app.example.com', Authorization: `Bearer ${sb.keys.demo}` },
      body: listCall(),
    });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const localhostPort = await raw(svc.url.replace('127.0.0.1', 'localhost'), {
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${sb.keys.demo}` },
      body: listCall(),
    });
    expect(localhostPort.status).toBe(200);
  });

  it('caps request bodies (413) and answers /healthz, GET /mcp (405) and unknown paths (404)', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024, 'a');
    const tooLarge = await raw(svc.url, { headers: { ...MCP_HEADERS, Authorization: `Bearer ${sb.keys.demo}` }, body: big });
    expect(tooLarge.status).toBe(413);
    const health = await raw(svc.url, { method: 'GET', path: '/healthz' });
    expect(health.status).toBe(200);
    const get = await raw(svc.url, { method: 'GET', headers: { Authorization: `Bearer ${sb.keys.demo}`, Accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect((await raw(svc.url, { method: 'GET', path: '/other' })).status).toBe(404);
  });

  it('rate-limits tool calls per key with 429 and Retry-After; another key is not affected', async () => {
    const limited = await service({ rateLimit: 3 });
    const send = (key: string, id: number) => raw(limited.url, { headers: { ...MCP_HEADERS, Authorization: `Bearer ${key}` }, body: listCall(id) });
    for (let i = 0; i < 3; i++) expect((await send(sb.keys.demo, i)).status).toBe(200);
    const refused = await send(sb.keys.demo, 9);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.body).toContain('DOCREQ_RATE_LIMIT');
    expect((await send(sb.keys.harbor, 10)).status).toBe(200);
    // tools/list is not a tool call: still served
    const list = await raw(limited.url, {
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${sb.keys.demo}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
  });

  it('writes one JSON access-log line per request with the tool and the key fingerprint, never the key', async () => {
    const demo = await connectHttp(svc.url, sb.keys.demo);
    await demo.call('list_requests', { overdue: true });
    await demo.client.close();
    const entries = logLines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const call = entries.find((e) => e.tool === 'list_requests')!;
    expect(call).toMatchObject({ method: 'POST', path: '/mcp', status: 200, key: svc.fingerprint(sb.keys.demo) });
    expect(typeof call.ms).toBe('number');
    expect(call.key).toMatch(/^[0-9a-f]{12}$/);
    for (const line of logLines) for (const key of ALL_KEYS) expect(line).not.toContain(key);
  });
});

describe("a firm's key fingerprint across replicas", () => {
  it('is the same on every replica sharing DOCREQ_TOKEN_SECRET, and differs under another secret or none', async () => {
    const secret = (s: string) => loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_TOKEN_SECRET: s.repeat(32) });
    const [a, b, c] = await Promise.all([
      teamService(sb, { config: secret('a') }),
      teamService(sb, { config: secret('a') }),
      teamService(sb, { config: secret('b') }),
    ]);
    const [d, e] = await Promise.all([teamService(sb), teamService(sb)]);
    const key = sb.keys.demo;
    expect(a.fingerprint(key)).toBe(b.fingerprint(key));
    expect(a.fingerprint(key)).toMatch(/^[0-9a-f]{12}$/);
    expect(a.fingerprint(key)).not.toBe(c.fingerprint(key));
    expect(a.fingerprint(key)).not.toBe(a.fingerprint(sb.keys.harbor));
    expect(d.fingerprint(key)).not.toBe(e.fingerprint(key));
  });
});

describe('a token from a replica with another DOCREQ_TOKEN_SECRET', () => {
  it('is refused saying exactly that (not "another request"); nothing is sent, and a new preview is offered', async () => {
    const a = await connect(sb, { env: { DOCREQ_TOKEN_SECRET: 'a'.repeat(32) } });
    const b = await connect(sb, { env: { DOCREQ_TOKEN_SECRET: 'b'.repeat(32) } });
    try {
      const c = sb.demoFirm.clients.filter((x) => x.status === 'active')[7]!;
      const args = { client: c.id, title: 'Replica secrets', items: [{ name: 'W-2' }] };
      const preview = await a.call('create_request', args);
      const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
      const posts = sb.calls.filter((x) => x.method === 'POST').length;
      const other = await b.call('create_request', { ...args, confirmationToken: token });
      expect(other.text).toMatch(
        /^The confirmationToken given was signed by a server with another DOCREQ_TOKEN_SECRET \(a replica that does not share this one's\); nothing was sent\. Every replica behind one address needs the same DOCREQ_TOKEN_SECRET\. PREVIEW — nothing was sent\./,
      );
      expect(other.structuredContent).toMatchObject({ sent: false, outcome: 'previewed' });
      expect(sb.calls.filter((x) => x.method === 'POST').length).toBe(posts);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('team mode for a 2026-07-28 client that listens', () => {
  it('tells a listening client (subscriptions/listen) when the templates file changes, and its open stream does not hold a drain up', async () => {
    const dir = mkdtempSync(join(suiteFolder(), 'listen-'));
    const file = join(dir, 'templates.yaml');
    const yaml = (names: string[]) => `templates:\n${names.map((n) => `  - { name: ${n}, title: ${n}, items: [{ name: A }] }\n`).join('')}`;
    writeFileSync(file, yaml(['annual-audit']));
    const config = loadConfig({ confirmSend: 'never' }, { DOCREQ_BASE_URL: sb.url, DOCREQ_TEMPLATES_FILE: file });
    const svc = await teamService(sb, { config });
    const transport = new ModernTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${sb.keys.demo}` } } });
    const client = new ModernClient({ name: 'listener', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transport);
    const heard: string[] = [];
    client.setNotificationHandler('notifications/tools/list_changed', () => void heard.push('tools'));
    const subscription = await client.listen({ toolsListChanged: true });
    writeFileSync(file, yaml(['annual-audit', 'estate-closing']));
    await expect.poll(() => heard.length, { timeout: 5_000, interval: 100 }).toBeGreaterThan(0);
    const { tools } = await client.listTools();
    expect(JSON.stringify(tools.find((t) => t.name === 'create_request')!.inputSchema)).toContain('estate-closing');
    // Stopping: the listen stream is still open, yet the drain finishes with nothing in flight (true).
    expect(await svc.close(3_000)).toBe(true);
    await subscription.close().catch(() => undefined);
    await client.close().catch(() => undefined);
  });
});

describe('per-key state', () => {
  it('fingerprints keys with a per-process secret: 12 hex characters, stable within a process, different across', () => {
    const a = new KeyFingerprinter();
    const b = new KeyFingerprinter();
    expect(a.fingerprint('k1')).toMatch(/^[0-9a-f]{12}$/);
    expect(a.fingerprint('k1')).toBe(a.fingerprint('k1'));
    expect(a.fingerprint('k1')).not.toBe(a.fingerprint('k2'));
    expect(a.fingerprint('k1')).not.toBe(b.fingerprint('k1'));
  });

  it('keeps at most N firms, dropping the least recently used', () => {
    const store = new KeyScopeStore(2);
    store.scope('a').set('clients', [1]);
    store.scope('b').set('clients', [2]);
    store.scope('a'); // a is now the most recent
    store.scope('c');
    expect(store.size).toBe(2);
    expect(store.peek('b')).toBeUndefined();
    expect(store.peek('a')?.get('clients')).toEqual([1]);
  });

  it('refills the rate bucket over time and says how long to wait', () => {
    const bucket = new RateBucket(60, 0);
    for (let i = 0; i < 60; i++) expect(bucket.take(1, 0)).toBe(0);
    expect(bucket.take(1, 0)).toBe(1_000);
    expect(bucket.take(1, 1_000)).toBe(0);
  });

  it('parses bearer keys strictly and reads team-mode settings, refusing bad ones', () => {
    expect(bearerKey('Bearer abc.DEF-1')).toEqual({ key: 'abc.DEF-1' });
    expect(bearerKey(undefined)).toEqual({ missing: 'absent' });
    expect(bearerKey('Bearer a b')).toEqual({ missing: 'malformed' });
    // The whole key is of the token characters (RFC 6750 b64token), not only its start or its end.
    expect(bearerKey('Bearer abc!')).toEqual({ missing: 'malformed' });
    expect(bearerKey('Bearer !abc')).toEqual({ missing: 'malformed' });
    expect(bearerKey('Bearer ab=c')).toEqual({ missing: 'malformed' });
    expect(bearerKey('Bearer a~b+c/d==')).toEqual({ key: 'a~b+c/d==' });
    expect(loadHttpSettings({}, {}).settings).toEqual({
      host: '127.0.0.1',
      port: 8787,
      allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
      allowedOrigins: [],
      rateLimit: 120,
    });
    const bad = loadHttpSettings({ httpPort: '99999' }, { DOCREQ_ALLOWED_ORIGINS: 'not a url', DOCREQ_RATE_LIMIT: '0' });
    expect(bad.problems.join('\n')).toMatch(/DOCREQ_HTTP_PORT[\s\S]*DOCREQ_ALLOWED_ORIGINS[\s\S]*DOCREQ_RATE_LIMIT/);
  });

  it('a token issued by one replica is accepted by another sharing DOCREQ_TOKEN_SECRET; used again on either, nothing more is sent', async () => {
    const secret = 'team-secret-'.repeat(4);
    const auto = (svcSecret: string) => loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_TOKEN_SECRET: svcSecret });
    const a = await service({ config: auto(secret) });
    const b = await service({ config: auto(secret) });
    const other = await service({ config: auto('another-secret-'.repeat(3)) });
    const onA = await connectHttp(a.url, sb.keys.demo);
    const onB = await connectHttp(b.url, sb.keys.demo);
    const onOther = await connectHttp(other.url, sb.keys.demo);
    const args = { client: sb.demoFirm.clients[3]!.id, title: `Across replicas ${Date.now()}`, items: [{ name: 'Signed engagement letter' }] };
    // Team mode has no elicitation to rely on: the first call previews and hands out a token.
    const preview = await onA.call('create_request', args);
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    expect((preview.structuredContent as { outcome: string }).outcome).toBe('previewed');
    const posts = () => sb.callsTo('POST', '/api/v1/requests').length;
    const before = posts();
    const emails = sb.emails.length;
    // A replica with another secret cannot verify it: it previews again and sends nothing.
    expect((await onOther.call('create_request', { ...args, confirmationToken: token })).structuredContent).toMatchObject({ outcome: 'previewed' });
    expect(posts()).toBe(before);
    const sent = await onB.call('create_request', { ...args, confirmationToken: token });
    expect(sent.structuredContent).toMatchObject({ outcome: 'sent', sent: true });
    // Used again on the same replica: answered from its ledger, no POST.
    expect((await onB.call('create_request', { ...args, confirmationToken: token })).structuredContent).toMatchObject({ outcome: 'already_sent' });
    // Used again on the replica that issued it (no memory of the send): its POST carries the same
    // Idempotency-Key, so the service answers with the first result and sends no second e-mail.
    await onA.call('create_request', { ...args, confirmationToken: token });
    expect(sb.emails.length).toBe(emails + 1);
    const keys = sb
      .callsTo('POST', '/api/v1/requests')
      .slice(before)
      .map((c) => c.idempotencyKey);
    expect(new Set(keys).size).toBe(1);
    for (const c of [onA, onB, onOther]) await c.client.close();
  });
});

describe('the built binary in team mode', () => {
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error('dist/cli.js is missing: run npm run build (npm test does)');
  });

  async function start(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
    const child = spawn(process.execPath, [BIN, '--transport', 'http', '--port', '0', ...args], {
      env: { ...childEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    while (!/serving MCP over HTTP at (\S+)\/mcp/.test(stderr)) {
      if (child.exitCode !== null) throw new Error(`exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { child, url: /serving MCP over HTTP at (\S+)\/mcp/.exec(stderr)![1]!, stderr: () => stderr };
  }

  it('refuses to start with DOCREQ_API_KEY set', async () => {
    const child = spawn(process.execPath, [BIN, '--transport', 'http', '--port', '0'], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    captured.push(stderr);
    expect(code).not.toBe(0);
    expect(stderr).toContain('DOCREQ_API_KEY');
    expect(stderr).toContain('Authorization');
  });

  it('with --sandbox prints the demo keys on stderr and serves them', async () => {
    const { child, url, stderr } = await start(['--sandbox']);
    const key = /demo (\S+);/.exec(stderr())![1]!;
    const demo = await connectHttp(url, key);
    const result = await demo.call('list_clients', { search: 'sam taylor' });
    expect((result.structuredContent as { matched: number }).matched).toBe(2);
    await demo.client.close();
    // The built service answers a plain 2025 tool call as one JSON body (src/transport/plain-call.ts).
    const plain = await raw(url, { headers: { ...MCP_HEADERS, Authorization: `Bearer ${key}`, 'Mcp-Protocol-Version': '2025-11-25' }, body: listCall(4) });
    expect(plain.headers['content-type']).toBe('application/json');
    expect(JSON.parse(plain.body)).toMatchObject({ jsonrpc: '2.0', id: 4, result: { structuredContent: { returned: 1 } } });
    child.kill('SIGTERM');
    expect((await once(child, 'exit'))[0]).toBe(0);
  });

  it('on SIGTERM stops accepting, lets the call in flight finish, then exits 0', async () => {
    const { child, url, stderr } = await start([], { DOCREQ_BASE_URL: sb.url });
    const demo = await connectHttp(url, sb.keys.demo);
    sb.clearFaults();
    sb.inject('GET /api/v1/requests', { kind: 'latency', ms: 1_500 }, { times: 1 });
    const marker = sb.calls.length;
    const inFlight = demo.call('list_requests', {});
    while (!sb.calls.slice(marker).some((c) => c.path === '/api/v1/requests')) await new Promise((r) => setTimeout(r, 10));
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    // no new connections while draining
    await expect(raw(url, { method: 'GET', path: '/healthz' })).rejects.toThrow(/ECONNREFUSED/);
    const result = await inFlight;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { total: number }).total).toBe(sb.demoFirm.requests.length);
    const [code] = (await exited) as [number];
    captured.push(stderr());
    expect(code).toBe(0);
    expect(stderr()).toContain('SIGTERM');
    for (const key of ALL_KEYS) expect(stderr()).not.toContain(key);
  });
});

describe('stopping behind a proxy that reuses connections', () => {
  it('a request arriving on an open keep-alive connection while draining is answered (Connection: close), not reset', async () => {
    const svc = await service();
    const { Agent } = await import('node:http');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const onAgent = (body: string) =>
      new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
        const u = new URL(svc.url);
        const req = httpRequest(
          {
            host: u.hostname,
            port: u.port,
            method: 'POST',
            path: '/mcp',
            agent,
            headers: { ...MCP_HEADERS, Authorization: `Bearer ${sb.keys.demo}`, 'Mcp-Protocol-Version': '2025-11-25' },
          },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // The proxy's connection: used once, now idle and kept alive.
    const first = await onAgent(listCall(1));
    expect(first.status).toBe(200);
    expect(first.connection).not.toBe('close');
    // A slow call in flight on another connection keeps the replica draining.
    sb.clearFaults();
    sb.inject('GET /api/v1/clients', { kind: 'latency', ms: 800 }, { times: 1 });
    const slow = raw(svc.url, {
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${sb.keys.demo}`, 'Mcp-Protocol-Version': '2025-11-25' },
      body: listCall(2),
    });
    while (svc.inflight === 0) await new Promise((r) => setTimeout(r, 5));
    const closing = svc.close(5_000);
    await new Promise((r) => setTimeout(r, 50));
    // The proxy sends the next request over its idle connection: it must be served, not reset.
    const second = await onAgent(listCall(3));
    expect(second.status).toBe(200);
    expect(second.body).toContain('"result"');
    expect(second.connection).toBe('close');
    expect((await slow).status).toBe(200);
    expect(await closing).toBe(true);
    agent.destroy();
  });
});
