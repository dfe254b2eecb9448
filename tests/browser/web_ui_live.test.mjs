// What a person sees is current and whole (issue 50), in a real browser against a real `switchboard serve`: fresh
// reads with when they were read, and Refresh; a watched resource updating by itself (the demo's demo://counter, the
// reference server's simulated updates); "Try it" with progress, log lines and Cancel (which reaches the server); a
// lazy server's items listed while it is dormant, and usable; the server card's log panel and level picker, the cause
// of a reconnect, and the stderr tail without polling.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   node --test tests/browser/web_ui_live.test.mjs
// With SWITCHBOARD_SCREENSHOTS=docs/screenshots it refreshes server-log.png and tools-try-it-progress.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEMO,
  SCREENSHOTS,
  appFrame,
  appRequest,
  missing,
  openPage,
  serveGateway,
  stopProcess,
  until,
} from './web_ui_support.mjs';

const EVERYTHING = join(import.meta.dirname, '..', 'peers', 'node_modules', '@modelcontextprotocol', 'server-everything',
  'dist', 'index.js');
const ANNOTATED = join(import.meta.dirname, 'annotated_server.mjs');

const skip = missing.length ? `needs ${missing.join(', ')}` : !existsSync(EVERYTHING) ? `needs ${EVERYTHING}` : false;

