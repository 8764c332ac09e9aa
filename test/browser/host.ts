import { AppBridge, PostMessageTransport, type McpUiHostContext } from '@modelcontextprotocol/ext-apps/app-bridge';

/**
 * A minimal MCP Apps host, as ext-apps's basic-host builds one: the page in a sandboxed iframe, an
 * AppBridge over postMessage, the tool's input and result sent once the page is initialised. Tool
 * calls from the page go to the test (window.mcpCallTool), which makes them with a real MCP client
 * on our real server.
 */

interface Mount {
  tool: string;
  input: Record<string, unknown>;
  result: Record<string, unknown>;
  theme: 'light' | 'dark';
  /** The person's locale, as hosts hand it in the host context. */
  locale?: string;
  /** The frame's width in CSS pixels (default 720). */
  width?: number;
  /** 'decline': the host asks the person before a page's tool call, and the person says no (nothing reaches the server). */
  prompt?: 'decline';
}

declare global {
  interface Window {
    mcpCallTool(params: unknown): Promise<Record<string, unknown>>;
    mount(options: Mount): Promise<void>;
    modelContext: unknown[];
  }
}

window.modelContext = [];

window.mount = async ({ tool, input, result, theme, locale, width, prompt }) => {
  const old = document.getElementById('view');
  old?.remove();
  const iframe = document.createElement('iframe');
  iframe.id = 'view';
  iframe.title = 'MCP App';
  iframe.setAttribute('sandbox', 'allow-scripts');
  if (width) iframe.style.width = `${width}px`;
  document.body.style.background = theme === 'dark' ? '#111' : '#eee';
  document.body.append(iframe);
  const hostContext: McpUiHostContext = {
    theme,
    displayMode: 'inline',
    toolInfo: { tool: { name: tool, inputSchema: { type: 'object' } } },
    ...(locale ? { locale } : {}),
  };
  const bridge = new AppBridge(null, { name: 'docreq-test-host', version: '1' }, { serverTools: {}, updateModelContext: { text: {} } }, { hostContext });
  bridge.oncalltool = async (params) => {
    // As Claude and ChatGPT can: the person is asked before an app's tool call, and may decline.
    if (prompt === 'decline') throw new Error('The user declined this tool call.');
    return (await window.mcpCallTool(params)) as never;
  };
  bridge.onupdatemodelcontext = (params) => {
    window.modelContext.push(params);
    return Promise.resolve({});
  };
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${height}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  iframe.src = '/view.html';
  await initialized;
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result as never);
};
