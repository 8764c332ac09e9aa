import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

/**
 * The depth limit counts nesting, not brackets (src/transport/limits.ts nestsDeeper): a wide but
 * shallow body is served; and a refused one is answered by the id it carried when that id is a
 * JSON-RPC id (a string or a finite number), else null (requestId). Team mode over real HTTP.
 */

const sb = await sandbox();
const config = () => loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' });
const post = async (url: string, body: string) => {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${sb.keys.demo}` },
    body,
  });
  const text = await res.text();
  captured.push(text.slice(0, 2_000));
  return { status: res.status, text };
};

describe('wide is not deep', () => {
  it('200 sibling arrays and 70 sibling objects (more brackets than the limit, 5 deep at most) are read and answered', async () => {
    const svc = await teamService(sb, { config: config() });
    const arrays = await post(
      svc.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_clients', arguments: { status: Array.from({ length: 200 }, () => []) } },
      }),
    );
    expect(arrays.status).toBe(200);
    expect(arrays.text).toContain('Invalid arguments for list_clients');
    const items = Array.from({ length: 70 }, (_, i) => ({ name: `Item ${i + 1}` }));
    const preview = await post(
      svc.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'create_request', arguments: { client: sb.demoFirm.clients[0]!.id, title: 'Wide', items, dryRun: true } },
      }),
    );
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('Items: 70 items (70 required)');
  });
});

describe('a refused message is answered by its own id', () => {
  const deep = `${'['.repeat(70)}${']'.repeat(70)}`;
  it.each([
    ['a string id', '"req-7"', 'req-7'],
    ['a number id', '7', 7],
    ['a number too large to be finite', '1e400', null],
    ['true', 'true', null],
    ['an object', '{"x":1}', null],
    ['none', undefined, null],
  ] as const)('%s', async (_name, idText, expected) => {
    const svc = await teamService(sb, { config: config() });
    const body = `{"jsonrpc":"2.0",${idText === undefined ? '' : `"id":${idText},`}"method":"tools/list","params":{"_meta":{"x":${deep}}}}`;
    const r = await post(svc.url, body);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ jsonrpc: '2.0', id: expected, error: { code: -32600 } });
  });
});
