import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plainHelp, SETTINGS, settingsHelp, settingsTable } from '../src/config.js';
import { childEnv } from './helpers.js';

const root = new URL('..', import.meta.url).pathname;
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const table = readme.split('<!-- settings-table')[1]!.split('<!-- /settings-table -->')[0]!;
const rows = table
  .split('\n')
  .filter((l) => l.startsWith('| `'))
  .map((l) => l.split('|').map((c) => c.trim().replace(/`/g, '')));

describe('README', () => {
  it('starts with the two set-up commands', () => {
    const firstBlock = readme.split('```sh')[1]!.split('```')[0]!;
    expect(firstBlock).toContain('npm install && npm run demo');
    expect(firstBlock).toContain('npm test');
  });

  it('documents every setting with its flag and default exactly as the code defines them', () => {
    expect(rows.map((r) => r[1])).toEqual(Object.values(SETTINGS).map((s) => s.env));
    for (const setting of Object.values(SETTINGS)) {
      const row = rows.find((r) => r[1] === setting.env)!;
      expect(row[2], setting.env).toBe(setting.flag ?? '—');
      expect(row[3], setting.env).toBe(setting.default ?? '—');
    }
  });

  it('has the settings table that scripts/readme.mjs generates from SETTINGS, word for word', () => {
    expect(table.slice(table.indexOf('-->') + 3).trim()).toBe(settingsTable());
  });

  it('--help lists every setting in the words of SETTINGS', () => {
    const help = execFileSync(process.execPath, [`${root}dist/cli.js`, '--help'], { encoding: 'utf8' });
    expect(help).toContain(settingsHelp());
    for (const setting of Object.values(SETTINGS)) expect(help).toContain(plainHelp(setting.help));
  });

  it('quotes figures only from the generated block', () => {
    const figures = readme.split('<!-- figures')[1]?.split('<!-- /figures -->')[0];
    expect(figures).toContain('| group | measure | value | reference | ratio | target |');
    // No figures table outside the block.
    expect(readme.split('| group | measure | value |').length).toBe(2);
    // The scale run's figures likewise: one generated block, its table written by npm run scale.
    const scale = readme.split('<!-- scale')[1]?.split('<!-- /scale -->')[0];
    expect(scale).toContain('| measure | result |');
    expect(scale).toContain('POSTs per confirmed send');
    expect(readme.split('| measure | result |').length).toBe(2);
  });

  it('quotes team-mode throughput only from the block scripts/throughput.mjs writes', () => {
    const opened = readme.split('<!-- throughput')[1]!;
    expect(opened.slice(0, opened.indexOf('-->'))).toMatch(/written by node scripts\/readme\.mjs from what node scripts\/throughput\.mjs last wrote .*do not edit by hand/);
    const block = opened.slice(opened.indexOf('-->') + 3).split('<!-- /throughput -->')[0]!.trim().split('\n');
    // The shape table() in scripts/throughput.mjs writes: its header, per workload the reference's row and this build's (its ratio and target), its footer.
    expect(block.slice(0, 2)).toEqual(['| workload: server | figure | target |', '|---|---|---|']);
    for (const workload of ['list_templates, repeated', 'list_requests @ 10,000, repeated', 'list_requests @ 10,000, varied']) {
      expect(block.some((l) => l.startsWith(`| ${workload}`) && l.includes(': reference (') && /calls\/s, p50 [\d.]+ ms, p99 [\d.]+ ms/.test(l)), workload).toBe(true);
      expect(block.some((l) => l.startsWith(`| ${workload}`) && l.includes(': this build |') && /\*\*[\d.]+×\*\* the reference's calls\/s/.test(l)), workload).toBe(true);
    }
    // A ratio under its target is marked missed.
    for (const line of block.filter((l) => l.includes(': this build |'))) {
      const ratio = /\*\*([\d.]+)×\*\*/.exec(line)?.[1];
      const target = /≥ ([\d.]+)× the reference/.exec(line)?.[1];
      if (ratio && target && Number(ratio) < Number(target)) expect(line).toMatch(/missed/);
    }
    expect(block.at(-1)).toMatch(/^Written by `node scripts\/throughput\.mjs` on \d{4}-\d{2}-\d{2}: /);
    // No throughput row outside the block.
    expect(readme.split('| list_requests @ 10,000, varied (a different question each call): this build |').length).toBe(2);
  });

  it('leads the host section with the from-a-clone command, and that command serves MCP', async () => {
    const hosts = readme.split('## Use it in your assistant')[1]!.split('\n## ')[0]!;
    const clone = hosts.indexOf('<!-- from-a-clone');
    expect(clone).toBeGreaterThan(-1);
    expect(clone).toBeLessThan(hosts.indexOf('npx -y docreq-mcp'));
    expect(hosts).toMatch(/not on the npm registry yet/);
    expect(hosts).toMatch(/for the published package/);
    const block = hosts.slice(clone).split('```sh')[1]!.split('```')[0]!;
    const line = block.split('\n').find((l) => l.startsWith('node '))!;
    // Run it as written, from the clone (this checkout), with `$PWD` as the shell would expand it.
    const args = line.split('#')[0]!.trim().split(/\s+/).slice(1).map((a) => a.replace(/^"\$PWD/, root.replace(/\/$/, '')).replace(/"$/, ''));
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: childEnv() });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'readme', version: '1' } } })}\n`);
    const answer = () => out.split('\n').slice(0, -1).map((l) => JSON.parse(l) as { id?: unknown }).find((m) => m.id === 1);
    while (!answer()) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    await once(child, 'exit');
    expect(answer()).toMatchObject({ id: 1, result: { serverInfo: { name: 'docreq-mcp' } } });
  });
});

