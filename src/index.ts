export { createServer, type ServerOptions } from './mcp/server.js';
export { readyTemplates } from './templates/load.js';
export { TOOLS, INSTRUCTIONS } from './tools/index.js';
export { loadConfig, type Config } from './config.js';
export { SETTINGS, type FlagValues } from './settings.js';
export { settingsHelp, settingsTable, plainHelp } from './settings-docs.js';
export {
  DocReqApi,
  ApiState,
  describeProxy,
  type ApiClientOptions,
  type CallOptions,
  type CreateOptions,
  type CreateOutcome,
  type ListResult,
} from './api/client.js';
export * from './api/errors.js';
export type { Client, CreatePayload, RequestRecord } from './api/records.js';
export { Sandbox, startSandbox, type Fault, type SandboxOptions } from './sandbox/service.js';
export { SANDBOX_KEYS } from './sandbox/seed.js';
export { createLogger, type Logger } from './log.js';
export { VERSION } from './version.js';
export { openStore, defaultStateDir, FileStore, MemoryStore, RedisStore, StoreUnavailableError, type SendStore, type StoreSettings } from './store/index.js';
export { SendLedger } from './send/ledger.js';
export { Confirmations } from './send/token.js';
