// TS SDK client: connect N stdio servers one after another (connect + list tools, resources, prompts each).
//   node stdio_coldstart.mjs --command CMD [--args "a b"] --servers N
// Prints {"ms": total} on stdout; the servers stay up until all are connected, then close.
import { sdk, args } from './common.mjs';

const a = args();
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const n = Number(a.servers || 1);
const clients = [];
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  const transport = new StdioClientTransport({ command: a.command, args: a.args ? String(a.args).split(' ') : [], stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  await client.listTools();
  await client.listResources();
  await client.listPrompts();
  clients.push(client);
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
await Promise.all(clients.map((c) => c.close()));
console.log(JSON.stringify({ ms }));
