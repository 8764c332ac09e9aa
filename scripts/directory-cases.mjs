#!/usr/bin/env node
// Runs docs/directory/test-cases.json against the built server (dist/cli.js over stdio, as a host
// starts it) on the embedded sandbox: each case's tool calls in order, each answer checked, and the
// requests the whole case created counted at the sandbox. Exit 1 on any failed case.
// Used by test/directory.test.ts (CI) and by hand: node scripts/directory-cases.mjs
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = new URL('..', import.meta.url);
const cli = fileURLToPath(new URL('dist/cli.js', root));

function day(offset) {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + offset);
  return d.toISOString().slice(0, 10);
}

/** "+14d" → the date 14 days ahead; "$token" → the previous answer's confirmation token. */
function resolve(value, token) {
  if (typeof value === 'string') {
    const m = /^\+(\d+)d$/.exec(value);
    if (m) return day(Number(m[1]));
    if (value === '$token') return token;
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, token));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, token)]));
  return value;
}

async function server(sandbox, env, readOnly) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, '--log-level', 'warn'],
    env: { PATH: process.env.PATH ?? '', ...env, DOCREQ_BASE_URL: sandbox.url, DOCREQ_API_KEY: sandbox.keys.demo, ...(readOnly ? { DOCREQ_READ_ONLY: 'true' } : {}) },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'directory-cases', version: '1' });
  await client.connect(transport);
  return client;
}

/** Runs every case; returns one line per case and whether all passed. `env` must hold DOCREQ_STATE_DIR (a folder of the caller's). */
export async function runCases({ env, file = fileURLToPath(new URL('docs/directory/test-cases.json', root)) } = {}) {
  const { startSandbox } = await import(new URL('dist/index.js', root).href);
  const { cases } = JSON.parse(readFileSync(file, 'utf8'));
  const sandbox = await startSandbox({});
  const ownState = env?.DOCREQ_STATE_DIR ? undefined : mkdtempSync(join(tmpdir(), 'docreq-directory-'));
  const childEnv = { ...env, ...(ownState ? { DOCREQ_STATE_DIR: ownState } : {}) };
  const clients = { normal: await server(sandbox, childEnv, false), readOnly: await server(sandbox, childEnv, true) };
  const lines = [];
  const answers = [];
  let ok = true;
  try {
    for (const c of cases) {
      const client = c.readOnly ? clients.readOnly : clients.normal;
      const problems = [];
      const postsBefore = sandbox.callsTo('POST', '/api/v1/requests').length;
      if (c.tools) {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        for (const word of c.tools.absent ?? []) if (names.some((n) => n === word || n.includes(word))) problems.push(`a tool named like "${word}" is offered`);
        if (c.tools.described && !tools.some((t) => new RegExp(c.tools.described, 'i').test(t.description ?? ''))) problems.push(`no tool description says /${c.tools.described}/`);
      }
      let token;
      for (const call of c.calls) {
        const result = await client.callTool({ name: call.tool, arguments: resolve(call.arguments, token) });
        const text = (result.content ?? []).map((p) => p.text ?? '').join('\n');
        answers.push(text);
        token = result.structuredContent?.confirmation?.token ?? token;
        const want = call.expect ?? {};
        if (want.isError !== undefined && Boolean(result.isError) !== want.isError) problems.push(`${call.tool}: isError ${Boolean(result.isError)}, expected ${want.isError}: ${text.slice(0, 200)}`);
        for (const part of want.text ?? []) if (!text.toLowerCase().includes(part.toLowerCase())) problems.push(`${call.tool}: the answer does not mention "${part}": ${text.slice(0, 200)}`);
      }
      const posts = sandbox.callsTo('POST', '/api/v1/requests').length - postsBefore;
      if (posts !== c.posts) problems.push(`${posts} requests created, expected ${c.posts}`);
      ok &&= problems.length === 0;
      lines.push(`${problems.length ? '✗' : '✓'} ${c.kind.padEnd(8)} ${c.id}: ${problems.length ? problems.join('; ') : c.outcome}`);
    }
  } finally {
    await Promise.allSettled([clients.normal.close(), clients.readOnly.close()]);
    await sandbox.close();
    if (ownState) rmSync(ownState, { recursive: true, force: true });
  }
  return { ok, lines, answers, counts: { positive: cases.filter((c) => c.kind === 'positive').length, negative: cases.filter((c) => c.kind === 'negative').length } };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { ok, lines, counts } = await runCases();
  process.stdout.write(`${lines.join('\n')}\n${counts.positive} positive and ${counts.negative} negative cases: ${ok ? 'all pass' : 'FAILED'}\n`);
  process.exitCode = ok ? 0 : 1;
}
