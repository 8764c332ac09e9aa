// An emulated remote link on loopback: a small HTTP proxy (plain node:http, no dependencies) that
// adds a fixed delay per round trip, caps throughput with a token bucket, and, like a CDN, gzips an
// uncompressed upstream answer when the client's Accept-Encoding asks. Validators pass through:
// If-None-Match / If-Modified-Since go upstream, ETag / Last-Modified / 304 come back (a gzipped
// answer's strong ETag is weakened, as nginx and CDNs do).
//
//   import { startLinkProxy } from './link-proxy.mjs';
//   const link = await startLinkProxy({ upstream: sb.url, rttMs: 40, mbit: 50 });
//   ... use link.url as the base URL ...; link.stats.bytesOut; await link.close();
//
//   node scripts/link-proxy.mjs --upstream http://127.0.0.1:4010 [--port 0] [--rtt 40] [--mbit 50] [--no-gzip]
//
// Requests in absolute form (`GET http://host/path`, as sent to an HTTP_PROXY) go to that origin;
// others go to `upstream`.
import { Agent, createServer, request as httpRequest } from 'node:http';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGzip } from 'node:zlib';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const COMPRESSIBLE = /json|text|javascript|xml/i;
const SLICE = 16 * 1024;

/**
 * One direction of the link: a token bucket on a virtual clock. `take(n)` resolves when n more bytes
 * have crossed the link at `bytesPerSec`; all connections share it, as they share a real link.
 */
function bucket(bytesPerSec) {
  // Up to BURST_MS of unused capacity is kept, so timer overshoot is made up for rather than lost.
  const BURST_MS = 10;
  let free = 0; // performance.now() at which the link is idle again
  return async (n) => {
    if (!(bytesPerSec > 0)) return;
    const now = performance.now();
    free = Math.max(now - BURST_MS, free) + (n * 1000) / bytesPerSec;
    const wait = free - now;
    if (wait >= 2) await sleep(wait);
  };
}

function drained(stream) {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** Copies `source` into `target` in slices paced by `take`, honouring backpressure; counts bytes. */
async function pump(source, target, take, count) {
  for await (const chunk of source) {
    for (let at = 0; at < chunk.length; at += SLICE) {
      if (target.destroyed) return;
      const slice = chunk.subarray(at, at + SLICE);
      await take(slice.length);
      count(slice.length);
      if (!target.write(slice)) await drained(target);
    }
  }
  target.end();
}

function wantsGzip(acceptEncoding) {
  for (const part of String(acceptEncoding ?? '').split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (token !== 'gzip' && token !== 'x-gzip' && token !== '*') continue;
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)).find(Boolean);
    if (!q || Number(q[1]) > 0) return true;
  }
  return false;
}

/**
 * Starts the proxy.
 * @param {{ upstream?: string, rttMs?: number, mbit?: number, port?: number, host?: string, gzip?: boolean, gzipLevel?: number }} options
 *   upstream: origin (and optional path prefix) to forward to; rttMs: added per round trip (default 40:
 *   half before forwarding the request, half before the answer's first byte); mbit: throughput cap
 *   each way in Mbit/s (default 50; 0 = none); gzip: compress as a CDN would (default true).
 * @returns {Promise<{ url: string, close(): Promise<void>, stats: { requests: number, bytesIn: number, bytesOut: number, bytesUp: number, gzipped: number, notModified: number } }>}
 *   stats.bytesOut: body bytes sent to clients (after compression: what crossed the link);
 *   bytesIn: body bytes received from upstream; bytesUp: request body bytes sent upstream.
 */
