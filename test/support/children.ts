// What the store tests that start real processes share: the children they start (killed when the file
// ends), a redis-server among them, a race of claimers, and an MCP client whose answers the key scan reads.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll } from 'vitest';
import { childEnv } from './folders.js';
import { captured } from './key-scan.js';
import { startRedis as startRedisServer } from './redis.js';

/**
 * This file's child processes, each SIGKILLed when the file ends if still running; startRedis (./redis.ts)
 * and claimRace count their children among them.
 */
export function childProcesses() {
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });
  return {
    children,
    startRedis: async (port?: number): Promise<{ port: number; child: ChildProcess; url: string }> => {
      const redis = await startRedisServer(port);
      children.add(redis.child);
      return redis;
    },
    claimRace: (where: string, processes: number, keys: string[], ttlMs: number) => claimRace(children, where, processes, keys, ttlMs),
  };
}

/** Stops `child` with `signal` and waits for it to exit (at once when it already has). */
export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

const text = (r: CallToolResult) => (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

export interface Mcp {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }>;
  pid: number | null;
  close(): Promise<void>;
}

export function wrap(client: Client, pid: number | null = null): Mcp {
  return {
    client,
    pid,
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const t = text(result);
      captured.push(t);
      return { ...result, text: t };
    },
    close: () => client.close().catch(() => undefined),
  };
}

/**
 * N real node processes, each with its own store (the built dist/index.js) on one folder or one Redis,
 * held at a barrier (ready on stdout, go on stdin) and then claiming the same keys at once: each key
 * has exactly one winner. A claim that is not an exclusive create (`wx`, `SET NX`) gives every process the key.
 */
async function claimRace(children: Set<ChildProcess>, where: string, processes: number, keys: string[], ttlMs: number): Promise<Map<string, number>> {
  const lib = new URL('../../dist/index.js', import.meta.url).href;
  const script = `
    import { FileStore, RedisStore } from ${JSON.stringify(lib)};
    const where = process.env.RACE_AT;
    const store = where.startsWith('redis://') ? new RedisStore(where) : new FileStore(where);
    if (store instanceof RedisStore) await store.ready(5000);
    await store.get('race:warm');
    process.stdout.write('ready\\n');
    process.stdin.once('data', async () => {
      const keys = JSON.parse(process.env.RACE_KEYS);
      const won = await Promise.all(keys.map((k) => store.claim(k, 'owner-' + process.pid, Number(process.env.RACE_TTL))));
      process.stdout.write(JSON.stringify(keys.filter((_, i) => won[i])) + '\\n');
      process.exit(0);
    });`;
  const racers = Array.from({ length: processes }, () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...childEnv(), RACE_AT: where, RACE_KEYS: JSON.stringify(keys), RACE_TTL: String(ttlMs) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const waiting: [number, (line: string) => void, (error: Error) => void][] = [];
    const settle = () => {
      const lines = out.split('\n').slice(0, -1);
      for (const w of waiting.splice(0)) {
        if (lines.length > w[0]) w[1](lines[w[0]]!);
        else if (child.exitCode !== null) w[2](new Error(`racer exited: ${err}`));
        else waiting.push(w);
      }
    };
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      settle();
    });
    child.once('exit', settle);
    const line = (n: number) => new Promise<string>((resolve, reject) => waiting.push([n, resolve, reject]));
    const result = line(1);
    result.catch(() => undefined); // awaited below, once every racer is ready
    return { child, ready: line(0), result };
  });
  await Promise.all(racers.map((r) => r.ready));
  for (const r of racers) r.child.stdin.write('go\n');
  const wins = new Map<string, number>(keys.map((k) => [k, 0]));
  for (const r of racers) for (const k of JSON.parse(await r.result) as string[]) wins.set(k, wins.get(k)! + 1);
  return wins;
}
