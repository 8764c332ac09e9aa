import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { MODERN_REVISION } from './plain-call.js';
import { TOOLS } from '../tools/index.js';
import { APP_ONLY_TOOLS } from '../ui/apps.js';
import { VERSION } from '../version.js';

/**
 * Team mode's discovery documents (SEP-2127, the MCP Server Card extension): the Server Card beside the
 * MCP endpoint (`GET /mcp/server-card`, the location the extension reserves), and an AI Catalog that
 * points at it, at `/.well-known/ai-catalog.json` and at `/.well-known/mcp/catalog.json` (where the
 * extension's earlier revision put it, and where some registries still look). Both are public by
 * design: built from what the server already knows (its name, version, endpoint, protocol versions,
 * how a request is authorised, the tools it offers), never a key or any other secret.
 */

/** The Server Card schema every card names (the extension's `v1` family). */
export const CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
export const CARD_TYPE = 'application/mcp-server-card+json';
export const CATALOG_TYPE = 'application/ai-catalog+json';
const CARD_SUFFIX = '/server-card';
export const CATALOG_PATHS: readonly string[] = ['/.well-known/ai-catalog.json', '/.well-known/mcp/catalog.json'];

/** The registry name (package.json mcpName, server.json name), the title hosts show, and the card's short description (at most 100 characters). */
const SERVER_NAME = 'io.github.docreq-mcp/docreq-mcp';
const SERVER_TITLE = 'Document Requests';
const SERVER_DESCRIPTION = "A firm's Document Request Service: list clients and requests, send checklist requests safely.";

/**
 * The protocol revisions this endpoint answers: the modern one the SDK v2 entry serves (2026-07-28:
 * no initialize; the SDK does not export its list of them) and the initialize-era ones it negotiates.
 */
export const PROTOCOL_VERSIONS: readonly string[] = [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS];

/** Vendor data in the card's `_meta`, under our own reverse-DNS prefix. */
const META = 'io.github.docreq-mcp';

export interface DiscoveryOptions {
  /** Where MCP is served, e.g. /mcp. */
  mcpPath: string;
  /** Read-only mode: the tools that send are not offered, so not listed. */
  readOnly: boolean;
  /** Staff sign-in (--auth oauth): the public MCP resource and its protected-resource metadata. */
  signIn?: { resource: string; resourceMetadataUrl: string };
}

/** The origin hosts reach: sign-in's public address, else this request's Host (already checked) with the scheme a proxy says it terminated. */
function publicOrigin(req: IncomingMessage, options: DiscoveryOptions): string {
  if (options.signIn) return options.signIn.resource.slice(0, options.signIn.resource.length - options.mcpPath.length);
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]!
    .trim()
    .toLowerCase();
  const scheme = forwarded === 'https' || forwarded === 'http' ? forwarded : 'http';
  return `${scheme}://${req.headers.host ?? 'localhost'}`;
}

function serverCard(origin: string, options: DiscoveryOptions): Record<string, unknown> {
  // The tools a model is offered: not the one only the preview page calls.
  const tools = TOOLS.filter((t) => !(options.readOnly && !t.annotations.readOnlyHint) && !APP_ONLY_TOOLS.includes(t.name)).map((t) => ({
    name: t.name,
    title: t.title,
  }));
  // Bearer: each request carries the firm's key; the card names the header, never a value. Sign-in: the
  // host learns how from the protected-resource metadata (and the 401 that names it), so no header.
  const headers = options.signIn
    ? {}
    : {
        headers: [
          {
            name: 'Authorization',
            description: "The firm's Document Request Service API key, sent with every request.",
            isRequired: true,
            isSecret: true,
            value: 'Bearer {api_key}',
            variables: { api_key: { description: "The firm's Document Request Service API key", isRequired: true, isSecret: true } },
          },
        ],
      };
  const auth = options.signIn ? { type: 'oauth', protectedResourceMetadata: options.signIn.resourceMetadataUrl } : { type: 'bearer', header: 'Authorization' };
  return {
    $schema: CARD_SCHEMA,
    name: SERVER_NAME,
    title: SERVER_TITLE,
    description: SERVER_DESCRIPTION,
    version: VERSION,
    remotes: [{ type: 'streamable-http', url: `${origin}${options.mcpPath}`, ...headers, supportedProtocolVersions: [...PROTOCOL_VERSIONS] }],
    // Advisory, as the whole card is: tools/list on a connection is what a host acts on (a reader's session offers fewer).
    _meta: { [`${META}/auth`]: auth, [`${META}/tools`]: tools },
  };
}

function catalog(origin: string, options: DiscoveryOptions): Record<string, unknown> {
  // urn:air:{publisher}:{namespace}:{name}: the publisher is the domain hosts reach, the name the card name's last segment.
  const publisher = new URL(origin).hostname.replace(/^\[|\]$/g, '').replace(/:/g, '%3A');
  const name = SERVER_NAME.split('/')[1]!;
  return {
    specVersion: '1.0',
    entries: [{ identifier: `urn:air:${publisher}:mcp:${name}`, type: CARD_TYPE, url: `${origin}${options.mcpPath}${CARD_SUFFIX}` }],
  };
}

/** What browsers may read of these public documents, from any origin. */
const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD',
  'Access-Control-Allow-Headers': 'Content-Type, If-None-Match',
  'Access-Control-Expose-Headers': 'ETag',
};

/** Serves the card or the catalogue when `path` is one of theirs; false otherwise. */
export function serveDiscovery(req: IncomingMessage, res: ServerResponse, path: string, options: DiscoveryOptions): boolean {
  const isCard = path === `${options.mcpPath}${CARD_SUFFIX}`;
  if (!isCard && !CATALOG_PATHS.includes(path)) return false;
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { ...CORS, 'Access-Control-Max-Age': '600' });
    res.end();
    return true;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...CORS, Allow: 'GET, HEAD, OPTIONS', 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: 'Method not allowed: this document is read with GET.' }));
    return true;
  }
  const origin = publicOrigin(req, options);
  const body = JSON.stringify(isCard ? serverCard(origin, options) : catalog(origin, options), null, 2);
  // Strong validator: the document's own bytes (it differs by the address it names, so by Host).
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  const headers = { ...CORS, 'Cache-Control': 'public, max-age=3600', ETag: etag, Vary: 'Host, X-Forwarded-Proto', 'X-Content-Type-Options': 'nosniff' };
  const match = String(req.headers['if-none-match'] ?? '')
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''));
  if (match.includes(etag) || match.includes('*')) {
    res.writeHead(304, headers);
    res.end();
    return true;
  }
  res.writeHead(200, { ...headers, 'Content-Type': isCard ? CARD_TYPE : CATALOG_TYPE });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
