import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { CARD_SCHEMA, CARD_TYPE, CATALOG_PATHS, CATALOG_TYPE, PROTOCOL_VERSIONS } from '../src/transport/server-card.js';
import type { HttpService } from '../src/transport/http.js';
import { captured } from './support/key-scan.js';
import { ALL_KEYS, sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';
import { signInService } from './support/sign-in.js';

/**
 * Team mode's Server Card (SEP-2127) and the AI Catalog pointing at it, read over HTTP from the real
 * service: the card checked against the extension's own JSON Schema (test/fixtures, with its source),
 * the catalogue member by member as the extension's discovery document lists them, and both against
 * what the server says once connected.
 */

const root = new URL('..', import.meta.url);
const schema = JSON.parse(readFileSync(new URL('test/fixtures/server-card.schema.json', root), 'utf8')) as Record<string, unknown>;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
ajv.addSchema(schema, 'server-card.schema.json');
const validateCard = ajv.getSchema('server-card.schema.json#/$defs/ServerCard')!;
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { mcpName: string; version: string };
const registryEntry = JSON.parse(readFileSync(new URL('server.json', root), 'utf8')) as { name: string; title: string; description: string };

const TOKEN_SECRET = 'card-test-secret-0123456789abcdef0123456789';
const sb = await sandbox();
const svc = await teamService(sb, {
  allowedHosts: ['127.0.0.1', 'mcp.example.com'],
  config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_TOKEN_SECRET: TOKEN_SECRET }),
});

interface Card {
  $schema: string;
  name: string;
  title: string;
  description: string;
  version: string;
  remotes: { type: string; url: string; headers?: { name: string; value?: string; isSecret?: boolean }[]; supportedProtocolVersions: string[] }[];
  _meta: Record<string, unknown>;
}

function schemaErrors(document: unknown): string {
  return validateCard(document) ? '' : ajv.errorsText(validateCard.errors);
}

