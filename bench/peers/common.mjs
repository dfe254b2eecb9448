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
