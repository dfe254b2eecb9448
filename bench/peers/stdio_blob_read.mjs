// TS SDK client reading a binary resource from a stdio server and decoding its base64, the peer of the payload rows.
//   node stdio_blob_read.mjs --command CMD [--args "a b"] --uri URI
// Prints one JSON object: read_ms (the request), total_ms (read + decode), decoded_bytes, peak_kib (this process).
import { args, connectStdio, report } from './common.mjs';

const a = args();
const client = await connectStdio(a);
const t0 = process.hrtime.bigint();
const r = await client.readResource({ uri: a.uri }, { timeout: 600000 });
const t1 = process.hrtime.bigint();
const bytes = Buffer.from(r.contents[0].blob, 'base64');
for (let i = 0; i < bytes.length; i += 4099) if (bytes[i] !== (i * 7) % 251) throw new Error('payload mismatch');
const t2 = process.hrtime.bigint();
await report(client, t0, t1, t2, { decoded_bytes: bytes.length });
