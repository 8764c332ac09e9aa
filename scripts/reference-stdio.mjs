// The cold-start reference (scripts/bench.mjs): a minimal stdio MCP server on the official SDK this server
// is built on (@modelcontextprotocol/server), with one trivial tool. The benchmark bundles it with the
// CLI's own esbuild options (minified, zod's English locale only, no Ajv) and starts it like the CLI, so
// "what the SDK alone needs to answer initialize and tools/list" is a figure of the same run, beside bare
// node and the shipped CLI.
//
//   node scripts/reference-stdio.mjs     # unbundled; speaks MCP on stdin/stdout
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const server = new McpServer({ name: 'reference', version: '1.0.0' });
server.registerTool('ping', { title: 'Ping', description: 'Answers pong.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
await server.connect(new StdioServerTransport());
