import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthContext } from './context.js';
import { digest, random } from './crypto.js';
import { json, readFormBody } from './oauth-http.js';
import { fetchPublicJson } from './outbound.js';
import { allowedRedirectUris } from './redirect-uris.js';
import { MINUTE, type ClientRecord } from './types.js';

/** The apps that may ask for sign-in: registered (RFC 7591) or named by a Client ID Metadata Document's URL. */

const CLIENT_MS = 180 * 24 * 60 * MINUTE;

/** RFC 7591 §2: each client metadata field this server reads, when present, has its type; the first that has not. */
function metadataTypeProblem(meta: Record<string, unknown>): string | undefined {
  const strings = ['client_name', 'token_endpoint_auth_method', 'scope', 'client_uri', 'logo_uri'];
  const lists = ['grant_types', 'response_types'];
  for (const name of strings) if (name in meta && typeof meta[name] !== 'string') return `${name} must be a string.`;
  for (const name of lists)
    if (name in meta && !(Array.isArray(meta[name]) && (meta[name] as unknown[]).every((v) => typeof v === 'string')))
      return `${name} must be an array of strings.`;
  return undefined;
}

export function clients(ctx: AuthContext) {
  const { store, log, redirectHosts, options } = ctx;

  async function metadataDocument(clientId: string): Promise<ClientRecord | undefined> {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      return undefined;
    }
    // https, a path, no fragment or credentials; the address is checked where the socket connects (./outbound.ts).
    if (url.hash || url.username || url.password || url.pathname === '/') return undefined;
    const cached = await store.get(`cimd:${digest(clientId)}`);
    if (cached) return JSON.parse(cached) as ClientRecord;
    const why = (reason: string) => log(`docreq-mcp info: client metadata document ${url.origin}${url.pathname.slice(0, 100)} not used: ${reason}`);
    const text = await fetchPublicJson(url, { allowLoopback: options.unsafeAllowLoopbackClientDocuments === true, maxBytes: 20_000, timeoutMs: 5_000 }, why);
    if (text === undefined) return undefined;
    try {
      const doc = JSON.parse(text) as { client_id?: unknown; redirect_uris?: unknown; client_name?: unknown };
      if (doc.client_id !== clientId) return void why('its client_id is not its own URL');
      const uris = allowedRedirectUris(doc.redirect_uris, redirectHosts);
      if (!uris.ok) return void why(uris.why);
      const record: ClientRecord = { clientName: typeof doc.client_name === 'string' ? doc.client_name.slice(0, 100) : undefined, redirectUris: uris.uris };
      await store.set(`cimd:${digest(clientId)}`, JSON.stringify(record), 5 * MINUTE);
      return record;
    } catch {
      return undefined;
    }
  }

  return {
    /** A client by id: a registered one, or the metadata document its URL names (fetched, checked, cached briefly). */
    async findClient(clientId: string): Promise<ClientRecord | undefined> {
      if (/^https?:\/\//i.test(clientId)) return metadataDocument(clientId);
      const stored = await store.get(`client:${digest(clientId)}`);
      return stored ? (JSON.parse(stored) as ClientRecord) : undefined;
    },

    /** POST /register (RFC 7591): a public client with its redirect URIs. */
    async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const body = await readFormBody(req);
      if (body.kind !== 'json') {
        const why = body.kind === 'bad' ? body.why : 'Send the client metadata as a JSON object (Content-Type: application/json).';
        return json(res, body.kind === 'bad' ? body.status : 400, { error: 'invalid_client_metadata', error_description: why });
      }
      const meta = body.value;
      const wrongType = metadataTypeProblem(meta);
      if (wrongType) return json(res, 400, { error: 'invalid_client_metadata', error_description: wrongType });
      const uris = allowedRedirectUris(meta.redirect_uris, redirectHosts);
      if (!uris.ok) return json(res, 400, { error: 'invalid_redirect_uri', error_description: uris.why });
      if ((await store.incr(`registrations:${Math.floor(Date.now() / MINUTE)}`, 2 * MINUTE)) > 600) {
        return json(
          res,
          429,
          { error: 'temporarily_unavailable', error_description: 'Too many registrations; try again in a minute.' },
          { 'Retry-After': '60' },
        );
      }
      if (uris.dropped.length)
        log(
          `docreq-mcp info: a registration's redirect URIs to ${[...new Set(uris.dropped)].slice(0, 5).join(', ')} were dropped: not in DOCREQ_AUTH_REDIRECT_HOSTS`,
        );
      const clientId = `dcr_${random()}`;
      const record: ClientRecord = { clientName: typeof meta.client_name === 'string' ? meta.client_name.slice(0, 100) : undefined, redirectUris: uris.uris };
      await store.set(`client:${digest(clientId)}`, JSON.stringify(record), CLIENT_MS);
      json(res, 201, {
        client_id: clientId,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        redirect_uris: record.redirectUris,
        ...(record.clientName ? { client_name: record.clientName } : {}),
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
    },
  };
}

export type Clients = ReturnType<typeof clients>;