async function getCard(service: HttpService = svc): Promise<Card> {
  const res = await fetch(`${service.url}/mcp/server-card`, { headers: { Accept: CARD_TYPE } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(CARD_TYPE);
  const text = await res.text();
  captured.push(text);
  return JSON.parse(text) as Card;
}

/** A raw request with any headers (fetch cannot set Host). */
function raw(url: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, method: 'GET', path, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the Server Card beside /mcp', () => {
  it("is valid against the extension's JSON Schema (and the validator refuses a broken one)", async () => {
    const card = await getCard();
    expect(schemaErrors(card)).toBe('');
    expect(card.$schema).toBe(CARD_SCHEMA);
    // The validator is live: what the schema requires, missing or malformed, is refused.
    const { name: _name, ...nameless } = card;
    expect(schemaErrors(nameless)).toMatch(/name/);
    expect(schemaErrors({ ...card, $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json' })).toMatch(/schema/);
    expect(schemaErrors({ ...card, remotes: [{ type: 'websocket', url: 'ws://x' }] })).not.toBe('');
  });

  it('names what the registry entry and the package name, and describes itself in at most 100 characters', async () => {
    const card = await getCard();
    expect(card.name).toBe(pkg.mcpName);
    expect(card.name).toBe(registryEntry.name);
    expect(card.title).toBe(registryEntry.title);
    expect(card.description).toBe(registryEntry.description);
    expect(card.version).toBe(pkg.version);
  });

  it('says what the server says once connected: identity, endpoint, protocol versions, tools', async () => {
    const card = await getCard();
    const [remote] = card.remotes;
    expect(card.remotes).toHaveLength(1);
    expect(remote!.type).toBe('streamable-http');
    expect(remote!.url).toBe(`${svc.url}/mcp`);
    const headers = { Authorization: `Bearer ${sb.keys.demo}` };

    // 2025-11-25 (initialize): the server's name and version, and the tools it lists with their titles.
    const client = new Client({ name: 'card-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(remote!.url), { requestInit: { headers } }));
    expect(client.getServerVersion()).toMatchObject({ title: card.title, version: card.version });
    const listed = (await client.listTools()).tools.map((t) => ({ name: t.name, title: t.title }));
    await client.close();
    expect(card._meta['io.github.docreq-mcp/tools']).toEqual(listed);

    // 2026-07-28 (server/discover): every version it reports is on the card.
    const modern = new ModernClient({ name: 'card-test', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new ModernTransport(new URL(remote!.url), { requestInit: { headers } }));
    const discovered = await modern.discover();
    await modern.close();
    expect(discovered.supportedVersions.length).toBeGreaterThan(0);
    for (const version of discovered.supportedVersions) expect(remote!.supportedProtocolVersions).toContain(version);
    expect(remote!.supportedProtocolVersions).toEqual([...PROTOCOL_VERSIONS]);

    // Every initialize-era version on the card is one the endpoint answers initialize with.
    for (const version of remote!.supportedProtocolVersions.filter((v) => v < '2026')) {
      const res = await fetch(remote!.url, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'card-test', version: '1' } },
        }),
      });
      const text = await res.text();
      const data = text.includes('data: ')
        ? text
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6)
        : text;
      expect((JSON.parse(data) as { result?: { protocolVersion?: string } }).result?.protocolVersion, version).toBe(version);
    }
  });

  it('names the bearer header a request needs, never a key, the token secret or the service behind it', async () => {
    const res = await fetch(`${svc.url}/mcp/server-card`);
    const text = await res.text();
    const card = JSON.parse(text) as Card;
    expect(card.remotes[0]!.headers).toEqual([expect.objectContaining({ name: 'Authorization', value: 'Bearer {api_key}', isSecret: true, isRequired: true })]);
    expect(card._meta['io.github.docreq-mcp/auth']).toEqual({ type: 'bearer', header: 'Authorization' });
    for (const key of ALL_KEYS) expect(text).not.toContain(key);
    for (const secret of [TOKEN_SECRET, sb.url, new URL(sb.url).host]) expect(text).not.toContain(secret);
  });

  it('is public for any origin, cacheable, and revalidated with its ETag', async () => {
    const res = await fetch(`${svc.url}/mcp/server-card`, { headers: { Origin: 'https://elsewhere.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('ETag');
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    await res.text();
    const again = await fetch(`${svc.url}/mcp/server-card`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const preflight = await fetch(`${svc.url}/mcp/server-card`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
    expect((await fetch(`${svc.url}/mcp/server-card`, { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it('behind a proxy: the public Host and the scheme it terminated; a Host not allowed gets 403', async () => {
    const behind = await raw(svc.url, '/mcp/server-card', { Host: 'mcp.example.com', 'X-Forwarded-Proto': 'https' });
    expect(behind.status).toBe(200);
    expect((JSON.parse(behind.body) as Card).remotes[0]!.url).toBe('https://mcp.example.com/mcp');
    const listing = await raw(svc.url, '/.well-known/ai-catalog.json', { Host: 'mcp.example.com', 'X-Forwarded-Proto': 'https' });
    expect(JSON.parse(listing.body)).toEqual({
      specVersion: '1.0',
      entries: [{ identifier: 'urn:air:mcp.example.com:mcp:docreq-mcp', type: CARD_TYPE, url: 'https://mcp.example.com/mcp/server-card' }],
    });
    expect((await raw(svc.url, '/mcp/server-card', { Host: 'evil.example' })).status).toBe(403);
  });

  it('read-only: the tools that send are not listed', async () => {
    const readOnly = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_READ_ONLY: 'true' }) });
    const card = await getCard(readOnly);
    expect(schemaErrors(card)).toBe('');
    expect((card._meta['io.github.docreq-mcp/tools'] as { name: string }[]).map((t) => t.name)).toEqual(['list_clients', 'list_requests', 'list_templates']);
  });

  it('with sign-in: no key header; the protected-resource metadata hosts start from', async () => {
    const signedIn = await signInService(sb);
    const card = await getCard(signedIn);
    expect(schemaErrors(card)).toBe('');
    expect(card.remotes[0]!.headers).toBeUndefined();
    const auth = card._meta['io.github.docreq-mcp/auth'] as { type: string; protectedResourceMetadata: string };
    expect(auth).toEqual({ type: 'oauth', protectedResourceMetadata: `${signedIn.url}/.well-known/oauth-protected-resource/mcp` });
    const metadata = (await (await fetch(auth.protectedResourceMetadata)).json()) as { resource: string };
    expect(metadata.resource).toBe(card.remotes[0]!.url);
  });
});

describe('the AI Catalog', () => {
  it.each(CATALOG_PATHS)('%s lists one MCP Server Card entry whose url serves the card', async (path) => {
    const res = await fetch(`${svc.url}${path}`, { headers: { Origin: 'https://elsewhere.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(CATALOG_TYPE);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const listing = (await res.json()) as { specVersion: unknown; entries: unknown };
    // The members the extension's discovery document requires of a catalogue and of a card entry.
    expect(listing.specVersion).toMatch(/^\d+\.\d+$/);
    expect(Array.isArray(listing.entries)).toBe(true);
    const entries = listing.entries as Record<string, unknown>[];
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(entry!.identifier).toMatch(/^urn:air:[^:\s]+:mcp:docreq-mcp$/);
    expect(entry!.type).toBe(CARD_TYPE);
    expect('data' in entry!).toBe(false);
    expect(entry!.url).toBe(`${svc.url}/mcp/server-card`);
    const card = await (await fetch(String(entry!.url), { headers: { Accept: CARD_TYPE } })).json();
    expect(schemaErrors(card)).toBe('');
    expect(card).toEqual(await getCard());
  });
});
