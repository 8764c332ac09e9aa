import type {
  LATEST_PROTOCOL_VERSION,
  McpUiHostCapabilities,
  McpUiHostContext,
  McpUiInitializeRequest,
  McpUiInitializeResult,
  McpUiSizeChangedNotification,
  McpUiToolInputNotification,
  McpUiToolResultNotification,
  McpUiUpdateModelContextRequest,
} from '@modelcontextprotocol/ext-apps';

/**
 * The page's side of the MCP Apps host bridge (ext-apps spec 2026-01-26): JSON-RPC over postMessage
 * with the parent window only. The messages are typed by ext-apps's own declarations; the page does
 * not bundle ext-apps's App and its validators (zod, the SDK's Protocol): it reads only the fields it
 * uses, each checked where it is read. About 4 KB instead of about 400.
 */

/** The spec revision spoken; typed as ext-apps's constant, so a new revision fails the type check. */
const PROTOCOL_VERSION: typeof LATEST_PROTOCOL_VERSION = '2026-01-26';

type Json = Record<string, unknown>;
interface Message {
  jsonrpc?: string;
  id?: number | string;
  method?: string;
  params?: Json;
  result?: unknown;
  error?: { code?: number; message?: string };
}

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export class Bridge {
  ontoolinput?: (params: McpUiToolInputNotification['params']) => void;
  ontoolresult?: (result: McpUiToolResultNotification['params']) => void;
  onhostcontextchanged?: (context: McpUiHostContext) => void;
  hostCapabilities: McpUiHostCapabilities | undefined;
  hostContext: McpUiHostContext = {};
  private next = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor(private readonly name: string) {}

  private post(message: Json): void {
    window.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  }

  request(method: string, params: object): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ id, method, params });
    });
  }

  private receive = (event: MessageEvent): void => {
    // Only the host: the parent window is the page's one counterpart.
    if (event.source !== window.parent) return;
    const m = event.data as Message | null;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (m.method === undefined && typeof m.id === 'number') {
      const waiting = this.pending.get(m.id);
      if (!waiting) return;
      this.pending.delete(m.id);
      if (m.error) waiting.reject(new Error(typeof m.error.message === 'string' ? m.error.message : 'the host refused the call'));
      else waiting.resolve(m.result);
      return;
    }
    const params = m.params ?? {};
    if (m.id !== undefined) {
      // Requests from the host: ping and teardown are answered; anything else is not supported.
      const known = m.method === 'ping' || m.method === 'ui/resource-teardown';
      this.post(known ? { id: m.id, result: {} } : { id: m.id, error: { code: -32601, message: 'Method not found' } });
      return;
    }
    if (m.method === 'ui/notifications/tool-input') this.ontoolinput?.(params);
    else if (m.method === 'ui/notifications/tool-result') this.ontoolresult?.(params as McpUiToolResultNotification['params']);
    else if (m.method === 'ui/notifications/host-context-changed') {
      this.hostContext = { ...this.hostContext, ...params };
      this.onhostcontextchanged?.(this.hostContext);
    }
  };

  /** Initialises with the host; handlers must be set first (the host sends input and result once). */
  async connect(): Promise<void> {
    window.addEventListener('message', this.receive);
    const params: McpUiInitializeRequest['params'] = { appInfo: { name: this.name, version: '1' }, appCapabilities: {}, protocolVersion: PROTOCOL_VERSION };
    const result = (await this.request('ui/initialize', params)) as Partial<McpUiInitializeResult> | undefined;
    this.hostCapabilities = result?.hostCapabilities;
    this.hostContext = result?.hostContext ?? {};
    this.onhostcontextchanged?.(this.hostContext);
    this.post({ method: 'ui/notifications/initialized', params: {} });
    this.autoResize();
  }

  /** A tool call through the host, to this page's server. */
  callServerTool(call: ToolCall): Promise<unknown> {
    return this.request('tools/call', call);
  }

  updateModelContext(params: McpUiUpdateModelContextRequest['params']): Promise<unknown> {
    return this.request('ui/update-model-context', params);
  }

  /** Tells the host the page's size as it changes (as ext-apps's App does with autoResize). */
  private autoResize(): void {
    let queued = false;
    let width = 0;
    let height = 0;
    const measure = () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        const root = document.documentElement;
        const before = root.style.height;
        root.style.height = 'max-content';
        const h = Math.ceil(root.getBoundingClientRect().height);
        root.style.height = before;
        const w = Math.ceil(window.innerWidth);
        if (w === width && h === height) return;
        width = w;
        height = h;
        const size: McpUiSizeChangedNotification['params'] = { width: w, height: h };
        this.post({ method: 'ui/notifications/size-changed', params: size });
      });
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(document.documentElement);
    observer.observe(document.body);
  }
}
