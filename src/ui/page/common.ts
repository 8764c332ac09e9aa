import { App, applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';

/**
 * What both pages share: the connection to the host (the ext-apps App over postMessage), the host's
 * theme, and the one way text reaches the page: DOM nodes whose text is set with textContent.
 * Nothing here parses HTML, and nothing is fetched: the page talks only to the host bridge.
 */

export type Child = Node | string | number | null | undefined | false;

/** An element with attributes and children; strings become text nodes, never markup. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces the page's content. */
export function show(...children: Child[]): void {
  const root = document.getElementById('app')!;
  root.replaceChildren(...children.filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false).map((c) => (typeof c === 'object' ? c : document.createTextNode(String(c)))));
}

export interface ToolResultLike {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export function resultText(result: ToolResultLike): string {
  return (result.content ?? []).filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text!).join('\n');
}

function applyContext(context: McpUiHostContext | undefined): void {
  if (!context) return;
  if (context.theme === 'light' || context.theme === 'dark') applyDocumentTheme(context.theme);
  const variables = context.styles?.variables;
  if (variables) applyHostStyleVariables(variables);
}

/** Connects to the host; handlers must be set before this is called (the SDK delivers them once). */
export async function connect(app: App): Promise<void> {
  app.onhostcontextchanged = (context) => applyContext({ ...app.getHostContext(), ...context });
  app.onerror = (error) => console.error('docreq app:', error);
  await app.connect();
  applyContext(app.getHostContext());
}

export function newApp(name: string): App {
  // autoResize (the default) tells the host the page's height as it changes.
  return new App({ name, version: '1' }, {}, { autoResize: true });
}
