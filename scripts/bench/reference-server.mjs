// The throughput reference (scripts/bench/throughput.mjs): a minimal stateless MCP server on the official SDK
// with one trivial tool, so our team-mode figures read as a share of what the SDK alone does on this
// machine in the same run. REFERENCE_SDK=v1 (default): @modelcontextprotocol/sdk's McpServer with a
// StreamableHTTPServerTransport per request (its documented stateless example); v2: the SDK this server
// is built on (@modelcontextprotocol/server, createMcpHandler, a server per request).
//
//   node scripts/bench/reference-server.mjs <port>     # prints "listening" on stdout once ready
import { createServer } from 'node:http';
import { z } from 'zod';

const port = Number(process.argv[2] ?? 0);
const sdk = process.env.REFERENCE_SDK ?? 'v1';
const trivial = async () => ({ content: [{ type: 'text', text: 'pong' }] });
const config = { title: 'Ping', description: 'Answers pong.', inputSchema: z.object({}) };

let handle;
if (sdk === 'v1') {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  handle = async (req, res) => {
    // Stateless: nothing to stream or end (the SDK's example answers the same to GET and DELETE).
    if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end();
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const server = new McpServer({ name: 'reference', version: '1.0.0' });
    server.registerTool('ping', { title: config.title, description: config.description, inputSchema: {} }, trivial);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
} else {
  const { McpServer, createMcpHandler } = await import('@modelcontextprotocol/server');
  const { toNodeHandler } = await import('@modelcontextprotocol/node');
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'reference', version: '1.0.0' });
    server.registerTool('ping', config, trivial);
    return server;
  });
  handle = toNodeHandler(handler);
}

const server = createServer((req, res) => {
  if (req.url === '/healthz') return void res.end('ok');
  Promise.resolve(handle(req, res)).catch(() => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
server.keepAliveTimeout = 5_000;
server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
