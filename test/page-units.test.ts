import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { escapeHtml, sendPage } from '../src/page.js';

/** The service's own HTML pages (src/page.ts), exactly: what is escaped, the headers, and the style its policy allows. */
function capture(page: Parameters<typeof sendPage>[1], targets?: string[]) {
  let status = 0;
  let headers: Record<string, string> = {};
  let body = '';
  const res = { writeHead: (s: number, h: Record<string, string>) => ((status = s), (headers = h)), end: (b: string) => (body = b) } as unknown as ServerResponse;
  sendPage(res, page, targets);
  return { status, headers, body };
}

describe('escapeHtml', () => {
  it('each of & < > " and \' as a numeric reference; nothing else changes', () => {
    expect(escapeHtml(`a&b<c>d"e'f`)).toBe('a&#38;b&#60;c&#62;d&#34;e&#39;f');
    expect(escapeHtml('plain text, ünïcode')).toBe('plain text, ünïcode');
    expect(escapeHtml('<<')).toBe('&#60;&#60;');
  });
});

describe('sendPage', () => {
  it('the page: its escaped title twice, its body as given, the inline style whose hash the policy names', () => {
    const { status, headers, body } = capture({ title: 'Sign <in>', body: '<p>ok</p>' });
    expect(status).toBe(200);
    expect(body.startsWith('<!doctype html><html lang="en"><head><meta charset="utf-8">')).toBe(true);
    expect(body).toContain('<title>Sign &#60;in&#62; · Document Requests</title>');
    expect(body).toContain('<main><h1>Sign &#60;in&#62;</h1><p>ok</p></main>');
    const style = /<style>([^<]*)<\/style>/.exec(body)![1]!;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(headers).toEqual({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    });
  });

  it('its status when given; each form target after self', () => {
    const { status, headers } = capture({ title: 'T', body: '', status: 403 }, ['https://idp.example', 'cursor:']);
    expect(status).toBe(403);
    expect(headers['Content-Security-Policy']).toContain("form-action 'self' https://idp.example cursor:;");
  });
});
