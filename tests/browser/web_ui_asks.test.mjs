// What servers ask during the page's calls (issue 49), in a real browser against a real `switchboard serve` and the
// scripted model (tests/peers/fake_llm): the demo server with --client-requests asking for a form (accepted, refused
// by Switchboard's check, declined), to use the model (approved and its answer sent, or denied), for its roots (set in
// Settings) and to open a URL (its dialog closing when the server says the flow is done); a question left open over a
// reload; "Try it" answering too; the demo with --tasks asking mid-task; the reference server's elicitation, URL and
// sampling tools. With SWITCHBOARD_SCREENSHOTS=docs/screenshots it refreshes chat-elicitation.png and
// chat-sampling.png.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   FAKE_LLM=build/switchboard-fake-llm node --test tests/browser/web_ui_asks.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  DEMO,
  FAKE_LLM,
  SCREENSHOTS,
  WAIT,
  missing,
  modelRequests,
  startChatGateway,
  stopChatGateway,
  until,
} from './web_ui_support.mjs';

const PEERS = resolve(import.meta.dirname, '..', 'peers');
const EVERYTHING = join(PEERS, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const skip = missing.length ? `needs ${missing.join(', ')}` : !FAKE_LLM ? 'needs FAKE_LLM' : false;

/** The chat's controls and the blocks of its tool calls, by what a person sees. */
function chatOf(page) {
  const message = page.getByLabel('Message', { exact: true });
  return {
    async newChat() {
      await page.getByRole('button', { name: 'New chat' }).click();
      await until('an empty conversation', async () => (await page.getByTestId('user-message').count()) === 0);
    },
    async say(text) {
      await message.fill(text);
      await page.getByRole('button', { name: 'Send', exact: true }).click();
    },
    /** Allows the model's call of `tool` once. */
    async allow(tool, server = 'demo') {
      await page.getByRole('dialog', { name: `Allow ${tool} (server ${server})?` }).getByRole('button', { name: 'Allow once' }).click();
    },
    block: (status) => page.locator(`[data-testid="tool-block"][data-status="${status}"]`).last(),
    /** The text of the newest call's result, once it ended. */
    async result() {
      const block = page.getByTestId('tool-block').last();
      await until('the call ended', async () => (await block.getAttribute('data-status')) !== 'running');
      return block.getByLabel(/^Result of /).locator('pre').first().textContent();
    },
    answered: (text) => page.getByText(text, { exact: true }).waitFor(),
  };
}

const formDialog = (page, server = 'demo') => page.getByRole('dialog', { name: `${server} asks for information` });

describe('the demo server asks during a chat', { skip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let page, base, llmUrl, chat, root;

  before(async () => {
    env.dir = realpathSync(mkdtempSync(join(tmpdir(), 'switchboard-asks-')));
    root = join(env.dir, 'project');
    mkdirSync(root);
    await startChatGateway(env, { responses: [
      // a form accepted (refused once by Switchboard's check)
      { toolCalls: [{ name: 'ask_user', arguments: '{"message":"Who are you?"}' }] },
      { content: 'Nice to meet you.' },
      // a form declined
      { toolCalls: [{ name: 'ask_user', arguments: '{"message":"Who are you, again?"}' }] },
      { content: 'As you wish.' },
      // sampling approved: the run, the server's request, the run again
      { toolCalls: [{ name: 'ask_model', arguments: '{"question":"What colour is the sky?"}' }] },
      { content: 'Blue, mostly.' },
      { content: 'The model said blue.' },
      // sampling denied: the server's request never reaches the model
      { toolCalls: [{ name: 'ask_model', arguments: '{"question":"Anything?"}' }] },
      { content: 'No sampling then.' },
      // roots set in Settings
      { toolCalls: [{ name: 'list_roots', arguments: '{}' }] },
      { content: 'Those are your roots.' },
      // a URL to open, then the server says the flow is done
      { toolCalls: [{ name: 'sign_in', arguments: '{"url":"https://partner.example/sign-in?step=1"}' }] },
      { content: 'Signed in.' },
      // a reload while the question is open
      { toolCalls: [{ name: 'ask_user', arguments: '{"message":"Still there?"}' }] },
      { content: 'Welcome back.' },
      // a question asked in two tabs
      { toolCalls: [{ name: 'ask_user', arguments: '{"message":"Which tab answers?"}' }] },
      { content: 'Answered in one tab.' },
    ] }, { demo: { command: DEMO, args: ['--client-requests'] } }, { cwd: env.dir });
    ({ page, base, llmUrl } = env);
    chat = chatOf(page);
  });

  after(() => stopChatGateway(env));

  test('a form: the server named, its message, the warning; checked here, then by Switchboard; accepted', async () => {
    await page.goto(base);
    await chat.say('Ask me who I am');
    await chat.allow('ask_user');
    const dialog = formDialog(page);
    await dialog.waitFor();
    assert.equal(await dialog.getByTestId('asking-server').textContent(), 'demo');
    await dialog.getByText('during its call of ask_user').waitFor();
    assert.equal(await dialog.getByTestId('asked-message').textContent(), 'Who are you?');
    await dialog.getByRole('note').getByText(/Never enter a password, an API key or any other secret here/).waitFor();
    // The call's block says it waits on the user.
    const block = chat.block('running');
    await block.getByRole('status').getByText('waiting on you').waitFor();
    await block.getByText('Waiting on you: demo asks you to fill in a form.').waitFor();

    const name = dialog.getByLabel('name', { exact: true });
    const age = dialog.getByLabel('age', { exact: true });
    await name.fill('Ada');
    await age.fill('36');
    await page.screenshot({ path: join(SCREENSHOTS, 'chat-elicitation.png') });

    // The schema's rules, before anything is sent: the name is required, the age a whole number from 0.
    await name.fill('');
    await age.fill('-1');
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.getByText('Required.').waitFor();
    await dialog.getByText('At least 0.').waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');

    // Switchboard checks the form against the schema too: what it refuses is shown, and the question stays open (the
    // form sent here is made to lose its name on the way).
    await name.fill('Ada');
    await age.fill('36');
    await page.route('**/api/chat/respond', (route) => {
      const body = route.request().postDataJSON();
      delete body.answer.content.name;
      return route.continue({ postData: JSON.stringify(body) });
    }, { times: 1 });
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.getByRole('alert').getByText('"name" is required').waitFor();
    await block.getByRole('status').getByText('waiting on you').waitFor();

    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.waitFor({ state: 'detached' });
    await chat.answered('Nice to meet you.');
    const result = await chat.result();
    assert.match(result, /"action":"accept"/);
    assert.match(result, /"name":"Ada"/);
    assert.match(result, /"age":36/);
  });

  test('a form declined', async () => {
    await chat.say('Ask me again');
    await chat.allow('ask_user');
    const dialog = formDialog(page);
    await dialog.getByTestId('asked-message').getByText('Who are you, again?').waitFor();
    await dialog.getByRole('button', { name: 'Decline' }).click();
    await dialog.waitFor({ state: 'detached' });
    await chat.answered('As you wish.');
    assert.equal(await chat.result(), '{"action":"decline"}');
  });

  test('sampling: the request shown and allowed, the model asked, its answer approved and sent back', async () => {
    const before = (await modelRequests(llmUrl)).length;
    await chat.say('Ask the model about the sky');
    await chat.allow('ask_model');
    const request = page.getByRole('dialog', { name: 'demo asks to use the model' });
    await request.waitFor();
    assert.equal(await request.getByTestId('asking-server').textContent(), 'demo');
    await request.getByRole('list', { name: 'Messages' }).getByText('What colour is the sky?').waitFor();
    await request.getByRole('region', { name: 'System prompt' }).getByText('You answer in one line.').waitFor();
    assert.equal(await request.getByTestId('max-tokens').textContent(), '100');
    await chat.block('running').getByText('Waiting on you: demo asks to use the model.').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'chat-sampling.png') });
    await request.getByRole('button', { name: 'Allow once' }).click();

    const answer = page.getByRole('dialog', { name: "Send the model's answer to demo?" });
    await answer.getByRole('region', { name: "The model's answer" }).getByText('Blue, mostly.').waitFor();
    await answer.getByRole('button', { name: 'Send', exact: true }).click();
    await answer.waitFor({ state: 'detached' });
    await chat.answered('The model said blue.');
    assert.match(await chat.result(), /Blue, mostly\./);
    // The server's request went to the model, as shown.
    const sent = (await modelRequests(llmUrl)).slice(before);
    assert.equal(sent.length, 3);
    assert.match(JSON.stringify(sent[1].body.messages), /What colour is the sky\?/);
    assert.match(JSON.stringify(sent[1].body.messages), /You answer in one line\./);
  });

  test('sampling denied: the model is never asked', async () => {
    const before = (await modelRequests(llmUrl)).length;
    await chat.say('Ask the model anything');
    await chat.allow('ask_model');
    const request = page.getByRole('dialog', { name: 'demo asks to use the model' });
    await request.getByRole('button', { name: 'Deny' }).click();
    await request.waitFor({ state: 'detached' });
    await chat.answered('No sampling then.');
    assert.match(await chat.result(), /the user declined the sampling request of server "demo"/);
    assert.equal((await modelRequests(llmUrl)).length - before, 2);
  });

  test("roots: set in Settings (a wrong one refused), then what a server asking is given", async () => {
    await page.goto(`${base}#/settings`);
    const card = page.getByRole('region', { name: 'Roots' });
    // None saved: the directory serve runs in.
    await card.getByTestId('roots-effective').getByText(`file://${env.dir}`, { exact: true }).waitFor();
    const dir = card.getByLabel('Directory', { exact: true });
    await dir.fill('relative/path');
    await card.getByRole('button', { name: 'Add' }).click();
    await card.getByText('An absolute path, as /home/me/src.').waitFor();
    await dir.fill(join(env.dir, 'missing'));
    await card.getByRole('button', { name: 'Add' }).click();
    await card.getByRole('button', { name: 'Save roots' }).click();
    await card.getByRole('alert').getByText(/is not a directory given by its absolute path/).waitFor();
    await card.getByRole('button', { name: `Remove ${join(env.dir, 'missing')}` }).click();
    await dir.fill(root);
    await card.getByRole('button', { name: 'Add' }).click();
    await card.getByRole('button', { name: 'Save roots' }).click();
    await card.getByRole('list', { name: 'Roots in effect' }).getByText(`file://${root}`, { exact: true }).waitFor();
    assert.equal(await card.getByRole('alert').count(), 0);

    await page.goto(`${base}#/chat`);
    await chat.newChat();
    await chat.say('Which roots do I have?');
    await chat.allow('list_roots');
    await chat.answered('Those are your roots.');
    const result = await chat.result();
    assert.match(result, new RegExp(`"uri":"file://${root}"`));
    assert.doesNotMatch(result, new RegExp(`"file://${env.dir}"`));
  });

  test('a URL to open: its host shown, never a link; opened after confirming; closed when the server says done', async () => {
    // The tab it opens is recorded instead.
    await page.evaluate(() => {
      window.__opened = [];
      window.open = (...args) => {
        window.__opened.push(args);
        return null;
      };
    });
    await chat.say('Sign me in');
    await chat.allow('sign_in');
    const dialog = page.getByRole('dialog', { name: 'demo asks you to open a page' });
    await dialog.waitFor();
    assert.equal(await dialog.getByTestId('url-host').textContent(), 'partner.example');
    assert.equal(await dialog.getByLabel('Full URL').textContent(), 'https://partner.example/sign-in?step=1');
    assert.equal(await dialog.getByRole('link').count(), 0);
    await dialog.getByText("Sign in to the demo's partner site").waitFor();
    await chat.block('running').getByText('Waiting on you: demo asks you to open a page.').waitFor();

    await dialog.getByRole('button', { name: 'Open…' }).click();
    // Nothing opens before the user confirms.
    assert.deepEqual(await page.evaluate(() => window.__opened), []);
    await dialog.getByText('Open partner.example in a new tab?').waitFor();
    await dialog.getByRole('button', { name: 'Open in a new tab' }).click();
    assert.deepEqual(await page.evaluate(() => window.__opened),
      [['https://partner.example/sign-in?step=1', '_blank', 'noopener,noreferrer']]);
    // The server announces the flow finished (notifications/elicitation/complete): the dialog closes by itself.
    await dialog.waitFor({ state: 'detached' });
    await chat.answered('Signed in.');
    assert.equal(await chat.result(), '{"action":"accept"}');
  });

  test('a reload while a question is open: it is asked again, and answered', async () => {
    await chat.say('Ask me, then I reload');
    await chat.allow('ask_user');
    await formDialog(page).getByText('Still there?').waitFor();
    await page.reload();
    const dialog = formDialog(page);
    await dialog.getByTestId('asked-message').getByText('Still there?').waitFor();
    await chat.block('running').getByRole('status').getByText('waiting on you').waitFor();
    await dialog.getByLabel('name', { exact: true }).fill('Grace');
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.waitFor({ state: 'detached' });
    await chat.answered('Welcome back.');
    assert.match(await chat.result(), /"name":"Grace"/);
  });

  test('a question open in two tabs: answered in one, its dialog closes in the other', async () => {
    await chat.say('Ask me in two tabs');
    await chat.allow('ask_user');
    const here = formDialog(page);
    await here.getByText('Which tab answers?').waitFor();
    const other = await env.browser.newPage({ viewport: { width: 1280, height: 800 } });
    other.setDefaultTimeout(WAIT);
    other.on('pageerror', (e) => pageErrors.push(e.message));
    try {
      // The other tab takes the run's stream, and asks too; this one, answering elsewhere now, asks what the
      // conversation says is waiting.
      await other.goto(page.url());
      const there = formDialog(other);
      await there.getByText('Which tab answers?').waitFor();
      await page.getByText('This conversation is answering elsewhere (another tab or window).').waitFor();
      await here.getByText('Which tab answers?').waitFor();
      await here.getByLabel('name', { exact: true }).fill('Here');
      await here.getByRole('button', { name: 'Accept' }).click();
      await here.waitFor({ state: 'detached' });
      // The other tab's stream says it was answered.
      await there.waitFor({ state: 'detached' });
      await other.getByText('Answered in one tab.', { exact: true }).waitFor();
      assert.match(await chatOf(other).result(), /"name":"Here"/);
    } finally {
      await other.close();
    }
  });

  test('"Try it" on ask_user: its question in a dialog over the call, answered there', async () => {
    await page.goto(`${base}#/tools`);
    const row = page.locator('li').filter({ has: page.getByTestId('toggle-demo-ask_user') });
    await row.getByRole('button', { name: 'Try it' }).click();
    const call = page.getByRole('dialog', { name: 'demo / ask_user' });
    await call.getByLabel('message', { exact: true }).fill('Your name, please?');
    await call.getByRole('button', { name: 'Call', exact: true }).click();
    const dialog = formDialog(page);
    await dialog.getByTestId('asked-message').getByText('Your name, please?').waitFor();
    await dialog.getByText('during its call of ask_user').waitFor();
    await dialog.getByLabel('name', { exact: true }).fill('Lin');
    await dialog.getByLabel('age', { exact: true }).fill('7');
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.waitFor({ state: 'detached' });
    const result = call.getByTestId('tool-result');
    await result.getByText(/"name":"Lin"/).waitFor();
    assert.match(await result.textContent(), /"age":7/);
    await page.keyboard.press('Escape');
    await call.waitFor({ state: 'detached' });
  });

  test('no uncaught errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe('a task asks mid-run', { skip }, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let page, chat;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-asks-task-'));
    await startChatGateway(env, { responses: [
      { toolCalls: [{ name: 'report', arguments: '{"seconds":4,"topic":"tea"}' }] },
      { content: 'The report is written.' },
    ] }, { demo: { command: DEMO, args: ['--tasks'] } });
    ({ page } = env);
    chat = chatOf(page);
  });

  after(() => stopChatGateway(env));

  test("report's format question: the block shows the task waiting on the user, the answer goes into the report", async () => {
    await page.goto(env.base);
    await chat.say('Write a report on tea');
    await chat.allow('report');
    const dialog = formDialog(page);
    await dialog.getByTestId('asked-message').getByText('Which format should the report have?').waitFor();
    const block = chat.block('running');
    await block.getByText('Waiting on you: demo asks you to fill in a form.').waitFor();
    await until('the task waiting for input', async () => /input_required/.test(await block.getByTestId('tool-task').textContent()));
    await dialog.getByLabel('format', { exact: true }).fill('haiku');
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.waitFor({ state: 'detached' });
    await chat.answered('The report is written.');
    assert.match(await chat.result(), /Report on tea \(haiku, 4 s\): all quiet\./);
  });

  test('no uncaught errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe("the reference server's questions", {
  skip: skip || (!existsSync(EVERYTHING) && `needs ${EVERYTHING}`),
}, () => {
  const pageErrors = [];
  const env = { pageErrors };
  let page, base, llmUrl, chat;

  before(async () => {
    env.dir = mkdtempSync(join(tmpdir(), 'switchboard-asks-everything-'));
    await startChatGateway(env, { responses: [
      // trigger-sampling-request from the chat: the run, the server's request, the run again
      { toolCalls: [{ name: 'trigger-sampling-request', arguments: '{"prompt":"Name a colour","maxTokens":42}' }] },
      { content: 'Teal.' },
      { content: 'The server got teal.' },
    ] }, { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    ({ page, base, llmUrl } = env);
    chat = chatOf(page);
  });

  after(() => stopChatGateway(env));

  /** Opens "Try it" of one of its tools; the call's dialog. */
  async function tryIt(tool) {
    await page.goto(`${base}#/tools`);
    const row = page.locator('li').filter({ has: page.getByTestId(`toggle-everything-${tool}`) });
    const button = row.getByRole('button', { name: 'Try it' });
    await until(`"Try it" of ${tool} enabled`, () => button.isEnabled());
    await button.click();
    return page.getByRole('dialog', { name: `everything / ${tool}` });
  }

  test('its sampling tool from the chat: allowed once, the answer sent', async () => {
    await page.goto(base);
    await chat.say('Trigger sampling');
    await chat.allow('trigger-sampling-request', 'everything');
    const request = page.getByRole('dialog', { name: 'everything asks to use the model' });
    await request.getByText('Resource trigger-sampling-request context: Name a colour').waitFor();
    await request.getByText('You are a helpful test server.').waitFor();
    assert.equal(await request.getByTestId('max-tokens').textContent(), '42');
    await request.getByRole('button', { name: 'Allow once' }).click();
    const answer = page.getByRole('dialog', { name: "Send the model's answer to everything?" });
    await answer.getByText('Teal.').waitFor();
    await answer.getByRole('button', { name: 'Send', exact: true }).click();
    await chat.answered('The server got teal.');
    assert.match(await chat.result(), /LLM sampling result:[\s\S]*Teal\./);
    assert.match(JSON.stringify((await modelRequests(llmUrl))[1].body.messages), /Name a colour/);
  });

  test('its elicitation tool in "Try it": every kind of field, with titles, defaults and choices', async () => {
    const call = await tryIt('trigger-elicitation-request');
    await call.getByRole('button', { name: 'Call', exact: true }).click();
    const dialog = formDialog(page, 'everything');
    await dialog.getByText('Please provide inputs for the following fields:').waitFor();
    // Labelled by their titles, prefilled with their defaults.
    assert.equal(await dialog.getByLabel('Integer', { exact: true }).inputValue(), '42');
    assert.equal(await dialog.getByLabel('String with default', { exact: true }).inputValue(), 'It was a dark and stormy night.');
    assert.equal(await dialog.getByLabel('String with email format', { exact: true }).getAttribute('type'), 'email');
    const instruments = dialog.getByRole('group', { name: 'Untitled Multiple Select Enum' });
    assert.equal(await instruments.getByRole('checkbox', { name: 'Guitar' }).isChecked(), true);

    // Checked before sending: the name is required, the email must be one, the integer at most 100.
    await dialog.getByLabel('String with email format', { exact: true }).fill('not an address');
    await dialog.getByLabel('Integer', { exact: true }).fill('101');
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.getByText('Required.').waitFor();
    await dialog.getByText('Not an email address.').waitFor();
    await dialog.getByText('At most 100.').waitFor();

    await dialog.getByLabel('String', { exact: true }).fill('Ada Lovelace');
    await dialog.getByLabel('String with email format', { exact: true }).fill('ada@example.com');
    await dialog.getByLabel('Integer', { exact: true }).fill('7');
    await dialog.getByLabel('Boolean', { exact: true }).check();
    await dialog.getByLabel('Titled Single Select Enum', { exact: true }).selectOption({ label: 'Wonder Woman' });
    await dialog.getByLabel('Legacy Titled Single Select Enum', { exact: true }).selectOption({ label: 'Dogs' });
    await instruments.getByRole('checkbox', { name: 'Piano' }).check();
    await dialog.getByRole('group', { name: 'Titled Multiple Select Enum' }).getByRole('checkbox', { name: 'Trout' }).check();
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await dialog.waitFor({ state: 'detached' });

    const result = call.getByTestId('tool-result');
    await result.getByText(/User provided the requested information/).waitFor();
    const raw = JSON.parse((await result.textContent()).match(/Raw result: (\{[\s\S]*\})/)[1]);
    assert.deepEqual(raw, { action: 'accept', content: {
      name: 'Ada Lovelace',
      check: true,
      firstLine: 'It was a dark and stormy night.',
      email: 'ada@example.com',
      integer: 7,
      number: 3.14,
      untitledSingleSelectEnum: 'Monica',
      untitledMultipleSelectEnum: ['Guitar', 'Piano'],
      titledSingleSelectEnum: 'hero-3',
      titledMultipleSelectEnum: ['fish-1', 'fish-3'],
      legacyTitledEnum: 'pet-2',
    } });
    await page.keyboard.press('Escape');
    await call.waitFor({ state: 'detached' });
  });

  test('its URL tool in "Try it": opened, the dialog waits (no completion comes) until the user closes it', async () => {
    const call = await tryIt('trigger-url-elicitation');
    await call.getByLabel('url', { exact: true }).fill('https://auth.example.org/consent');
    await call.getByRole('button', { name: 'Call', exact: true }).click();
    await page.evaluate(() => {
      window.open = () => null;
    });
    const dialog = page.getByRole('dialog', { name: 'everything asks you to open a page' });
    assert.equal(await dialog.getByTestId('url-host').textContent(), 'auth.example.org');
    await dialog.getByRole('button', { name: 'Open…' }).click();
    await dialog.getByRole('button', { name: 'Open in a new tab' }).click();
    // Answered: the call ends, and the dialog still waits for the site.
    await call.getByTestId('tool-result').getByText(/User completed the URL elicitation flow/).waitFor();
    await dialog.getByRole('status').getByText(/Waiting for auth\.example\.org to finish/).waitFor();
    await dialog.getByRole('button', { name: 'Done', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await call.waitFor();
    await page.keyboard.press('Escape');
    await call.waitFor({ state: 'detached' });
  });

  test('no uncaught errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
