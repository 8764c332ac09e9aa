import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import { drained, type Answer, type Encoding, type ListBody, type LoggedCall } from './answer.js';
import { negotiate, notModified } from './http-rules.js';

// How the sandbox writes an answer on the wire: validators and 304s, compression, and the emulated link's pace.

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** What delivery needs of the sandbox: whether lists are compressed when asked, and the emulated link's bandwidth (0: unpaced). */
export interface Delivery {
  compress: boolean;
  bytesPerSec: number;
}

/**
 * Writes an answer: list answers with their validators (a matching If-None-Match, or failing that
 * If-Modified-Since, gives 304) and compressed when asked (br preferred, else gzip); `force`
 * compresses whatever was asked. Bodies are paced by the emulated link.
 */
export async function deliver(req: IncomingMessage, res: ServerResponse, answer: Answer, entry: LoggedCall, link: Delivery, force?: Encoding): Promise<void> {
  if (res.destroyed) return;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...answer.headers };
  const list = answer.list;
  let payload: Buffer | string = answer.body;
  let status = answer.status;
  if (list) {
    headers.etag = list.etag;
    headers['last-modified'] = new Date(list.modifiedSec * 1000).toUTCString();
    headers['cache-control'] = 'no-cache';
    headers.vary = 'Accept-Encoding';
    if (!force && notModified(req, list)) {
      status = 304;
      entry.status = 304;
      delete headers['content-type'];
      res.writeHead(304, headers);
      res.end();
      return;
    }
  }
  const encoding = force ?? (list && link.compress ? negotiate(req.headers['accept-encoding']) : undefined);
  if (encoding) {
    payload = list ? await encode(list, encoding) : await gzipAsync(Buffer.from(answer.body));
    headers['content-encoding'] = encoding;
    headers.vary = 'Accept-Encoding';
    entry.contentEncoding = encoding;
  } else if (list) {
    payload = list.bytes ??= Buffer.from(list.text);
  }
  if (res.destroyed) return;
  if (status === 204 && Buffer.byteLength(payload) === 0) {
    // No Content: neither a body nor the headers that describe one.
    delete headers['content-type'];
    res.writeHead(status, headers);
    res.end();
    return;
  }
  headers['content-length'] = String(Buffer.byteLength(payload));
  res.writeHead(status, headers);
  await writeBody(res, payload, link.bytesPerSec);
}

/** Ends the response with `payload`, in timed slices when the link caps bandwidth. */
async function writeBody(res: ServerResponse, payload: Buffer | string, rate: number): Promise<void> {
  if (!rate || payload.length === 0) {
    res.end(payload);
    return;
  }
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const slice = Math.max(1024, Math.min(64 * 1024, Math.floor(rate / 100)));
  const started = performance.now();
  for (let sent = 0; sent < bytes.length && !res.destroyed;) {
    const n = Math.min(slice, bytes.length - sent);
    // The slice leaves when the link has carried everything before it and itself.
    const due = started + ((sent + n) * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const ok = res.write(bytes.subarray(sent, sent + n));
    sent += n;
    if (!ok) await drained(res);
  }
  res.end();
}

/** A list's body compressed once per encoding, kept with the list (dropped if compressing failed). */
export function encode(list: ListBody, encoding: Encoding): Promise<Buffer> {
  const cached = list.encoded[encoding];
  if (cached) return cached;
  const input = (list.bytes ??= Buffer.from(list.text));
  const made =
    encoding === 'br'
      ? brotliAsync(input, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: input.length } })
      : gzipAsync(input, { level: 6 });
  list.encoded[encoding] = made;
  made.catch(() => delete list.encoded[encoding]);
  return made;
}
