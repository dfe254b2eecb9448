// How fast the web UI's servers page shows: first contentful paint, and the time until every phase badge of
// examples/switchboard.json's servers shows its phase from the live event stream, over fresh browser contexts (no
// cache). Also the page's bytes on the wire.
//
//   node bench/web_ui_paint.mjs [build/switchboard] [runs]
//
// Needs /usr/bin/chromium and tests/peers/node_modules (playwright-core). Prints medians and writes nothing.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { chromium } = createRequire(join(root, 'tests', 'peers', 'package.json'))('playwright-core');
const bin = resolve(process.argv[2] ?? join(root, 'build', 'switchboard'));
const runs = Number(process.argv[3] ?? 10);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'sb-paint-'));
// The repository root is the working directory: the example's commands are relative to it.
const gateway = spawn(bin, ['--config', 'examples/switchboard.json', '--db', join(dir, 'c.db'), 'serve', '--port', '0',
  '--quiet'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((ok, fail) => {
  let text = '';
  gateway.stderr.on('data', (d) => {
    text += d;
    const m = text.match(/listening on (http:\/\/[^/\s]+)\/mcp/);
    if (m) ok(m[1]);
  });
  gateway.on('exit', (code) => fail(new Error(`switchboard serve exited with ${code}: ${text}`)));
});

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const fcp = [], live = [], bytes = [];
try {
  for (let i = 0; i < runs; ++i) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    let transferred = 0;
    page.on('response', async (r) => {
      if (new URL(r.url()).pathname === '/') transferred = Number((await r.allHeaders())['content-length'] ?? 0);
    });
    await page.goto(`${url}/#/servers`);
    // Every enabled server's badge shows a phase that came from the host (not a placeholder).
    await page.waitForFunction(() => {
      const badges = [...document.querySelectorAll('[data-testid^="phase-"]')];
      return badges.length >= 3 && badges.every((b) => /connected|disabled|error/.test(b.textContent));
    }, null, { timeout: 15_000 });
    const t = await page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      now: performance.now(),
    }));
    fcp.push(t.fcp);
    live.push(t.now);
    bytes.push(transferred);
    await context.close();
  }
} finally {
  await browser.close();
  gateway.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
console.log(`servers page over ${runs} fresh loads (median): first contentful paint ${median(fcp).toFixed(0)} ms, ` +
  `every badge live ${median(live).toFixed(0)} ms, page ${median(bytes)} bytes on the wire (gzip)`);
