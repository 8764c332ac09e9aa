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
}

declare global {
  interface Window {
    mcpCallTool(params: unknown): Promise<Record<string, unknown>>;
    mount(options: Mount): Promise<void>;
    modelContext: unknown[];
  }
}

window.modelContext = [];

window.mount = async ({ tool, input, result, theme }) => {
  const old = document.getElementById('view');
  old?.remove();
  const iframe = document.createElement('iframe');
  iframe.id = 'view';
  iframe.title = 'MCP App';
  iframe.setAttribute('sandbox', 'allow-scripts');
  document.body.style.background = theme === 'dark' ? '#111' : '#eee';
  document.body.append(iframe);
  const hostContext: McpUiHostContext = { theme, displayMode: 'inline', toolInfo: { tool: { name: tool, inputSchema: { type: 'object' } } } };
  const bridge = new AppBridge(null, { name: 'docreq-test-host', version: '1' }, { serverTools: {}, updateModelContext: { text: {} } }, { hostContext });
  bridge.oncalltool = async (params) => (await window.mcpCallTool(params)) as never;
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
