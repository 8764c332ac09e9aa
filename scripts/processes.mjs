// What the measuring scripts (scripts/bench/: scale, throughput, bench-store, revalidate-bench), the team
// stack and the conformance run share to run real processes on loopback.
import { createServer } from 'node:net';

const issued = new Set();
/**
 * A loopback port nobody listens on now, never one this process was given before: two calls in a row
 * could otherwise get the same port back (the first was closed before the second asked), and the second
 * listener then fails with EADDRINUSE (CI's conformance step, seen once).
 */
export async function freePort() {
  for (;;) {
    const server = createServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    await new Promise((resolve) => server.close(resolve));
    if (!issued.has(port)) {
      issued.add(port);
      return port;
    }
  }
}

/** The demo key a `docreq-mcp sandbox` child prints on stdout; rejects if the child exits first. */
export function sandboxKey(child) {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      const m = /DOCREQ_API_KEY=(\S+)/.exec(text);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`the sandbox exited (${code}) before printing its key: ${text}`)));
  });
}
