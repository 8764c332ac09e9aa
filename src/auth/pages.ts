import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { oneLine } from '../text/render.js';

/**
 * The sign-in pages: plain HTML served by this service, one small inline style allowed by its hash,
 * no script at all, nothing taken from the request's query or body. What a page shows beyond its
 * fixed text (an app's host name, the signed-in address) comes from the service's own records and
 * is escaped.
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

/**
 * Asks the person before anything is signed in: which app asks (the name it gave itself, which this
 * page says is its own claim), where it returns, and what it may do.
 */
export function consentPage(appName: string | undefined, returnsTo: string, transaction: string): Page {
  const name = appName ? oneLine(appName, 100) : '';
  const who = name ? `An app that calls itself <strong>${escapeHtml(name)}</strong>` : 'An app that gives no name';
  return {
    title: 'Sign in to Document Requests',
    body:
      `<p>${who} asks to use the firm's Document Requests as you. When you are done, it returns you to <strong>${escapeHtml(oneLine(returnsTo, 200))}</strong>.</p>` +
      '<p>If you go on, you sign in with your firm account. The app can then list clients and requests, and, if you are allowed to send, send document requests in your name. Every request sent is recorded with your name.</p>' +
      '<p class="note">Only go on if you started this from your assistant just now, and you know the app and the address above.</p>' +
      `<form method="post" action="/authorize/decision"><input type="hidden" name="transaction" value="${escapeHtml(transaction)}">` +
      '<div class="actions"><button class="primary" type="submit" name="decision" value="continue">Continue to firm sign-in</button>' +
      '<button class="secondary" type="submit" name="decision" value="cancel">Cancel</button></div></form>',
  };
}

/** The sign-in cannot go on, and nothing is sent back to the app (its address is not trusted). */
export function errorPage(reason: string, status = 400): Page {
  return { title: 'Sign-in could not start', status, body: `<p>${escapeHtml(reason)}</p><p>Close this window and try connecting again from your assistant. If it keeps happening, ask your IT team.</p>` };
}

/** A signed-in person this firm does not let in: why, and the way back to the app, which is told (access_denied). */
export function refusedPage(email: string | undefined, why: string, back?: { app: string; href: string }): Page {
  return {
    title: 'Not allowed',
    status: 403,
    body:
      `<p>You are signed in${email ? ` as <strong>${escapeHtml(email)}</strong>` : ''}, but ${escapeHtml(why)}</p>` +
      '<p>Who may use Document Requests is set by your firm. Ask your IT team to add you, then connect again.</p>' +
      (back ? `<p><a class="button" href="${escapeHtml(back.href)}">Back to ${escapeHtml(oneLine(back.app, 100))}</a></p><p class="note">The app is told that you were not let in.</p>` : ''),
  };
}
