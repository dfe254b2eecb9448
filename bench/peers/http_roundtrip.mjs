// TS SDK client against a Streamable HTTP server: tools/call echo round trips, sequential (p50/p99) and with N in
// flight, through StreamableHTTPClientTransport (one session).
//   node http_roundtrip.mjs --url http://127.0.0.1:PORT/mcp --calls N --pipelined M --inflight K
// Prints one JSON object on stdout (the same keys as stdio_roundtrip.mjs).
import { sdk, args, percentile } from './common.mjs';

const a = args();
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');

const client = new Client({ name: 'bench', version: '0' });
await client.connect(new StreamableHTTPClientTransport(new URL(a.url)));
const call = async () => {
  const r = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
  if (!r.content || r.content.length === 0 || r.isError) throw new Error(`unexpected reply ${JSON.stringify(r)}`);
};

for (let i = 0; i < 200; i++) await call();  // warm-up (JIT, keep-alive connections)
const n = Number(a.calls || 2000);
const lat = new Float64Array(n);
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  const s = process.hrtime.bigint();
  await call();
  lat[i] = Number(process.hrtime.bigint() - s) / 1000;
}
const seqSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
const sorted = Array.from(lat).sort((x, y) => x - y);

const m = Number(a.pipelined || 5000);
const k = Number(a.inflight || 50);
let issued = 0;
const t1 = process.hrtime.bigint();
await Promise.all(Array.from({ length: k }, async () => {
  while (issued < m) { issued++; await call(); }
}));
const pipeSeconds = Number(process.hrtime.bigint() - t1) / 1e9;
await client.close();
console.log(JSON.stringify({
  p50_us: percentile(sorted, 50), p99_us: percentile(sorted, 99),
  calls_per_s_1: n / seqSeconds, calls_per_s_pipelined: m / pipeSeconds,
}));
