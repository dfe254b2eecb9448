// The web UI in a real browser against a real `switchboard serve` with the demo server.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   FAKE_LLM=build/switchboard-fake-llm node --test tests/browser/
// Needs /usr/bin/chromium (Debian's `chromium`) and playwright-core from tests/peers. The chat tests also need
// FAKE_LLM (the scripted model of tests/peers/fake_llm); without it they are skipped (ctest always sets it). With
// SWITCHBOARD_SCREENSHOTS=docs/screenshots it refreshes the README's servers.png, tools-try-it.png, chat.png and
// chat-agent.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(join(here, '..', 'peers', 'package.json'))('playwright-core');

const BIN = process.env.SWITCHBOARD_BIN && resolve(process.env.SWITCHBOARD_BIN);
const DEMO = process.env.SWITCHBOARD_DEMO && resolve(process.env.SWITCHBOARD_DEMO);
const FAKE_LLM = process.env.FAKE_LLM && resolve(process.env.FAKE_LLM);
// The tests' OAuth authorization server (tests/peers/test_auth_server); it is built next to the switchboard binary.
const AUTH_SERVER =
  (process.env.SWITCHBOARD_TEST_AUTH_SERVER && resolve(process.env.SWITCHBOARD_TEST_AUTH_SERVER)) ||
  (BIN && join(dirname(BIN), 'switchboard-test-auth-server'));
const CHROMIUM = '/usr/bin/chromium';
// The README's screenshots are refreshed on request (SWITCHBOARD_SCREENSHOTS=docs/screenshots); a plain run writes
// them to a temporary folder, so that running the tests does not change tracked files.
const SCREENSHOTS = process.env.SWITCHBOARD_SCREENSHOTS
  ? resolve(process.env.SWITCHBOARD_SCREENSHOTS)
  : mkdtempSync(join(tmpdir(), 'switchboard-screenshots-'));
const WAIT = 15_000;
const COMMENT = '// The web UI test: this comment must survive saves made from the UI.';

const missing = [
  !BIN && 'SWITCHBOARD_BIN',
  !DEMO && 'SWITCHBOARD_DEMO',
  !existsSync(CHROMIUM) && CHROMIUM,
].filter(Boolean);

