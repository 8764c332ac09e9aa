import { TOOLS as CATALOGUE } from '../src/tools/index.js';
import { APP_ONLY_TOOLS } from '../src/ui/apps.js';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HttpService } from '../src/transport/http.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';

const root = new URL('..', import.meta.url).pathname;
// Team mode and its hosts' snippets: docs/team-mode.md; the one-click links: docs/hosts.md (both linked from the README).
const remote = readFileSync(join(root, 'docs/team-mode.md'), 'utf8');
const hostsPage = readFileSync(join(root, 'docs/hosts.md'), 'utf8');
const blocks = (text: string, lang: string) => [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
const json = blocks(remote, 'json').map((t) => JSON.parse(t) as Record<string, unknown>);
const mcpJson = JSON.parse(readFileSync(join(root, 'mcp.json'), 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> };
const PUBLIC_URL = 'https://mcp.example.com/mcp';

const sb = await sandbox();
let svc: HttpService;
beforeAll(async () => {
  svc = await teamService(sb);
});

/** Connects with the headers a snippet sends, placeholders filled with the demo key, to the local service. */
async function listWith(headers: Record<string, string>): Promise<string[]> {
  const fill = (v: string) => v.replace(/your-firm-api-key|\$\{(input|env):[^}]+\}/g, sb.keys.demo);
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
    requestInit: { headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, fill(v)])) },
  });
  const client = new Client({ name: 'readme-snippet', version: '1' });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const result = await client.callTool({ name: 'list_clients', arguments: { limit: 1 } });
  await client.close();
  captured.push(JSON.stringify(result));
  expect(result.isError).toBeFalsy();
  return tools;
}

const bearer = z.object({ Authorization: z.string().regex(/^Bearer \S+$/) }).strict();
const TOOLS = CATALOGUE.filter((t) => !APP_ONLY_TOOLS.includes(t.name)).map((t) => t.name);

describe('docs/team-mode.md: remote use (team mode)', () => {
  it('shows deploy/nginx.conf exactly as npm run scale runs it', () => {
    expect(blocks(remote, 'nginx')[0]).toBe(readFileSync(join(root, 'deploy/nginx.conf'), 'utf8'));
  });

  it('Claude Code: claude mcp add --transport http with a bearer header, which the service accepts', async () => {
    const line = blocks(remote, 'sh')
      .join('\n')
      .split('\n')
      .find((l) => l.startsWith('claude mcp add --transport http'))!;
    const m = /^claude mcp add --transport http (\S+) (\S+) --header "([^:]+): ([^"]+)"$/.exec(line)!;
    expect(m).not.toBeNull();
    expect(m[2]).toBe(PUBLIC_URL);
    expect(await listWith({ [m[3]!]: m[4]! })).toEqual(TOOLS);
  });

  it('VS Code: type http with headers, the key from a password input', async () => {
    const vscode = z
      .object({
        inputs: z.array(z.object({ type: z.literal('promptString'), id: z.string(), description: z.string(), password: z.literal(true) }).strict()).length(1),
        servers: z.record(z.string(), z.object({ type: z.literal('http'), url: z.literal(PUBLIC_URL), headers: bearer }).strict()),
      })
      .strict()
      .parse(json.find((c) => c.servers));
    expect(vscode.servers.docreq!.headers.Authorization).toBe(`Bearer \${input:${vscode.inputs[0]!.id}}`);
    expect(await listWith(vscode.servers.docreq!.headers)).toEqual(TOOLS);
  });

  it('Cursor: url and headers, the key from the environment', async () => {
    const cursor = z
      .object({ mcpServers: z.record(z.string(), z.object({ url: z.literal(PUBLIC_URL), headers: bearer }).strict()) })
      .strict()
      .parse(json.find((c) => c.mcpServers));
    expect(cursor.mcpServers.docreq!.headers.Authorization).toBe('Bearer ${env:DOCREQ_API_KEY}');
    expect(await listWith(cursor.mcpServers.docreq!.headers)).toEqual(TOOLS);
  });

  it('OpenAI Responses API: a remote mcp tool whose approval covers every tool that sends', async () => {
    const tool = z
      .object({
        type: z.literal('mcp'),
        server_label: z.string().regex(/^[a-zA-Z0-9_-]+$/),
        server_url: z.literal(PUBLIC_URL),
        headers: bearer,
        require_approval: z.union([z.enum(['always', 'never']), z.object({ never: z.object({ tool_names: z.array(z.string()) }).strict() }).strict()]),
      })
      .strict();
    const request = z
      .object({ model: z.string(), input: z.string(), tools: z.array(tool).length(1) })
      .strict()
      .parse(json.find((c) => c.tools));
    const approval = request.tools[0]!.require_approval;
    // create_request must never be in the "never ask" list
    expect(typeof approval === 'object' && approval.never.tool_names.every((t) => t.startsWith('list_'))).toBe(true);
    expect(await listWith(request.tools[0]!.headers)).toEqual(TOOLS);
  });

  it('agent SDKs: the TypeScript snippet runs against the service', async () => {
    const example = blocks(remote, 'js')[0]!;
    const dir = join(root, 'test', '.generated');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'remote-example.mjs'), example);
    const run = await promisify(execFile)(process.execPath, [join(dir, 'remote-example.mjs')], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_MCP_URL: `${svc.url}/mcp` },
    });
    captured.push(run.stdout, run.stderr);
    expect(run.stdout).toMatch(/^As of \d{4}-\d{2}-\d{2}: \d+ requests, \d+ match overdue/);
  });
});

describe('docs/hosts.md: one-click install links (once published)', () => {
  const sandboxEntry = mcpJson.mcpServers['docreq-sandbox']!;

  it('VS Code: vscode:mcp/install with the sandbox entry of mcp.json', () => {
    const link = /\]\((vscode:mcp\/install\?[^)]+)\)/.exec(hostsPage)![1]!;
    const config = JSON.parse(decodeURIComponent(link.slice('vscode:mcp/install?'.length))) as Record<string, unknown>;
    expect(config).toEqual({ name: 'docreq-sandbox', ...sandboxEntry });
  });

  it('Cursor: cursor://…/mcp/install with a name and the base64 sandbox entry', () => {
    const link = new URL(/\]\((cursor:\/\/anysphere\.cursor-deeplink\/mcp\/install\?[^)]+)\)/.exec(hostsPage)![1]!);
    expect(link.searchParams.get('name')).toBe('docreq-sandbox');
    expect(JSON.parse(Buffer.from(link.searchParams.get('config')!, 'base64').toString('utf8'))).toEqual(sandboxEntry);
  });
});
