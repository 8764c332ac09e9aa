import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

/**
 * Team mode over real HTTP on loopback serves both eras from one endpoint: a 2025-11-25
 * client (SDK v1, initialize) and a 2026-07-28 client (SDK v2, no initialize). The 2026 standard
 * headers are checked against the body, and list results carry the cache fields.
 */
const sb = await sandbox();
const svc = await teamService(sb, { allowedHosts: ['localhost', '127.0.0.1'] });
const auth = { Authorization: `Bearer ${sb.keys.demo}` };

/** Every 2026 POST the client made, as sent (url, headers, body), and each answer's JSON. */
const sent: { headers: Headers; body: string }[] = [];
const answers: unknown[] = [];
const recording: typeof fetch = async (url, init) => {
  if (init?.method === 'POST' && typeof init.body === 'string') sent.push({ headers: new Headers(init.headers), body: init.body });
  const response = await fetch(url, init);
  const copy = response.clone();
  void copy.text().then((t) => answers.push(t));
  return response;
};

describe('team mode, both eras on one endpoint', () => {
  it('a 2025-11-25 client (initialize) and a 2026-07-28 client (no initialize) list the same tools in the same order', async () => {
    const old = new Client({ name: 'old', version: '1' });
    await old.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: auth } }));
    const modern = new ModernClient({ name: 'new', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new ModernTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: auth }, fetch: recording }));
    expect(modern.getNegotiatedProtocolVersion?.() ?? '2026-07-28').toBe('2026-07-28');
    const a = (await old.listTools()).tools;
    const b = (await modern.listTools()).tools;
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(JSON.stringify((await modern.listTools()).tools)).toBe(JSON.stringify(b)); // deterministic
    const listed = sent.find((s) => s.body.includes('"tools/list"'))!;
    expect(listed.headers.get('mcp-method')).toBe('tools/list');
    const call = await modern.callTool({ name: 'list_templates', arguments: {} });
    expect(call.isError).toBeFalsy();
    await old.close();
    await modern.close();
    // The 2026 tools/list answer carries the cache fields; no initialize was ever sent.
    const toolsAnswer = answers.map(String).find((t) => t.includes('"tools":['))!;
    expect(toolsAnswer).toContain('"ttlMs":3600000');
    expect(toolsAnswer).toContain('"cacheScope":"public"');
    expect(sent.some((s) => s.body.includes('"initialize"'))).toBe(false);
  });

  it('a 2026 request whose Mcp-Name or Mcp-Method disagrees with its body is refused (400, -32020), and nothing is called', async () => {
    const call = sent.find((s) => s.body.includes('"tools/call"'))!;
    const before = sb.calls.length;
    for (const [name, value] of [
      ['mcp-name', 'create_request'],
      ['mcp-method', 'tools/list'],
    ] as const) {
      const headers = new Headers(call.headers);
      headers.set(name, value);
      const response = await fetch(`${svc.url}/mcp`, { method: 'POST', headers, body: call.body });
      const text = await response.text();
      captured.push(text);
      expect(response.status, `${name}: ${text}`).toBe(400);
      expect(text).toContain('-32020');
    }
    const missing = new Headers(call.headers);
    missing.delete('mcp-name');
    const response = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: missing, body: call.body });
    expect(response.status).toBe(400);
    expect(sb.calls.length).toBe(before);
  });
});