/** Polls `check` until it returns a truthy value; fails with `what` after `timeout` ms. */
async function until(what, check, timeout = WAIT) {
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
function startAndWaitFor(command, args, stream, pattern, name, cwd, env) {
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

/** `switchboard serve` on a free port (in `cwd`, else ours); resolves with the process and the page's URL. */
async function serveGateway(args, cwd) {
  const { proc, output, match } = startAndWaitFor(
    BIN,
    [...args, 'serve', '--port', '0', '--quiet'],
    'stderr',
    /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/,
    'serve',
    cwd,
  );
  const m = await match;
  return { proc, base: `${m[1]}/`, output };
}

/** The scripted model (tests/peers/fake_llm) playing `script`, written to `dir`; resolves with it and its URL. */
async function startFakeModel(dir, script) {
  const path = join(dir, 'script.json');
  writeFileSync(path, JSON.stringify(script));
  const { proc, match } = startAndWaitFor(FAKE_LLM, [path, '--port', '0'], 'stdout', /^(\d+)\n/, 'the fake model');
  return { proc, url: `http://127.0.0.1:${(await match)[1]}` };
}

/** A port free at the moment (for a server whose URL must be known before it starts). */
function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

async function stopProcess(proc) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function launchBrowser() {
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

/**
 * Starts, into `env` (`dir`, `pageErrors`): the scripted model playing `script`; `switchboard serve` using it, with
 * `mcpServers` (its config and conversations in `dir`; run in `cwd`); a browser page. closeChat(env) stops them.
 */
async function startChat(env, script, mcpServers, cwd) {
  ({ proc: env.llm, url: env.llmUrl } = await startFakeModel(env.dir, script));
  const configPath = join(env.dir, 'switchboard.json');
  writeFileSync(configPath, JSON.stringify({ llm: { baseUrl: `${env.llmUrl}/v1`, model: 'test' }, mcpServers }));
  ({ proc: env.serve, base: env.base } = await serveGateway(
    ['--config', configPath, '--db', join(env.dir, 'conversations.db')],
    cwd,
  ));
  Object.assign(env, await openPage(env.pageErrors));
}

/** Stops what startChat started (as far as it got) and removes its directory. */
async function closeChat(env) {
  await env.browser?.close();
  await stopProcess(env.serve);
  await stopProcess(env.llm);
  if (env.dir) rmSync(env.dir, { recursive: true, force: true });
}

/** A browser with one 1280x800 page, light; the page's uncaught errors go to `errors`. */
async function openPage(errors) {
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => errors.push(e.message));
  mkdirSync(SCREENSHOTS, { recursive: true });
  return { browser, page };
}

/** The config file's `mcpServers`, read as JSONC (our comment is a whole line). */
function servers(configPath) {
  const text = readFileSync(configPath, 'utf8');
  return JSON.parse(text.replace(/^\s*\/\/.*$/gm, '')).mcpServers;
}

/** The pid of the demo binary started first (the `demo` entry) among the serve process's descendants. */
function demoPid(root) {
  const demo = realpathSync(DEMO);
  const procs = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The fields after the ")" that ends the command name: state, ppid, ..., starttime (20th of them).
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.push({ pid: Number(name), ppid: Number(fields[1]), start: Number(fields[19]) });
    } catch {
      // The process went away while we looked.
    }
  }
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs)
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
  }
  const exe = (pid) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`);
    } catch {
      return '';
    }
  };
  const found = procs.filter((p) => p.pid !== root && tree.has(p.pid) && exe(p.pid) === demo);
  found.sort((a, b) => a.start - b.start || a.pid - b.pid);
  return found[0]?.pid;
}

describe('web UI', { skip: missing.length ? `needs ${missing.join(', ')}` : false }, () => {
  let dir, configPath, serve, base, browser, page;
  const pageErrors = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-web-'));
    configPath = join(dir, 'switchboard.json');
    writeFileSync(
      configPath,
      `{\n  ${COMMENT}\n  "mcpServers": {\n    "demo": {"command": ${JSON.stringify(DEMO)}}\n  }\n}\n`,
    );
    ({ proc: serve, base } = await serveGateway(['--config', configPath, '--db', join(dir, 'conversations.db')]));
    ({ browser, page } = await openPage(pageErrors));
  });

  after(async () => {
    await browser?.close();
    await stopProcess(serve);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const badge = (name) => page.getByTestId(`phase-${name}`);
  const phaseIs = (name, phase) =>
    page.waitForFunction(
      ([id, want]) => document.querySelector(`[data-testid="${id}"]`)?.textContent === want,
      [`phase-${name}`, phase],
      { timeout: WAIT },
    );

  test('add a server through the form → it turns connected', async () => {
    await page.goto(`${base}#/servers`);
    await phaseIs('demo', 'connected');
    await page.getByRole('button', { name: 'Add server' }).click();
    await page.getByLabel('Name', { exact: true }).fill('second');
    await page.getByLabel('Command', { exact: true }).fill(DEMO);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await phaseIs('second', 'connected');

    const text = readFileSync(configPath, 'utf8');
    assert.ok(text.includes(COMMENT), `the comment is gone:\n${text}`);
    assert.deepEqual(servers(configPath).second, { command: DEMO });
    assert.deepEqual(servers(configPath).demo, { command: DEMO });
    await page.screenshot({ path: join(SCREENSHOTS, 'servers.png') });
  });

  test('kill the process → reconnecting → connected', async () => {
    await page.goto(`${base}#/servers`);
    await phaseIs('demo', 'connected');
    const pid = await until('the demo server process', () => demoPid(serve.pid));
    // Record every text the badge shows: "reconnecting" may last only a moment.
    await page.evaluate(() => {
      const seen = (window.__demoPhases = []);
      const note = () => {
        const t = document.querySelector('[data-testid="phase-demo"]')?.textContent;
        if (t && seen.at(-1) !== t) seen.push(t);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
      note();
    });
    process.kill(pid, 'SIGKILL');
    const phases = await until('reconnecting, then connected', async () => {
      const seen = await page.evaluate(() => window.__demoPhases);
      const i = seen.indexOf('reconnecting');
      return i >= 0 && seen.indexOf('connected', i) > i && seen;
    });
    assert.equal(phases[0], 'connected');
    assert.equal(await badge('second').textContent(), 'connected');
  });

  test('toggle a tool off and on again', async () => {
    await page.goto(`${base}#/tools`);
    const toggle = page.getByTestId('toggle-demo-add');
    await toggle.waitFor();
    assert.equal(await toggle.isChecked(), true);

    await toggle.click();
    await until('excludedTools ["add"] in the file', () => {
      const demo = servers(configPath).demo;
      return JSON.stringify(demo.excludedTools) === '["add"]' && demo.command === DEMO;
    });
    await until('the switch off and usable', async () => !(await toggle.isChecked()) && (await toggle.isEnabled()));
    assert.ok(readFileSync(configPath, 'utf8').includes(COMMENT));

    await toggle.click();
    await until('excludedTools gone from the file', () => servers(configPath).demo.excludedTools === undefined);
    await until('the switch on and usable', async () => (await toggle.isChecked()) && (await toggle.isEnabled()));
  });

  test('try it on add', async () => {
    await page.goto(`${base}#/tools`);
    const row = page.locator('li').filter({ has: page.getByTestId('toggle-demo-add') });
    const tryIt = row.getByRole('button', { name: 'Try it' });
    await until('"Try it" enabled', () => tryIt.isEnabled());
    await tryIt.click();
    await page.getByLabel('a', { exact: true }).fill('2');
    await page.getByLabel('b', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const result = page.getByTestId('tool-result');
    await result.waitFor();
    await until('the result 5', async () => /^5$/m.test(await result.locator('pre').first().textContent()));
    await page.screenshot({ path: join(SCREENSHOTS, 'tools-try-it.png') });
    await page.keyboard.press('Escape');
    await page.locator('dialog[open]').waitFor({ state: 'detached' });
  });

  test('resources and prompts', async () => {
    await page.goto(`${base}#/resources`);
    await page.getByRole('button', { name: /Demo README/ }).first().click();
    const preview = page.getByTestId('resource-preview');
    await preview.getByText('Switchboard demo MCP server').waitFor();

    // The greeting template: completion offers the demo's names, then Read expands and previews.
    await page.getByRole('button', { name: /Greeting.*demo:\/\/greeting/ }).first().click();
    const name = page.getByLabel('name', { exact: true });
    await name.pressSequentially('Al');
    await until('completion of "Al"', async () =>
      (await page.locator('datalist option').evaluateAll((os) => os.map((o) => o.value))).includes('Alice'),
    );
    await name.fill('Alice');
    await page.getByRole('button', { name: 'Read', exact: true }).click();
    await preview.getByText('Hello, Alice!').waitFor();

    await page.goto(`${base}#/prompts`);
    await page.getByRole('button', { name: /Greeting.*greet/ }).first().click();
    await page.getByLabel('name', { exact: true }).fill('Ada');
    await page.getByLabel('style', { exact: true }).fill('pirate');
    await page.getByRole('button', { name: 'Get', exact: true }).click();
    const messages = page.getByTestId('prompt-result');
    await messages.getByText('Greet Ada the way a pirate would, arr!').waitFor();
    assert.match(await messages.textContent(), /user/);
  });

  test('settings without a model: the error, the theme, the token', async () => {
    await page.goto(`${base}#/settings`);
    await page.getByRole('link', { name: 'Settings', exact: true, current: 'page' }).waitFor();
    await page.getByText('No model is configured.').waitFor();
    // The model list cannot be had: the select says why, and keeps "the configured model".
    await page.getByRole('alert').filter({ hasText: 'no model is configured' }).waitFor();
    assert.equal(await page.getByLabel('Model', { exact: true }).inputValue(), '');

    const theme = () => page.evaluate(() => document.documentElement.dataset.theme ?? null);
    await page.getByRole('radio', { name: 'Dark' }).check();
    assert.equal(await theme(), 'dark');
    assert.equal(await page.evaluate(() => localStorage.getItem('switchboard.theme')), 'dark');
    await page.getByRole('button', { name: 'Switch to light theme' }).waitFor();
    await page.getByRole('radio', { name: 'Follow the system' }).check();
    assert.equal(await theme(), null);
    assert.equal(await page.evaluate(() => localStorage.getItem('switchboard.theme')), null);

    const state = page.getByTestId('token-state');
    await state.getByText('No token is stored').waitFor();
    await page.getByLabel('Token', { exact: true }).fill('not-needed-here');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await state.getByText('A token is stored').waitFor();
    assert.ok(!(await state.textContent()).includes('not-needed-here'));
    assert.equal(await page.evaluate(() => localStorage.getItem('switchboard.token')), 'not-needed-here');
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await state.getByText('No token is stored').waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('switchboard.token')), null);
  });

  test('no uncaught errors in the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});

// The chat page against a scripted model (tests/peers/fake_llm): one response per model request, in test order;
// GET /v1/models lists `models`.
const CHAT_SCRIPT = {
  responses: [
    // chat with a tool call: the model calls add, then answers, in pieces.
    { toolCalls: [{ name: 'add', arguments: '{"a":2,"b":3}' }] },
    { content: '2 + 3 = 5.', chunkDelayMs: 60 },
    // attach a resource
    { content: 'That is the demo README.' },
    // Stop: the answer begins, then the model stalls
    { content: 'Once upon a time', hangMs: 30_000 },
    // settings: with max turns 1, the tool call's turn ends the run; Continue brings the answer.
    { toolCalls: [{ name: 'add', arguments: '{"a":1,"b":1}' }] },
    { content: 'It is 2.' },
    // a tool switched off for one conversation: not offered in it
    { content: 'Without add.' },
    // the endpoint's model renamed on the settings page
    { content: 'Asked for the renamed model.' },
    // a question answered on another page (the turn limit is still 1: the run stops after the call)
    { toolCalls: [{ name: 'add', arguments: '{"a":4,"b":4}' }] },
    // a reload while the answer streams (4 characters a piece): the page takes the run back and follows it to the end
    { content: 'One two three four five six seven eight', chunkDelayMs: 400 },
  ],
  models: [{ id: 'alpha' }, { id: 'beta' }],
};

const chatSkip = missing.length ? `needs ${missing.join(', ')}` : !FAKE_LLM ? 'needs FAKE_LLM' : false;

describe('chat', { skip: chatSkip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let llmUrl, base, page;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-chat-'));
    await startChat(env, CHAT_SCRIPT, { demo: { command: DEMO } });
    ({ llmUrl, base, page } = env);
  });

  after(() => closeChat(env));

  const message = () => page.getByLabel('Message', { exact: true });
  const okBlock = () => page.locator('[data-testid="tool-block"][data-status="ok"]');
  const modelRequests = async () => (await (await fetch(`${llmUrl}/_requests`)).json()).filter((r) => r.path.endsWith('/chat/completions'));

  test('a tool call: approval, the tool block, the streamed answer', async () => {
    await page.goto(base);
    // No hash: the chat is the default page.
    await page.getByRole('link', { name: 'Chat', exact: true, current: 'page' }).waitFor();
    // Record the answer's texts as they appear, to see it stream.
    await page.evaluate(() => {
      const seen = (window.__answers = []);
      new MutationObserver(() => {
        for (const m of document.querySelectorAll('[data-testid="assistant-message"]')) {
          const t = m.textContent;
          if (t.includes('2 + ') && seen.at(-1) !== t) seen.push(t);
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });

    await message().fill('What is 2 + 3?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Allow add (server demo)?' });
    await dialog.waitFor();
    assert.match(await dialog.textContent(), /"a": 2/);
    await dialog.getByRole('button', { name: 'Always for this tool' }).click();

    const block = okBlock();
    await block.waitFor();
    assert.match(await block.textContent(), /add/);
    await block.getByText('5', { exact: true }).waitFor();
    await page.getByText('2 + 3 = 5.', { exact: true }).waitFor();
    const answers = await page.evaluate(() => window.__answers);
    assert.ok(answers.some((t) => !t.includes('2 + 3 = 5.')), `the answer came in one piece: ${JSON.stringify(answers)}`);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    assert.match(page.url(), /#\/chat\/\d+$/);
    await page.getByRole('list', { name: 'Conversations' }).getByText('What is 2 + 3?', { exact: true }).waitFor();
  });

  test('reload: the conversation and its tool block are still there', async () => {
    const url = page.url();
    await page.reload();
    assert.equal(page.url(), url);
    await okBlock().getByText('5', { exact: true }).waitFor();
    await page.getByText('2 + 3 = 5.', { exact: true }).waitFor();
    await page.getByTestId('user-message').getByText('What is 2 + 3?').waitFor();
    assert.equal(await page.getByTestId('tool-block').count(), 1);
    await okBlock().getByText('Arguments').click();
    await okBlock().getByText('"b": 3').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'chat.png') });
  });

  test('attach a resource → the message shows it', async () => {
    await page.getByRole('button', { name: 'New chat' }).click();
    await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    await page.getByRole('button', { name: 'Attach resource' }).click();
    await page.getByRole('dialog', { name: 'Attach resource' }).getByRole('button', { name: /Demo README/ }).click();
    const composer = page.locator('form').filter({ has: message() });
    await composer.getByTestId('attachment').getByText('Demo README').waitFor();

    await message().fill('What is this file?');
    await message().press('Enter');
    const sent = page.getByTestId('user-message').filter({ hasText: 'What is this file?' });
    await sent.getByTestId('attachment').getByText('Demo README').waitFor();
    await page.getByText('That is the demo README.', { exact: true }).waitFor();
    // Stored with the message, and gone from the composer.
    await page.reload();
    await sent.getByTestId('attachment').getByText('Demo README').waitFor();
    assert.equal(await composer.getByTestId('attachment').count(), 0);
    // The model got the resource's text with the message.
    const requests = await modelRequests();
    assert.match(JSON.stringify(requests.at(-1).body.messages), /Switchboard demo MCP server/);
  });

  test('insert a prompt', async () => {
    await page.getByRole('button', { name: 'Insert prompt' }).click();
    const dialog = page.getByRole('dialog', { name: 'Insert prompt' });
    await dialog.getByRole('button', { name: /Greeting/ }).click();
    await dialog.getByLabel('name', { exact: true }).fill('Ada');
    await dialog.getByRole('button', { name: 'Insert', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.match(await message().inputValue(), /Ada/);
    await message().fill('');
  });

  test('Stop', async () => {
    await page.getByRole('button', { name: 'New chat' }).click();
    await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    await message().fill('Tell me a story');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Once', { exact: false }).waitFor();
    const started = Date.now();
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped', { exact: true }).waitFor({ timeout: 5000 });
    assert.ok(Date.now() - started < 5000);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
  });

  test('settings: the model picked and the turn limit go with every request', async () => {
    await page.goto(`${base}#/settings`);
    assert.equal(await page.getByTestId('llm-base-url').textContent(), `${llmUrl}/v1`);
    assert.equal(await page.getByTestId('llm-model').textContent(), 'test');
    const model = page.getByLabel('Model', { exact: true });
    // The endpoint's models, listed by the fake from its script.
    await model.locator('option', { hasText: 'beta' }).waitFor({ state: 'attached' });
    assert.deepEqual(await model.locator('option').allTextContents(), ['The configured model (test)', 'alpha', 'beta']);
    await model.selectOption('beta');
    await page.getByLabel('Max turns', { exact: true }).fill('1');
    assert.equal(await page.evaluate(() => localStorage.getItem('switchboard.model')), 'beta');
    assert.equal(await page.evaluate(() => localStorage.getItem('switchboard.maxTurns')), '1');

    const before = (await modelRequests()).length;
    await page.getByRole('link', { name: 'Chat', exact: true }).click();
    await page.getByRole('button', { name: 'New chat' }).click();
    await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    await message().fill('What is 1 + 1?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Allow add (server demo)?' });
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    // One turn (the tool call) and the run stops to ask.
    const limit = page.getByRole('status').filter({ hasText: 'The turn limit was reached' });
    await limit.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByText('It is 2.', { exact: true }).waitFor();
    await limit.waitFor({ state: 'detached' });

    const sent = (await modelRequests()).slice(before);
    assert.equal(sent.length, 2);
    for (const r of sent) assert.equal(r.body.model, 'beta');
  });

  test('a tool switched off for one conversation is not offered to the model in it', async () => {
    // The conversation of the test before (it exists: it has an id), its Tools panel.
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    const panel = page.getByRole('dialog', { name: 'Tools in this conversation' });
    const add = panel.getByRole('switch', { name: 'add (demo) in this conversation' });
    assert.equal(await add.isChecked(), true);
    await add.click();
    await until('the switch saved', async () => !(await add.isChecked()) && (await add.isEnabled()));
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });

    const before = (await modelRequests()).length;
    await message().fill('Add nothing');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Without add.', { exact: true }).waitFor();
    const [sent] = (await modelRequests()).slice(before);
    const offered = (sent.body.tools ?? []).map((t) => t.function.name);
    assert.ok(offered.includes('echo'), `echo is still offered: ${offered}`);
    assert.ok(!offered.includes('add'), `add was offered: ${offered}`);
    // Only here: on the Tools page the tool is still on for everyone.
    await page.getByRole('link', { name: 'Tools', exact: true }).click();
    await page.getByRole('switch', { name: /^add/ }).first().waitFor();
    assert.equal(await page.getByRole('switch', { name: /^add/ }).first().isChecked(), true);
  });

  test('the settings page writes the endpoint into the config file, and the next message uses it', async () => {
    await page.goto(`${base}#/settings`);
    const field = page.getByLabel('Configured model', { exact: true });
    await until('the file\'s model', async () => (await field.inputValue()) === 'test');
    await page.getByLabel('Base URL', { exact: true }).fill('ftp://nowhere');
    await page.getByRole('alert').filter({ hasText: 'http:// or https://' }).waitFor();
    await page.getByLabel('Base URL', { exact: true }).fill(`${llmUrl}/v1`);
    await field.fill('renamed');
    await page.getByRole('button', { name: 'Save to the config file' }).click();
    await until('the model in effect', async () => (await page.getByTestId('llm-model').textContent()) === 'renamed');
    const config = JSON.parse(readFileSync(join(env.dir, 'switchboard.json'), 'utf8'));
    assert.equal(config.llm.model, 'renamed');
    assert.ok(config.mcpServers.demo, 'the servers stay');

    // The picked model (beta, from the test before) would win: back to the configured one.
    await page.getByLabel('Model', { exact: true }).selectOption({ index: 0 });
    const before = (await modelRequests()).length;
    await page.getByRole('link', { name: 'Chat', exact: true }).click();
    await page.getByRole('button', { name: 'New chat' }).click();
    await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    await message().fill('Which model?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Asked for the renamed model.', { exact: true }).waitFor();
    const [sent] = (await modelRequests()).slice(before);
    assert.equal(sent.body.model, 'renamed');
  });

  test('a question answered on another page closes its dialog here', async () => {
    await page.getByRole('button', { name: 'New chat' }).click();
    await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    await message().fill('What is 4 + 4?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Allow add (server demo)?' });
    await dialog.waitFor();
    // The conversation has its address by now: the other page loads it, and asks the waiting question too.
    const other = await env.browser.newPage({ viewport: { width: 1280, height: 800 } });
    other.setDefaultTimeout(WAIT);
    other.on('pageerror', (e) => pageErrors.push(e.message));
    try {
      await other.goto(page.url());
      await other.getByRole('dialog', { name: 'Allow add (server demo)?' }).getByRole('button', { name: 'Allow once' }).click();
      await dialog.waitFor({ state: 'detached' });
      await okBlock().getByText('8', { exact: true }).waitFor();
    } finally {
      await other.close();
    }
  });

  test('a reload while the answer streams: the page takes the run back and follows it to the end', async () => {
    await page.getByRole('button', { name: 'New chat' }).click();
    await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    const before = (await modelRequests()).length;
    await message().fill('Count to eight');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const answer = page.getByTestId('assistant-message').last();
    await answer.getByText('One', { exact: false }).waitFor();
    assert.doesNotMatch(await answer.textContent(), /eight/);
    const url = page.url();
    assert.match(url, /#\/chat\/\d+$/);

    await page.reload();
    assert.equal(page.url(), url);
    await page.getByTestId('user-message').getByText('Count to eight').waitFor();
    // Following the run live again: Stop, the answer so far (a page not following it would show nothing of it before
    // it is stored), then the rest of it, then Send once it is done.
    await page.getByRole('button', { name: 'Stop', exact: true }).waitFor();
    await until('the answer so far', async () => {
      const text = await page.getByTestId('assistant-message').last().textContent();
      return text.includes('One') && !text.includes('eight');
    });
    await page.getByText('One two three four five six seven eight', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    // The same run, not a new one.
    assert.equal((await modelRequests()).length - before, 1);
  });

  test('no uncaught errors in the chat page', () => {
    assert.deepEqual(pageErrors, []);
  });
});

