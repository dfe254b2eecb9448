// TS SDK client against a stdio server: tools/call echo round trips, sequential (p50/p99) and with N in flight.
//   node stdio_roundtrip.mjs --command CMD [--args "a b"] --calls N --pipelined M --inflight K
// Prints one JSON object on stdout.
import { sdk, args, measure } from './common.mjs';

const a = args();
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const transport = new StdioClientTransport({ command: a.command, args: a.args ? String(a.args).split(' ') : [], stderr: 'ignore' });
const client = new Client({ name: 'bench', version: '0' });
await client.connect(transport);
const call = () => client.callTool({ name: 'echo', arguments: { message: 'hello' } });

await measure(client, call, a, { pipelined: 20000, inflight: 64 });
