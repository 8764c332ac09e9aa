import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { escapeHtml, sendPage } from '../src/page.js';

/** The service's own HTML pages (src/page.ts), exactly: what is escaped, the headers, and the style its policy allows. */
function capture(page: Parameters<typeof sendPage>[1], targets?: string[]) {
  let status = 0;
  let headers: Record<string, string> = {};
  let body = '';
  const res = {
    writeHead: (s: number, h: Record<string, string>) => ((status = s), (headers = h)),
    end: (b: string) => (body = b),
  } as unknown as ServerResponse;
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

describe('the pages’ one style', () => {
  /** The style a page carries, as selector → declarations. */
  function rules(): Map<string, Record<string, string>> {
    const style = /<style>([^<]*)<\/style>/.exec(capture({ title: 'T', body: '' }).body)![1]!;
    const out = new Map<string, Record<string, string>>();
    for (const [, selector, body] of style.matchAll(/([^{}]+)\{([^}]*)\}/g)) {
      out.set(selector!, Object.fromEntries(body!.split(';').map((d) => [d.slice(0, d.indexOf(':')), d.slice(d.indexOf(':') + 1)])));
    }
    return out;
  }
  /** WCAG 2 contrast ratio of two #rgb or #rrggbb colours. */
  function contrast(a: string, b: string): number {
    const luminance = (hex: string) => {
      const full = hex.length === 4 ? [...hex.slice(1)].map((c) => c + c).join('') : hex.slice(1);
      const [r, g, bl] = [0, 2, 4].map((i) => {
        const c = parseInt(full.slice(i, i + 2), 16) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
    };
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi! + 0.05) / (lo! + 0.05);
  }

  it('a readable column, text and buttons at WCAG AA contrast or better, and a keyboard focus one can see', () => {
    const r = rules();
    expect([...r.keys()]).toEqual([
      'body',
      'main',
      'h1',
      'ul',
      '.actions',
      'button',
      '.primary',
      '.secondary',
      'button:focus-visible,a:focus-visible',
      'a.button',
      '.note',
    ]);
    expect(r.get('body')).toMatchObject({ font: '16px/1.5 system-ui,sans-serif', margin: '0' });
    expect(contrast(r.get('body')!.color!, r.get('body')!.background!)).toBeGreaterThanOrEqual(7);
    expect(r.get('main')).toEqual({
      'max-width': '34rem',
      margin: '3rem auto',
      padding: '2rem',
      background: '#fff',
      border: '1px solid #d0d0cc',
      'border-radius': '8px',
    });
    expect(r.get('h1')).toEqual({ 'font-size': '1.4rem', 'margin-top': '0' });
    expect(r.get('ul')).toEqual({ 'padding-left': '1.2rem' });
    expect(r.get('.actions')).toEqual({ display: 'flex', gap: '.75rem', 'margin-top': '1.5rem' });
    expect(r.get('button')).toEqual({ font: 'inherit', padding: '.6rem 1.2rem', 'border-radius': '6px', border: '1px solid #1d4ed8', cursor: 'pointer' });
    for (const button of ['.primary', '.secondary', 'a.button'])
      expect(contrast(r.get(button)!.color!, r.get(button)!.background!)).toBeGreaterThanOrEqual(4.5);
    expect(r.get('.primary')!.background).toBe('#1d4ed8');
    expect(r.get('a.button')).toMatchObject({ display: 'inline-block', 'text-decoration': 'none', padding: '.6rem 1.2rem' });
    const focus = r.get('button:focus-visible,a:focus-visible')!;
    expect(focus).toEqual({ outline: '3px solid #b45309', 'outline-offset': '2px' });
    // The focus ring and the notes against the column's background (WCAG 2.2 non-text contrast 3:1; text 4.5:1).
    expect(contrast(focus.outline!.split(' ')[2]!, r.get('main')!.background!)).toBeGreaterThanOrEqual(3);
    expect(contrast(r.get('.note')!.color!, r.get('main')!.background!)).toBeGreaterThanOrEqual(4.5);
    expect(r.get('.note')!['font-size']).toBe('.9rem');
  });
});
