// TS SDK client reading a binary resource from a stdio server and decoding its base64, the peer of the payload rows.
//   node stdio_blob_read.mjs --command CMD [--args "a b"] --uri URI
// Prints one JSON object: read_ms (the request), total_ms (read + decode), decoded_bytes, peak_kib (this process).
import { sdk, args } from './common.mjs';

const a = args();
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

// The SDK refuses a line over 10 MiB by default: the base64 of 64 MiB is 85 MiB.
const transport = new StdioClientTransport({
  command: a.command, args: a.args ? String(a.args).split(' ') : [], stderr: 'ignore', maxBufferSize: 256 * 1024 * 1024,
});
const client = new Client({ name: 'bench', version: '0' });
await client.connect(transport);
const t0 = process.hrtime.bigint();
const r = await client.readResource({ uri: a.uri }, { timeout: 600000 });
const t1 = process.hrtime.bigint();
const bytes = Buffer.from(r.contents[0].blob, 'base64');
for (let i = 0; i < bytes.length; i += 4099) if (bytes[i] !== (i * 7) % 251) throw new Error('payload mismatch');
const t2 = process.hrtime.bigint();
await client.close();
console.log(JSON.stringify({
  read_ms: Number(t1 - t0) / 1e6,
  total_ms: Number(t2 - t0) / 1e6,
  decoded_bytes: bytes.length,
  peak_kib: process.resourceUsage().maxRSS,
}));
