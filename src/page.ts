import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/**
 * The service's own plain HTML pages (sign-in, the sandbox's identity provider, the home page): one
 * small inline style allowed by its hash, no script at all, every piece of data escaped.
 */

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1a1a1a}' +
  'main{max-width:34rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #d0d0cc;border-radius:8px}' +
  'h1{font-size:1.4rem;margin-top:0}ul{padding-left:1.2rem}' +
  '.actions{display:flex;gap:.75rem;margin-top:1.5rem}' +
  'button{font:inherit;padding:.6rem 1.2rem;border-radius:6px;border:1px solid #1d4ed8;cursor:pointer}' +
  '.primary{background:#1d4ed8;color:#fff}.secondary{background:#fff;color:#1d4ed8}' +
  'button:focus-visible,a:focus-visible{outline:3px solid #b45309;outline-offset:2px}' +
  'a.button{display:inline-block;padding:.6rem 1.2rem;border-radius:6px;background:#1d4ed8;color:#fff;text-decoration:none}' +
  '.note{color:#444;font-size:.9rem}';
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface Page {
  title: string;
  /** HTML, already escaped where it holds data. */
  body: string;
  status?: number;
}

/** Writes a page with its security headers; `formTargets` are the origins a form on it may lead to. */
export function sendPage(res: ServerResponse, page: Page, formTargets: string[] = []): void {
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `form-action 'self'${formTargets.map((o) => ` ${o}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="referrer" content="same-origin"><title>${escapeHtml(page.title)} · Document Requests</title><style>${STYLE}</style></head>` +
    `<body><main><h1>${escapeHtml(page.title)}</h1>${page.body}</main></body></html>`;
  res.writeHead(page.status ?? 200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // same-origin, not no-referrer: a form posted to this origin then carries its Origin header, which /authorize/decision checks.
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });
  res.end(html);
}
