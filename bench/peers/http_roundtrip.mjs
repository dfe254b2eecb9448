// TS SDK client against a Streamable HTTP server: tools/call echo round trips, sequential (p50/p99) and with N in
// flight, through StreamableHTTPClientTransport (one session).
//   node http_roundtrip.mjs --url http://127.0.0.1:PORT/mcp --calls N --pipelined M --inflight K
// Prints one JSON object on stdout (the same keys as stdio_roundtrip.mjs).
import { sdk, args, measure } from './common.mjs';

const a = args();
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');

const client = new Client({ name: 'bench', version: '0' });
await client.connect(new StreamableHTTPClientTransport(new URL(a.url)));
const call = async () => {
  const r = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
  if (!r.content || r.content.length === 0 || r.isError) throw new Error(`unexpected reply ${JSON.stringify(r)}`);
};

await measure(client, call, a, { pipelined: 5000, inflight: 50 });
