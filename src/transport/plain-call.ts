import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyInboundRequest, isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, Server, Transport } from '@modelcontextprotocol/server';

/**
 * Team mode's common case, answered without the SDK's HTTP layer: a 2025-era stateless POST holding
 * one `tools/call` that can receive nothing before its answer. Such a call asked for no progress (it
 * has no `_meta`, so no progress token and no 2026 envelope), and in stateless mode no log level can
 * have been asked of its server (docs/team-mode.md) nor can the server ask the client anything (no
 * initialize, so no elicitation). Its one message back is therefore the JSON-RPC answer, which is
 * written as one `application/json` body, the Streamable HTTP transport's other answer form and the
 * one the SDK's own JSON response mode writes. The SDK's server still reads, checks and dispatches
 * the message, and words every error; only the web Request, the SSE stream and their conversions to
 * and from Node's request are skipped (they were about a third of such a call's CPU).
 *
 * Anything else goes to the SDK's entry, which also answers every refusal: an Accept header without
 * both media types (406), a body that is not JSON (415), a missing or unsupported
 * MCP-Protocol-Version header, a request the entry would not route to its 2025 leg (the entry's own
 * classifier decides), a batch, a notification or a response.
 */
/**
 * A plain call's answer comes all at once, with nothing on the wire before it: a request allowed to run
 * longer than this (DOCREQ_TIMEOUT_MS + 5 s) keeps the SDK's stream, whose keep-alive comments hold
 * a proxy's idle timeout off (ours, deploy/nginx.conf, is 120 s; many load balancers' 60 s).
 */
export const PLAIN_CALL_MAX_MS = 60_000;

export function isPlainToolCall(req: IncomingMessage, body: unknown): body is JSONRPCMessage {
  const message = body as { method?: unknown; params?: unknown } | null;
  if (message?.method !== 'tools/call' || typeof message.params !== 'object' || message.params === null || '_meta' in message.params) return false;
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

/**
 * Hands the call to `server` over a transport of one message each way and writes its answer. Nothing
 * is written when the server is closed first: the client went away, or the request's deadline
 * answered 504 (both close the request's server, and so this transport, before anything else runs).
 */
export async function answerPlainCall(server: Server, message: JSONRPCMessage, res: ServerResponse): Promise<void> {
  const answer = await new Promise<JSONRPCMessage | undefined>((resolve, reject) => {
    const transport: Transport = {
      start: () => Promise.resolve(),
      // Only the answer is written; anything else sent before it would be dropped, as the SDK's JSON
      // response mode drops it (none can be: see isPlainToolCall).
      send: (out) => {
        if ('result' in out || 'error' in out) resolve(out);
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
  // No Connection header of its own: while the service drains, Node's says close (the SDK's SSE answers name keep-alive).
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(answer));
}
