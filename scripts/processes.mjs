// What the measuring scripts (scale, throughput, bench-store) share to run real processes on loopback.
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
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
