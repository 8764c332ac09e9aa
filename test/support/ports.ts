// Free loopback TCP ports, each handed out once per process.
import { createServer as createNetServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
const issuedPorts = new Set<number>();
/** A loopback port nobody listens on now, never one this process was given before (two calls in a row could get the same one back). */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = createNetServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise((r) => server.close(r));
    if (!issuedPorts.has(port)) {
      issuedPorts.add(port);
      return port;
    }
  }
}
