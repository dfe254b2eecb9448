// The soak (scripts/soak): a long-running `switchboard serve` with 20 upstream servers under steady load while a
// fault injector hurts them on a schedule, with every call's outcome and latency, the servers' reconnects, and the
// host's RSS and open file descriptors recorded over time.
//
// Upstreams: 12 demo servers over stdio behind tests/soak/flaky_stdio.mjs (which prints garbage or a huge line on
// demand), 6 demo servers over Streamable HTTP behind a TCP proxy of ours (which can cut every connection), and 2
// official server-everything over stdio. Faults: SIGKILL (a stdio server, or an HTTP server, restarted 2 s later on
// its port), SIGSTOP then SIGCONT 3 s later, a garbage line, a line over the 64 MiB limit, every HTTP connection cut,
// and a config change (one server's env) that serve reloads. The load client is the official TypeScript SDK client
// calling `<server>__echo` through the gateway.
//
//   node soak.mjs --root REPO [--minutes 30] [--rate 40] [--fault-every 1.7] [--out bench/results]
//
// Writes OUT/soak-<date>.json and OUT/soak-<date>.png; prints the figures against the targets of issue 15 and exits
// 1 when the host crashed or a server did not come back.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writePlot } from './plot.mjs';

const opt = { minutes: 30, rate: 40, 'fault-every': 1.7, out: 'bench/results', root: process.cwd() };
for (let i = 2; i < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const root = path.resolve(opt.root);
const minutes = Number(opt.minutes), rate = Number(opt.rate), faultEvery = Number(opt['fault-every']);
const peers = path.join(root, 'tests/peers/node_modules');
const sdk = (p) => import(pathToFileURL(path.join(peers, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');

const switchboard = path.join(root, 'build/switchboard');
const demo = path.join(root, 'build/switchboard-demo-server');
const everything = path.join(peers, '@modelcontextprotocol/server-everything/dist/index.js');
const flaky = path.join(root, 'tests/soak/flaky_stdio.mjs');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-soak-'));
const t0 = Date.now();
const now = () => (Date.now() - t0) / 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pick = (a) => a[Math.floor(Math.random() * a.length)];
const log = (...a) => console.log(`[soak ${now().toFixed(1).padStart(7)} s]`, ...a);

// --- upstreams -----------------------------------------------------------------------------------------------
function listen(cmd, args, env = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let err = '';
    p.stderr.setEncoding('utf8');
    p.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on (\S+)/);
      if (m && !p.url) {
        p.url = m[1];
        resolve(p);
      }
      if (err.length > 65536) err = err.slice(-4096);
    });
    p.on('exit', (code) => p.url || reject(new Error(`${cmd} exited (${code}): ${err}`)));
  });
}

/// A TCP proxy to 127.0.0.1:target whose connections can all be cut at once (and whose target can move).
function proxy(target) {
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(p.target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const p = { target, cut: () => sockets.forEach((s) => s.destroy()), close: () => server.close() };
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(Object.assign(p, { port: server.address().port }))));
}

const http = [];
for (let i = 1; i <= 6; ++i) {
  const name = `h${String(i).padStart(2, '0')}`;
  const p = await listen(demo, ['--http', '0', '--name', name]);
  http.push({ name, process: p, proxy: await proxy(Number(new URL(p.url).port)) });
}
const stdioNames = Array.from({ length: 12 }, (_, i) => `s${String(i + 1).padStart(2, '0')}`);
const everythingNames = ['e01', 'e02'];
let generation = 0;
let reloaded = '';  // the server whose env the last reload changed
function writeConfig() {
  const servers = {};
  for (const n of stdioNames)
    servers[n] = { command: process.execPath, args: [flaky, demo, '--name', n], env: { SOAK_NAME: n, SOAK_GEN: String(n === reloaded ? generation : 0) } };
  for (const n of everythingNames) servers[n] = { command: process.execPath, args: [everything, 'stdio'], env: { SOAK_NAME: n } };
  for (const h of http) servers[h.name] = { url: `http://127.0.0.1:${h.proxy.port}/mcp` };
  const file = path.join(work, 'switchboard.json');
  fs.writeFileSync(file + '.tmp', JSON.stringify({ mcpServers: servers }, null, 2));
  fs.renameSync(file + '.tmp', file);
  return file;
}
const config = writeConfig();

// --- the host --------------------------------------------------------------------------------------------------
let crashed = null;
const serve = await listen(switchboard, ['--config', config, 'serve', '--port', '0']);
serve.on('exit', (code, signal) => {
  if (!stopping) crashed = { code, signal, t: now() };
});
let stopping = false;
const base = serve.url.replace(/\/mcp$/, '').replace(/\/$/, '');
log(`serve at ${base}, work dir ${work}`);

