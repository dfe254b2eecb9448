// The official TypeScript SDK client against a Streamable HTTP MCP server (interoperability test and latency bench).
//   node sdk_http_client.mjs URL check        -> one JSON line: tools, echo text, slow result, progress count
//   node sdk_http_client.mjs URL bench N      -> one JSON line: p50/p90/p99 ms of N sequential tools/call echo
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, mode = 'check', count = '2000'] = process.argv.slice(2);
const client = new Client({ name: 'sdk-http-client', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

if (mode === 'bench') {
  const n = Number(count);
  for (let i = 0; i < 50; i++) await client.callTool({ name: 'echo', arguments: { message: 'warm' } });
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    times.push(performance.now() - t0);
    if (r.content[0].text !== `m${i}`) throw new Error(`bad echo ${JSON.stringify(r)}`);
  }
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  console.log(JSON.stringify({ calls: n, p50_ms: q(0.5), p90_ms: q(0.9), p99_ms: q(0.99) }));
} else {
  const tools = await client.listTools();
  const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello over http' } });
  let progress = 0;
  const slow = await client.callTool({ name: 'slow', arguments: { seconds: 0.4, steps: 4 } }, undefined, {
    onprogress: () => { progress++; },
  });
  console.log(JSON.stringify({
    sessionId: transport.sessionId ?? null,
    protocolVersion: transport.protocolVersion ?? null,
    tools: tools.tools.map((t) => t.name),
    echo: echo.content[0].text,
    slow: slow.content[0].text,
    progress,
  }));
  await transport.terminateSession();
}
await client.close();