describe('manifest.json and server.json agree with SETTINGS', () => {
  const manifest = JSON.parse(readFileSync(`${root}manifest.json`, 'utf8')) as {
    server: { mcp_config: { env: Record<string, string> } };
    user_config: Record<string, { description: string; default?: unknown; min?: number; max?: number }>;
  };
  const server = JSON.parse(readFileSync(`${root}server.json`, 'utf8')) as {
    packages: { environmentVariables: { name: string; description: string; default?: string; choices?: string[] }[] }[];
  };
  const envs = new Set(Object.values(SETTINGS).map((s) => s.env));
  const variables = server.packages[0]!.environmentVariables;
  const variable = (name: string) => variables.find((v) => v.name === name)!;
  /** The user_config entry a manifest variable is filled from. */
  const userConfig = (env: string) => manifest.user_config[/\$\{user_config\.(\w+)\}/.exec(manifest.server.mcp_config.env[env]!)![1]!]!;

  it('name only variables SETTINGS knows', () => {
    for (const name of Object.keys(manifest.server.mcp_config.env)) expect(envs, name).toContain(name);
    for (const v of variables) expect(envs, v.name).toContain(v.name);
  });

  it('give the timeout, read-only and confirm-send the same meaning and defaults', () => {
    const read = (name: keyof typeof SETTINGS, text: string) => SETTINGS[name].schema.safeParse(text).data as unknown;
    for (const name of ['timeoutMs', 'readOnly', 'confirmSend'] as const) {
      const setting = SETTINGS[name];
      expect(userConfig(setting.env).description, setting.env).toBe(plainHelp(setting.help));
      expect(variable(setting.env).description, setting.env).toBe(plainHelp(setting.help));
      expect(read(name, String(userConfig(setting.env).default)), setting.env).toEqual(read(name, setting.default));
      expect(read(name, variable(setting.env).default!), setting.env).toEqual(read(name, setting.default));
    }
    const timeout = SETTINGS.timeoutMs.schema;
    expect(userConfig('DOCREQ_TIMEOUT_MS').min).toBe(timeout.minValue);
    expect(userConfig('DOCREQ_TIMEOUT_MS').max).toBe(timeout.maxValue);
    expect(variable('DOCREQ_CONFIRM_SEND').choices).toEqual(SETTINGS.confirmSend.schema.out.options);
  });
});