export async function startLinkProxy(options = {}) {
  const rttMs = options.rttMs ?? 40;
  const bytesPerSec = ((options.mbit ?? 50) * 1_000_000) / 8;
  const gzip = options.gzip ?? true;
  const upstream = options.upstream ? new URL(options.upstream) : undefined;
  const prefix = upstream ? upstream.pathname.replace(/\/+$/, '') : '';
  const down = bucket(bytesPerSec);
  const up = bucket(bytesPerSec);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const stats = { requests: 0, bytesIn: 0, bytesOut: 0, bytesUp: 0, gzipped: 0, notModified: 0 };
  const sockets = new Set();

  const server = createServer((req, res) => {
    stats.requests++;
    let target;
    try {
      target = /^https?:\/\//i.test(req.url ?? '') ? new URL(req.url) : upstream ? new URL(prefix + (req.url ?? '/'), upstream) : undefined;
    } catch {
      target = undefined;
    }
    if (!target || target.protocol !== 'http:') {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('link-proxy: no upstream for this request (plain http only)\n');
      return;
    }
    const headers = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    headers.host = target.host;

    const fail = (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`link-proxy: upstream failed (${error?.code ?? 'error'})\n`);
      else res.destroy();
    };

    void (async () => {
      await sleep(rttMs / 2);
      if (res.destroyed) return;
      const upstreamReq = httpRequest(target, { method: req.method, headers, agent }, (upstreamRes) => {
        void (async () => {
          await sleep(rttMs / 2);
          if (res.destroyed) {
            upstreamRes.destroy();
            return;
          }
          const out = {};
          for (const [name, value] of Object.entries(upstreamRes.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
          const status = upstreamRes.statusCode ?? 502;
          if (status === 304) stats.notModified++;
          const hasBody = req.method !== 'HEAD' && status !== 204 && status !== 304 && !(status >= 100 && status < 200);
          const encoded = upstreamRes.headers['content-encoding'] && upstreamRes.headers['content-encoding'] !== 'identity';
          const compress = gzip && hasBody && !encoded && wantsGzip(req.headers['accept-encoding']) && COMPRESSIBLE.test(String(upstreamRes.headers['content-type'] ?? 'application/json'));
          if (compress) {
            stats.gzipped++;
            delete out['content-length'];
            out['content-encoding'] = 'gzip';
            out.vary = out.vary ? `${out.vary}, Accept-Encoding` : 'Accept-Encoding';
            if (typeof out.etag === 'string' && !out.etag.startsWith('W/')) out.etag = `W/${out.etag}`;
          }
          res.writeHead(status, out);
          if (!hasBody) {
            upstreamRes.resume();
            res.end();
            return;
          }
          const sent = (n) => (stats.bytesOut += n);
          if (!compress) {
            await pump(upstreamRes, res, down, (n) => ((stats.bytesIn += n), sent(n))).catch(() => res.destroy());
            return;
          }
          const gz = createGzip({ level: options.gzipLevel ?? 6 });
          const feed = (async () => {
            for await (const chunk of upstreamRes) {
              stats.bytesIn += chunk.length;
              if (!gz.write(chunk)) await drained(gz);
            }
            gz.end();
          })();
          feed.catch(() => gz.destroy());
          await pump(gz, res, down, sent).catch(() => res.destroy());
        })();
      });
      upstreamReq.on('error', fail);
      res.on('close', () => {
        if (!res.writableFinished) upstreamReq.destroy();
      });
      await pump(req, upstreamReq, up, (n) => (stats.bytesUp += n)).catch(fail);
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    async close() {
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const invokedDirectly = process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const args = process.argv.slice(2);
  const flag = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
  };
  const upstream = flag('upstream', undefined);
  if (!upstream || args.includes('--help')) {
    console.error('usage: node scripts/link-proxy.mjs --upstream http://127.0.0.1:PORT [--port 0] [--host 127.0.0.1] [--rtt 40] [--mbit 50] [--no-gzip]');
    process.exit(upstream ? 0 : 2);
  }
  const proxy = await startLinkProxy({
    upstream,
    port: Number(flag('port', 0)),
    host: flag('host', '127.0.0.1'),
    rttMs: Number(flag('rtt', 40)),
    mbit: Number(flag('mbit', 50)),
    gzip: !args.includes('--no-gzip'),
  });
  console.log(`link-proxy ${proxy.url} -> ${upstream} (rtt ${flag('rtt', 40)} ms, ${flag('mbit', 50)} Mbit/s${args.includes('--no-gzip') ? '' : ', gzip when asked'})`);
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
