// Reference numbers for Switchboard's HTTP client: sequential tools/call echo round trips through the official
// TypeScript SDK's StreamableHTTPClientTransport against a running server (server-everything streamableHttp).
// Usage: node bench/peers/http_echo_bench.mjs http://127.0.0.1:PORT/mcp [calls=2000]
// Prints one JSON line: {"client":"ts-sdk","calls":N,"p50_us":...,"p90_us":...,"p99_us":...}
import { Client } from '../../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StreamableHTTPClientTransport } from '../../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';

const url = process.argv[2];
const calls = Number(process.argv[3] ?? 2000);
const client = new Client({ name: 'bench', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
for (let i = 0; i < 50; ++i) await client.callTool({ name: 'echo', arguments: { message: 'warm' } });
const times = [];
for (let i = 0; i < calls; ++i) {
  const t0 = process.hrtime.bigint();
  const r = await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
  times.push(Number(process.hrtime.bigint() - t0) / 1000);
  if (r.content[0].text !== `Echo: m${i}`) throw new Error(`unexpected reply ${JSON.stringify(r)}`);
}
times.sort((a, b) => a - b);
const q = (p) => Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]);
console.log(JSON.stringify({ client: 'ts-sdk', calls, p50_us: q(0.5), p90_us: q(0.9), p99_us: q(0.99) }));
await client.close();
