// The web UI in a real browser against a real `switchboard serve` with the demo server: the servers, tools, resources,
// prompts and settings pages, content annotations and resource links, and the OAuth login of a remote server. The
// chat page is in web_ui_chat.test.mjs.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   FAKE_LLM=build/switchboard-fake-llm node --test tests/browser/
// Needs /usr/bin/chromium (Debian's `chromium`) and playwright-core from tests/peers (web_ui_support.mjs). With
// SWITCHBOARD_SCREENSHOTS=docs/screenshots it refreshes the README's servers.png and tools-try-it.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  BIN,
  DEMO,
  SCREENSHOTS,
  WAIT,
  missing,
  openPage,
  serveGateway,
  startAndWaitFor,
  stopProcess,
  until,
} from './web_ui_support.mjs';


// The tests' OAuth authorization server (tests/peers/test_auth_server); it is built next to the switchboard binary.
const AUTH_SERVER =
  (process.env.SWITCHBOARD_TEST_AUTH_SERVER && resolve(process.env.SWITCHBOARD_TEST_AUTH_SERVER)) ||
  (BIN && join(dirname(BIN), 'switchboard-test-auth-server'));
const COMMENT = '// The web UI test: this comment must survive saves made from the UI.';

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
    // A stdio server added through the form is confined unless its box is unticked.
    assert.deepEqual(servers(configPath).second, { command: DEMO, sandboxEnabled: true });
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

  test("a healthy server's stderr: its card shows the lines, current while open", async () => {
    const callDemo = async (name, args) =>
      (await (await fetch(`${base}api/tools/call`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ server: 'demo', name, arguments: args }) })).json()).content[0].text;
    // Written while another page is shown: no event says so, the servers page looks when it is opened.
    assert.equal(await callDemo('write_stderr', { text: 'before the page: disk almost full' }), 'ok');
    await page.goto(`${base}#/servers`);
    await phaseIs('demo', 'connected');
    const card = page.locator('article').filter({ has: page.getByRole('heading', { name: 'demo', exact: true }) });
    const tail = card.getByTestId('stderr-demo');
    await card.getByText('stderr', { exact: true }).click();
    await until('the earlier line in the card', async () => (await tail.textContent()).includes('before the page: disk almost full'));
    // Written while the disclosure is open: it comes without a reload.
    assert.equal(await callDemo('write_stderr', { text: 'while open: cache rebuilt' }), 'ok');
    await until('the new line in the card', async () => (await tail.textContent()).includes('while open: cache rebuilt'));
    // Healthy all along: no error on the card.
    assert.equal(await badge('demo').textContent(), 'connected');
    assert.equal(await card.locator('.error').count(), 0);
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

  test('settings without a model: what to do, the theme, the token', async () => {
    await page.goto(`${base}#/settings`);
    await page.getByRole('link', { name: 'Settings', exact: true, current: 'page' }).waitFor();
    await page.getByText('No model is configured.').waitFor();
    // Nothing to list the models of: one short line under the select, which keeps "the configured model" (the card
    // above says what to do; the CLI's help for its flags has no place here).
    await page.getByText('No model is configured: set the endpoint above.', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Model', { exact: true }).inputValue(), '');
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.doesNotMatch(await page.locator('main').textContent(), /--llm|--model/);

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

// Content annotations and resource links, as "Try it" and the resources page show them: from the reference server
// (@modelcontextprotocol/server-everything from tests/peers) and annotated_server.mjs (annotations with every field).
const EVERYTHING = join(import.meta.dirname, '..', 'peers', 'node_modules', '@modelcontextprotocol', 'server-everything',
  'dist', 'index.js');

describe('annotations and resource links', {
  skip: missing.length ? `needs ${missing.join(', ')}` : !existsSync(EVERYTHING) ? `needs ${EVERYTHING}` : false,
}, () => {
  let dir, serve, base, browser, page;
  const pageErrors = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-everything-'));
    const configPath = join(dir, 'switchboard.json');
    writeFileSync(configPath, JSON.stringify({ mcpServers: {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      annotated: { command: process.execPath, args: [join(import.meta.dirname, 'annotated_server.mjs')] },
    } }));
    ({ proc: serve, base } = await serveGateway(['--config', configPath, '--db', join(dir, 'conversations.db')]));
    ({ browser, page } = await openPage(pageErrors));
  });

  after(async () => {
    await browser?.close();
    await stopProcess(serve);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function tryIt(server, tool) {
    await page.goto(`${base}#/tools`);
    const row = page.locator('li').filter({ has: page.getByTestId(`toggle-${server}-${tool}`) });
    const button = row.getByRole('button', { name: 'Try it' });
    await until(`"Try it" of ${tool} enabled`, () => button.isEnabled());
    await button.click();
    return page.getByRole('dialog', { name: `${server} / ${tool}` });
  }

  /** The texts of each list of annotation tags in `scope`, in order. */
  const tagsIn = (scope) =>
    scope.getByTestId('annotations').evaluateAll((lists) => lists.map((l) => [...l.children].map((t) => t.textContent)));

  test("Try it: each content block's annotations as tags", async () => {
    const dialog = await tryIt('everything', 'get-annotated-message');
    await dialog.getByLabel('messageType', { exact: true }).selectOption('success');
    await dialog.getByLabel('includeImage', { exact: true }).check();
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();
    const result = dialog.getByTestId('tool-result');
    await result.getByText('Operation completed successfully').waitFor();
    // The text's and the image's, in order.
    assert.deepEqual(await tagsIn(result), [['for: user', 'priority 0.7'], ['for: user', 'priority 0.5']]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    // An embedded resource's, with when it was modified (in the browser's locale and time zone).
    const notes = await tryIt('annotated', 'notes');
    await notes.getByRole('button', { name: 'Call', exact: true }).click();
    await notes.getByTestId('tool-result').getByText('Water the plants.').waitFor();
    const [[audience, modified, ...more]] = await tagsIn(notes.getByTestId('tool-result'));
    assert.equal(audience, 'for: user');
    assert.match(modified, /^modified .*2025/);
    assert.deepEqual(more, []);
    await page.keyboard.press('Escape');
    await notes.waitFor({ state: 'detached' });
  });

  test("the resources page: a resource's annotations from its listing", async () => {
    await page.goto(`${base}#/resources`);
    await page.getByRole('button', { name: /Today's notes/ }).click();
    const preview = page.getByTestId('resource-preview');
    await preview.getByText('Water the plants.').waitFor();
    const [[audience, priority, modified, ...more]] = await tagsIn(preview);
    assert.deepEqual([audience, priority, more], ['for: assistant', 'priority 0.2', []]);
    assert.match(modified, /^modified .*2025/);
  });

  test("Try it: a resource link opens in a dialog, read from the tool's server", async () => {
    const dialog = await tryIt('everything', 'get-resource-links');
    await dialog.getByLabel('count', { exact: true }).fill('2');
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();
    const link = dialog.getByTestId('resource-link').filter({ hasText: 'Text Resource 2' });
    await link.getByText('demo://resource/dynamic/text/2').waitFor();
    // No message is being written here: nothing to attach to.
    assert.equal(await link.getByRole('button', { name: /^Attach/ }).count(), 0);
    await link.getByRole('button', { name: 'Open Text Resource 2' }).click();
    const opened = page.getByRole('dialog', { name: 'Text Resource 2' });
    await opened.getByText(/^Resource 2: This is a plaintext resource created at/).waitFor();
    await opened.getByRole('button', { name: 'Close' }).click();
    await opened.waitFor({ state: 'detached' });
    // Back in "Try it", which stayed open under it.
    await link.getByRole('button', { name: 'Open Text Resource 2' }).waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  test('no uncaught errors with annotations and resource links', () => {
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
