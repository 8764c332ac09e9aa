import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { countSignIn } from '../src/transport/metrics.js';
import { RedisStore } from '../src/store/redis.js';
import { childEnv } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { teamService } from './support/team-service.js';
import { freePort } from './support/ports.js';

/**
 * Team mode's metrics (DOCREQ_METRICS_PORT), scraped over HTTP and read by a strict parser of the
 * Prometheus text format (0.0.4) written here: every sample under a declared family, labels well
 * escaped, no series twice, histograms cumulative with +Inf equal to _count. Counts must agree with
 * the calls the test made.
 */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';

export function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const series = new Set<string>();
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  for (const [n, line] of text.slice(0, -1).split('\n').entries()) {
    const where = `line ${n + 1} (${JSON.stringify(line.slice(0, 80))})`;
    if (line === '') continue; // the format ignores empty lines
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line))) {
      if (helps.has(m[1]!)) throw new Error(`${where}: HELP twice`);
      helps.add(m[1]!);
      continue;
    }
    if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      if (types.has(m[1]!)) throw new Error(`${where}: TYPE twice`);
      types.set(m[1]!, m[2]!);
      continue;
    }
    if (line.startsWith('#')) throw new Error(`${where}: not a HELP, TYPE or sample line`);
    m = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`).exec(line);
    if (!m) throw new Error(`${where}: not a sample`);
    const [, name, labelText = '', valueText] = m as unknown as [string, string, string | undefined, string];
    const labels: Record<string, string> = {};
    const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
    let at = 0;
    while (at < labelText.length) {
      label.lastIndex = at;
      const l = label.exec(labelText);
      if (!l) throw new Error(`${where}: bad label at ${at}`);
      if (l[1]! in labels) throw new Error(`${where}: label ${l[1]} twice`);
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      at = label.lastIndex;
    }
    // Values as Prometheus reads them (Go's ParseFloat: Inf and NaN in any case; prom-client writes "Nan").
    const special = /^([+-]?)inf(inity)?$/i.exec(valueText);
    const value = special ? (special[1] === '-' ? -Infinity : Infinity) : /^nan$/i.test(valueText) ? NaN : Number(valueText);
    if (Number.isNaN(value) && !/^nan$/i.test(valueText)) throw new Error(`${where}: value ${valueText}`);
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    const type = types.get(family);
    if (!type) throw new Error(`${where}: no TYPE for ${name}`);
    if (family !== name && type !== 'histogram' && type !== 'summary') throw new Error(`${where}: ${name} under a ${type}`);
    if (name.endsWith('_bucket') && type === 'histogram' && !('le' in labels)) throw new Error(`${where}: bucket without le`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) throw new Error(`${where}: series twice`);
    series.add(key);
    samples.push({ name, labels, value });
  }
  // Histograms: buckets cumulative, +Inf equal to _count, per label set.
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const groups = new Map<string, Sample[]>();
    for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le: _le, ...rest } = s.labels;
      const k = JSON.stringify(Object.entries(rest).sort());
      groups.set(k, [...(groups.get(k) ?? []), s]);
    }
    for (const [k, buckets] of groups) {
      const sorted = [...buckets].sort(
        (a, b) => Number(a.labels.le === '+Inf' ? Infinity : a.labels.le) - Number(b.labels.le === '+Inf' ? Infinity : b.labels.le),
      );
      for (let i = 1; i < sorted.length; i++) if (sorted[i]!.value < sorted[i - 1]!.value) throw new Error(`${family}${k}: buckets not cumulative`);
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(Object.entries(s.labels).sort()) === k);
      if (sorted.at(-1)!.labels.le !== '+Inf' || sorted.at(-1)!.value !== count?.value) throw new Error(`${family}${k}: +Inf bucket is not _count`);
    }
  }
  return { types, samples };
}

const sb = await sandbox();
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

async function scrape(url: string) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  captured.push(text);
  return { text, ...parseExposition(text) };
}

describe('the strict parser', () => {
  it('refuses what the format does not allow', () => {
    expect(() => parseExposition('a 1\n')).toThrow(/no TYPE/);
    expect(() => parseExposition('# TYPE a counter\na{x="1} 1\n')).toThrow(/bad label|not a sample/);
    expect(() => parseExposition('# TYPE a counter\na 1\na 2\n')).toThrow(/twice/);
    expect(() => parseExposition('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\n')).toThrow(/cumulative/);
    expect(() => parseExposition('# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 1\n')).toThrow(/_count/);
    expect(parseExposition('# HELP a x\n# TYPE a gauge\na{b="q\\"\\\\"} 1.5\n').samples).toEqual([{ name: 'a', labels: { b: 'q"\\' }, value: 1.5 }]);
  });
});

describe('team mode metrics (DOCREQ_METRICS_PORT)', () => {
  it('are off unless a port is set', async () => {
    const svc = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' }) });
    expect(svc.metricsUrl).toBeUndefined();
  });

  it('count calls by tool and outcome, latency, sends by outcome, rate-limit refusals, sign-ins and store health, with no key, person or client in any label', async () => {
    const config = loadConfig({ confirmSend: 'never' }, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' });
    const svc = await teamService(sb, { config, metricsPort: 0, rateLimit: 8 });
    expect(svc.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const before = await scrape(svc.metricsUrl!);
    const signedInBefore = value(before.samples, 'docreq_sign_ins_total', { outcome: 'signed_in' });

    const client = new Client({ name: 'metrics-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${sb.keys.demo}` } } }),
    );
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      captured.push(JSON.stringify(result));
      return result;
    };
    const [a, b, c] = sb.demoFirm.clients.filter((x) => x.status === 'active');
    for (let i = 0; i < 3; i++) expect((await call('list_clients', { limit: 1 })).isError).toBeFalsy();
    expect((await call('list_clients', { limit: 'many' })).isError).toBe(true);
    await expect(call('no_such_tool', {})).rejects.toThrow(/Unknown tool/);
    const title = `Metrics ${Date.now()}`;
    expect((await call('create_request', { client: a!.id, title, items: [{ name: 'A' }] })).structuredContent).toMatchObject({ outcome: 'sent' });
    const batch = await call('create_request_batch', { clients: [b!.id, c!.id], title: `${title} batch`, items: [{ name: 'B' }] });
    expect((batch.structuredContent as { sent: number }).sent).toBe(2);
    // 7 tool calls so far against a limit of 8: a batch of 9 is refused whole, then the 9th single call is.
    const post = (body: unknown) =>
      fetch(`${svc.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${sb.keys.demo}` },
        body: JSON.stringify(body),
      });
    const one = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_clients', arguments: { limit: 1 } } });
    expect((await post(Array.from({ length: 9 }, (_, i) => one(100 + i)))).status).toBe(429);
    expect((await post(one(200))).status).toBe(200);
    expect((await post(one(201))).status).toBe(429);
    countSignIn('signed_in');
    await client.close();

    const after = await scrape(svc.metricsUrl!);
    const s = after.samples;
    expect(after.types.get('docreq_tool_calls_total')).toBe('counter');
    expect(after.types.get('docreq_tool_call_duration_seconds')).toBe('histogram');
    expect(value(s, 'docreq_tool_calls_total', { tool: 'list_clients', outcome: 'ok' })).toBe(4);
    expect(value(s, 'docreq_tool_calls_total', { tool: 'list_clients', outcome: 'error' })).toBe(1);
    expect(value(s, 'docreq_tool_calls_total', { tool: 'unknown', outcome: 'protocol_error' })).toBe(1);
    expect(value(s, 'docreq_tool_calls_total', { tool: 'create_request', outcome: 'ok' })).toBe(1);
    expect(value(s, 'docreq_tool_calls_total')).toBe(8);
    expect(value(s, 'docreq_tool_call_duration_seconds_count', { tool: 'list_clients' })).toBe(5);
    expect(value(s, 'docreq_tool_call_duration_seconds_count')).toBe(8);
    expect(value(s, 'docreq_sends_total', { tool: 'create_request', outcome: 'sent' })).toBe(1);
    expect(value(s, 'docreq_sends_total', { tool: 'create_request_batch', outcome: 'sent' })).toBe(2);
    expect(value(s, 'docreq_rate_limited_total', { reason: 'batch' })).toBe(1);
    expect(value(s, 'docreq_rate_limited_total', { reason: 'limit' })).toBe(1);
    expect(value(s, 'docreq_sign_ins_total', { outcome: 'signed_in' })).toBe(signedInBefore + 1);
    expect(value(s, 'docreq_send_store_up', { backend: 'memory' })).toBe(1);

    // The Grafana dashboard (deploy/) asks only for what is served (docreq_idp_up: with sign-in only).
    const dashboard = readFileSync(new URL('../deploy/grafana-dashboard.json', import.meta.url), 'utf8');
    const asked = new Set([...dashboard.matchAll(/\b(docreq_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, '')));
    expect(asked.size).toBeGreaterThan(6);
    for (const name of asked) if (name !== 'docreq_idp_up') expect(after.types.has(name), name).toBe(true);
    expect(readFileSync(new URL('../src/transport/metrics.ts', import.meta.url), 'utf8')).toContain("name: 'docreq_idp_up'");

    // No label holds a key, its fingerprint, a client's id, name or e-mail, or what a caller typed.
    const labelValues = s.flatMap((x) => Object.values(x.labels));
    const secretish: string[] = [
      ...Object.values(sb.keys as unknown as Record<string, string>),
      svc.fingerprint(sb.keys.demo),
      'no_such_tool',
      'many',
      title,
      ...[a, b, c].flatMap((x) => [x!.id, x!.email, x!.displayName]),
    ];
    for (const v of labelValues) for (const bad of secretish) if (bad) expect(v).not.toContain(bad);
    for (const bad of secretish) if (bad && bad.length > 3) expect(after.text).not.toContain(bad);
  });

  it('say the send store is down (0) when it does not answer', async () => {
    const store = new RedisStore(`redis://127.0.0.1:${await freePort()}/3`);
    const svc = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url }), sendStore: store, metricsPort: 0 });
    const { samples } = await scrape(svc.metricsUrl!);
    expect(value(samples, 'docreq_send_store_up', { backend: 'redis' })).toBe(0);
  });

  it('answers only GET /metrics, on loopback', async () => {
    const svc = await teamService(sb, { config: loadConfig({}, { DOCREQ_BASE_URL: sb.url, DOCREQ_STORE: 'memory' }), metricsPort: 0 });
    const base = svc.metricsUrl!.replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(svc.metricsUrl!, { method: 'POST' })).status).toBe(404);
  });
});

