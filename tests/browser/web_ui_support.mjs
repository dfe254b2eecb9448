// What the web UI tests share (web_ui.test.mjs: the servers, tools, resources, prompts and settings pages and the OAuth
// login; web_ui_chat.test.mjs: the chat page): the binaries from the environment, `switchboard serve` and other
// processes started and stopped, a page in Debian's chromium driven by playwright-core (from tests/peers).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(join(here, '..', 'peers', 'package.json'))('playwright-core');

export const BIN = process.env.SWITCHBOARD_BIN && resolve(process.env.SWITCHBOARD_BIN);
export const DEMO = process.env.SWITCHBOARD_DEMO && resolve(process.env.SWITCHBOARD_DEMO);
export const CHROMIUM = '/usr/bin/chromium';
// The README's screenshots are refreshed on request (SWITCHBOARD_SCREENSHOTS=docs/screenshots); a plain run writes
// them to a temporary folder, so that running the tests does not change tracked files.
export const SCREENSHOTS = process.env.SWITCHBOARD_SCREENSHOTS
  ? resolve(process.env.SWITCHBOARD_SCREENSHOTS)
  : mkdtempSync(join(tmpdir(), 'switchboard-screenshots-'));
export const WAIT = 15_000;

export const missing = [
  !BIN && 'SWITCHBOARD_BIN',
  !DEMO && 'SWITCHBOARD_DEMO',
  !existsSync(CHROMIUM) && CHROMIUM,
].filter(Boolean);

/** Polls `check` until it returns a truthy value; fails with `what` after `timeout` ms. */
export async function until(what, check, timeout = WAIT) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts `command args` and resolves with the first match of `pattern` in its output (`stream`: stdout or stderr),
 * failing if it exits first. Returns the process too, and a function giving all of that output so far. `env`: the
 * variables to set besides ours.
 */
export function startAndWaitFor(command, args, stream, pattern, name, cwd, env) {
  const proc = spawn(command, args, {
    cwd,
    env: env ? { ...process.env, ...env } : process.env,
    stdio: ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', 'pipe'],
  });
  let out = '';
  const output = () => out;
  const match = new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not say where it listens; output:\n${out}`)), WAIT);
    proc[stream].setEncoding('utf8');
    proc[stream].on('data', (chunk) => {
      out += chunk;
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m);
      }
    });
    proc.on('exit', (code) => fail(new Error(`${name} exited (${code}); output:\n${out}`)));
  });
  return { proc, output, match };
}

/**
 * `switchboard serve` on a free port (in `cwd`, else ours; `env` added to ours); resolves with the process and the
 * page's URL.
 */
export async function serveGateway(args, cwd, env) {
  const { proc, output, match } = startAndWaitFor(
    BIN,
    [...args, 'serve', '--port', '0', '--quiet'],
    'stderr',
    /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/,
    'serve',
    cwd,
    env,
  );
  const m = await match;
  return { proc, base: `${m[1]}/`, output };
}

export async function stopProcess(proc) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export async function launchBrowser() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return browser;
}

/** A browser with one 1280x800 page, light; the page's uncaught errors go to `errors`. */
export async function openPage(errors) {
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => errors.push(e.message));
  mkdirSync(SCREENSHOTS, { recursive: true });
  return { browser, page };
}

// ---- the chat against the scripted model (tests/peers/fake_llm), for web_ui_chat_live.test.mjs ----

export const FAKE_LLM = process.env.FAKE_LLM && resolve(process.env.FAKE_LLM);

/** The scripted model playing `script` (written to `dir`); resolves with its process and URL. */
export async function startFakeModel(dir, script) {
  const path = join(dir, 'script.json');
  writeFileSync(path, JSON.stringify(script));
  const { proc, match } = startAndWaitFor(FAKE_LLM, [path, '--port', '0'], 'stdout', /^(\d+)\n/, 'the fake model');
  return { proc, url: `http://127.0.0.1:${(await match)[1]}` };
}

/**
 * Starts, into `env` (`dir`, `pageErrors`): the scripted model playing `script`; `switchboard serve` using it, with
 * `mcpServers` (its config and conversations in `dir`), run in `cwd` with the variables `serveEnv` besides ours; a
 * browser page. stopChatGateway(env) stops them.
 */
export async function startChatGateway(env, script, mcpServers, { cwd, serveEnv } = {}) {
  ({ proc: env.llm, url: env.llmUrl } = await startFakeModel(env.dir, script));
  const configPath = join(env.dir, 'switchboard.json');
  writeFileSync(configPath, JSON.stringify({ llm: { baseUrl: `${env.llmUrl}/v1`, model: 'test' }, mcpServers }));
  const args = ['--config', configPath, '--db', join(env.dir, 'conversations.db'), 'serve', '--port', '0', '--quiet'];
  // The chats' traces go to the test's directory, not the user's state directory.
  const { proc, match } = startAndWaitFor(BIN, args, 'stderr', /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/, 'serve',
    cwd, { SWITCHBOARD_TRACE_FILE: join(env.dir, 'traces.jsonl'), ...serveEnv });
  env.serve = proc;
  env.base = `${(await match)[1]}/`;
  Object.assign(env, await openPage(env.pageErrors));
}

/** Stops what startChatGateway started (as far as it got) and removes its directory. */
export async function stopChatGateway(env) {
  await env.browser?.close();
  await stopProcess(env.serve);
  await stopProcess(env.llm);
  if (env.dir) rmSync(env.dir, { recursive: true, force: true });
}

/** The chat completion requests the scripted model at `llmUrl` was sent, oldest first ({path, body, headers}). */
export async function modelRequests(llmUrl) {
  const all = await (await fetch(`${llmUrl}/_requests`)).json();
  return all.filter((r) => r.path.endsWith('/chat/completions'));
}

/** The frame of an MCP App whose document has `selector` (the inner frame inside the sandbox proxy). */
export async function appFrame(page, selector) {
  return until(`an app frame with ${selector}`, async () => {
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      if (await f.locator(selector).count().catch(() => 0)) return f;
    }
    return null;
  });
}

/** A JSON-RPC request sent from an app's frame to the host, as an app sends it; the host's answer. */
let appRequests = 0;
export async function appRequest(app, method, params) {
  const id = 9500 + ++appRequests;
  return app.evaluate(([id, method, params]) => new Promise((ok) => {
    addEventListener('message', function answer(e) {
      if (e.source !== parent || e.data?.id !== id || e.data.method) return;
      removeEventListener('message', answer);
      ok(e.data);
    });
    parent.postMessage({ jsonrpc: '2.0', id, method, params }, '*');
  }), [id, method, params]);
}
