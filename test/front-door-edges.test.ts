import { once } from 'node:events';
import { connect as netConnect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startHttpService, type HttpService } from '../src/transport/http.js';
import { captured } from './support/key-scan.js';
import { FAST_API, sandbox } from './support/sandbox.js';

/**
 * Team mode's front door against clients that misbehave at the socket, on real sockets in front of the
 * sandbox: a request with two Host headers is refused, a connection that never sends a byte or never
 * ends its headers is closed, and a person whose key is refused is told to check the Authorization
 * header.
 */

const sb = await sandbox();

describe('team mode at the front door', () => {
  let svc: HttpService;
  beforeAll(async () => {
    const config = loadConfig({ confirmSend: 'never' }, { DOCREQ_BASE_URL: sb.url });
    svc = await startHttpService({
      host: '127.0.0.1',
      port: 0,
      allowedHosts: ['localhost', '127.0.0.1'],
      allowedOrigins: [],
      rateLimit: 1_000,
      config,
      baseUrl: sb.url,
      api: FAST_API,
      write: (line) => void captured.push(line),
      timeouts: { firstByteMs: 300, headersMs: 300, requestMs: 600, keepAliveMs: 300, checkMs: 50 },
    });
  });
  afterAll(() => svc.close(500));

  /** A raw connection: what it was answered, and whether the server closed it. */
  function socket(write?: (s: ReturnType<typeof netConnect>) => void) {
    const s = netConnect(svc.port, '127.0.0.1');
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('error', () => undefined);
    if (write) s.on('connect', () => write(s));
    const closed = once(s, 'close').then(() => got);
    return { s, closed };
  }

  it('refuses a request with two Host headers, even when the first is allowed', async () => {
    const { s, closed } = socket((c) => c.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'));
    const answer = await closed;
    s.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('more than one Host header');
    // One Host header: served.
    const ok = socket((c) => c.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'));
    expect(await ok.closed).toMatch(/^HTTP\/1\.1 200/);
  });

  it('closes a connection that never sends a byte, and one whose headers never end', async () => {
    const silent = socket();
    const slow = socket((c) => c.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
    // Without the bounds these connections stay open forever, and the test times out.
    expect(await silent.closed).toBe('');
    // Headers that never end: a 408, or closed by the first-byte bound, whichever comes first.
    expect(await slow.closed).toMatch(/^(HTTP\/1\.1 408|)/);
  });

  it('tells a person whose key is refused to check the Authorization header, not DOCREQ_API_KEY', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${sb.keys.revoked}` } },
    });
    const client = new Client({ name: 'edges', version: '1' });
    await client.connect(transport);
    const result = (await client.callTool({ name: 'list_clients', arguments: {} })) as CallToolResult;
    await client.close();
    const text = JSON.stringify(result.content);
    captured.push(text);
    expect(result.isError).toBe(true);
    expect(text).toContain('Authorization: Bearer');
    expect(text).not.toContain('DOCREQ_API_KEY');
  });
});
