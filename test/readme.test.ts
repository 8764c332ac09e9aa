import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { SETTINGS, settingSchema } from '../src/settings.js';
import { plainHelp, settingsHelp, settingsTable } from '../src/settings-docs.js';
import { SANDBOX_KEYS } from '../src/sandbox/seed.js';
import { defaultStateDir } from '../src/store/index.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { ALL_KEYS, sandbox } from './support/sandbox.js';
import { callerFor, previewThenSend } from './support/connect.js';
import { teamService } from './support/team-service.js';

const root = new URL('..', import.meta.url).pathname;
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
/** A page under docs/ (each is linked from the README). */
const page = (name: string) => readFileSync(`${root}docs/${name}`, 'utf8');
const settingsPage = page('settings.md');
const performance = page('performance.md');
const development = page('development.md');
/** The README and every page under docs/, for facts that must appear in one place only. */
const docsPages = readdirSync(`${root}docs`, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.md'));
const everything = [readme, ...docsPages.map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))].join('\n');
const table = settingsPage.split('<!-- settings-table')[1]!.split('<!-- /settings-table -->')[0]!;
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

  it('quotes figures only from the generated block (docs/performance.md)', () => {
    const figures = performance.split('<!-- figures')[1]?.split('<!-- /figures -->')[0];
    expect(figures).toContain('| group | measure | value | reference | ratio | target |');
    // No figures table outside the block, on any page.
    expect(everything.split('| group | measure | value |').length).toBe(2);
    // The scale run's figures likewise: one generated block, its table written by npm run scale.
    const scale = performance.split('<!-- scale')[1]?.split('<!-- /scale -->')[0];
    expect(scale).toContain('| measure | result |');
    expect(scale).toContain('POSTs per confirmed send');
    expect(everything.split('| measure | result |').length).toBe(2);
  });

  it('sets each figure with a target beside it, met or missed, as scripts/targets.mjs works it out from the blocks', async () => {
    const { targetsBlock, verdict } = (await import(new URL('../scripts/targets.mjs', import.meta.url).href)) as {
      targetsBlock: (tables: Record<string, string>) => string;
      verdict: (target: string, now: { text: string; ratio?: string }) => string | null;
    };
    const tables = { figures: block('figures', performance), throughput: block('throughput', performance), scale: block('scale', performance) };
    const written = block('targets', performance);
    expect(written).toBe(targetsBlock(tables).trim());
    // The verdicts themselves: a ratio over its bound is missed, under it met; both clauses must hold; a count is exact.
    expect(verdict('≤ 2.0×', { text: '184.8 ms', ratio: '2.39' })).toBe('missed');
    expect(verdict('≤ 1.15×', { text: '269.1 ms', ratio: '0.92' })).toBe('met');
    expect(verdict('≤ 1.3×, < 8,000 chars', { text: '2.0 ms, 4,862 chars', ratio: '1.50' })).toBe('missed');
    expect(verdict('≤ 1.3×, < 8,000 chars', { text: '1.7 ms, 8,437 chars', ratio: '1.20' })).toBe('missed');
    expect(verdict('1', { text: '4 upstream call(s)' })).toBe('missed');
    expect(verdict('≤ 1.5 s, ≤ 6 MB', { text: '1098.2 ms · 4.1 MB on the wire' })).toBe('met');
    expect(verdict('≥ 2× calls/s', { text: '1.74× calls/s; server CPU per call 3.62× less' })).toBe('missed');
    expect(verdict('≈ 1 (linear)', { text: 'k = 0.89' })).toBeNull();
    // Every missed row is marked, and the count in its first line is the number of marked rows.
    const rows = written.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| measure'));
    const missed = rows.filter((l) => l.endsWith('| **missed** |')).length;
    expect(written).toMatch(new RegExp(`\\*\\*${missed} missed\\*\\*`));
    expect(rows.every((l) => /\| (met|\*\*missed\*\*|not judged \(see the row\)) \|$/.test(l))).toBe(true);
  });

  it('is a short page with a table of contents whose links reach a heading, and links each page under docs/ that exists', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    const anchor = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-');
    const headings = new Set([...readme.matchAll(/^#{2,3} (.+)$/gm)].map((m) => anchor(m[1]!)));
    const contents = readme.split('## Contents')[1]!.split('\n## ')[0]!;
    const anchors = [...contents.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    expect(anchors.length).toBeGreaterThanOrEqual(5);
    for (const a of anchors) expect(headings, a).toContain(a);
    for (const e of docsPages) {
      const rel = relative(root, join(e.parentPath, e.name));
      expect(readme, rel).toContain(`](${rel})`);
    }
    expect(readme).toContain('](SECURITY.md)');
    // Every relative link in the README and the pages reaches a file.
    for (const file of ['README.md', ...docsPages.map((e) => relative(root, join(e.parentPath, e.name)))]) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#:\s]+)(?:#[^)]*)?\)/g))
        expect(existsSync(join(root, file, '..', target!)), `${file} → ${target}`).toBe(true);
    }
  });

  it('quotes team-mode throughput only from the block scripts/throughput.mjs writes (docs/performance.md)', () => {
    const opened = performance.split('<!-- throughput')[1]!;
    expect(opened.slice(0, opened.indexOf('-->'))).toMatch(
      /written by node scripts\/readme\.mjs from what node scripts\/bench\/throughput\.mjs last wrote .*do not edit by hand/,
    );
    const block = opened
      .slice(opened.indexOf('-->') + 3)
      .split('<!-- /throughput -->')[0]!
      .trim()
      .split('\n');
    // The shape table() in scripts/bench/throughput.mjs writes: its header, per workload the reference's row and this build's (its ratio and target), its footer.
    expect(block.slice(0, 2)).toEqual(['| workload: server | figure | target |', '|---|---|---|']);
    for (const workload of ['list_templates, repeated', 'list_requests @ 10,000, repeated', 'list_requests @ 10,000, varied']) {
      expect(
        block.some((l) => l.startsWith(`| ${workload}`) && l.includes(': reference (') && /calls\/s, p50 [\d.]+ ms, p99 [\d.]+ ms/.test(l)),
        workload,
      ).toBe(true);
      expect(
        block.some((l) => l.startsWith(`| ${workload}`) && l.includes(': this build |') && /\*\*[\d.]+×\*\* the reference's calls\/s/.test(l)),
        workload,
      ).toBe(true);
    }
    // A ratio under its target is marked missed.
    for (const line of block.filter((l) => l.includes(': this build |'))) {
      const ratio = /\*\*([\d.]+)×\*\*/.exec(line)?.[1];
      const target = /≥ ([\d.]+)× the reference/.exec(line)?.[1];
      if (ratio && target && Number(ratio) < Number(target)) expect(line).toMatch(/missed/);
    }
    expect(block.at(-1)).toMatch(/^Written by `node scripts\/bench\/throughput\.mjs` on \d{4}-\d{2}-\d{2}: /);
    // No throughput row outside the block, on any page (the targets block repeats the ratio rows beside their targets).
    expect(
      everything
        .replace(performance.split('<!-- targets')[1]!.split('<!-- /targets -->')[0]!, '')
        .split('| list_requests @ 10,000, varied (a different question each call): this build |').length,
    ).toBe(2);
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
    const args = line
      .split('#')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map((a) => a.replace(/^"\$PWD/, root.replace(/\/$/, '')).replace(/"$/, ''));
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: childEnv() });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'readme', version: '1' } } })}\n`,
    );
    const answer = () =>
      out
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l) as { id?: unknown })
        .find((m) => m.id === 1);
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
    const read = (name: keyof typeof SETTINGS, text: string) => settingSchema(name).safeParse(text).data as unknown;
    for (const name of ['timeoutMs', 'readOnly', 'confirmSend'] as const) {
      const setting = SETTINGS[name];
      // The registry's variables are for whoever sets environment variables: the words of SETTINGS.
      expect(variable(setting.env).description, setting.env).toBe(plainHelp(setting.help));
      expect(read(name, String(userConfig(setting.env).default)), setting.env).toEqual(read(name, setting.default));
      expect(read(name, variable(setting.env).default!), setting.env).toEqual(read(name, setting.default));
    }
    const timeout = settingSchema('timeoutMs');
    expect(userConfig('DOCREQ_TIMEOUT_MS').min).toBe(timeout.minValue);
    expect(userConfig('DOCREQ_TIMEOUT_MS').max).toBe(timeout.maxValue);
    expect(variable('DOCREQ_CONFIRM_SEND').choices).toEqual(settingSchema('confirmSend').out.options);
  });

  it("the bundle's settings form speaks to the person at the firm: no developer words, every choice named", () => {
    const form = Object.values(manifest.user_config).map((u) => u.description);
    for (const text of form) expect(text).not.toMatch(/elicitation|\bMCP\b|token|cannot be read|\btools?\b|\bhost\b|script|end to end|\bAPI call/i);
    expect(userConfig('DOCREQ_READ_ONLY').description).toMatch(/nothing can be e-mailed to a client/);
    // A person types confirm-send's value: each value the setting accepts is named, and what anything else does.
    for (const choice of settingSchema('confirmSend').out.options) expect(userConfig('DOCREQ_CONFIRM_SEND').description).toContain(choice);
    expect(userConfig('DOCREQ_CONFIRM_SEND').description).toMatch(/Anything else turns sending off/);
    expect(userConfig('DOCREQ_TIMEOUT_MS').description).toMatch(/30000 is 30 seconds/);
  });
});

/** A page's text between `<!-- name…-->` and `<!-- /name -->` (what-runs and package-size: docs/development.md). */
function block(name: string, text = development) {
  const opened = text.split(`<!-- ${name}`)[1];
  if (!opened) throw new Error(`no ${name} block`);
  return opened
    .slice(opened.indexOf('-->') + 3)
    .split(`<!-- /${name} -->`)[0]!
    .trim();
}
const facts = (await import(new URL('../scripts/readme-facts.mjs', import.meta.url).href)) as {
  packageBuildPackages: () => Promise<{ name: string; bytes: number }[]>;
  mcpBundlePackages: () => Promise<{ name: string; bytes: number }[]>;
  whatRunsBlock: (packages: { name: string; bytes: number }[]) => string;
  packSizes: () => { size: number; unpackedSize: number };
  packageSizeBlock: (sizes: { size: number; unpackedSize: number }) => string;
};
/** The package build's npm packages (esbuild's metafile), worked out once for this file. */
const bundled = facts.packageBuildPackages();
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { engines: { node: string }; devDependencies: Record<string, string> };
const engines = (name: string) =>
  (JSON.parse(readFileSync(`${root}node_modules/${name}/package.json`, 'utf8')) as { engines?: { node?: string } }).engines?.node;

/** Whether Node `version` (x.y.z) meets an npm `engines.node` range of the forms packages use (`>=`, `^`, `||`). */
function satisfies(version: string, range: string): boolean {
  const parse = (v: string) => v.split('.').map(Number).concat(0, 0).slice(0, 3) as [number, number, number];
  const cmp = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
  const v = parse(version);
  return range.split('||').some((alternative) =>
    alternative
      .replace(/(>=|<=|>|<|\^)\s+/g, '$1')
      .trim()
      .split(/\s+/)
      .every((comparator) => {
        const [, op = '', at = ''] = /^(>=|<=|>|<|\^|=)?v?([\d.x*]+)$/.exec(comparator) ?? [];
        const bound = parse(at.replace(/[x*]/g, '0'));
        if (op === '^') return cmp(v, bound) >= 0 && v[0] === bound[0];
        if (op === '>=') return cmp(v, bound) >= 0;
        if (op === '>') return cmp(v, bound) > 0;
        if (op === '<') return cmp(v, bound) < 0;
        if (op === '<=') return cmp(v, bound) <= 0;
        return at.split('.').every((part, i) => part === 'x' || part === '*' || Number(part) === v[i]);
      }),
  );
}

describe('README facts, each checked against its source', () => {
  it('what it stores and where: the folders it names are where the file store writes, and a send leaves only what it lists, for 24 hours', async () => {
    const stores = readme.slice(readme.indexOf('What it stores:')).split('\n\n')[0]!.replace(/\s+/g, ' ');
    const home = homedir();
    const named = {
      linuxXdg: defaultStateDir({ XDG_STATE_HOME: '$XDG_STATE_HOME' }, 'linux'),
      linux: defaultStateDir({}, 'linux').replace(home, '~'),
      macos: defaultStateDir({}, 'darwin').replace(home, '~'),
      windows: defaultStateDir({ LOCALAPPDATA: '%LOCALAPPDATA%' }, 'win32').replaceAll('/', '\\'),
    };
    expect(stores).toContain(`\`${named.linuxXdg}\` (else \`${named.linux}\`) on Linux, \`${named.macos}\` on macOS, \`${named.windows}\` on Windows`);
    for (const env of ['DOCREQ_STATE_DIR', 'DOCREQ_STORE']) expect(Object.values(SETTINGS).map((s) => s.env)).toContain(env);

    // The built CLI in a home of its own, nothing saying where to store: it writes where the README says (Linux).
    const fresh = mkdtempSync(join(suiteFolder(), 'home-'));
    const { DOCREQ_STATE_DIR: _dir, XDG_STATE_HOME: _xdg, ...env } = childEnv();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [`${root}dist/cli.js`, '--sandbox'],
      env: { ...env, HOME: fresh },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'readme', version: '1' });
    await client.connect(transport);
    const call = callerFor(client);
    const first = ((await call('list_clients', { limit: 1 })).structuredContent as { clients: { id: string; email: string; displayName: string }[] })
      .clients[0]!;
    const { sent } = await previewThenSend({ call }, 'create_request', { client: first.id, title: 'What it stores', items: [{ name: 'Bank statement' }] });
    await client.close();
    expect(sent.isError).toBeFalsy();
    const files = readdirSync(fresh, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name));
    expect(files.length).toBeGreaterThan(0);
    const folder = join(fresh, named.linux.slice(2));
    for (const file of files) expect(relative(folder, file), file).not.toMatch(/^\.\./);
    // On the sandbox, apart from the person's real sends: in the state folder's own sandbox folder.
    expect(stores).toContain('On the embedded sandbox (`--sandbox`) the records go to a `sandbox` folder inside it');
    for (const file of files) expect(relative(join(folder, 'sandbox'), file), file).not.toMatch(/^\.\./);
    // What the records hold: the fields the sentence lists, for 24 hours; never the key, never the client's e-mail.
    const listed = new Set([
      'outcome',
      'at',
      'requestId',
      'title',
      'by',
      'email',
      'sub',
      'request',
      'id',
      'status',
      'dueDate',
      'createdAt',
      'clientName',
      'totalItems',
      'completedItems',
      'warnings',
    ]);
    const fields = (value: unknown): string[] =>
      value && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => (Array.isArray(value) ? fields(v) : [k, ...fields(v)])) : [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const key of ALL_KEYS) expect(text).not.toContain(key);
      expect(text).not.toContain(first.email);
      const stored = JSON.parse(text) as { v: string; e: number };
      expect(stored.e - Date.now()).toBeLessThanOrEqual(24 * 60 * 60_000);
      for (const field of fields(JSON.parse(stored.v))) expect(listed, `${field} in ${file}`).toContain(field);
    }
    expect(stores).toMatch(/kept 24 hours/);
  }, 30_000);

  it('what runs: the block lists exactly the npm packages esbuild bundles (its metafile), each size within 10%; the MCP Bundle carries the same', async () => {
    const [packages, inBundle] = await Promise.all([bundled, facts.mcpBundlePackages()]);
    const written = block('what-runs');
    const sizes = new Map([...written.matchAll(/`([^`]+)` (<1|\d+)/g)].map((m) => [m[1]!, m[2] === '<1' ? 0 : Number(m[2])]));
    expect([...sizes.keys()].sort()).toEqual(packages.map((p) => p.name).sort());
    expect(inBundle.map((p) => p.name).sort()).toEqual(packages.map((p) => p.name).sort());
    for (const p of packages) expect(Math.abs(sizes.get(p.name)! - p.bytes / 1024), p.name).toBeLessThanOrEqual(Math.max(2, (p.bytes / 1024) * 0.1));
    expect(written).toContain(`${packages.length} npm packages`);
    // No other "What runs" sentence elsewhere in the README or its pages.
    expect(everything.split('What runs').length).toBe(2);
  }, 30_000);

  it('the package size is what npm pack reports, within 10%', () => {
    const { size, unpackedSize } = facts.packSizes();
    const [, download, unpacked] = /([\d.]+) MB to download, ([\d.]+) MB unpacked/.exec(block('package-size'))!;
    expect(Math.abs(Number(download) * 1e6 - size) / size).toBeLessThanOrEqual(0.1);
    expect(Math.abs(Number(unpacked) * 1e6 - unpackedSize) / unpackedSize).toBeLessThanOrEqual(0.1);
    // Sizes appear nowhere else (docs/performance.md points to this block).
    expect(everything.match(/1 package \([\d.]+ MB/g)).toHaveLength(1);
  });

  it('Node versions: the one it needs is package.json engines and meets every bundled package; the one for the demo sign-in and for development meets every tool', async () => {
    const [, runtime] = /Node\.js (\d+\.\d+\.\d+) or later must be installed/.exec(readme)!;
    const [, develop] = /\((\d+\.\d+) or later for the sandbox's demo\s+sign-in/.exec(readme)!;
    expect(pkg.engines.node).toBe(`>=${runtime}`);
    for (const { name } of await bundled) {
      const range = engines(name);
      if (range) expect(satisfies(runtime!, range), `${name} needs Node ${range}`).toBe(true);
    }
    for (const name of Object.keys(pkg.devDependencies)) {
      const range = engines(name);
      if (range) expect(satisfies(`${develop}.0`, range), `${name} needs Node ${range}`).toBe(true);
    }
    // oidc-provider (the demo identity provider) warns below an LTS line by codename: which major that is.
    const minimal = /const minimal = '(\w+)'/.exec(readFileSync(`${root}node_modules/oidc-provider/lib/index.js`, 'utf8'))![1]!;
    const LTS: Record<string, number> = { Hydrogen: 18, Iron: 20, Jod: 22, Krypton: 24 };
    expect(LTS[minimal], `oidc-provider wants the ${minimal} LTS line`).toBeLessThanOrEqual(Number(develop!.split('.')[0]));
    expect(Number(runtime!.split('.')[0])).toBeLessThan(LTS[minimal]!); // hence the two versions in the README
    // Every other place the README names a minimum Node version names the same one.
    for (const [, v] of readme.matchAll(/Node\.js older\s+than (\d+\.\d+(?:\.\d+)?)/g)) expect(v).toBe(runtime);
  });
});

const sb = await sandbox();
describe('status codes quoted in SETTINGS help are what team mode answers', () => {
  /** One raw HTTP/1.1 request to the service; its status code. */
  const status = async (port: number, head: string, body = '') => {
    const socket = tcpConnect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString()));
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(
      `${head}${body ? `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : ''}Connection: close\r\n\r\n${body}`,
    );
    // The status line is all this needs (an answer streamed as server-sent events may stay open).
    const statusLine = /^HTTP\/1\.1 (\d{3})/;
    while (!statusLine.test(got) && !socket.closed) await Promise.race([once(socket, 'data'), once(socket, 'close')]);
    socket.destroy();
    captured.push(got);
    return Number(statusLine.exec(got)?.[1]);
  };
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_clients', arguments: { limit: 1 } } });

  /** Each clause of a setting's help that quotes a status code, and a request that meets that case. */
  const cases: { setting: keyof typeof SETTINGS; clause: RegExp; answer: (port: number) => Promise<number> }[] = [
    {
      setting: 'allowedHosts',
      clause: /others get `(\d{3})`/,
      answer: (port) => status(port, `POST /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer ${SANDBOX_KEYS.demo}\r\n`, call),
    },
    {
      setting: 'allowedHosts',
      clause: /more than one `Host` header gets `(\d{3})`/,
      answer: (port) => status(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n'),
    },
    {
      setting: 'allowedOrigins',
      clause: /another `Origin` gets `(\d{3})`/,
      answer: (port) =>
        status(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\nAuthorization: Bearer ${SANDBOX_KEYS.demo}\r\n`, call),
    },
    {
      setting: 'rateLimit',
      clause: /beyond it `(\d{3})`/,
      answer: async (port) => {
        const once = () => status(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${SANDBOX_KEYS.demo}\r\n`, call);
        expect([await once(), await once()]).toEqual([200, 200]);
        return once();
      },
    },
  ];

  it('every quoted code has a case here', () => {
    for (const [name, setting] of Object.entries(SETTINGS)) {
      const quoted = [...setting.help.matchAll(/`(\d{3})`/g)].length;
      const covered = cases.filter((c) => c.setting === name && c.clause.test(setting.help)).length;
      expect(covered, `${setting.env}: ${setting.help}`).toBe(quoted);
    }
  });

  it.each(cases.map((c) => [`${SETTINGS[c.setting].env}: ${c.clause.source}`, c] as const))('%s', async (_, c) => {
    const svc = await teamService(sb, { rateLimit: 2 });
    const said = c.clause.exec(SETTINGS[c.setting].help);
    expect(said, `${SETTINGS[c.setting].env}'s help no longer says this`).not.toBeNull();
    const quoted = Number(said![1]);
    expect(await c.answer(Number(new URL(svc.url).port))).toBe(quoted);
  });
});

describe('docs/development.md: the tests as a table of contents', () => {
  it('names every test file once, so a newcomer finds each by the behaviour it proves', () => {
    const page = readFileSync(new URL('../docs/development.md', import.meta.url), 'utf8');
    const toc = page.slice(page.indexOf('## The tests, as a table of contents'), page.indexOf('## Scripts'));
    const files = readdirSync(new URL('.', import.meta.url))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => f.slice(0, -'.test.ts'.length));
    const named = [...toc.matchAll(/`([a-z0-9][a-z0-9-]*)`/g)].map((m) => m[1]!);
    expect(files.filter((f) => !named.includes(f))).toEqual([]);
    expect(named.filter((n) => !files.includes(n))).toEqual([]);
    expect(new Set(named).size).toBe(named.length);
  });
});
