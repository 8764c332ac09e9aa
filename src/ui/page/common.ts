import type { McpUiHostContext } from '@modelcontextprotocol/ext-apps';
import { markInvisible, MARKS, visibleStructured } from '../../text/visible.js';
import { Bridge } from './bridge.js';

/**
 * What both pages share: the connection to the host (bridge.ts, postMessage to the parent only), the
 * host's theme, and the one way text reaches the page: DOM nodes whose text is set as text. Nothing
 * here parses HTML, and nothing is fetched: the page talks only to the host bridge.
 *
 * Service text (docs/pages.md): the result's strings are shown by the renderer's invisible-character
 * rule (text/visible.ts: removed, or a visible mark where removing would make two strings alike), and
 * each one in its own <bdi>, so a right-to-left override inside a name cannot reorder what is beside it.
 */

export type Child = Node | string | number | null | undefined | false;

/** An element with attributes and children; strings become text nodes, never markup. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'object' ? child : document.createTextNode(typeof child === 'number' ? grouped(child) : child));
  }
  return node;
}

/**
 * One service string (a name, an e-mail, a title, a reason), isolated from its neighbours: a <bdi>
 * (its own direction, its own bidi run), with each invisible-character mark set apart as a mark.
 */
export function text(value: string | null | undefined, fallback = '—', attrs: Record<string, string | undefined> = {}): HTMLElement {
  if (value === null || value === undefined || value === '') return el('bdi', { class: 'none', ...attrs }, fallback);
  const parts = value.split(MARKS);
  return el('bdi', attrs, ...parts.map((part, n) => (n % 2 ? el('span', { class: 'mark', title: 'an invisible character' }, part) : part)));
}

/** An identifier: exact in the data, shown with each invisible character it carries as a mark. */
export function idText(value: string | null | undefined, attrs: Record<string, string | undefined> = {}): HTMLElement {
  return text(value ? markInvisible(value) : value, '—', { class: 'id', ...attrs });
}

let numbers = new Intl.NumberFormat(undefined);
/** A count grouped for reading in the person's locale (the host's, else the browser's): 80,000. */
export function grouped(n: number): string {
  return numbers.format(n);
}

/** Replaces the page's content. */
export function show(...children: Child[]): void {
  document.getElementById('app')!.replaceChildren(el('div', {}, ...children));
}

export interface ToolResultLike {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** What only the page gets (hosts hand it the page, not the model): the preview's token on a host that shows pages. */
  _meta?: Record<string, unknown>;
}

/** A result as the page shows it: its structuredContent by the renderer's invisible-character rule. */
export function readable(result: ToolResultLike): ToolResultLike {
  return result.structuredContent ? { ...result, structuredContent: visibleStructured(result.structuredContent) } : result;
}

export function resultText(result: ToolResultLike): string {
  return (result.content ?? [])
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text!)
    .join('\n');
}

/**
 * A failure as a person reads it: one heading, one plain line, and what the assistant was told (its
 * words name tools and settings) behind a disclosure, each line once.
 */
export function failureView(heading: string, line: string, result: ToolResultLike): Child[] {
  const said = [
    ...new Set(
      resultText(result)
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    ),
  ];
  return [
    el('h1', {}, heading),
    el('p', { role: 'status', class: 'status bad', 'data-testid': 'status' }, line),
    said.length
      ? el('details', {}, el('summary', {}, 'What the assistant was told'), el('ul', { class: 'said' }, ...said.map((l) => el('li', {}, text(l)))))
      : null,
  ];
}

function applyContext(context: McpUiHostContext): void {
  const root = document.documentElement;
  if (context.theme === 'light' || context.theme === 'dark') {
    root.setAttribute('data-theme', context.theme);
    root.style.colorScheme = context.theme;
  }
  for (const [name, value] of Object.entries(context.styles?.variables ?? {})) if (typeof value === 'string') root.style.setProperty(name, value);
  if (typeof context.locale === 'string') {
    try {
      numbers = new Intl.NumberFormat(context.locale);
      root.lang = context.locale;
    } catch {
      // A locale the browser does not know: its own stays.
    }
  }
}

/** The page's bridge to the host; set its handlers, then connect. */
export function newApp(name: string): Bridge {
  const app = new Bridge(name);
  app.onhostcontextchanged = applyContext;
  return app;
}

export async function connect(app: Bridge): Promise<void> {
  await app.connect().catch((error: unknown) => console.error('docreq app:', error));
}
