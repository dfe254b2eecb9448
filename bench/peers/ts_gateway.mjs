// A gateway built the way the TS SDK's own examples build one: an SDK Server over StreamableHTTPServerTransport (one
// transport per session, node:http) that forwards tools/list and tools/call to an SDK Client connected to one
// upstream over stdio. The bench's peer for `switchboard serve`.
//   node ts_gateway.mjs --port P --command CMD [--args "A B"]
// Prints "listening on http://127.0.0.1:P/mcp" on stderr when ready.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { sdk, args } from './common.mjs';

const a = args();
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { Server } = await sdk('server/index.js');
const { StreamableHTTPServerTransport } = await sdk('server/streamableHttp.js');
const { ListToolsRequestSchema, CallToolRequestSchema, isInitializeRequest } = await sdk('types.js');

const upstream = new Client({ name: 'ts-gateway', version: '0' });
await upstream.connect(new StdioClientTransport({ command: a.command, args: a.args ? a.args.split(' ') : [] }));

function makeServer() {
  const server = new Server({ name: 'ts-gateway', version: '0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (req) => upstream.listTools(req.params));
  server.setRequestHandler(CallToolRequestSchema, async (req) => upstream.callTool(req.params));
  return server;
}

const transports = new Map();
const httpServer = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const parsed = body ? JSON.parse(body) : undefined;
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    if (req.method !== 'POST' || !isInitializeRequest(parsed)) {
      res.writeHead(400).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await makeServer().connect(transport);
  }
  await transport.handleRequest(req, res, parsed);
});
httpServer.listen(Number(a.port), '127.0.0.1', () => {
  process.stderr.write(`listening on http://127.0.0.1:${a.port}/mcp\n`);
});
