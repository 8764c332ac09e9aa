import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtCli, INITIALIZE, INITIALIZED, messages } from './support/raw-stdio.js';

/**
 * Stdio under a host that stops reading stdout: the built binary dispatches a bounded number of calls
 * and holds a bounded amount of output while nobody reads, then answers every call once the host
 * reads again.
 */

const BIN = builtCli();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('stdio under a host that stops reading', () => {
  it('dispatches a bounded number of calls while stdout is not read, then answers every one when it is', async () => {
    const child = spawn(process.execPath, [BIN, '--sandbox', '--requests', '600', '--log-level', 'debug'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const onOut = (d: Buffer) => (out += d.toString());
    child.stdout.on('data', onOut);
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send(INITIALIZE);
    while (!messages(out).some((m) => m.id === 1)) await sleep(20);
    send(INITIALIZED);
    const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
    const before = rssMb();
    // The host stops reading stdout, then asks for many large lists (about 130 KB of answer each).
    const CALLS = 120;
    child.stdout.off('data', onOut);
    child.stdout.pause();
    for (let i = 0; i < CALLS; i++) send({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'list_requests', arguments: { limit: 500 } } });
    // Wait until the server has answered some and then stops answering (the count holds still), however long that takes here.
    const answered = () => (err.match(/list_requests answered in/g) ?? []).length;
    while (answered() === 0) await sleep(50);
    for (let last = -1; answered() !== last;) {
      last = answered();
      await sleep(1_500);
    }
    const held = answered();
    const grownMb = rssMb() - before;
    // Resume reading: every call is answered.
    child.stdout.on('data', onOut);
    child.stdout.resume();
    const ids = () =>
      new Set(
        messages(out)
          .filter((m) => m.result !== undefined && typeof m.id === 'number' && m.id >= 100)
          .map((m) => m.id),
      );
    while (ids().size < CALLS) await sleep(50);
    child.stdin.end();
    await once(child, 'exit');
    // Unbounded, every call is answered into the pipe (300 calls: 40 MB held, RSS +220 MB); bounded: 16 in flight plus 1 MB of output.
    expect(held).toBeLessThanOrEqual(40);
    expect(grownMb).toBeLessThan(150);
    expect(ids().size).toBe(CALLS);
  }, 120_000);
});
