import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml, sendPage } from '../page.js';

/**
 * GET / in team mode: a plain page saying what this is and how to connect an assistant to it. Nothing
 * secret and no setting names: only the MCP address (the public address with sign-in, otherwise the
 * address this request reached, its Host already checked), and how each host is told it. Escaped.
 */
export function homePage(req: IncomingMessage, res: ServerResponse, options: { mcpPath: string; signInResource?: string }): void {
  const url = options.signInResource ?? `${requestOrigin(req)}${options.mcpPath}`;
  const signIn = options.signInResource !== undefined;
  const code = (text: string) => `<pre><code>${escapeHtml(text)}</code></pre>`;
  const vscode = signIn
    ? { servers: { 'document-requests': { type: 'http', url } } }
    : {
        servers: { 'document-requests': { type: 'http', url, headers: { Authorization: 'Bearer ${input:document-requests-key}' } } },
        inputs: [{ type: 'promptString', id: 'document-requests-key', description: "Your firm's Document Requests API key", password: true }],
      };
  const body =
    `<p>This is your firm's <strong>Document Requests</strong> server for AI assistants (the Model Context Protocol). ` +
    'Connected to it, an assistant can list your clients and their document requests, and prepare and send new requests, ' +
    'each send shown to you first.</p>' +
    `<h2>Address</h2>${code(url)}` +
    (signIn
      ? '<p>You sign in with your firm account when you connect; no key is needed.</p>'
      : "<p>Each connection sends your firm's API key as <code>Authorization: Bearer &lt;key&gt;</code>. Ask whoever runs this server for it, and keep it out of shared files.</p>") +
    `<h2>Claude</h2><p>${signIn ? 'In Claude (claude.ai or the desktop app): Settings → Connectors → Add custom connector, with the address above.' : 'Claude’s custom connectors sign in rather than send a key; with this server, use Claude Code:'}</p>` +
    code(
      signIn
        ? `claude mcp add --transport http document-requests ${url}`
        : `claude mcp add --transport http document-requests ${url} --header "Authorization: Bearer <your key>"`,
    ) +
    `<h2>VS Code</h2><p>In <code>.vscode/mcp.json</code>${signIn ? '' : ' (VS Code asks for the key once and keeps it)'}:</p>` +
    code(JSON.stringify(vscode, null, 2)) +
    '<p class="note">Other assistants: add a remote MCP server (Streamable HTTP) with the address above.</p>';
  if (req.method === 'HEAD') {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    return void res.end();
  }
  sendPage(res, { title: 'Document Requests for AI assistants', body });
}

/** The origin this request reached: its Host (checked against the allowed hosts before this), https when a proxy says it terminated TLS. */
function requestOrigin(req: IncomingMessage): string {
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]!
    .trim()
    .toLowerCase();
  const scheme = forwarded === 'https' || forwarded === 'http' ? forwarded : 'http';
  return `${scheme}://${req.headers.host ?? 'localhost'}`;
}
