import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  classifyInboundRequest,
  isJsonContentType,
  LOG_LEVEL_META_KEY,
  PerRequestHTTPServerTransport,
  SdkError,
  SdkErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { JSONRPCMessage, JSONRPCRequest, MessageClassification, Server, Transport } from '@modelcontextprotocol/server';

/**
 * Team mode's common case, answered without the SDK's HTTP layer: a 2025-era stateless POST holding
 * one `tools/call` whose `_meta`, if any, asks for progress only (no 2026 envelope). In stateless mode
 * no log level can have been asked of its server (docs/team-mode.md) nor can the server ask the client
 * anything (no initialize, so no elicitation): what it can send before its answer is progress, and only
 * when a progress token was given. Without one, its one message back is the JSON-RPC answer, written as
 * one `application/json` body (the Streamable HTTP transport's other answer form, the one the SDK's own
 * JSON response mode writes); with one, the progress and then the answer are written as the SDK writes
 * them, as a `text/event-stream` of `message` events. The SDK's server still reads, checks and
 * dispatches the message, and words every error; only the web Request, the SDK's stream and their
 * conversions to and from Node's request are skipped (they were about a third of such a call's CPU).
 *
 * Anything else goes to the SDK's entry, which also answers every refusal: an Accept header without
 * both media types (406), a body that is not JSON (415), a missing or unsupported
 * MCP-Protocol-Version header, a request the entry would not route to its 2025 leg (the entry's own
 * classifier decides), a batch, a notification or a response. A 2026-07-28 call has a plain way of its
 * own (modernPlainCall, below): the entry's 2026 leg without its web Request and Node conversions.
 */
/**
 * A plain call's answer comes all at once, with nothing on the wire before it: a request allowed to run
 * longer than this (DOCREQ_TIMEOUT_MS + 5 s) keeps the SDK's stream, whose keep-alive comments hold
 * a proxy's idle timeout off (ours, deploy/nginx.conf, is 120 s; many load balancers' 60 s).
 */
export const PLAIN_CALL_MAX_MS = 60_000;

export function isPlainToolCall(req: IncomingMessage, body: unknown): body is JSONRPCMessage {
  const message = body as { method?: unknown; params?: unknown } | null;
  if (message?.method !== 'tools/call' || typeof message.params !== 'object' || message.params === null) return false;
  if ('_meta' in message.params && !asksProgressOnly((message.params as { _meta?: unknown })._meta)) return false;
  // Node joins a repeated header into one string (only set-cookie comes as a list).
  const headers = req.headers as Record<string, string | undefined>;
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!isJsonContentType(headers['content-type'] ?? '')) return false;
  // Without the header the SDK assumes 2025-03-26; it answers that, and a version it does not speak.
  const version = headers['mcp-protocol-version'] ?? '';
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  // The entry's classifier reads Mcp-Method and Mcp-Name only for a 2026 request, which the version excludes.
  const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: version, body });
  return route.kind === 'legacy' && route.reason === 'no-claim';
}

/** A `_meta` holding a progress token and nothing else (a 2026 call's envelope, or anything unknown, goes to the SDK). */
function asksProgressOnly(meta: unknown): boolean {
  if (typeof meta !== 'object' || meta === null) return false;
  // JSON gives own properties only: a token read here is the object's one key, or it is not there.
  const token = (meta as { progressToken?: unknown }).progressToken;
  return Object.keys(meta).length === 1 && (typeof token === 'string' || typeof token === 'number');
}

