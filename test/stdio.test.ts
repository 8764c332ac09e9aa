import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultStateDir } from '../src/store/index.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { ALL_KEYS, sandbox } from './support/sandbox.js';
import { connect } from './support/connect.js';

const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const sb = await sandbox();
/** Every file under `dir` (none when it does not exist). */
const filesUnder = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name))
    : [];

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/cli.js is missing: run npm run build (npm test does)');
});

describe('the built binary over stdio', () => {
  it('writes only JSON-RPC to stdout, keeps the key out of stdout and stderr, and exits when stdin closes', async () => {
    const child = spawn(process.execPath, [BIN, '--log-level', 'debug'], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const send = (msg: object) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    const waitFor = async (id: number) => {
      while (!stdout.split('\n').some((l) => l.includes(`"id":${id}`))) await new Promise((r) => setTimeout(r, 20));
    };
    send(INITIALIZE);
    await waitFor(1);
    send(INITIALIZED);
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_requests', arguments: { overdue: true } } });
    await waitFor(2);
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_clients', arguments: { limit: 'not a number' } } });
    await waitFor(3);
    child.stdin.end();
    const [code] = (await once(child, 'exit')) as [number | null];
    captured.push(stdout, stderr);

    expect(code).toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    for (const key of ALL_KEYS) {
      expect(stdout).not.toContain(key);
      expect(stderr).not.toContain(key);
    }
    expect(stderr).toContain('serving on stdio');
    expect(stderr).toContain('GET /api/v1/requests');
  });

  it('refuses a tools/call before initialize, answers an over-long line and invalid requests with errors, and keeps serving', async () => {
    const child = spawn(process.execPath, [BIN, '--confirm-send', 'never'], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const answers = () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
    const waitFor = async (id: unknown) => {
      while (!answers().some((a) => a.id === id)) await new Promise((r) => setTimeout(r, 20));
      return answers().find((a) => a.id === id)!;
    };
    const send = (msg: object) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    const client = sb.demoFirm.clients[0]!.id;
    // A send before initialize: no confirmation could have been asked for, so it is refused.
    send({
      jsonrpc: '2.0',
      id: 10,
      method: 'tools/call',
      params: { name: 'create_request', arguments: { client, title: 'Before initialize', items: [{ name: 'x' }] } },
    });
    expect((await waitFor(10)).error?.message).toContain('not initialised');
    send(INITIALIZE);
    await waitFor(1);
    send(INITIALIZED);
    // 11 MB on one line: over the 10 MB a message may be.
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/list', params: { pad: 'x'.repeat(11 * 1024 * 1024) } })}\n`);
    expect((await waitFor(null)).error?.message).toContain('too long');
    send({ jsonrpc: '1.0', id: 12, method: 'tools/list' });
    expect((await waitFor(12)).error?.code).toBe(-32600);
    send({ jsonrpc: '2.0', id: 13, method: 'tools/list', params: {} });
    expect((await waitFor(13)).result).toBeDefined();
    child.stdin.end();
    await once(child, 'exit');
    captured.push(stdout);
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(0);
  });

  it('exits on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await once(child.stderr, 'data');
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('serves the SDK stdio client on the embedded sandbox with --sandbox', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--sandbox'], stderr: 'pipe', env: childEnv() });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(transport);
    const result = await client.callTool({ name: 'list_clients', arguments: { search: 'sam taylor' } });
    await client.close();
    expect((result.structuredContent as { matched: number }).matched).toBe(2);
  });

  it('the built CLI lists exactly the tools the source lists (its listing is worked out at build time)', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--sandbox'], stderr: 'pipe', env: childEnv() });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(transport);
    const built = (await client.listTools()).tools;
    await client.close();
    const source = await connect(sb);
    const fromSource = (await source.client.listTools()).tools;
    await source.close();
    expect(built.map((t) => t.name)).toEqual(['list_clients', 'list_requests', 'create_request', 'create_request_batch', 'list_templates']);
    expect(built).toEqual(fromSource);
  });

  it("the built CLI checks a person's confirmation against its form (the build's own check, not the SDK's Ajv): true sends, \"yes\" sends nothing", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--sandbox'], stderr: 'pipe', env: childEnv() });
    let answer: unknown = 'yes';
    const client = new Client({ name: 't', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { confirm: answer } }));
    await client.connect(transport);
    const clients = (await client.callTool({ name: 'list_clients', arguments: { limit: 1 } })).structuredContent as { clients: { id: string }[] };
    const args = { client: clients.clients[0]!.id, title: 'Confirmed through the built CLI', items: [{ name: 'W-2' }] };
    const refused = (await client.callTool({ name: 'create_request', arguments: args })) as CallToolResult;
    captured.push(JSON.stringify(refused));
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(/^Nothing was sent: asking the person to confirm failed \(.*confirm is not true or false/);
    answer = true;
    const sent = await client.callTool({ name: 'create_request', arguments: args });
    await client.close();
    captured.push(JSON.stringify(sent));
    expect(sent.structuredContent).toMatchObject({ outcome: 'sent' });
  });

  it('starts unconfigured without crashing and says what to set', async () => {
    const child = spawn(process.execPath, [BIN], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    while (!stderr.includes('serving on stdio')) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(stderr).toContain('DOCREQ_API_KEY is not set');
    expect(stderr).toContain('--sandbox');
  });

  it('check exits 0 against a working setup and 1 with a revoked key, without printing the key', async () => {
    const run = async (key: string, env: Record<string, string> = {}) => {
      const child = spawn(process.execPath, [BIN, 'check'], { env: { ...childEnv(), DOCREQ_API_KEY: key, DOCREQ_BASE_URL: sb.url, ...env } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      captured.push(out);
      expect(out).not.toContain(key);
      return { code, out };
    };
    const good = await run(sb.keys.demo);
    expect(good.code).toBe(0);
    expect(good.out).toContain(`the firm has ${sb.demoFirm.clients.length} clients`);
    const revoked = await run(sb.keys.revoked);
    expect(revoked.code).toBe(1);
    expect(revoked.out).toContain('rejected the API key');
    // A service that echoes the key in its error body: check still never prints it.
    sb.inject('GET /api/v1/clients', { kind: 'echo', status: 401 }, { times: 3 });
    const echoed = await run(sb.keys.demo);
    sb.clearFaults();
    expect(echoed.code).toBe(1);
    expect(echoed.out).toContain('[redacted]');
    // An unreadable safety setting: check fails and says sending is disabled, without the value.
    const unsafe = await run(sb.keys.demo, { DOCREQ_CONFIRM_SEND: 'alwys' });
    expect(unsafe.code).toBe(1);
    expect(unsafe.out).toContain('sending is disabled');
    expect(unsafe.out).not.toContain('alwys');
  });
});

describe("the suite's own folders", () => {
  it("a server started from childEnv() without DOCREQ_STATE_DIR keeps its send records inside the run's folder", async () => {
    const { DOCREQ_STATE_DIR: _explicit, ...env } = childEnv();
    const where = defaultStateDir(env);
    expect(relative(suiteFolder(), where)).not.toMatch(/^\.\.|^\//);
    const before = filesUnder(where).length;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--confirm-send', 'never'],
      stderr: 'pipe',
      env: { ...env, DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
    });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(transport);
    const sent = await client.callTool({
      name: 'create_request',
      arguments: { client: sb.demoFirm.clients[6]!.id, title: 'Where the record goes', items: [{ name: 'a' }] },
    });
    await client.close();
    captured.push(JSON.stringify(sent));
    expect(sent.isError).toBeFalsy();
    expect(filesUnder(where).length).toBeGreaterThan(before);
  });
});

describe('shutdown during an in-flight send', () => {
  it.each(['stdin close', 'SIGTERM'])('ends promptly on %s, and the POST in flight is sent once, never again', async (how) => {
    sb.clearFaults();
    sb.calls.length = 0;
    const emails = sb.emails.length;
    sb.inject('POST /api/v1/requests', { kind: 'latency', ms: 2_000 }, { times: 1 });
    const child = spawn(process.execPath, [BIN, '--confirm-send', 'never'], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    const send = (msg: object) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send(INITIALIZE);
    send(INITIALIZED);
    const client = sb.demoFirm.clients[4]!;
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'create_request', arguments: { client: client.id, title: `Shutdown ${how}`, items: [{ name: 'a' }] } },
    });
    while (sb.callsTo('POST', '/api/v1/requests').length === 0) await new Promise((r) => setTimeout(r, 10));

    if (how === 'SIGTERM') child.kill('SIGTERM');
    else child.stdin.end();
    const [code] = (await exited) as [number | null];
    // It exited while the service was still holding the POST: nothing created yet.
    expect(code).toBe(0);
    expect(sb.emails.length).toBe(emails);
    // Once the service finishes, exactly one request exists and no second POST ever came.
    while (sb.emails.length === emails) await new Promise((r) => setTimeout(r, 50));
    expect(sb.callsTo('POST', '/api/v1/requests')).toHaveLength(1);
    expect(sb.emails.length).toBe(emails + 1);
  });
});

describe("the built binary: the person's own Send", () => {
  const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
  const open = async (capabilities: object, env: Record<string, string> = {}) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN],
      stderr: 'pipe',
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url, ...env },
    });
    const client = new Client({ name: 'apps-host', version: '1' }, { capabilities: capabilities });
    await client.connect(transport);
    return client;
  };
  const posts = () => sb.callsTo('POST', '/api/v1/requests').length;

  it("a host that shows pages: no token for the model; the model sends nothing with what it saw; the page's Send sends once", async () => {
    const client = await open(APPS);
    const people = sb.demoFirm.clients.filter((c) => c.status === 'active');
    const args = { client: people[2]!.id, title: 'Built: the person presses Send', items: [{ name: 'ID' }] };
    const preview = (await client.callTool({ name: 'create_request', arguments: args })) as CallToolResult;
    captured.push(JSON.stringify(preview));
    const token = (preview._meta as Record<string, { token: string }>)['docreq-mcp/send']!.token;
    expect(JSON.stringify(preview.content) + JSON.stringify(preview.structuredContent)).not.toContain(token);
    expect((await client.listTools()).tools.find((t) => t.name === 'send_from_page')?._meta).toEqual({ ui: { visibility: ['app'] } });
    const before = posts();
    const model = (await client.callTool({ name: 'create_request', arguments: { ...args, confirmationToken: 'x'.repeat(40) } })) as CallToolResult;
    expect((model.structuredContent as { sent: boolean }).sent).toBe(false);
    expect(posts()).toBe(before);
    const sent = (await client.callTool({
      name: 'send_from_page',
      arguments: { tool: 'create_request', arguments: args, pageToken: token },
    })) as CallToolResult;
    expect((sent.structuredContent as { outcome: string }).outcome).toBe('sent');
    const again = (await client.callTool({
      name: 'send_from_page',
      arguments: { tool: 'create_request', arguments: args, pageToken: token },
    })) as CallToolResult;
    expect((again.structuredContent as { outcome: string }).outcome).toBe('already_sent');
    expect(posts()).toBe(before + 1);
    await client.close();
  });

  it('DOCREQ_CONFIRM_SEND=person on a host with neither pages nor a form: nothing sent, told why', async () => {
    const client = await open({}, { DOCREQ_CONFIRM_SEND: 'person' });
    const people = sb.demoFirm.clients.filter((c) => c.status === 'active');
    const before = posts();
    const refused = (await client.callTool({
      name: 'create_request',
      arguments: { client: people[3]!.id, title: 'Built: nobody to press', items: [{ name: 'ID' }] },
    })) as CallToolResult;
    captured.push(JSON.stringify(refused));
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('only a person can send');
    expect(posts()).toBe(before);
    await client.close();
  });
});
