// The chat keeps up (issue 50), in a real browser against a real `switchboard serve` and the scripted model
// (tests/peers/fake_llm): a running call's log lines in its block; a reload mid-call showing the call as it was (its
// arguments, progress, log lines, Stop); the tool switches of a new conversation, sent with its first message; a
// conversation exported as Markdown and JSON; a prompt inserted whole (every text, its embedded resources and images
// as attachments, a warning for what cannot go); a dormant lazy server's resources and tools in the pickers.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   FAKE_LLM=build/switchboard-fake-llm node --test tests/browser/web_ui_chat_live.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  DEMO,
  FAKE_LLM,
  missing,
  modelRequests,
  startChatGateway,
  stopChatGateway,
  until,
} from './web_ui_support.mjs';

const skip = missing.length ? `needs ${missing.join(', ')}` : !FAKE_LLM ? 'needs FAKE_LLM' : false;
const PEERS = resolve(import.meta.dirname, '..', 'peers');
const EVERYTHING = join(PEERS, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** The page's chat controls, by what a person sees. */
function chatControls(page) {
  const message = page.getByLabel('Message', { exact: true });
  const send = page.getByRole('button', { name: 'Send', exact: true });
  return {
    message,
    composer: page.locator('form').filter({ has: message }),
    send,
    async newChat() {
      await page.getByRole('button', { name: 'New chat' }).click();
      await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    },
    async say(text) {
      await message.fill(text);
      await send.click();
    },
  };
}

describe('the demo server: a running call live and after a reload, switches before the first message, export', { skip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let page, base, llmUrl, ui;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-live-'));
    await startChatGateway(env, { responses: [
      // log lines in the block
      { toolCalls: [{ name: 'slow', arguments: '{"seconds":6,"steps":6}' }] },
      { content: 'The first slow run is done.' },
      // a reload mid-call
      { toolCalls: [{ name: 'slow', arguments: '{"seconds":8,"steps":8}' }] },
      { content: 'The second slow run is done.' },
      // a tool switched off before the first message
      { content: 'Without add.' },
    ] }, { demo: { command: DEMO } });
    ({ page, base, llmUrl } = env);
    ui = chatControls(page);
  });

  after(() => stopChatGateway(env));

  const block = () => page.getByTestId('tool-block');
  const allow = () => page.getByRole('dialog', { name: 'Allow slow (server demo)?' }).getByRole('button', { name: 'Allow once' });

  test("a tool's log lines show in its block while it runs, the last few, all on request, folded once it ended", async () => {
    await page.goto(base);
    await ui.say('Run slow');
    await allow().click();
    const log = block().getByRole('list', { name: 'Log of slow' });
    await log.getByText('slow: step 4 of 6 done').waitFor();
    // Compact: the latest lines only, the rest one click away.
    assert.equal(await log.getByText('slow: step 1 of 6 done').count(), 0);
    assert.ok((await log.getByRole('listitem').count()) <= 3);
    const all = block().getByRole('button', { name: /^All \d+ log lines$/ });
    await all.click();
    await log.getByText('slow: step 1 of 6 done').waitFor();
    assert.equal(await all.getAttribute('aria-expanded'), 'true');

    // Ended: the log folds away under its summary, and stays with the block once the answer is stored.
    await page.getByText('The first slow run is done.', { exact: true }).waitFor();
    await ui.send.waitFor();
    const ended = page.locator('[data-testid="tool-block"][data-status="ok"]');
    const folded = ended.getByText('Log (6 lines)', { exact: true });
    await folded.waitFor();
    assert.equal(await ended.getByText('slow: step 6 of 6 done').isVisible(), false);
    await folded.click();
    await ended.getByText('slow: step 6 of 6 done').waitFor();
    assert.match(await ended.getByRole('list', { name: 'Log of slow' }).textContent(), /notice/);
  });

  test('a reload shows the running call as it was (approval, arguments, progress, log lines, Stop), then its end', async () => {
    await ui.newChat();
    const before = (await modelRequests(llmUrl)).length;
    await ui.say('Run slow again');
    // Asked before the call: a reload asks again.
    await page.getByRole('dialog', { name: 'Allow slow (server demo)?' }).waitFor();
    await page.reload();
    await allow().click();
    await block().getByText('step 2 of 8', { exact: true }).waitFor();

    const url = page.url();
    await page.reload();
    assert.equal(page.url(), url);
    await page.getByTestId('user-message').getByText('Run slow again').waitFor();
    const running = page.locator('[data-testid="tool-block"][data-status="running"]');
    await running.getByRole('progressbar', { name: 'Progress of slow' }).waitFor();
    await running.getByText(/^step [2-8] of 8$/).waitFor();
    // The lines logged before the reload, from the run's snapshot (all of them shown, as more may have come since).
    const log = running.getByRole('list', { name: 'Log of slow' });
    const all = running.getByRole('button', { name: /^All \d+ log lines$/, expanded: false });
    await until('the first log line', async () => {
      if (await all.count()) await all.click();
      return log.getByText('slow: step 1 of 8 done').isVisible();
    });
    await running.getByText('Arguments').click();
    await running.getByText('"seconds": 8').waitFor();
    await page.getByRole('button', { name: 'Stop', exact: true }).waitFor();
    assert.equal(await page.getByTestId('assistant-message').filter({ has: page.getByRole('status', { name: 'Waiting for the model' }) }).count(), 0);

    await page.getByText('The second slow run is done.', { exact: true }).waitFor({ timeout: 20_000 });
    await page.locator('[data-testid="tool-block"][data-status="ok"]').getByText('done after 8 steps').waitFor();
    await ui.send.waitFor();
    assert.equal(await block().count(), 1);
    assert.equal(await page.getByRole('alert').count(), 0);
    // The same run all along.
    assert.equal((await modelRequests(llmUrl)).length - before, 2);
  });

  test('the tool switches of a new conversation go with its first message', async () => {
    await ui.newChat();
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    const panel = page.getByRole('dialog', { name: 'Tools in this conversation' });
    const add = panel.getByRole('switch', { name: 'add (demo) in this conversation' });
    assert.equal(await add.isChecked(), true);
    await add.click();
    await until('add off', async () => !(await add.isChecked()));
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });

    const before = (await modelRequests(llmUrl)).length;
    await ui.say('Anything but add');
    await page.getByText('Without add.', { exact: true }).waitFor();
    const [first] = (await modelRequests(llmUrl)).slice(before);
    const offered = (first.body.tools ?? []).map((t) => t.function.name);
    assert.ok(offered.includes('echo'), `echo is offered: ${offered}`);
    assert.ok(!offered.includes('add'), `add was offered: ${offered}`);
    // Stored with the conversation, as its panel shows.
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);
    const { settings } = await (await fetch(`${base}api/conversations/get?id=${id}`)).json();
    assert.deepEqual(settings.toolsOff, [{ server: 'demo', tool: 'add' }]);
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    assert.equal(await add.isChecked(), false);
    await page.keyboard.press('Escape');
    // A new conversation starts with everything on again.
    await ui.newChat();
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    assert.equal(await add.isChecked(), true);
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
  });

  test('a conversation exported as Markdown and as JSON', async () => {
    await page.getByRole('list', { name: 'Conversations' }).getByRole('button', { name: /^Anything but add/ }).click();
    await page.getByTestId('user-message').getByText('Anything but add').waitFor();
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);

    const download = async (item) => {
      await page.getByRole('button', { name: 'Export', exact: true }).click();
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('menu', { name: 'Export' }).getByRole('menuitem', { name: item }).click(),
      ]);
      return { name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
    };
    const md = await download('Markdown');
    assert.equal(md.name, `conversation-${id}.md`);
    assert.match(md.text, /^# Anything but add\n/);
    assert.match(md.text, /Without add\./);
    const json = await download('JSON');
    assert.equal(json.name, `conversation-${id}.json`);
    const doc = JSON.parse(json.text);
    assert.equal(doc.id, id);
    assert.deepEqual(doc.messages.map((m) => m.role), ['user', 'assistant']);
    assert.equal(doc.messages[1].content, 'Without add.');
    // The menu closed after each.
    assert.equal(await page.getByRole('menu', { name: 'Export' }).count(), 0);
  });

  test('no uncaught errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});

// A prompt of every kind of content (tests/peers' SDK v1): texts of both roles, an image, an audio clip (which cannot
// be attached), an embedded resource and a resource link.
const MIXED_SERVER = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(join(PEERS, 'package.json'))});
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const server = new McpServer({ name: 'mixed', version: '1.0.0' });
server.registerResource('plan', 'notes://plan', { title: 'The plan', mimeType: 'text/plain' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Step one: read the link.' }] }));
server.registerPrompt('everything', { title: 'Every kind' }, () => ({ messages: [
  { role: 'user', content: { type: 'text', text: 'First, the question.' } },
  { role: 'assistant', content: { type: 'text', text: 'An earlier answer.' } },
  { role: 'user', content: { type: 'image', data: png, mimeType: 'image/png' } },
  { role: 'user', content: { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' } },
  { role: 'user', content: { type: 'resource', resource: { uri: 'notes://embedded', mimeType: 'text/plain', text: 'The embedded note.' } } },
  { role: 'user', content: { type: 'resource_link', uri: 'notes://plan', name: 'plan' } },
  { role: 'user', content: { type: 'text', text: 'Last, the request.' } },
] }));
await server.connect(new StdioServerTransport());
`;

describe('a prompt inserted whole', { skip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let page, base, llmUrl, ui;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-prompts-'));
    const mixed = join(env.dir, 'mixed_server.mjs');
    writeFileSync(mixed, MIXED_SERVER);
    await startChatGateway(env, { responses: [{ content: 'I read the resource.' }, { content: 'I read it all.' }] }, {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      mixed: { command: process.execPath, args: [mixed] },
    });
    ({ page, base, llmUrl } = env);
    ui = chatControls(page);
  });

  after(() => stopChatGateway(env));

  const insert = async (title, args = {}) => {
    await page.getByRole('button', { name: 'Insert prompt' }).click();
    const dialog = page.getByRole('dialog', { name: 'Insert prompt' });
    await dialog.getByRole('button', { name: new RegExp(title) }).click();
    for (const [name, value] of Object.entries(args)) await dialog.getByLabel(name, { exact: true }).fill(value);
    await dialog.getByRole('button', { name: 'Insert', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
  };

  test("the reference server's resource-prompt: its text in the box, its embedded resource attached and sent", async () => {
    await page.goto(base);
    await insert('Resource Prompt', { resourceType: 'Text', resourceId: '3' });
    assert.equal(await ui.message.inputValue(),
      'This prompt includes the Text resource with id: 3. Please analyze the following resource:');
    await ui.composer.getByTestId('attachment').getByText('demo://resource/dynamic/text/3').waitFor();
    await ui.send.click();
    await page.getByText('I read the resource.', { exact: true }).waitFor();
    // Sent as the prompt gave it (not read again), and read by the model.
    const last = JSON.stringify((await modelRequests(llmUrl)).at(-1).body.messages.at(-1));
    assert.match(last, /Resource 3: This is a plaintext resource created at/);
    await page.getByTestId('user-message').getByTestId('attachment').getByText('demo://resource/dynamic/text/3').waitFor();
  });

  test('every text in order, images and resources attached, and what cannot go named', async () => {
    await ui.newChat();
    await insert('Every kind');
    assert.equal(await ui.message.inputValue(), 'First, the question.\n\nAn earlier answer.\n\nLast, the request.');
    const notes = ui.composer.getByRole('status').filter({ hasText: 'prompt' });
    await notes.getByText(/assistant message.*as text/).waitFor();
    await notes.getByText(/audio \(audio\/wav\)/).waitFor();
    const chips = ui.composer.getByTestId('attachment');
    await chips.getByText('prompt://mixed/everything/image-1').waitFor();
    await chips.getByText('notes://embedded').waitFor();
    await chips.getByText('The plan').waitFor();
    assert.equal(await chips.count(), 3);

    await ui.send.click();
    await page.getByText('I read it all.', { exact: true }).waitFor();
    // Sending took the notes away with the draft.
    assert.equal(await notes.count(), 0);
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);
    const { messages } = await (await fetch(`${base}api/conversations/get?id=${id}`)).json();
    const user = messages.find((m) => m.message.role === 'user');
    assert.deepEqual(user.meta.attachments.map((a) => [a.uri, a.error]),
      [['prompt://mixed/everything/image-1', undefined], ['notes://embedded', undefined], ['notes://plan', undefined]]);
    const sent = JSON.stringify((await modelRequests(llmUrl)).at(-1).body.messages.at(-1));
    assert.match(sent, /The embedded note\./);
    assert.match(sent, /Step one: read the link\./);
    // The image as given (this model is not configured for vision: it reads that there is one).
    assert.match(sent, /prompt:\/\/mixed\/everything\/image-1:\\n\[image\/png, 70 bytes/);
  });

  test('no uncaught errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe('a dormant lazy server in the chat', { skip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let page, base, llmUrl, ui;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-lazy-'));
    const cache = join(env.dir, 'cache');
    mkdirSync(cache);
    await startChatGateway(env, { responses: [{ content: 'The lazy README.' }] },
      { notes: { command: DEMO, lazy: true } }, { serveEnv: { XDG_CACHE_HOME: cache } });
    ({ page, base, llmUrl } = env);
    ui = chatControls(page);
    // Recorded in the catalog once, so that its items are listed while it sleeps.
    const res = await fetch(`${base}api/catalog/refresh`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'notes' }),
    });
    assert.equal(res.status, 200, await res.text());
    await until('notes dormant, its resources listed', async () => {
      const { resources } = await (await fetch(`${base}api/resources`)).json();
      return resources.some((r) => r.server === 'notes' && r.dormant);
    });
  });

  after(() => stopChatGateway(env));

  test("its resource attached (the server starts for the read) and sent; its tools in the switches", async () => {
    await page.goto(base);
    await page.getByRole('button', { name: 'Attach resource' }).click();
    const dialog = page.getByRole('dialog', { name: 'Attach resource' });
    const readme = dialog.getByRole('button', { name: /Demo README/ });
    assert.match(await readme.textContent(), /dormant/);
    assert.match(await dialog.getByRole('button', { name: /demo:\/\/greeting\/\{name\}/ }).textContent(), /template.*dormant/);
    await readme.click();
    await ui.composer.getByTestId('attachment').getByText('Demo README').waitFor();
    await ui.say('What is in it?');
    await page.getByText('The lazy README.', { exact: true }).waitFor();
    assert.match(JSON.stringify((await modelRequests(llmUrl)).at(-1).body.messages), /Switchboard demo MCP server/);
    const id = Number(page.url().match(/#\/chat\/(\d+)$/)[1]);
    const { messages } = await (await fetch(`${base}api/conversations/get?id=${id}`)).json();
    assert.deepEqual(messages[0].meta.attachments, [{ server: 'notes', uri: 'demo://text/readme' }]);
    // Started for the read, and released.
    await until('notes dormant again', async () => {
      const { servers } = await (await fetch(`${base}api/servers`)).json();
      return servers.find((s) => s.name === 'notes')?.lifecycle === 'dormant';
    });

    // Its tools are in the conversation's switches, marked dormant.
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    const panel = page.getByRole('dialog', { name: 'Tools in this conversation' });
    const notes = panel.getByRole('region', { name: 'notes' });
    await notes.getByText('dormant', { exact: true }).waitFor();
    const echo = notes.getByRole('switch', { name: 'echo (notes) in this conversation' });
    assert.equal(await echo.isChecked(), true);
    await echo.click();
    await until('echo off', async () => !(await echo.isChecked()) && (await echo.isEnabled()));
    await page.keyboard.press('Escape');
  });

  test('no uncaught errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