describe('live and whole', { skip }, () => {
  const pageErrors = [];
  let dir, serve, base, browser, page;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-live-'));
    const configPath = join(dir, 'switchboard.json');
    writeFileSync(configPath, JSON.stringify({ mcpServers: {
      demo: { command: DEMO, args: ['--apps', '--tasks'] },
      // Never run: nothing in its catalog until the page asks for it.
      lazy: { command: DEMO, lazy: true, keepWarmSeconds: 0 },
      // Neither logging nor subscriptions.
      annotated: { command: process.execPath, args: [ANNOTATED] },
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    } }));
    // The catalog of lazy servers lives under XDG_CACHE_HOME: the test's own, never the user's.
    ({ proc: serve, base } = await serveGateway(
      ['--config', configPath, '--db', join(dir, 'conversations.db')],
      undefined,
      { XDG_CACHE_HOME: join(dir, 'cache') },
    ));
    ({ browser, page } = await openPage(pageErrors));
  });

  after(async () => {
    await browser?.close();
    await stopProcess(serve);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A POST to the API, as the page sends it; the JSON answer. */
  async function post(path, body) {
    const res = await fetch(`${base}api/${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.json();
  }
  const callTool = (server, name, args = {}) => post('tools/call', { server, name, arguments: args });
  const status = async (name) =>
    (await (await fetch(`${base}api/servers`)).json()).servers.find((s) => s.name === name);
  /** How many times the server's stderr tail says `text`. */
  const stderrCount = async (server, text) => (await status(server)).stderrTail.split(text).length - 1;

  const card = (name) => page.locator('article').filter({ has: page.getByRole('heading', { name, exact: true }) });
  const phaseIs = (name, phase) =>
    page.waitForFunction(
      ([id, want]) => document.querySelector(`[data-testid="${id}"]`)?.textContent === want,
      [`phase-${name}`, phase],
    );

  /** Opens "Try it" of a tool on the Tools page; the dialog. */
  async function tryIt(server, tool) {
    await page.goto(`${base}#/tools`);
    const row = page.locator('li').filter({ has: page.getByTestId(`toggle-${server}-${tool}`) });
    const button = row.getByRole('button', { name: 'Try it' });
    await until(`"Try it" of ${server} / ${tool} enabled`, () => button.isEnabled());
    await button.click();
    return page.getByRole('dialog', { name: `${server} / ${tool}` });
  }

  async function closeDialog(dialog) {
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  }

  test('the stderr tail is current while open, from the event stream: the page does not poll', async () => {
    await page.goto(`${base}#/servers`);
    await phaseIs('demo', 'connected');
    const polls = [];
    const onRequest = (r) => new URL(r.url()).pathname === '/api/servers' && polls.push(r.url());
    page.on('request', onRequest);
    try {
      await card('demo').getByText('stderr', { exact: true }).click();
      const tail = card('demo').getByTestId('stderr-demo');
      await callTool('demo', 'write_stderr', { text: 'while open: index rebuilt' });
      await until('the new line in the card', async () => (await tail.textContent()).includes('while open: index rebuilt'));
      // Longer than the 2 s the page used to poll at.
      await sleep(2500);
      assert.deepEqual(polls, []);
    } finally {
      page.off('request', onRequest);
    }
  });

  test('a read says when it was read, and Refresh reads again: demo://counter before and after bump', async () => {
    const preview = page.getByTestId('resource-preview');
    const value = async () => (await preview.locator('pre').first().textContent()).trim();
    const stamp = preview.getByTestId('read-stamp');
    const openCounter = async () => {
      await page.goto(`${base}#/resources`);
      await page.getByRole('button', { name: /Counter.*demo:\/\/counter/ }).first().click();
      await until('the counter read', async () => /^read \d\d:\d\d:\d\d$/.test(await stamp.textContent()));
    };
    await openCounter();
    assert.equal(await value(), '0');

    // bump through "Try it", then the same resource picked again: read again, not the earlier contents.
    const dialog = await tryIt('demo', 'bump');
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();
    await dialog.getByTestId('tool-result').getByText('counter = 1').waitFor();
    await closeDialog(dialog);
    await openCounter();
    assert.equal(await value(), '1');

    // Changed behind the page's back: Refresh reads it again, with a new time.
    await callTool('demo', 'bump');
    const before = await stamp.textContent();
    await sleep(1100);
    await preview.getByRole('button', { name: 'Refresh' }).click();
    await until('2 after Refresh', async () => (await value()) === '2');
    assert.notEqual(await stamp.textContent(), before);
  });

  test("an app's view is loaded with cached: true, the app's own reads are fresh", async () => {
    const reads = [];
    const onRequest = (r) => new URL(r.url()).pathname === '/api/resources/read' && reads.push(r.postDataJSON());
    page.on('request', onRequest);
    try {
      const dialog = await tryIt('demo', 'counter');
      await dialog.getByRole('button', { name: 'Call', exact: true }).click();
      const app = await appFrame(page, '#bump');
      await until('the view read', () => reads.length >= 1);
      assert.deepEqual(reads[0], { server: 'demo', uri: 'ui://demo/counter.html', cached: true });
      const answer = await appRequest(app, 'resources/read', { uri: 'demo://counter' });
      assert.match(answer.result?.contents?.[0]?.text ?? '', /^\d+$/, JSON.stringify(answer));
      assert.deepEqual(reads.slice(1), [{ server: 'demo', uri: 'demo://counter', cached: false }]);
      await closeDialog(dialog);
    } finally {
      page.off('request', onRequest);
    }
  });

  /** Picks a resource on the Resources page and turns its Watch on; the preview, once subscribed. `refused`: the
   * server offers no subscriptions, so the switch may be off again before a check() could see it on: clicked. */
  async function watch(button, { refused = false } = {}) {
    await page.goto(`${base}#/resources`);
    await page.getByRole('button', { name: button }).first().click();
    const preview = page.getByTestId('resource-preview');
    await preview.getByTestId('read-stamp').waitFor();
    const toggle = preview.getByRole('switch', { name: 'Watch' });
    await (refused ? toggle.click() : toggle.check());
    return preview;
  }

  test('Watch: demo://counter updates by itself after bump, until Watch is off', async () => {
    const preview = await watch(/Counter.*demo:\/\/counter/);
    await preview.getByRole('status').getByText('watching').waitFor();
    const value = async () => Number((await preview.locator('pre').first().textContent()).trim());
    const stamp = preview.getByTestId('read-stamp');
    const start = await value();

    await callTool('demo', 'bump');
    await until('the bumped value, live', async () => (await value()) === start + 1);
    assert.match(await stamp.textContent(), /^updated \d\d:\d\d:\d\d · 1 update$/);
    await callTool('demo', 'bump');
    await until('the second update', async () => (await stamp.textContent()).endsWith('· 2 updates'));
    assert.equal(await value(), start + 2);

    await preview.getByRole('switch', { name: 'Watch' }).uncheck();
    await callTool('demo', 'bump');
    await sleep(1000);
    assert.equal(await value(), start + 2);
  });

  test("Watch: the reference server's simulated updates arrive by themselves; leaving the page unsubscribes", async () => {
    const dialog = await tryIt('everything', 'toggle-subscriber-updates');
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();
    await dialog.getByTestId('tool-result').getByText(/^Started simulated resource updated notifications/).waitFor();
    await closeDialog(dialog);

    const uri = 'demo://resource/static/document/features.md';
    const preview = await watch(/features\.md/);
    // It sends one every 5 s: no action of ours.
    await until('an update', async () => /· 1 update$/.test(await preview.getByTestId('read-stamp').textContent()), 12_000);

    // The server logs each subscribe and unsubscribe.
    const logs = async () => (await (await fetch(`${base}api/servers/logs?name=everything`)).json()).logs.map((l) => l.data);
    assert.ok((await logs()).some((d) => d.startsWith(`Received Subscribe Resource request for URI: ${uri}`)));
    await page.goto(`${base}#/prompts`);
    await until('the unsubscribe', async () => (await logs()).some((d) => d.startsWith(`Received Unsubscribe Resource request: ${uri}`)));
    await callTool('everything', 'toggle-subscriber-updates');
  });

  test('Watch on a server without subscriptions says so', async () => {
    const preview = await watch(/Today's notes/, { refused: true });
    await preview.getByRole('alert').getByText('does not offer resource subscriptions').waitFor();
    assert.equal(await preview.getByRole('switch', { name: 'Watch' }).isChecked(), false);
  });

  /** "Try it" on the demo's slow with `seconds` and `steps`, called; the dialog once its first step is shown. */
  async function startSlow(seconds, steps) {
    const dialog = await tryIt('demo', 'slow');
    await dialog.getByLabel('seconds', { exact: true }).fill(String(seconds));
    await dialog.getByLabel('steps', { exact: true }).fill(String(steps));
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();
    await dialog.getByRole('status').filter({ hasText: `step 1 of ${steps}` }).waitFor();
    return dialog;
  }

  test('"Try it" on slow: progress, its message, the time so far and log lines while it runs; then the result', async () => {
    const dialog = await startSlow(4, 4);
    const log = dialog.getByRole('list', { name: 'Log messages of the call' });
    await dialog.getByRole('status').filter({ hasText: 'step 2 of 4' }).waitFor();
    const progress = dialog.getByRole('progressbar', { name: 'Progress' });
    assert.ok(Number(await progress.getAttribute('value')) >= 2);
    assert.equal(await progress.getAttribute('max'), '4');
    await log.getByText('slow: step 2 of 4 done').waitFor();
    assert.match(await dialog.getByTestId('elapsed').textContent(), /^\d+(\.\d)? s$/);
    assert.equal(await dialog.getByTestId('tool-result').count(), 0);
    await dialog.getByRole('button', { name: 'Cancel' }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'tools-try-it-progress.png') });

    await dialog.getByTestId('tool-result').getByText('done after 4 steps').waitFor();
    // Every step's line stays, the last at the level the demo gives it.
    assert.equal(await log.getByRole('listitem').count(), 4);
    assert.match(await log.getByRole('listitem').last().textContent(), /^\d\d:\d\d:\d\d\s*notice\s*slow\s*slow: step 4 of 4 done$/);
    assert.equal(await dialog.getByRole('button', { name: 'Cancel' }).count(), 0);
    assert.equal(await dialog.getByRole('progressbar').count(), 0);
    await closeDialog(dialog);
  });

  test('"Try it" on a call the server runs as a task: its status and status message', async () => {
    const dialog = await tryIt('demo', 'report');
    await dialog.getByLabel('seconds', { exact: true }).fill('6');
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();
    const task = dialog.getByTestId('task-status');
    await until('the task working', async () => /^Task working: writing: \d of 6 s$/.test((await task.textContent()).trim()));
    // Closing the dialog cancels the task (before it asks for its format).
    await closeDialog(dialog);
  });

  test('"Try it": Cancel stops the call on the server', async () => {
    const before = await stderrCount('demo', 'slow: cancelled');
    const dialog = await startSlow(30, 30);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Cancelled' }).waitFor();
    await until('the demo saying it was cancelled', async () => (await stderrCount('demo', 'slow: cancelled')) > before);
    assert.equal(await dialog.getByTestId('tool-result').count(), 0);
    await dialog.getByRole('button', { name: 'Call', exact: true }).waitFor();
    await closeDialog(dialog);
  });

  test('"Try it": closing the dialog while the call runs cancels it', async () => {
    const before = await stderrCount('demo', 'slow: cancelled');
    const dialog = await startSlow(30, 30);
    await closeDialog(dialog);
    await until('the demo saying it was cancelled', async () => (await stderrCount('demo', 'slow: cancelled')) > before);
  });

  test("the card's Log: the server's messages, then live ones; a level picked holds back those below it", async () => {
    // Sent before the log is shown: its history has them.
    await callTool('demo', 'slow', { seconds: 0.4, steps: 2 });
    await page.goto(`${base}#/servers`);
    const demo = card('demo');
    await demo.getByText('Log', { exact: true }).click();
    const log = demo.getByRole('list', { name: 'Log of demo' });
    await log.getByText('slow: step 2 of 2 done').last().waitFor();
    const level = demo.getByLabel('Log level');
    assert.equal(await level.inputValue(), 'debug');

    // While it is shown: from the event stream.
    const lines = () => log.getByRole('listitem').count();
    const before = await lines();
    await callTool('demo', 'slow', { seconds: 0.6, steps: 3 });
    await until('three new lines', async () => (await lines()) === before + 3);
    assert.match(await log.getByRole('listitem').nth(before).textContent(), /^\d\d:\d\d:\d\d\s*info\s*slow\s*slow: step 1 of 3 done$/);
    assert.match(await log.getByRole('listitem').last().textContent(), /notice\s*slow\s*slow: step 3 of 3 done$/);
    await demo.screenshot({ path: join(SCREENSHOTS, 'server-log.png') });

    // From warning up: slow's info and notice lines no longer come.
    await level.selectOption('warning');
    await until('warning in force', async () => (await status('demo')).logLevel === 'warning');
    assert.equal(await level.inputValue(), 'warning');
    await callTool('demo', 'slow', { seconds: 0.4, steps: 2 });
    await sleep(500);
    assert.equal(await lines(), before + 3);

    await level.selectOption('debug');
    await until('debug again', async () => (await status('demo')).logLevel === 'debug');
  });

  test('the level picker of a server without logging says so', async () => {
    await page.goto(`${base}#/servers`);
    const annotated = card('annotated');
    await annotated.getByText('Log', { exact: true }).click();
    await annotated.getByText('No log messages yet.').waitFor();
    const level = annotated.getByLabel('Log level');
    const was = await level.inputValue();
    await level.selectOption('error');
    await annotated.getByRole('alert').getByText('server "annotated" does not offer logging').waitFor();
    assert.equal(await level.inputValue(), was);
  });

  /** Records every text the badge `phase-<name>` shows from now on (a lifecycle may last only a moment). */
  const recordBadge = (name) =>
    page.evaluate((id) => {
      const seen = (window.__badge = []);
      const note = () => {
        const t = document.querySelector(`[data-testid="${id}"]`)?.textContent;
        if (t && seen.at(-1) !== t) seen.push(t);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
      note();
    }, `phase-${name}`);
  const badgeSeen = () => page.evaluate(() => window.__badge);
  const lazyBack = () => until('lazy dormant again', async () => (await status('lazy')).lifecycle === 'dormant');

  test('a lazy server never run: "List its tools" lists it dormant; "Try it" on its add starts it for the call', async () => {
    await page.goto(`${base}#/tools`);
    await page.getByTestId('toggle-demo-add').waitFor();
    assert.equal(await page.getByTestId('toggle-lazy-add').count(), 0);

    await page.goto(`${base}#/servers`);
    await phaseIs('lazy', 'dormant');
    const lazy = card('lazy');
    await lazy.getByText('Never listed').waitFor();
    await lazy.getByRole('button', { name: 'List its tools' }).click();
    await lazy.getByText(/^While dormant, its 9 tools, \d+ resources and 3 prompts are listed from its catalog/).waitFor();
    assert.equal(await lazy.getByRole('button', { name: 'List its tools' }).count(), 0);
    await lazyBack();

    // Each start of the demo says so on its stderr.
    const starts = () => stderrCount('lazy', 'ready (stdio)');
    const startsBefore = await starts();
    const dialog = await tryIt('lazy', 'add');
    const row = page.locator('li').filter({ has: page.getByTestId('toggle-lazy-add') });
    assert.equal(await row.getByText('dormant', { exact: true }).count(), 1);
    await dialog.getByTestId('dormant-note').getByText('is a lazy server, listed from its catalog').waitFor();
    await dialog.getByLabel('a', { exact: true }).fill('2');
    await dialog.getByLabel('b', { exact: true }).fill('3');
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();
    await until('the result 5', async () => /^5$/m.test(await dialog.getByTestId('tool-result').locator('pre').first().textContent()));
    await lazyBack();
    assert.equal(await starts(), startsBefore + 1);
    await closeDialog(dialog);

    // A call that lasts: the note's badge shows the server loaded for it, then released.
    const slow = await tryIt('lazy', 'slow');
    await recordBadge('lazy');
    await slow.getByLabel('seconds', { exact: true }).fill('1.5');
    await slow.getByRole('button', { name: 'Call', exact: true }).click();
    await slow.getByTestId('tool-result').getByText('done after 4 steps').waitFor();
    await lazyBack();
    await until('the badge dormant again', async () => (await badgeSeen()).at(-1) === 'dormant');
    const seen = await badgeSeen();
    assert.equal(seen[0], 'dormant');
    assert.ok(seen.includes('active · 1 lease'), JSON.stringify(seen));
    await closeDialog(slow);
  });

  test("a dormant server's resources and prompts: reading one, getting one", async () => {
    const lazyGroup = () => page.locator('h2.group-title', { hasText: /^lazy$/ }).locator('xpath=following-sibling::ul[1]');
    await page.goto(`${base}#/resources`);
    await lazyGroup().getByRole('button', { name: /Demo README/ }).click();
    const preview = page.getByTestId('resource-preview');
    await preview.getByTestId('dormant-note').waitFor();
    await preview.getByText('Switchboard demo MCP server').waitFor();
    await lazyBack();

    await page.goto(`${base}#/prompts`);
    await lazyGroup().getByRole('button', { name: /Greeting.*greet/ }).click();
    await page.getByTestId('dormant-note').waitFor();
    await page.getByLabel('name', { exact: true }).fill('Ada');
    await page.getByLabel('style', { exact: true }).fill('pirate');
    await page.getByRole('button', { name: 'Get', exact: true }).click();
    await page.getByTestId('prompt-result').getByText('Greet Ada the way a pirate would, arr!').waitFor();
    await lazyBack();
  });

  test('a reconnect shows its cause: while reconnecting, and once back', async () => {
    await page.goto(`${base}#/servers`);
    await phaseIs('demo', 'connected');
    // What the card says while reconnecting, recorded as it comes: that may last only a moment.
    await page.evaluate(() => {
      const seen = (window.__lost = []);
      const note = () => {
        const t = document.querySelector('[data-testid="lost-demo"]')?.textContent.trim();
        if (t && !seen.includes(t)) seen.push(t);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await callTool('demo', 'exit', { code: 3 });
    const back = card('demo').getByTestId('reconnected-demo');
    await back.waitFor();
    assert.match((await back.textContent()).trim(), /^reconnected 1× · last lost at \d\d:\d\d: server "demo": process exited with status 3/);
    await phaseIs('demo', 'connected');
    const seen = await page.evaluate(() => window.__lost);
    assert.ok(seen.some((t) => /^Connection lost at \d\d:\d\d:\d\d: .*exited with status 3/.test(t)), JSON.stringify(seen));
  });

  test('no uncaught errors in the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
