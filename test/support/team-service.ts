// Team mode (the HTTP service) on loopback in front of the sandbox, as the tests run it.
import { afterAll } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Sandbox } from '../../src/sandbox/service.js';
import { startHttpService, type HttpService, type HttpServiceOptions } from '../../src/transport/http.js';
import { captured } from './key-scan.js';
import { FAST_API } from './sandbox.js';

/** Team mode on 127.0.0.1 (a free port) in front of the sandbox, as the tests run it; closed after the file. */
export async function teamService(sb: Sandbox, overrides: Partial<HttpServiceOptions> = {}): Promise<HttpService> {
  const svc = await startHttpService({
    host: '127.0.0.1',
    port: 0,
    allowedHosts: ['127.0.0.1'],
    allowedOrigins: [],
    rateLimit: 1_000,
    config: loadConfig({}, { DOCREQ_BASE_URL: sb.url }),
    baseUrl: sb.url,
    api: FAST_API,
    write: (line) => void captured.push(line),
    ...overrides,
  });
  afterAll(() => svc.close(1_000));
  return svc;
}
