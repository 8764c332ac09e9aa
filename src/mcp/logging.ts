import { AsyncLocalStorage } from 'node:async_hooks';
import { LOG_LEVEL_META_KEY, type Server } from '@modelcontextprotocol/server';
import type { LoggingLevel, LoggingMessageNotificationParams, ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';

const LOG_LEVEL = { error: 'error', warn: 'warning', info: 'info', debug: 'debug' } as const;
const SEVERITY: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const passes = (level: LoggingLevel, threshold: LoggingLevel | undefined) => {
  const at = threshold === undefined ? -1 : SEVERITY.indexOf(threshold);
  return at >= 0 && SEVERITY.indexOf(level) >= at;
};
/** The tool call being served, so a log line written during it goes to its client only if that client asked. */
const callLog = new AsyncLocalStorage<{
  server: Server;
  threshold(): LoggingLevel | undefined;
  send(params: LoggingMessageNotificationParams): Promise<void>;
}>();

/**
 * MCP log notifications go only to a client that asked (docs/operating.md): a 2025-11-25 session with
 * logging/setLevel, a 2026-07-28 request with the log level in its envelope; stderr keeps every line.
 * Some clients fail on a notification they did not ask for (the AI SDK's: "Unsupported message type").
 * Over stateless HTTP a 2025 client's setLevel reaches only the server of that one request.
 */
export function mcpLogging(server: Server, logger: Logger, modern: () => boolean) {
  let asked: LoggingLevel | undefined;
  server.setRequestHandler('logging/setLevel', (request) => {
    asked = request.params.level;
    return {};
  });
  const removeSink = logger.addSink((level, message) => {
    const params = { level: LOG_LEVEL[level], logger: 'docreq-mcp', data: message };
    const call = callLog.getStore();
    if (call && call.server !== server) return; // another server's call (one logger shared by several)
    if (call) {
      if (passes(params.level, call.threshold())) void call.send(params).catch(() => undefined);
    } else if (!modern() && passes(params.level, asked) && server.transport) {
      void server.sendLoggingMessage(params).catch(() => undefined);
    }
  });
  return {
    removeSink,
    /** Runs one tool call, its log lines going to its own client at the level that client asked for. */
    during<T>(ctx: ServerContext, work: () => Promise<T>): Promise<T> {
      const envelopeLevel = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined;
      const threshold = () => (modern() ? envelopeLevel : asked);
      const send = (params: LoggingMessageNotificationParams) => ctx.mcpReq.notify({ method: 'notifications/message', params });
      return callLog.run({ server, threshold, send }, work);
    },
  };
}
