import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SETTINGS } from '../src/settings.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';

const root = new URL('..', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as Record<string, unknown> & { version: string; name: string; bin: Record<string, string> };
// The hosts' snippets live on the page the README links for them.
const hostsPage = read('docs/hosts.md');
const ENV_NAMES = new Set<string>(Object.values(SETTINGS).map((s) => s.env));
const execFileAsync = promisify(execFile);
const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });

const sb = await sandbox();
const work = mkdtempSync(join(tmpdir(), 'docreq-pack-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function listTools(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({ command, args, cwd, env: { ...childEnv(), ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'package-test', version: '1' });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const clients = await client.callTool({ name: 'list_clients', arguments: { limit: 1 } });
  await client.close();
  captured.push(JSON.stringify(clients));
  return { tools, clients };
}

describe('the npm package', () => {
  const packed = JSON.parse(npm(['pack', '--dry-run', '--json', '--ignore-scripts'], root)) as [{ files: { path: string }[] }];
  const files = packed[0].files.map((f) => f.path);

  it('contains the built files, docs and licence, and no sources, tests or scripts', () => {
    for (const f of ['package.json', 'README.md', 'LICENSE', 'SECURITY.md', 'dist/cli.js', 'dist/index.js', 'dist/index.d.ts', 'server.json', 'mcp.json'])
      expect(files).toContain(f);
    for (const f of files) expect(f).not.toMatch(/^(src|test|scripts|\.ci|bundle)\/|\.map$|\.tgz$|\.mcpb$|tsconfig|eslint/);
  });

  it('has no runtime dependencies and points bin at the bundled CLI', () => {
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.bin).toEqual({ 'docreq-mcp': 'dist/cli.js' });
    expect(files).toContain(pkg.bin['docreq-mcp']);
  });

  it('installs from the packed tarball offline and starts with npx, as mcp.json says, on the sandbox', async () => {
    const tarball = npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', work], root).trim().split('\n').pop()!;
    const project = join(work, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}');
    npm(['install', '--offline', '--no-audit', '--no-fund', join(work, tarball)], project);
    const entry = (JSON.parse(read('mcp.json')) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers['docreq-sandbox']!;
    const { tools, clients } = await listTools(entry.command, entry.args, project);
    expect(tools).toEqual(['list_clients', 'list_requests', 'create_request', 'create_request_batch', 'list_templates']);
    expect(clients.isError).toBeFalsy();
    // the real-service entry, pointed at a local sandbox through its own variables
    const real = (JSON.parse(read('mcp.json')) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> }).mcpServers
      .docreq!;
    expect(Object.keys(real.env).every((k) => ENV_NAMES.has(k))).toBe(true);
    const viaEnv = await listTools(real.command, real.args, project, { DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url });
    expect(viaEnv.clients.isError).toBeFalsy();
    expect((viaEnv.clients.structuredContent as { total: number }).total).toBe(sb.demoFirm.clients.length);
  });
});

describe('README snippets (docs/hosts.md)', () => {
  const blocks = (lang: string) => [...hostsPage.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

  it('every JSON snippet parses and runs docreq-mcp with known variables only', () => {
    // remote (team mode) entries have a URL instead of a command: test/remote-hosts.test.ts checks them
    const json = blocks('json').filter((t) => !/"(url|server_url)":/.test(t));
    expect(json.length).toBeGreaterThanOrEqual(5);
    for (const text of json) {
      const config = JSON.parse(text) as { mcpServers?: Record<string, unknown>; servers?: Record<string, unknown> };
      const servers = Object.values(config.mcpServers ?? config.servers ?? {}) as { command: string; args: string[]; env?: Record<string, string> }[];
      expect(servers.length).toBeGreaterThan(0);
      for (const s of servers) {
        const line = [s.command, ...s.args].join(' ');
        expect(line).toMatch(/npx -y docreq-mcp$|npx -y docreq-mcp --sandbox$|node \/\S+\/docreq-mcp\/dist\/cli\.js$|^cmd \/c npx -y docreq-mcp$/);
        for (const key of Object.keys(s.env ?? {})) expect(ENV_NAMES.has(key), key).toBe(true);
      }
    }
  });

  it('the VS Code snippet prompts for the key as a password and uses it', () => {
    const vscode = blocks('json')
      .map((t) => JSON.parse(t) as { inputs?: { id: string; password: boolean }[]; servers?: Record<string, { env: Record<string, string> }> })
      .find((c) => c.servers)!;
    expect(vscode.inputs![0]!.password).toBe(true);
    expect(vscode.servers!.docreq!.env.DOCREQ_API_KEY).toBe(`\${input:${vscode.inputs![0]!.id}}`);
  });

  it('the Claude Code commands add the server with npx and known variables', () => {
    const lines = blocks('sh')
      .join('\n')
      .split('\n')
      .filter((l) => l.startsWith('claude mcp add') && !l.includes('--transport http'));
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.split(' -- ')[1]).toMatch(/^npx -y docreq-mcp( --sandbox)?$/);
      for (const [, name] of line.matchAll(/-e (\w+)=/g)) expect(ENV_NAMES.has(name!)).toBe(true);
    }
  });

  it('the in-process example runs against the built package', async () => {
    const example = blocks('js').find((b) => b.includes("from 'docreq-mcp'"))!;
    const dir = join(root, 'test', '.generated');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'in-process-example.mjs'), example);
    // inside the package, 'docreq-mcp' resolves to its own exports (dist/index.js)
    // async: the sandbox answering it lives in this process's event loop
    const run = await execFileAsync(process.execPath, [join(dir, 'in-process-example.mjs')], {
      env: { ...childEnv(), DOCREQ_API_KEY: sb.keys.demo, DOCREQ_BASE_URL: sb.url },
    });
    captured.push(run.stdout, run.stderr);
    expect(run.stdout).toMatch(/^As of \d{4}-\d{2}-\d{2}: \d+ requests, \d+ match overdue/);
  });
});

