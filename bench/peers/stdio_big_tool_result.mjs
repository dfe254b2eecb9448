// TS SDK client calling a tool whose result is one big text block (the demo server's big_text), the peer of the
// tool-result payload rows.
//   node stdio_big_tool_result.mjs --command CMD [--args "a b"] --bytes N
// Prints one JSON object: read_ms (the call), total_ms (call + check), text_bytes, peak_kib (this process).
import { args, connectStdio, report } from './common.mjs';

const a = args();
const client = await connectStdio(a);
const t0 = process.hrtime.bigint();
const r = await client.callTool({ name: 'big_text', arguments: { bytes: Number(a.bytes) } }, undefined,
  { timeout: 600000 });
const t1 = process.hrtime.bigint();
const text = r.content[0].text;
// The demo server's pattern: character i is 'a' + (i * 7) % 26.
for (let i = 0; i < text.length; i += 4099) if (text.charCodeAt(i) !== 97 + ((i * 7) % 26)) throw new Error('mismatch');
const t2 = process.hrtime.bigint();
await report(client, t0, t1, t2, { text_bytes: text.length });