async function servers() {
  try {
    const r = await fetch(`${base}/api/servers`, { signal: AbortSignal.timeout(5000) });
    return (await r.json()).servers;
  } catch {
    return null;
  }
}
async function waitConnected(timeoutS) {
  const until = now() + timeoutS;
  for (;;) {
    const s = await servers();
    const up = s ? s.filter((x) => x.phase === 'connected').length : 0;
    if (up === 20 || now() > until) return up;
    await sleep(250);
  }
}
const upAtStart = await waitConnected(90);
log(`${upAtStart}/20 servers connected`);

// Which process is which server: serve's children, by the SOAK_NAME in their environment.
function childPids(pid) {
  const out = [];
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(...fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {}
  }
  return out;
}
function serverPid(name) {
  for (const pid of childPids(serve.pid)) {
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`SOAK_NAME=${name}`)) return pid;
    } catch {}
  }
  return 0;
}
function procStats(pid) {
  try {
    const rss = Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;
    return { rss, fds: fs.readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return null;
  }
}

// --- load ----------------------------------------------------------------------------------------------------------
const client = new Client({ name: 'switchboard-soak', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
const tools = new Set((await client.listTools()).tools.map((t) => t.name));
const targets = [...stdioNames, ...everythingNames, ...http.map((h) => h.name)].filter((n) => tools.has(`${n}__echo`));
log(`${tools.size} tools; load on ${targets.length} servers' echo at ${rate}/s`);
const calls = [];
let inflight = 0;
function call() {
  const server = pick(targets);
  const c = { server, start: now(), end: null, ok: false, error: '' };
  calls.push(c);
  ++inflight;
  client
    .callTool({ name: `${server}__echo`, arguments: { message: `soak ${calls.length}` } }, undefined, { timeout: 30000 })
    .then((r) => {
      c.ok = !r.isError;
      if (r.isError) c.error = JSON.stringify(r.content).slice(0, 200);
    })
    .catch((e) => (c.error = String(e.message ?? e).slice(0, 200)))
    .finally(() => {
      c.end = now();
      --inflight;
    });
}
const loadTimer = setInterval(call, 1000 / rate);

// --- samples -------------------------------------------------------------------------------------------------------
const samples = [];
const sampleTimer = setInterval(async () => {
  const s = await servers();
  const p = procStats(serve.pid);
  samples.push({
    t: now(),
    rssMiB: p?.rss ?? null,
    fds: p?.fds ?? null,
    connected: s ? s.filter((x) => x.phase === 'connected').length : null,
    reconnects: s ? s.reduce((a, x) => a + (x.reconnects ?? 0), 0) : null,
    inflight,
  });
}, 1000);

// --- faults --------------------------------------------------------------------------------------------------------
const faults = [];
const durationS = minutes * 60;
const warmupS = Math.min(30, durationS / 6), cooldownS = Math.min(60, durationS / 4);
const kinds = ['kill', 'kill', 'stop', 'garbage', 'huge', 'cut', 'cut', 'reload'];
async function fault() {
  const kind = pick(kinds);
  const t = now();
  if (kind === 'cut') {
    const h = pick(http);
    h.proxy.cut();
    faults.push({ t, kind, server: h.name });
  } else if (kind === 'kill' && Math.random() < 0.25) {
    const h = pick(http);
    h.process.kill('SIGKILL');
    faults.push({ t, kind, server: h.name });
    // Restarted 2 s later on a new port (its old one, an ephemeral port, may be some connection's now); the proxy,
    // the host's address for it, follows.
    setTimeout(async () => {
      try {
        h.process = await listen(demo, ['--http', '0', '--name', h.name]);
        h.proxy.target = Number(new URL(h.process.url).port);
      } catch (e) {
        log(`restarting ${h.name} failed: ${e.message}`);
      }
    }, 2000);
  } else if (kind === 'reload') {
    reloaded = pick(stdioNames);
    ++generation;
    writeConfig();
    faults.push({ t, kind, server: reloaded });
  } else {
    const name = pick(kind === 'garbage' || kind === 'huge' ? stdioNames : [...stdioNames, ...everythingNames]);
    const pid = serverPid(name);
    if (!pid) return;  // down right now (killed, reconnecting): another fault next time
    const signal = { kill: 'SIGKILL', stop: 'SIGSTOP', garbage: 'SIGUSR1', huge: 'SIGUSR2' }[kind];
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    if (kind === 'stop') setTimeout(() => { try { process.kill(pid, 'SIGCONT'); } catch {} }, 3000);
    faults.push({ t, kind, server: name });
  }
}
await sleep(warmupS * 1000);
const faultsFrom = now();
const faultTimer = setInterval(fault, faultEvery * 1000);
await sleep((durationS - warmupS - cooldownS) * 1000);
clearInterval(faultTimer);
const faultsUntil = now();
log(`${faults.length} faults injected; cooling down ${cooldownS} s`);
await sleep(cooldownS * 1000);
clearInterval(loadTimer);
for (let i = 0; i < 300 && inflight > 0; ++i) await sleep(100);
const upAtEnd = await waitConnected(40);
clearInterval(sampleTimer);
const final = (await servers()) ?? [];
const endStats = procStats(serve.pid);

stopping = true;
const exit = new Promise((r) => serve.on('exit', (code, signal) => r({ code, signal })));
await client.close().catch(() => {});
serve.kill('SIGTERM');
const serveExit = await Promise.race([exit, sleep(15000).then(() => ({ code: null, signal: 'timeout' }))]);
for (const h of http) {
  h.process.kill('SIGKILL');
  h.proxy.close();
}

// --- figures -------------------------------------------------------------------------------------------------------
const q = (xs, p) => (xs.length ? xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] : null);
const done = calls.filter((c) => c.end !== null);
const lat = done.map((c) => (c.end - c.start) * 1000);
const failed = done.filter((c) => !c.ok);
// A failed call's delay after the fault that hit its server (the last fault on it before the call ended).
const afterFault = [];
for (const c of failed) {
  const f = faults.filter((x) => x.server === c.server && x.t <= c.end).at(-1);
  if (f) afterFault.push({ delay: c.end - Math.max(f.t, c.start), kind: f.kind });
}
// Every call in flight when a fault hit its server must end (fail, or succeed) within 1 s of the fault: a frozen
// server's calls fail at once instead of waiting until it resumes.
const inFlightAtFault = [];
for (const c of done) {
  for (const f of faults) {
    if (f.server === c.server && f.t >= c.start && f.t <= c.end) inFlightAtFault.push({ delay: c.end - f.t, kind: f.kind, ok: c.ok });
  }
}
// Calls that took over 1 s, by the last fault on their server before they ended (a call to a server that is being
// restarted waits for it).
const slowByKind = {};
for (const c of done.filter((x) => x.end - x.start > 1)) {
  const f = faults.filter((x) => x.server === c.server && x.t <= c.end).at(-1);
  const k = f ? f.kind : 'none';
  slowByKind[k] = (slowByKind[k] ?? 0) + 1;
}
const at = (t) => samples.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best), samples[0]);
const minute5 = at(Math.min(300, durationS / 3)), last = samples.at(-1);
// fds move by one or two with the client's connections: the baseline is the most seen before the faults, the end
// the most seen in the last 10 s.
const fdsBefore = Math.max(...samples.filter((s) => s.t < faultsFrom && s.fds).map((s) => s.fds));
const fdsEnd = Math.max(...samples.filter((s) => s.t > samples.at(-1).t - 10 && s.fds).map((s) => s.fds));
const byKind = {};
for (const f of faults) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
const result = {
  date: new Date().toISOString(),
  minutes, rate, faultEvery, upstreams: 20,
  faults: { total: faults.length, byKind, from: faultsFrom, until: faultsUntil },
  host: { crashed, exit: serveExit, rssMiBAtMinute5: minute5?.rssMiB, rssMiBAtEnd: last?.rssMiB,
          rssGrowthPct: minute5 && last ? (100 * (last.rssMiB - minute5.rssMiB)) / minute5.rssMiB : null,
          fdsBaseline: fdsBefore, fdsAtEnd: fdsEnd, fdsAtExit: endStats?.fds },
  servers: { connectedAtStart: upAtStart, connectedAtEnd: upAtEnd, reconnects: last?.reconnects,
             notBack: final.filter((s) => s.phase !== 'connected').map((s) => `${s.name}: ${s.phase} ${s.error ?? ''}`) },
  calls: { total: calls.length, completed: done.length, ok: done.length - failed.length, failed: failed.length,
           hung: calls.length - done.length + done.filter((c) => c.end - c.start > 10).length,
           latencyMs: { p50: q(lat, 0.5), p99: q(lat, 0.99), max: q(lat, 1) },
           failedWithinS: { p50: q(afterFault.map((x) => x.delay), 0.5), p99: q(afterFault.map((x) => x.delay), 0.99),
                            max: q(afterFault.map((x) => x.delay), 1),
                            over1s: afterFault.filter((x) => x.delay > 1).length,
                            over1sByKind: afterFault.filter((x) => x.delay > 1).reduce((a, x) => ((a[x.kind] = (a[x.kind] ?? 0) + 1), a), {}) },
           over1sByLastFault: slowByKind,
           inFlightAtFault: { total: inFlightAtFault.length, failed: inFlightAtFault.filter((x) => !x.ok).length,
                              endedWithinS: { p50: q(inFlightAtFault.map((x) => x.delay), 0.5), p99: q(inFlightAtFault.map((x) => x.delay), 0.99),
                                              max: q(inFlightAtFault.map((x) => x.delay), 1) },
                              over1s: inFlightAtFault.filter((x) => x.delay > 1).length,
                              over1sByKind: inFlightAtFault.filter((x) => x.delay > 1).reduce((a, x) => ((a[x.kind] = (a[x.kind] ?? 0) + 1), a), {}) },
           errors: Object.entries(failed.reduce((a, c) => ((a[c.error.slice(0, 90)] = (a[c.error.slice(0, 90)] ?? 0) + 1), a), {}))
             .sort((a, b) => b[1] - a[1]).slice(0, 12) },
  samples,
};
const stamp = result.date.replace(/[:]/g, '-').replace(/\..*/, '');
const out = path.resolve(root, opt.out);
fs.mkdirSync(out, { recursive: true });
const jsonFile = path.join(out, `soak-${stamp}.json`), pngFile = path.join(out, `soak-${stamp}.png`);
fs.writeFileSync(jsonFile, JSON.stringify(result, null, 1));
// Latency per 10 s bucket (p50, p99) for the plot.
const buckets = new Map();
for (const c of done) {
  const k = Math.floor(c.start / 10) * 10;
  if (!buckets.has(k)) buckets.set(k, []);
  buckets.get(k).push((c.end - c.start) * 1000);
}
const bucketKeys = [...buckets.keys()].sort((a, b) => a - b);
writePlot(pngFile, {
  title: `switchboard soak: ${minutes} min, 20 upstreams, ${faults.length} faults`,
  durationS: now(),
  panels: [
    { label: 'call latency', unit: 'ms', series: [
      { name: 'p50', color: [30, 110, 200], points: bucketKeys.map((k) => [k, q(buckets.get(k), 0.5)]) },
      { name: 'p99', color: [220, 60, 40], points: bucketKeys.map((k) => [k, q(buckets.get(k), 0.99)]) }] },
    { label: 'host RSS', unit: 'MiB', series: [{ name: 'rss', color: [40, 150, 70], points: samples.filter((s) => s.rssMiB).map((s) => [s.t, s.rssMiB]) }] },
    { label: 'open fds / servers connected', unit: '', series: [
      { name: 'fds', color: [120, 60, 170], points: samples.filter((s) => s.fds).map((s) => [s.t, s.fds]) },
      { name: 'connected', color: [200, 140, 0], points: samples.filter((s) => s.connected !== null).map((s) => [s.t, s.connected]) }] },
  ],
  faults: faults.map((f) => ({ t: f.t, kind: f.kind })),
});

