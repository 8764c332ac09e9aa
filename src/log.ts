import type { LogLevel } from './settings.js';
import { redactor } from './text/redact.js';

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

type LogSink = (level: LogLevel, message: string) => void;

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  /** Adds a destination (e.g. MCP logging once a client is connected); returns its remover. */
  addSink(sink: LogSink): () => void;
}

/**
 * Logs go to stderr (never stdout, which belongs to the protocol) and to any added sink. Every
 * secret given is replaced by "[redacted]" (src/text/redact.ts) before a line leaves, whoever wrote it.
 */
export function createLogger(level: LogLevel, secrets: readonly string[] = [], stderr: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const sinks = new Set<LogSink>();
  // Made on the first line written: most servers of team mode (one per request) write none.
  let redact: ((text: string) => string) | undefined;
  const emit = (at: LogLevel, message: string) => {
    if (RANK[at] > RANK[level]) return;
    const clean = (redact ??= redactor(secrets))(message);
    stderr(`docreq-mcp ${at}: ${clean}\n`);
    for (const sink of sinks) {
      try {
        sink(at, clean);
      } catch {
        // a failing sink must not take logging (or the call that logged) down
      }
    }
  };
  return {
    error: (m) => emit('error', m),
    warn: (m) => emit('warn', m),
    info: (m) => emit('info', m),
    debug: (m) => emit('debug', m),
    addSink(sink) {
      sinks.add(sink);
      return () => sinks.delete(sink);
    },
  };
}

export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  addSink: () => () => undefined,
};
