// A real redis-server on loopback, for the tests of the shared send store.
import { spawn, type ChildProcess } from 'node:child_process';
import { RedisStore } from '../../src/store/redis.js';
import { freePort } from './ports.js';

/**
 * A real redis-server on loopback, on a port of its own (or `port`, to start it again there), no
 * persistence; resolves once it answers on database `db`. The caller stops `child`.
 */
export async function startRedis(port?: number, db = 3): Promise<{ port: number; child: ChildProcess; url: string }> {
  const p = port ?? (await freePort());
  const child = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${p}/${db}`;
  const probe = new RedisStore(url);
  try {
    await probe.ready(5_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    await probe.close();
  }
  return { port: p, child, url };
}