// --- verdict -------------------------------------------------------------------------------------------------------
const row = (what, value, target, ok) => console.log(`${ok ? 'ok  ' : 'MISS'} ${what.padEnd(44)} ${String(value).padEnd(22)} ${target}`);
console.log(`\nsoak: ${minutes} min, ${calls.length} calls, ${faults.length} faults (${JSON.stringify(byKind)})`);
row('host crashes', crashed ? JSON.stringify(crashed) : 0, '0', !crashed);
row('hung calls (no answer within 10 s)', result.calls.hung, '0', result.calls.hung === 0);
row('failed calls answered > 1 s after their fault', `${result.calls.failedWithinS.over1s} of ${failed.length}`, '0', result.calls.failedWithinS.over1s === 0);
row('calls in flight at a fault, ended > 1 s after it', `${result.calls.inFlightAtFault.over1s} of ${inFlightAtFault.length}`, '0', result.calls.inFlightAtFault.over1s === 0);
row('servers back after the faults', `${upAtEnd}/20`, '20/20', upAtEnd === 20);
row('RSS growth from minute 5 to the end', `${result.host.rssGrowthPct?.toFixed(1)} %`, '< 5 %', result.host.rssGrowthPct !== null && result.host.rssGrowthPct < 5);
row('open fds: baseline -> end', `${result.host.fdsBaseline} -> ${result.host.fdsAtEnd}`, 'back to baseline', result.host.fdsAtEnd <= result.host.fdsBaseline);
row('serve exit after SIGTERM', JSON.stringify(serveExit), 'code 0', serveExit.code === 0);
console.log(`latency ms p50 ${result.calls.latencyMs.p50?.toFixed(1)} p99 ${result.calls.latencyMs.p99?.toFixed(1)} max ${result.calls.latencyMs.max?.toFixed(0)}; ok ${result.calls.ok}, failed ${failed.length}`);
console.log(`calls over 1 s, by the last fault on their server: ${JSON.stringify(slowByKind)}`);
console.log(`results: ${jsonFile}\nplot:    ${pngFile}`);
fs.rmSync(work, { recursive: true, force: true });
process.exit(crashed || upAtEnd !== 20 ? 1 : 0);
