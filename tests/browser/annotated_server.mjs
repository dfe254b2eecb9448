// An MCP server whose content carries annotations with every field (the reference server sends no lastModified),
// for web_ui.test.mjs: a resource listed with them, and a tool whose result embeds that resource with its own. On the
// TS SDK v1 from tests/peers.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(import.meta.dirname, '..', 'peers', 'package.json'));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');

const uri = 'notes://today';
const contents = { uri, mimeType: 'text/plain', text: 'Water the plants.' };
const server = new McpServer({ name: 'annotated', version: '1.0.0' });
server.registerResource(
  'today',
  uri,
  { title: "Today's notes", mimeType: 'text/plain',
    annotations: { audience: ['assistant'], priority: 0.2, lastModified: '2025-01-12T15:00:58Z' } },
  async () => ({ contents: [contents] }),
);
server.registerTool('notes', { description: "Today's notes, embedded" }, async () => ({
  content: [{ type: 'resource', resource: contents, annotations: { audience: ['user'], lastModified: '2025-01-12T15:00:58Z' } }],
}));
await server.connect(new StdioServerTransport());
