import type { IncomingMessage } from 'node:http';
import type { Encoding, ListBody } from './answer.js';

/** The sandbox's HTTP details: the body it reads, the encoding it answers with, and revalidation. */

const MAX_BODY = 1024 * 1024;

/** The encoding to answer with: br when acceptable, else gzip (also for `*`), else none. */
export function negotiate(acceptEncoding: string | string[] | undefined): Encoding | undefined {
  const accepted = new Map<string, number>();
  for (const part of (Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : (acceptEncoding ?? '')).split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (!token) continue;
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)).find(Boolean);
    accepted.set(token, q ? Number(q[1]) : 1);
  }
  const ok = (name: string) => (accepted.get(name) ?? (name !== 'identity' && accepted.has('*') ? accepted.get('*')! : 0)) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip') || ok('x-gzip')) return 'gzip';
  return undefined;
}

/** If-None-Match (weak comparison, `*` included) decides; without it, If-Modified-Since. */
export function notModified(req: IncomingMessage, list: ListBody): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    const tags = inm.split(',').map((t) => t.trim().replace(/^W\//, ''));
    return tags.includes('*') || tags.includes(list.etag);
  }
  const ims = req.headers['if-modified-since'];
  const since = ims ? Date.parse(ims) : Number.NaN;
  return !Number.isNaN(since) && list.modifiedSec * 1000 <= since;
}
export async function readPostBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
