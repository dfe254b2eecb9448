// A stdio MCP server (2025-11-25, raw JSON-RPC lines) that declares resources, prompts and completions but answers
// resources/templates/list, prompts/list and completion/complete with -32601 "method not found", as some servers in
// the wild do: its tools must stay usable (tests/integration/cli_test.cpp).
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const notFound = (id, method) => send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } });

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;  // notifications
  switch (m.method) {
    case 'initialize':
      return send({ jsonrpc: '2.0', id: m.id, result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
        serverInfo: { name: 'partial-lists', version: '1.0.0' },
      } });
    case 'tools/list':
      return send({ jsonrpc: '2.0', id: m.id, result: { tools: [
        { name: 'hello', description: 'Says hello.', inputSchema: { type: 'object' } },
      ] } });
    case 'tools/call':
      return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'hello' }] } });
    case 'resources/list':
      return send({ jsonrpc: '2.0', id: m.id, result: { resources: [] } });
    case 'ping':
      return send({ jsonrpc: '2.0', id: m.id, result: {} });
    default:
      return notFound(m.id, m.method);
  }
});