// An agent (.switchboard/agents/researcher.md in the gateway's working directory) whose fork loads a lazy server.
const AGENT_SCRIPT = [
  // The main turn calls the agent; its fork calls echo of the lazy `notes`, then answers; the main turn answers.
  { toolCalls: [{ name: 'agent__researcher', arguments: '{"task":"find the note"}' }] },
  { toolCalls: [{ name: 'echo', arguments: '{"message":"the note"}' }] },
  { content: 'Found: the note.' },
  { content: 'The researcher found the note.' },
];
const RESEARCHER = `---
name: researcher
description: Looks things up in the notes.
mcp: [notes]
tools: []
---
You research.
`;

describe('chat with an agent', { skip: chatSkip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let base, page, chatUrl;

  before(async () => {
    // The agent is found in the gateway's working directory.
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-agent-'));
    mkdirSync(join(env.dir, '.switchboard', 'agents'), { recursive: true });
    writeFileSync(join(env.dir, '.switchboard', 'agents', 'researcher.md'), RESEARCHER);
    await startChat(env, AGENT_SCRIPT, { demo: { command: DEMO }, notes: { command: DEMO, lazy: true } }, env.dir);
    ({ base, page } = env);
  });

  after(() => closeChat(env));

  test("the agent's block: its fork's call nested, its lazy server's lifecycle", async () => {
    await page.goto(base);
    await page.getByLabel('Message', { exact: true }).fill('Ask the researcher');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    // The fork's call asks, naming the agent it runs for.
    const dialog = page.getByRole('dialog', { name: 'Allow echo (server notes)?' });
    await dialog.getByText('agent__researcher').waitFor();
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('The researcher found the note.', { exact: true }).waitFor();
    chatUrl = page.url();

    const agent = page.getByTestId('tool-block').filter({ has: page.getByTestId('fork-servers') });
    await agent.getByText('Found: the note.').waitFor();
    const echo = agent.getByTestId('tool-block');
    await echo.getByText('the note', { exact: true }).waitFor();
    assert.equal(await echo.getAttribute('data-status'), 'ok');
    assert.match(await echo.locator('code').first().textContent(), /^echo$/);
    const lifecycle = await agent.getByTestId('fork-servers').textContent();
    assert.match(lifecycle, /notes/);
    assert.match(lifecycle, /active/);
    await page.screenshot({ path: join(SCREENSHOTS, 'chat-agent.png') });

    // Let go when the fork ended.
    await page.getByRole('link', { name: 'Servers', exact: true }).click();
    await until('notes warm or dormant', async () => /^(warm|dormant)/.test(await page.getByTestId('phase-notes').textContent()));
  });

  test("reload: the agent's block still shows what its fork did", async () => {
    await page.goto(chatUrl);
    await page.reload();
    await page.getByText('The researcher found the note.', { exact: true }).waitFor();
    const agent = page.getByTestId('tool-block').filter({ has: page.getByTestId('fork-servers') });
    const echo = agent.getByTestId('tool-block');
    await echo.getByText('the note', { exact: true }).waitFor();
    assert.equal(await echo.getAttribute('data-status'), 'ok');
    const lifecycle = await agent.getByTestId('fork-servers').textContent();
    assert.match(lifecycle, /notes/);
    assert.match(lifecycle, /active/);
  });

  test('no uncaught errors in the agent chat', () => {
    assert.deepEqual(pageErrors, []);
  });
});

