import type { IncomingMessage, ServerResponse } from 'node:http';

/** Sign-in's HTTP: request bodies as OAuth reads them, its errors, and its JSON and redirect answers. */

export class OAuthError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const MAX_FORM = 16 * 1024;

/** A request body as sign-in reads it: a form, a JSON object, or why it cannot be used (a 4xx, never a 500). */
export type Body = { kind: 'form'; params: URLSearchParams } | { kind: 'json'; value: Record<string, unknown> } | { kind: 'bad'; status: number; why: string };

export function readFormBody(req: IncomingMessage): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORM) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_FORM) return resolve({ kind: 'bad', status: 413, why: `The request body is larger than ${MAX_FORM / 1024} KiB.` });
      const text = Buffer.concat(chunks).toString('utf8');
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type === 'application/json') {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return resolve({ kind: 'bad', status: 400, why: 'The body is not valid JSON.' });
        }
        if (!value || typeof value !== 'object' || Array.isArray(value)) return resolve({ kind: 'bad', status: 400, why: 'The body must be a JSON object.' });
        return resolve({ kind: 'json', value: value as Record<string, unknown> });
      }
      if (type !== '' && type !== 'application/x-www-form-urlencoded')
        return resolve({ kind: 'bad', status: 415, why: 'Send application/x-www-form-urlencoded or application/json.' });
      resolve({ kind: 'form', params: new URLSearchParams(text) });
    });
    req.on('error', reject);
  });
}

/** The form a token, revocation or consent request must be; anything else is an OAuth error (4xx). */
export function formOf(body: Body): URLSearchParams {
  if (body.kind === 'form') return body.params;
  throw new OAuthError(
    'invalid_request',
    body.kind === 'bad' ? body.why : 'Send this request as application/x-www-form-urlencoded.',
    body.kind === 'bad' ? body.status : 400,
  );
}

/** One value of a form parameter; a repeated parameter is refused, as OAuth requires. */
export function one(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new OAuthError('invalid_request', `${name} is given more than once.`);
  return all[0] === '' ? undefined : all[0];
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*', ...headers });
  res.end(JSON.stringify(body));
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
  res.end();
}
