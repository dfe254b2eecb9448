// Shared helpers for the TS SDK bench peers: resolve the SDK from tests/peers/node_modules, parse --key value args.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.SWITCHBOARD_PEERS_DIR || path.resolve(here, '../../tests/peers');
const require = createRequire(path.join(peers, 'package.json'));

export async function sdk(subpath) {
  return import(require.resolve(`@modelcontextprotocol/sdk/${subpath}`));
}

export function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) continue;
    const key = argv[i].slice(2);
    // Every option takes a value, which may itself start with "--" (--args "--page-size 0").
    out[key] = argv[i + 1] === undefined ? true : argv[++i];
  }
  return out;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length));
  return sorted[i];
}

// The measurement both round-trip peers print: `call` 200 times to warm up, `calls` times one after another
// (latencies), then `pipelined` calls with `inflight` at once; closes `client` and prints one JSON line.
export async function measure(client, call, a, defaults) {
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

  const m = Number(a.pipelined || defaults.pipelined);
  const k = Number(a.inflight || defaults.inflight);
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
}

// An SDK client connected to a stdio server (--command, --args) that takes lines of up to 256 MiB (the SDK refuses
// one over 10 MiB by default; the base64 of 64 MiB is 85 MiB).
export async function connectStdio(a) {
  const { Client } = await sdk('client/index.js');
  const { StdioClientTransport } = await sdk('client/stdio.js');
  const transport = new StdioClientTransport({
    command: a.command, args: a.args ? String(a.args).split(' ') : [], stderr: 'ignore', maxBufferSize: 256 * 1024 * 1024,
  });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  return client;
}

// Closes the client and prints one JSON object: read_ms (t0 to t1), total_ms (t0 to t2; process.hrtime.bigint()
// values), `fields`, and this process's peak RSS (peak_kib).
export async function report(client, t0, t1, t2, fields) {
  await client.close();
  console.log(JSON.stringify({
    read_ms: Number(t1 - t0) / 1e6, total_ms: Number(t2 - t0) / 1e6, ...fields, peak_kib: process.resourceUsage().maxRSS,
  }));
}
