export { createServer, TOOLS, INSTRUCTIONS, type ServerOptions } from './server.js';
export { loadConfig, SETTINGS, type Config, type FlagValues } from './config.js';
export { DocReqApi, type ApiClientOptions, type CreatePayload } from './api/client.js';
export * from './api/errors.js';
export type { Client, RequestRecord } from './api/records.js';
export { Sandbox, startSandbox, type Fault, type SandboxOptions } from './sandbox/server.js';
export { SANDBOX_KEYS } from './sandbox/seed.js';
export { createLogger, type Logger } from './log.js';
export { VERSION } from './version.js';
