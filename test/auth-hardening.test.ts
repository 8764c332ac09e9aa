import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forbiddenAddress } from '../src/auth/outbound.js';
import { startDemoIdp } from '../src/sandbox/idp.js';
import type { HttpService } from '../src/transport/http.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, codeFor, connectAs, form, REDIRECT, register, signInService } from './support/sign-in.js';

/**
 * The sign-in's edges that an attacker reaches: a preview confirmed by someone else, a client
 * metadata document that points inside the firm's network, redirect URIs nobody should register,
 * and what `docreq-mcp check` says about sign-in (never the client secret).
 */

const sb = await sandbox();
const lines: string[] = [];
// Everyone at the demo firm may send: two senders, one firm key.
const BOTH_SEND = { readers: [], senders: ['@demo.example'] };
const posts = () => sb.callsTo('POST', '/api/v1/requests').length;

async function tokensFor(svc: HttpService, email: string, password: string): Promise<OAuthTokens> {
  const { clientId, verifier, code } = await codeFor(svc, email, password);
  return (await (
    await fetch(`${svc.url}/token`, form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT }))
  ).json()) as OAuthTokens;
}

describe('a preview is confirmed only by the person who asked for it', () => {
  let svc: HttpService;
  beforeAll(async () => {
    svc = await signInService(sb, { confirmSend: 'auto', policy: BOTH_SEND, lines });
  });

  it("person B cannot send with person A's confirmation token; A can", async () => {
    const a = await connectAs(svc, 'sender@demo.example', 'sender-demo');
    const b = await connectAs(svc, 'reader@demo.example', 'reader-demo');
    const client = ((await a.call('list_clients', { limit: 1 })).structuredContent as { clients: { id: string }[] }).clients[0]!.id;
    const args = { client, title: 'Person-bound preview', items: [{ name: 'Bank statement' }] };
    const preview = await a.call('create_request', args);
    const token = (preview.structuredContent as { confirmation: { token: string } }).confirmation.token;
    expect(token).toMatch(/^dr1\./);

    const before = posts();
    const stolen = await b.call('create_request', { ...args, confirmationToken: token });
    expect(stolen.structuredContent).toMatchObject({ sent: false, outcome: 'previewed' });
    expect(stolen.text).toContain('does not belong to this exact request');
    expect(posts()).toBe(before);
    expect(lines.filter((l) => l.includes('"audit":"send"'))).toEqual([]);

    const own = await a.call('create_request', { ...args, confirmationToken: token });
    expect(own.structuredContent).toMatchObject({ sent: true, outcome: 'sent' });
    expect(posts()).toBe(before + 1);
    await Promise.all([a.client.close(), b.client.close()]);
  });

  it("person B cannot answer person A's MRTR confirmation (2026-07-28); A can", async () => {
    const [tokenA, tokenB] = [await tokensFor(svc, 'sender@demo.example', 'sender-demo'), await tokensFor(svc, 'reader@demo.example', 'reader-demo')];
    // A's host asks A (who accepts); its retry, carrying the request state, is held back here.
    let retry: { body: string; headers: Headers } | undefined;
    const transport = new ModernTransport(new URL(`${svc.url}/mcp`), {
      fetch: (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${tokenA.access_token}`);
        if (typeof init?.body === 'string' && init.body.includes('"requestState"')) {
          retry = { body: init.body, headers };
          return Promise.reject(new Error('held back by the test'));
        }
        return fetch(url, { ...init, headers });
      },
    });
    const host = new ModernClient({ name: 'host', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    host.setRequestHandler('elicitation/create', () => Promise.resolve({ action: 'accept', content: { confirm: true } }) as never);
    await host.connect(transport);
    const client = sb.firms.get(sb.keys.demo)!.clients[2]!.id;
    await expect(host.callTool({ name: 'create_request', arguments: { client, title: 'Person-bound MRTR', items: [{ name: 'Payslips' }] } })).rejects.toThrow();
    await host.close();
    expect(retry).toBeDefined();

    const replay = async (bearer: string) => {
      const headers = new Headers(retry!.headers);
      headers.set('authorization', `Bearer ${bearer}`);
      const text = await (await fetch(`${svc.url}/mcp`, { method: 'POST', headers, body: retry!.body })).text();
      captured.push(text);
      const data = text.includes('data: ')
        ? text
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6)
        : text;
      return (JSON.parse(data) as { result: { isError?: boolean; content: { text: string }[] } }).result;
    };
    const before = posts();
    const byB = await replay(tokenB.access_token);
    expect(byB.isError).toBe(true);
    expect(byB.content[0]!.text).toContain('not valid for this call (mismatch)');
    expect(posts()).toBe(before);
    const byA = await replay(tokenA.access_token);
    expect(byA.isError).toBeFalsy();
    expect(posts()).toBe(before + 1);
  });
});

describe('client metadata documents are fetched from public addresses only', () => {
  it('refuses loopback, private, link-local, unique-local, CGNAT, multicast and unspecified addresses, IPv4 and IPv6', () => {
    const refused = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '2001:db8::1',
      '2002:7f00:1::1',
    ];
    const allowed = ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'];
    expect(refused.filter((a) => !forbiddenAddress(a))).toEqual([]);
    expect(allowed.filter((a) => forbiddenAddress(a))).toEqual([]);
    expect(forbiddenAddress('127.0.0.1', true)).toBeUndefined(); // the tests' own switch
  });

  it('resolves the name first: a name that resolves to this machine is never connected to', async () => {
    const svc = await signInService(sb, { lines }); // production behaviour: no loopback switch
    const name = hostname();
    const address = await lookup(name).then(
      (a) => a.address,
      () => undefined,
    );
    const connections: string[] = [];
    const tcp = createTcpServer((socket) => {
      connections.push(socket.remoteAddress ?? '?');
      socket.destroy();
    });
    await new Promise<void>((r) => tcp.listen(0, address ?? '127.0.0.1', r));
    const port = (tcp.address() as AddressInfo).port;
    try {
      const ids = [
        ...(address ? [`https://${name}:${port}/client.json`] : []),
        `https://[::ffff:127.0.0.1]:${port}/client.json`,
        `https://localhost:${port}/client.json`,
        `http://127.0.0.1:${port}/client.json`,
      ];
      for (const clientId of ids) {
        const page = await fetch(authorizeUrl(svc, clientId));
        expect(page.status, clientId).toBe(400);
        expect(await page.text()).toContain('not known here');
      }
      expect(connections).toEqual([]);
      if (address) expect(lines.some((l) => l.includes(`resolves to ${address}`))).toBe(true);
    } finally {
      tcp.close();
    }
  });
});

describe('redirect URIs a client may register', () => {
  let svc: HttpService;
  let firmOwn: HttpService;
  beforeAll(async () => {
    svc = await signInService(sb, { lines });
    firmOwn = await signInService(sb, { lines, auth: { redirectHosts: ['agents.firm.example'] } });
  });

  it("the README's Claude, ChatGPT and VS Code callbacks, loopback on any port, and app schemes are accepted", async () => {
    const readme = readFileSync(new URL('../docs/sign-in-setup.md', import.meta.url), 'utf8')
      .split('## Deploying it for a firm')[1]!
      .split('\n## ')[0]!;
    const documented = [...readme.matchAll(/`(https:\/\/(?:claude|chatgpt|vscode)[^`]*?)`/g)].map((m) => m[1]!.replace(/\.\.\.$/, 'callback'));
    expect(documented.length).toBeGreaterThanOrEqual(4);
    const ok = await register(svc, [
      ...documented.slice(0, 6),
      'http://127.0.0.1:4000/cb',
      'cursor://anysphere.cursor-retrieval/oauth/callback',
      'com.example.app:/oauth',
    ]);
    expect(ok.status).toBe(201);
    // RFC 8252 §7.3: a loopback redirect URI matches on any port.
    const page = await fetch(authorizeUrl(svc, ok.body.client_id, { redirect_uri: 'http://127.0.0.1:5123/cb' }));
    expect(page.status).toBe(200);
    expect((await fetch(authorizeUrl(svc, ok.body.client_id, { redirect_uri: 'http://127.0.0.1:5123/other' }))).status).toBe(400);
  });

  it('refuses fragments, wildcards, plain http off loopback, other schemes, user info, too many and too long', async () => {
    const bad = [
      ['https://claude.ai/api/mcp/auth_callback#x'],
      ['https://*.claude.ai/cb'],
      ['http://claude.ai/cb'],
      ['javascript:alert(1)'],
      ['data:text/html,hi'],
      ['https://user:pw@claude.ai/cb'],
      [`https://claude.ai/${'a'.repeat(500)}`],
      Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:${4000 + i}/cb`),
      [],
      'https://claude.ai/cb',
    ];
    for (const uris of bad) {
      const res = await register(svc, uris);
      expect(res.status, JSON.stringify(uris).slice(0, 80)).toBe(400);
      expect(res.body.error).toBe('invalid_redirect_uri');
    }
  });

  it('https to a host the firm has not listed is dropped (DOCREQ_AUTH_REDIRECT_HOSTS), and refused when nothing else is left', async () => {
    const alone = await register(svc, ['https://attacker.example/cb']);
    expect(alone.status).toBe(400);
    expect(alone.body.error_description).toContain('claude.ai');
    const mixed = await register(svc, ['https://attacker.example/cb', 'https://claude.ai/api/mcp/auth_callback']);
    expect(mixed.body.redirect_uris).toEqual(['https://claude.ai/api/mcp/auth_callback']);
    expect((await fetch(authorizeUrl(svc, mixed.body.client_id, { redirect_uri: 'https://attacker.example/cb' }))).status).toBe(400);
    // A firm that lists its own host: that one, and only the listed ones.
    expect((await register(firmOwn, ['https://agents.firm.example/cb'])).status).toBe(201);
    expect((await register(firmOwn, ['https://claude.ai/api/mcp/auth_callback'])).status).toBe(400);
  });
});

describe.skipIf(!existsSync(new URL('../dist/cli.js', import.meta.url).pathname))('docreq-mcp check: sign-in', () => {
  const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
  const dir = mkdtempSync(join(suiteFolder(), 'check-'));
  const OIDC_SECRET = 'oidc-Secret-never-shown-7f3a9c2e51';
  writeFileSync(join(dir, 'key'), sb.keys.demo);
  writeFileSync(join(dir, 'oidc'), `${OIDC_SECRET}\n`);
  // Started before the tests, not while they are collected: a list of the tests (vitest list) starts nothing.
  let idp: ReturnType<typeof startDemoIdp>;
  beforeAll(() => {
    idp = startDemoIdp(['http://127.0.0.1:1/login/callback']);
  });
  afterAll(async () => (await idp).close());
  // An identity provider whose discovery document names another issuer.
  const impostor = createHttpServer((_req, res) =>
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ issuer: 'https://login.elsewhere.example', authorization_endpoint: 'x', token_endpoint: 'y', jwks_uri: 'z' })),
  );
  afterAll(() => void impostor.close());

  const run = async (env: Record<string, string>) => {
    const result = await promisify(execFile)(process.execPath, [BIN, 'check', '--transport', 'http'], {
      env: { ...childEnv(), DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory', ...env },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    captured.push(result.stdout, result.stderr);
    for (const part of [OIDC_SECRET, OIDC_SECRET.slice(0, 12), OIDC_SECRET.slice(-12)]) expect(result.stdout + result.stderr).not.toContain(part);
    return result;
  };
  const oauth = async (overrides: Record<string, string> = {}) => ({
    DOCREQ_AUTH: 'oauth',
    DOCREQ_API_KEY_FILE: join(dir, 'key'),
    DOCREQ_OIDC_ISSUER: (await idp).issuer,
    DOCREQ_OIDC_CLIENT_ID: 'docreq-mcp',
    DOCREQ_OIDC_CLIENT_SECRET_FILE: join(dir, 'oidc'),
    DOCREQ_AUTH_READERS: '@demo.example',
    DOCREQ_PUBLIC_URL: 'https://mcp.example.com',
    ...overrides,
  });

  it('without sign-in it says the key comes with each request', async () => {
    const r = await run({ DOCREQ_API_KEY: sb.keys.demo });
    expect(r.stdout).toContain('✓ sign-in: none (DOCREQ_AUTH=bearer)');
    expect(r.stdout).toContain('each request brings the firm');
    expect(r.code).toBe(0);
    const unknown = await run({ DOCREQ_API_KEY: sb.keys.demo, DOCREQ_AUTH: 'sometimes' });
    expect(unknown.stdout).toContain('✗ sign-in: DOCREQ_AUTH (or --auth) must be bearer or oauth.');
    expect(unknown.code).toBe(1);
  });

  it('with sign-in: the mode, the discovery document, the secret file (readable, not shown); exit 0', async () => {
    const r = await run(await oauth());
    expect(r.stdout).toContain('✓ sign-in: oauth');
    expect(r.stdout).toContain(`✓ identity provider ${(await idp).issuer}: discovery document reachable, its issuer matches`);
    expect(r.stdout).toContain('✓ client secret: DOCREQ_OIDC_CLIENT_SECRET_FILE is readable (not shown)');
    expect(r.stdout).toContain('register https://mcp.example.com/login/callback');
    expect(r.code).toBe(0);
  });

  it('exits 1 on an issuer that does not match, one that cannot be reached, or an unreadable secret file', async () => {
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', r));
    const wrongIssuer = await run(await oauth({ DOCREQ_OIDC_ISSUER: `http://127.0.0.1:${(impostor.address() as AddressInfo).port}` }));
    expect(wrongIssuer.stdout).toMatch(/✗ identity provider .*names another issuer/);
    expect(wrongIssuer.code).toBe(1);
    const unreachable = await run(await oauth({ DOCREQ_OIDC_ISSUER: 'http://127.0.0.1:9' }));
    expect(unreachable.stdout).toMatch(/✗ identity provider http:\/\/127\.0\.0\.1:9: its discovery document .* cannot be read/);
    expect(unreachable.code).toBe(1);
    const noSecret = await run(await oauth({ DOCREQ_OIDC_CLIENT_SECRET_FILE: join(dir, 'missing') }));
    expect(noSecret.stdout).toContain('✗ sign-in: DOCREQ_OIDC_CLIENT_SECRET_FILE names a file that cannot be read (ENOENT)');
    expect(noSecret.stdout).not.toContain('✓ client secret');
    expect(noSecret.code).toBe(1);
  });
});