// A remote server behind OAuth: the tests' authorization server, a second gateway as the protected MCP server (the demo
// server behind it, accepting only that issuer's tokens for its own URL), and the host under test with that gateway as
// its `remote` (its token file in the test's directory, never the user's).
const authSkip = missing.length
  ? `needs ${missing.join(', ')}`
  : !existsSync(AUTH_SERVER)
    ? `needs ${AUTH_SERVER} (SWITCHBOARD_TEST_AUTH_SERVER)`
    : false;

describe('OAuth login', { skip: authSkip }, () => {
  const pageErrors = [];
  let dir, tokens, as, protectedGateway, host, base, browser, page;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-oauth-'));
    tokens = join(dir, 'tokens.json');
    const env = { SWITCHBOARD_TOKEN_FILE: tokens };

    const started = startAndWaitFor(AUTH_SERVER, [], 'stderr', /listening on (http:\/\/127\.0\.0\.1:\d+)/, 'the auth server');
    as = started;
    const issuer = (await started.match)[1];

    const port = await freePort();
    const audience = `http://127.0.0.1:${port}/mcp`;
    const gwConfig = join(dir, 'gw.json');
    writeFileSync(gwConfig, JSON.stringify({ mcpServers: { demo: { command: DEMO } } }));
    protectedGateway = startAndWaitFor(
      BIN,
      ['--config', gwConfig, 'serve', '--port', String(port), '--db', join(dir, 'gw.db'), '--auth', 'oauth',
        '--issuer', issuer, '--audience', audience, '--clock-skew', '0'],
      'stderr',
      /listening on http:\/\/127\.0\.0\.1:\d+\/mcp/,
      'the protected gateway',
      undefined,
      env,
    );
    await protectedGateway.match;

    const hostConfig = join(dir, 'host.json');
    writeFileSync(hostConfig, JSON.stringify({ mcpServers: { remote: { url: audience } } }));
    host = startAndWaitFor(
      BIN,
      ['--config', hostConfig, 'serve', '--port', '0', '--db', join(dir, 'host.db')],
      'stderr',
      /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/,
      'the host',
      undefined,
      env,
    );
    base = `${(await host.match)[1]}/`;
    ({ browser, page } = await openPage(pageErrors));
  });

  after(async () => {
    await browser?.close();
    await stopProcess(host?.proc);
    await stopProcess(protectedGateway?.proc);
    await stopProcess(as?.proc);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The three processes' output, for a failure's message. */
  const logs = () =>
    [['auth server', as], ['protected gateway', protectedGateway], ['host', host]]
      .map(([name, p]) => `--- ${name}:\n${p?.output() ?? ''}`)
      .join('\n');

  test('a server that needs a login shows needs-auth and logs in from its card', async () => {
    const badge = page.getByTestId('phase-remote');
    const phaseIs = (phase) =>
      page
        .waitForFunction(
          (want) => document.querySelector('[data-testid="phase-remote"]')?.textContent === want,
          phase,
          { timeout: WAIT },
        )
        .catch(async (e) => assert.fail(`phase ${phase} never came (it is ${await badge.textContent()}): ${e.message}\n${logs()}`));

    await page.goto(`${base}#/servers`);
    await phaseIs('needs-auth');
    const card = page.locator('article').filter({ has: page.getByRole('heading', { name: 'remote', exact: true }) });
    const popupOpened = page.context().waitForEvent('page');
    await card.getByRole('button', { name: 'Log in' }).click();
    const popup = await popupOpened;
    popup.on('pageerror', (e) => pageErrors.push(e.message));
    try {
      await popup.waitForURL(/\/oauth\/callback\?/, { timeout: WAIT });
      await popup.getByText('Logged in to "remote"').waitFor({ timeout: WAIT });
    } catch (e) {
      assert.fail(`the login tab stopped at ${popup.url()}: ${e.message}\n${await popup.content().catch(() => '')}\n${logs()}`);
    }
    await phaseIs('connected');
    assert.equal(await badge.textContent(), 'connected');
    await popup.close();

    assert.ok(existsSync(tokens), `no token file at ${tokens}`);
    assert.equal((statSync(tokens).mode & 0o777).toString(8), '600');
    assert.deepEqual(pageErrors, []);
  });
});
