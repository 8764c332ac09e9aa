/** What the sandbox's service and its fault injection share: an answer before it is written, and the call log. */
import type { ServerResponse } from 'node:http';

export interface LoggedCall {
  method: string;
  path: string;
  status: number | 'fault';
  idempotencyKey: string | undefined;
  userAgent: string | undefined;
  accept: string | undefined;
  contentType: string | undefined;
  /** The body of a POST, as received. */
  body?: string;
  /** For an injected huge body: how many bytes were written before the client stopped reading. */
  bytesWritten?: number;
  /** Request headers that matter for compression and revalidation, as received. */
  acceptEncoding?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
  /** The Content-Encoding of the answer, when it was compressed. */
  contentEncoding?: string;
  /** The query string as received (without `?`), when there was one. */
  query?: string;
}

/** One thing a refusal names: where (a body path, or a header) and what is wrong. */
export interface Problem {
  path: (string | number)[];
  message: string;
  /** For shapes that type their details (FastAPI): absent, not a known field, or a bad value (default). */
  kind?: 'missing' | 'extra' | 'invalid';
  in?: 'body' | 'header';
}

export interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
  /** A list answer: its cached representation, validators and compressed bodies. */
  list?: ListBody;
  /** A refusal by the service: what it says, whatever its shape, so an answer that echoes can say it again. */
  problem?: { code: string; message: string; details?: Problem[] };
}

export type ListName = 'clients' | 'requests';
export type Encoding = 'br' | 'gzip';

/** One serialized list, built once per change, with its validators and compressed forms. */
export interface ListBody {
  text: string;
  /** The text as UTF-8, made on first use and reused (identity answers and compression). */
  bytes?: Buffer;
  /** Strong validator: `"<sha1 of the body, base64url>"`. */
  etag: string;
  /** Last-Modified, in whole seconds: strictly increasing with every change of the body. */
  modifiedSec: number;
  /** Which of the newest requests a lagging list hid when it was built (their indexes, joined). */
  hidden: string;
  /** Set by a create or reseed: rebuild (and keep the validators when the text is unchanged). */
  stale: boolean;
  /** Headers of this body's answer (a paging Link). */
  headers?: Record<string, string>;
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
}

export const jsonAnswer = (status: number, value: unknown, headers?: Record<string, string>): Answer => ({ status, body: JSON.stringify(value), headers });
export const failure = (status: number, code: string, message: string, details?: { field: string; message: string }[]) =>
  jsonAnswer(status, { error: details ? { code, message, details } : { code, message } });

/** Resolves when the response can take more, or is gone. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
