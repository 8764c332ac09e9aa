import { escapeHtml, type Page } from '../page.js';
import { oneLine } from '../text/render.js';

/**
 * The sign-in pages: plain HTML served by this service, one small inline style allowed by its hash,
 * no script at all, nothing taken from the request's query or body. What a page shows beyond its
 * fixed text (an app's host name, the signed-in address) comes from the service's own records and
 * is escaped.
 */

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
  return {
    title: 'Sign-in could not start',
    status,
    body: `<p>${escapeHtml(reason)}</p><p>Close this window and try connecting again from your assistant. If it keeps happening, ask your IT team.</p>`,
  };
}

/** A signed-in person this firm does not let in: why, and the way back to the app, which is told (access_denied). */
export function refusedPage(email: string | undefined, why: string, back?: { app: string; href: string }): Page {
  return {
    title: 'Not allowed',
    status: 403,
    body:
      `<p>You are signed in${email ? ` as <strong>${escapeHtml(email)}</strong>` : ''}, but ${escapeHtml(why)}</p>` +
      '<p>Who may use Document Requests is set by your firm. Ask your IT team to add you, then connect again.</p>' +
      (back
        ? `<p><a class="button" href="${escapeHtml(back.href)}">Back to ${escapeHtml(oneLine(back.app, 100))}</a></p><p class="note">The app is told that you were not let in.</p>`
        : ''),
  };
}