/** The SDK's event-stream answer: its headers, and each message as one `message` event. */
const STREAM_HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive' };
const event = (message: JSONRPCMessage) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * Hands the call to `server` over a transport of one message each way (progress before the answer, as
 * events) and writes its answer. Nothing
 * is written when the server is closed first: the client went away, or the request's deadline
 * answered 504 (both close the request's server, and so this transport, before anything else runs).
 */
export async function answerPlainCall(server: Server, message: JSONRPCMessage, res: ServerResponse): Promise<void> {
  let streaming = false;
  const answer = await new Promise<JSONRPCMessage | undefined>((resolve, reject) => {
    const transport: Transport = {
      start: () => Promise.resolve(),
      // Progress (the only message a plain call can get before its answer: see isPlainToolCall) starts the event stream.
      send: (out) => {
        if ('result' in out || 'error' in out) resolve(out);
        else if (!res.writableEnded && (streaming || !res.headersSent)) {
          if (!streaming) res.writeHead(200, STREAM_HEADERS);
          streaming = true;
          res.write(event(out));
        }
        return Promise.resolve();
      },
      close: () => {
        resolve(undefined);
        transport.onclose?.();
        return Promise.resolve();
      },
    };
    server
      .connect(transport)
      .then(() => transport.onmessage?.(message))
      .catch(reject);
  });
  if (answer === undefined) return;
  if (streaming) return void (res.writableEnded || res.end(event(answer)));
  // No Connection header of its own: while the service drains, Node's says close (the SDK's SSE answers name keep-alive).
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(answer));
}

/** The one 2026 revision a plain call is answered in: the one the SDK's entry serves. */
export const MODERN_REVISION = '2026-07-28';

/**
 * A 2026-07-28 stateless POST holding one `tools/call` that the SDK's entry would serve on its modern
 * leg without refusing anything, and whose answer can only be one JSON body: its classification, or
 * undefined for the entry. What the entry checks before it serves such a call, checked here the same
 * way or more strictly: a JSON Content-Type (else 415); the body's envelope (validated by the entry's
 * own classifier, which also compares the MCP-Protocol-Version and Mcp-Method headers with it); the
 * required MCP-Protocol-Version, Mcp-Method and Mcp-Name headers (each present and, here, naming
 * exactly what the body does: a header with spaces around it or Base64-encoded, which the entry
 * decodes, is left to the entry). The entry's other gates do not apply to our server: tools/call
 * requires no client capability, and its x-mcp-header and scope checks are McpServer's (ours is a
 * Server). Nothing can be written before such a call's answer unless its envelope asks for progress
 * or a log level (the SDK then streams): those go to the entry, which streams them.
 */
export function modernPlainCall(req: IncomingMessage, body: unknown): MessageClassification | undefined {
  const message = body as { method?: unknown; params?: { name?: unknown; _meta?: unknown } } | null;
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
  const headers = req.headers as Record<string, string | undefined>;
  if (headers['mcp-protocol-version'] !== MODERN_REVISION || headers['mcp-method'] !== 'tools/call') return undefined;
  if (headers['mcp-name'] !== message.params.name || !isJsonContentType(headers['content-type'] ?? '')) return undefined;
  const meta = message.params._meta;
  if (typeof meta !== 'object' || meta === null || 'progressToken' in meta || LOG_LEVEL_META_KEY in meta) return undefined;
  const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: MODERN_REVISION, mcpMethodHeader: 'tools/call', body });
  // Given that revision as its header, the classifier calls a request modern with that revision, or refuses it.
  if (route.kind !== 'modern' || route.messageKind !== 'request') return undefined;
  return route.classification;
}

/**
 * Serves a modernPlainCall on `server` (built to speak the revision: createServer's modernRevision)
 * over the SDK's own per-request transport, the one its entry serves such a call on, connected as the
 * entry connects it (its classification binds the server to the revision), and writes the Response it
 * gives: its status (200, or the entry's status for an error its server answers before dispatch), its
 * headers and its body, whole, with its length (the entry's adapter writes it chunked). Nothing is
 * written when the server is closed first (as answerPlainCall).
 */
export async function answerModernCall(server: Server, classification: MessageClassification, message: JSONRPCRequest, res: ServerResponse): Promise<void> {
  const transport = new PerRequestHTTPServerTransport({ classification });
  let response: Response;
  try {
    await server.connect(transport);
    response = await transport.handleMessage(message);
  } catch (error) {
    if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) return;
    throw error;
  }
  // A stream (nothing a plain call asks for starts one: see modernPlainCall) would be written whole too.
  const text = await response.text();
  if (res.writableEnded) return;
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
