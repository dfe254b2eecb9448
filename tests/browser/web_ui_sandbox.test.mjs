// Confined stdio servers on the servers page, in a real browser against a real `switchboard serve`: each stdio
// server's card says how it runs (unconfined, marked so and saying how to confine it; bwrap or landlock with its state
// directory, what it may write and the domains it may reach), lists what it was refused lately, and "Allow" writes
// the refused domain into the server's entry in the config file.
// The confined server is tests/peers/scripts/hostile_server.py: its `fetch` goes through the egress proxy, which
// refuses a domain not allowed.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   node --test tests/browser/web_ui_sandbox.test.mjs
// With SWITCHBOARD_SCREENSHOTS=docs/screenshots it writes server-sandbox.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO, SCREENSHOTS, missing, openPage, serveGateway, stopProcess, until } from './web_ui_support.mjs';

const HOSTILE = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'peers', 'scripts', 'hostile_server.py');

function hasPython() {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const skip = missing.length ? `needs ${missing.join(', ')}` : !hasPython() ? 'needs python3' : false;

describe('sandbox on the servers page', { skip }, () => {
  const pageErrors = [];
  let dir, home, configPath, serve, base, browser, page;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-sandbox-'));
    home = join(dir, 'home');
    mkdirSync(home);
    configPath = join(dir, 'switchboard.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          plain: { command: DEMO },
          box: { command: 'python3', args: [HOSTILE], sandboxEnabled: true },
        },
      }),
    );
    // A home of its own: the servers' state directories are made under it.
    const env = { HOME: home, XDG_STATE_HOME: join(home, '.local', 'state') };
    ({ proc: serve, base } = await serveGateway(['--config', configPath, '--db', join(dir, 'conversations.db')], dir, env));
    ({ browser, page } = await openPage(pageErrors));
  });

  after(async () => {
    await browser?.close();
    await stopProcess(serve);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const section = (name) => page.getByTestId(`sandbox-${name}`);
  const refused = (name) => section(name).getByRole('list', { name: 'Refused lately' }).getByRole('listitem');

  async function status(name) {
    const { servers } = await (await fetch(`${base}api/servers`)).json();
    return servers.find((s) => s.name === name);
  }

  async function openServers() {
    await page.goto(`${base}#/servers`);
    await page.getByTestId('phase-plain').getByText('connected').waitFor();
    await page.getByTestId('phase-box').getByText('connected').waitFor();
  }

  /** The box entry as the config file has it now. */
  const boxEntry = () => JSON.parse(readFileSync(configPath, 'utf8')).mcpServers.box;

  test('an unconfined server is marked so, and says how to confine it', async () => {
    await openServers();
    const layer = section('plain').getByTestId('sandbox-layer-plain');
    assert.equal((await layer.textContent()).trim(), 'unconfined');
    assert.match(await layer.getAttribute('title'), /"sandboxEnabled": true/);
    assert.match(await section('plain').textContent(), /"sandboxEnabled": true/);
    // Nothing confined to show: no state directory, no Allow.
    assert.equal(await section('plain').getByText('state directory').count(), 0);
    assert.equal(await section('plain').getByRole('button', { name: /^Allow/ }).count(), 0);
  });

  test('a confined server shows its layer, state directory, and what it may write and reach', async () => {
    await openServers();
    const box = await status('box');
    assert.ok(['bwrap', 'landlock'].includes(box.sandbox?.layer), JSON.stringify(box.sandbox));
    assert.ok(box.sandbox.stateDir.startsWith(home), box.sandbox.stateDir);
    const layer = section('box').getByTestId('sandbox-layer-box');
    assert.equal((await layer.textContent()).trim(), box.sandbox.layer);
    await section('box').getByText(box.sandbox.stateDir, { exact: true }).first().waitFor();
    assert.match(await section('box').textContent(), /allowed domains\s*none/);
    assert.equal(await section('box').getByRole('list', { name: 'Refused lately' }).count(), 0);
  });

  test('a domain refused by the proxy is listed; Allow writes it into the entry', async () => {
    await openServers();
    const res = await fetch(`${base}api/tools/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ server: 'box', name: 'fetch', arguments: { url: 'http://localhost:9/' } }),
    });
    const text = (await res.json()).content?.[0]?.text ?? '';
    assert.match(text, /^refused: .*localhost/, text);

    // The refusal comes by itself (the event stream sends the server's status again), no refresh asked.
    const item = refused('box').filter({ has: page.locator('code', { hasText: /^localhost$/ }) });
    await item.waitFor();
    assert.match(await item.textContent(), /domain\s*localhost\s*\d\d:\d\d:\d\d/);
    await section('box').screenshot({ path: join(SCREENSHOTS, 'server-sandbox.png') });

    // Opening the page again asks too.
    await page.goto(`${base}#/tools`);
    await openServers();
    await item.waitFor();

    await item.getByRole('button', { name: 'Allow localhost' }).click();
    await until('localhost in the entry', () => boxEntry().sandbox?.network?.allowedDomains?.includes('localhost'));
    const entry = boxEntry();
    assert.deepEqual(entry.sandbox.network.allowedDomains, ['localhost']);
    // The rest of the entry as it was.
    assert.equal(entry.command, 'python3');
    assert.deepEqual(entry.args, [HOSTILE]);
    assert.equal(entry.sandboxEnabled, true);
    assert.equal(boxEntry().sandbox.filesystem, undefined);

    // The server restarts with it: the card lists the domain as allowed.
    await until('the new policy', async () => (await status('box')).sandbox?.allowedDomains?.includes('localhost'));
    await page.getByTestId('phase-box').getByText('connected').waitFor();
    await section('box').locator('dd code', { hasText: /^localhost$/ }).waitFor();
    assert.equal(await section('box').getByRole('button', { name: 'Allow localhost' }).count(), 0);
  });

  test('the API refuses what cannot be allowed', async () => {
    const allow = async (body) =>
      fetch(`${base}api/servers/sandbox/allow`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await allow({ name: 'box', kind: 'socket', value: '/x' })).status, 400);
    assert.equal((await allow({ name: 'box', kind: 'path', value: '' })).status, 400);
    assert.equal((await allow({ name: 'nope', kind: 'domain', value: 'a.test' })).status, 400);
    const foreign = await fetch(`${base}api/servers/sandbox/allow`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: 'http://evil.test' },
      body: JSON.stringify({ name: 'box', kind: 'domain', value: 'evil.test' }),
    });
    assert.equal(foreign.status, 403);
    // A domain already there is not added twice (and nothing is written).
    const before = readFileSync(configPath, 'utf8');
    const again = await allow({ name: 'box', kind: 'domain', value: 'localhost' });
    assert.equal(again.status, 200);
    assert.ok(Array.isArray((await again.json()).servers));
    assert.equal(readFileSync(configPath, 'utf8'), before);
  });

  test('no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
