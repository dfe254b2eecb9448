// The chat page in a real browser against a real `switchboard serve` with the demo server and the scripted model
// (tests/peers/fake_llm): a tool call and its approval, attachments (a listed resource, a template filled in, a URI
// typed), prompts, Stop, the settings, a run taken back after a reload, an agent's fork, a result's resource links
// (opened, attached) and a task. The other pages are in web_ui.test.mjs.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   FAKE_LLM=build/switchboard-fake-llm node --test tests/browser/
// Needs /usr/bin/chromium (Debian's `chromium`), playwright-core from tests/peers (web_ui_support.mjs) and FAKE_LLM;
// without FAKE_LLM the tests are skipped (ctest always sets it). With SWITCHBOARD_SCREENSHOTS=docs/screenshots it
// refreshes the README's chat.png and chat-agent.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
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


const FAKE_LLM = process.env.FAKE_LLM && resolve(process.env.FAKE_LLM);

/** The scripted model (tests/peers/fake_llm) playing `script`, written to `dir`; resolves with it and its URL. */
async function startFakeModel(dir, script) {
  const path = join(dir, 'script.json');
  writeFileSync(path, JSON.stringify(script));
  const { proc, match } = startAndWaitFor(FAKE_LLM, [path, '--port', '0'], 'stdout', /^(\d+)\n/, 'the fake model');
  return { proc, url: `http://127.0.0.1:${(await match)[1]}` };
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
    // a template filled in and a URI typed, attached
    { content: 'Two greetings.' },
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
  let firstTrace = '';
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
    // The call's trace, for `switchboard trace ID`.
    firstTrace = await block.getByTestId('tool-trace').getAttribute('data-trace-id');
    assert.match(firstTrace, /^[0-9a-f]{32}$/);
    assert.equal(await block.getByTestId('tool-trace').textContent(), `trace ${firstTrace.slice(0, 8)}`);
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
    assert.equal(await okBlock().getByTestId('tool-trace').getAttribute('data-trace-id'), firstTrace);  // stored
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

  test('attach a template filled in and a URI typed for a server: the message carries what they read', async () => {
    await page.getByRole('button', { name: 'New chat' }).click();
    await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    const composer = page.locator('form').filter({ has: message() });
    const dialog = page.getByRole('dialog', { name: 'Attach resource' });

    // The demo's template demo://greeting/{name}: its variable completed by the server, then attached expanded.
    await page.getByRole('button', { name: 'Attach resource' }).click();
    await dialog.getByRole('button', { name: /Greeting.*demo:\/\/greeting\/\{name\}/ }).click();
    const name = dialog.getByLabel('name', { exact: true });
    await name.pressSequentially('Al');
    await until('completion of "Al"', async () =>
      (await dialog.locator('datalist option').evaluateAll((os) => os.map((o) => o.value))).includes('Alice'));
    await name.fill('Alice');
    await dialog.getByText('demo://greeting/Alice', { exact: true }).waitFor();
    const form = dialog.locator('form').filter({ has: page.getByLabel('name', { exact: true }) });
    await form.getByRole('button', { name: 'Attach', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await composer.getByTestId('attachment').getByText('demo://greeting/Alice').waitFor();

    // A URI no listing names, typed for the demo server.
    await page.getByRole('button', { name: 'Attach resource' }).click();
    const typed = dialog.getByRole('form', { name: 'Attach by URI' });
    await typed.getByLabel('Server', { exact: true }).selectOption('demo');
    await typed.getByLabel('URI', { exact: true }).fill('demo://greeting/Bob');
    await typed.getByRole('button', { name: 'Attach', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await composer.getByTestId('attachment').getByText('demo://greeting/Bob').waitFor();

    await message().fill('Greet them both');
    await message().press('Enter');
    await page.getByText('Two greetings.', { exact: true }).waitFor();
    // Stored with the message: the two attachments and what the server read for them.
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);
    const { messages } = await (await fetch(`${base}api/conversations/get?id=${id}`)).json();
    const user = messages.find((m) => m.message.role === 'user');
    assert.deepEqual(user.meta.attachments.map((a) => [a.server, a.uri, a.error]),
      [['demo', 'demo://greeting/Alice', undefined], ['demo', 'demo://greeting/Bob', undefined]]);
    assert.match(JSON.stringify(user.message.content), /Hello, Alice![\s\S]*Hello, Bob!/);
    // And the model read them with it.
    assert.match(JSON.stringify((await modelRequests()).at(-1).body.messages.at(-1)), /Hello, Alice![\s\S]*Hello, Bob!/);
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
    // The fork's call is in the trace of the turn that called the agent.
    const agentTrace = await agent.getByTestId('tool-trace').first().getAttribute('data-trace-id');
    assert.match(agentTrace, /^[0-9a-f]{32}$/);
    assert.equal(await echo.getByTestId('tool-trace').getAttribute('data-trace-id'), agentTrace);
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

// A tool result with resource links (the reference server, @modelcontextprotocol/server-everything from tests/peers):
// each opens in a dialog, read from the tool's server, and can be attached to the message being written.
const EVERYTHING = resolve(import.meta.dirname, '..', 'peers', 'node_modules', '@modelcontextprotocol', 'server-everything',
  'dist', 'index.js');

describe('chat with resource links', { skip: chatSkip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let base, page;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-links-'));
    await startChat(env, { responses: [
      { toolCalls: [{ name: 'get-resource-links', arguments: '{"count":2}' }] },
      { content: 'Two links.' },
      { content: 'Read the attached one.' },
    ] }, { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    ({ base, page } = env);
  });

  after(() => closeChat(env));

  test('a resource link in a tool block: Open shows it, Attach adds it to the next message', async () => {
    await page.goto(base);
    const message = page.getByLabel('Message', { exact: true });
    await message.fill('Which resources are there?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('dialog', { name: 'Allow get-resource-links (server everything)?' })
      .getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('Two links.', { exact: true }).waitFor();
    // The stored copy of the block, once the answer is done.
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();

    const link = page.getByTestId('tool-block').getByTestId('resource-link').filter({ hasText: 'Text Resource 2' });
    await link.getByRole('button', { name: 'Open Text Resource 2' }).click();
    const opened = page.getByRole('dialog', { name: 'Text Resource 2' });
    await opened.getByText(/^Resource 2: This is a plaintext resource created at/).waitFor();
    await opened.getByRole('button', { name: 'Close' }).click();
    await opened.waitFor({ state: 'detached' });

    await link.getByRole('button', { name: 'Attach Text Resource 2' }).click();
    const composer = page.locator('form').filter({ has: message });
    await composer.getByTestId('attachment').getByText('demo://resource/dynamic/text/2').waitFor();
    await message.fill('Read this one');
    await message.press('Enter');
    await page.getByText('Read the attached one.', { exact: true }).waitFor();
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);
    const { messages } = await (await fetch(`${base}api/conversations/get?id=${id}`)).json();
    const user = messages.filter((m) => m.message.role === 'user').at(-1);
    assert.deepEqual(user.meta.attachments.map((a) => [a.server, a.uri, a.error]),
      [['everything', 'demo://resource/dynamic/text/2', undefined]]);
    assert.match(JSON.stringify(user.message.content), /Resource 2: This is a plaintext resource created at/);
  });

  test('no uncaught errors with resource links', () => {
    assert.deepEqual(pageErrors, []);
  });
});

// A tool a server runs as a task (the Tasks extension; tests/peers/scripts/ext_tasks_server.mjs checks the wire with
// @modelcontextprotocol/ext-tasks): its block shows the task's status and the time so far, and Cancel cancels it on
// the server.
describe('chat with a task', { skip: chatSkip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let base, page, serverLog;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-task-'));
    serverLog = join(env.dir, 'server.log');
    const script = resolve(import.meta.dirname, '..', 'peers', 'scripts', 'ext_tasks_server.mjs');
    await startChat(env, { responses: [{ toolCalls: [{ name: 'report', arguments: '{"seconds":30}' }] }] },
      { tasks: { command: process.execPath, args: [script, '--log', serverLog] } });
    ({ base, page } = env);
  });

  after(() => closeChat(env));

  test('the status, the time so far and Cancel', async () => {
    await page.goto(base);
    await page.getByLabel('Message', { exact: true }).fill('Write the report');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('dialog', { name: 'Allow report (server tasks)?' }).getByRole('button', { name: 'Allow once' }).click();
    const task = page.getByTestId('tool-task');
    await until('the task at its third step', async () => /Task working: step 3\/30/.test(await task.textContent()));
    assert.match(await task.textContent(), /\d+\.\d s/);  // the time since the call started
    // Recorded with the conversation while it runs (`chat --resume` would follow it after a restart).
    const running = () => JSON.parse(execFileSync(BIN, ['tasks', '--json', '--db', join(env.dir, 'conversations.db')]));
    assert.deepEqual(running().map((t) => [t.tool, t.status]), [['report', 'working']]);
    await task.getByRole('button', { name: 'Cancel' }).click();
    await until('tasks/cancel at the server', () => /tasks\/cancel task-/.test(readFileSync(serverLog, 'utf8')));
    await page.getByText('Stopped', { exact: true }).waitFor();
    await until('the record gone with the stored result', () => running().length === 0);
    assert.doesNotMatch(readFileSync(serverLog, 'utf8'), /completed task-/);
  });

  test('no uncaught errors in the task chat', () => {
    assert.deepEqual(pageErrors, []);
  });
});