describe('registry and bundle metadata', () => {
  // The rules of the registry's published server.json schema (2025-12-11) for the fields we use.
  const argument = z
    .object({
      name: z.string(),
      description: z.string(),
      isRequired: z.boolean().optional(),
      isSecret: z.boolean().optional(),
      format: z.enum(['string', 'number', 'boolean', 'filepath']).optional(),
      default: z.string().optional(),
      choices: z.array(z.string()).optional(),
    })
    .strict();
  const serverJson = z
    .object({
      $schema: z.literal('https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json'),
      name: z
        .string()
        .min(3)
        .max(200)
        .regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/),
      title: z.string().min(1).max(100).optional(),
      description: z.string().min(1).max(100),
      version: z
        .string()
        .max(255)
        .refine((v) => !/^[~^><=]|\.x$|\*/.test(v), 'a range'),
      websiteUrl: z.string().url().optional(),
      repository: z.object({ url: z.string().url(), source: z.string(), id: z.string().optional(), subfolder: z.string().optional() }).strict().optional(),
      packages: z.array(
        z
          .object({
            registryType: z.string(),
            registryBaseUrl: z.string().url().optional(),
            identifier: z.string(),
            version: z
              .string()
              .min(1)
              .refine((v) => v !== 'latest'),
            transport: z.object({ type: z.literal('stdio') }).strict(),
            environmentVariables: z.array(argument).optional(),
          })
          .strict(),
      ),
    })
    .strict();
  const server = JSON.parse(read('server.json')) as z.infer<typeof serverJson>;

  it('server.json follows the registry schema and matches package.json', () => {
    serverJson.parse(server);
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.packages[0]).toMatchObject({ registryType: 'npm', identifier: pkg.name, version: pkg.version });
    const vars = server.packages[0]!.environmentVariables!;
    expect(vars.find((v) => v.name === 'DOCREQ_API_KEY')).toMatchObject({ isSecret: true, isRequired: true });
    for (const v of vars) expect(ENV_NAMES.has(v.name), v.name).toBe(true);
  });

  it('manifest.json has the package version, a sensitive key, and maps its settings to known variables', () => {
    const manifest = JSON.parse(read('manifest.json')) as {
      version: string;
      tools: { name: string }[];
      user_config: Record<string, { sensitive?: boolean }>;
      server: { mcp_config: { env: Record<string, string> } };
      compatibility: { runtimes: { node: string } };
    };
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.compatibility.runtimes.node).toBe((pkg.engines as { node: string }).node);
    expect(manifest.user_config.api_key!.sensitive).toBe(true);
    expect(manifest.tools.map((t) => t.name)).toEqual(['list_clients', 'list_requests', 'create_request', 'create_request_batch', 'list_templates']);
    for (const [env, value] of Object.entries(manifest.server.mcp_config.env)) {
      expect(ENV_NAMES.has(env)).toBe(true);
      expect(manifest.user_config[/\$\{user_config\.(\w+)\}/.exec(value)![1]!]).toBeDefined();
    }
  });

  it('the listings name one repository, its issues as the support address, and the privacy policy', () => {
    const manifest = JSON.parse(read('manifest.json')) as {
      repository: { type: string; url: string };
      homepage: string;
      documentation: string;
      support: string;
      privacy_policies: string[];
    };
    const repo = server.repository!.url;
    expect(server.repository).toEqual({ url: repo, source: 'github' });
    expect(server.websiteUrl).toBe(`${repo}#readme`);
    expect(manifest.repository).toEqual({ type: 'git', url: repo });
    expect(manifest.homepage).toBe(`${repo}#readme`);
    expect(manifest.documentation).toBe(`${repo}/tree/main/docs`);
    expect(manifest.support).toBe(`${repo}/issues`);
    expect(manifest.privacy_policies).toEqual([`${repo}/blob/main/docs/directory/privacy.md`]);
    // The pages people read for help give the same address.
    expect(read('docs/directory/support.md')).toContain(`<${repo}/issues>`);
    expect(read('SECURITY.md')).toContain(`<${repo}/security/advisories/new>`);
    // npm's listing names the same repository, homepage and issues.
    const pkg = JSON.parse(read('package.json')) as { repository: unknown; homepage: string; bugs: unknown };
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${repo}.git` });
    expect(pkg.homepage).toBe(`${repo}#readme`);
    expect(pkg.bugs).toEqual({ url: `${repo}/issues` });
    // The registry name is the GitHub repository's (io.github.<owner>/<name>).
    expect(`https://github.com/${server.name.replace(/^io\.github\./, '')}`).toBe(repo);
  });
});