describe('the built CLI', () => {
  it('serves metrics with --metrics-port, and says where on stderr', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [new URL('../dist/cli.js', import.meta.url).pathname, '--transport', 'http', '--sandbox', '--port', '0', '--metrics-port', String(port)],
      {
        env: { ...childEnv(), DOCREQ_STORE: 'memory' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect.poll(() => stderr, { timeout: 10_000 }).toContain(`metrics (Prometheus text format) at http://127.0.0.1:${port}/metrics`);
      const { samples } = await scrape(`http://127.0.0.1:${port}/metrics`);
      expect(value(samples, 'docreq_send_store_up', { backend: 'memory' })).toBe(1);
    } finally {
      child.kill('SIGTERM'); // its stderr holds the sandbox's demo keys, by design: not kept
    }
  });
});

describe('prom-client stays out of the stdio start-up', () => {
  it('is not in what every start loads: dist/cli.js, the main chunk it loads, and what they import statically (it is a chunk of its own, loaded only with metrics on)', () => {
    const cli = new URL('../dist/cli.js', import.meta.url).pathname;
    if (!existsSync(cli)) throw new Error('dist/ is missing: npm run build');
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      // Static imports only: `import … from "./x.js"` and `import "./x.js"`, not import("./x.js").
      for (const m of text.matchAll(/(?:^|[;}\s])import\s*(?:[\w*${}\s,]+from\s*)?["'](\.{1,2}\/[^"']+)["']/g)) visit(join(dirname(file), m[1]!));
    };
    visit(cli);
    // The executable's first file imports the rest after turning on the compile cache (src/cli.ts): that
    // import runs on every start.
    const rest = [...readFileSync(cli, 'utf8').matchAll(/\bimport\(["'](\.\/chunks\/main-[^"']+)["']\)/g)].map((m) => join(dirname(cli), m[1]!));
    expect(rest).toHaveLength(1);
    visit(rest[0]!);
    expect(seen.size).toBeGreaterThan(2);
    for (const file of seen) expect(readFileSync(file, 'utf8'), file).not.toContain('process_cpu_user_seconds_total');
  });
});
