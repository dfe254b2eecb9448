// Adding servers on the servers page, in a real browser against a real `switchboard serve`: "Add from registry"
// searches a local MCP Registry (tests/peers/scripts/mcp_registry.py, real server.json documents), shows the values a
// server needs and the exact command before Add, and adds a remote server and an npm one (run by npx from the test
// peers' own node_modules, offline); "Paste a config" adds a Claude `.mcp.json` fragment whole, or nothing.
//   SWITCHBOARD_BIN=build/switchboard SWITCHBOARD_DEMO=build/switchboard-demo-server \
//   node --test tests/browser/web_ui_registry.test.mjs
// With SWITCHBOARD_SCREENSHOTS=docs/screenshots it writes registry-add.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO, SCREENSHOTS, missing, openPage, serveGateway, startAndWaitFor, stopProcess, until } from './web_ui_support.mjs';

const PEERS = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'peers');

describe('adding servers on the servers page', { skip: missing.length ? `needs ${missing.join(', ')}` : false }, () => {
  const pageErrors = [];
  let dir, home, configPath, serve, demo, registry, base, browser, page;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-registry-'));
    home = join(dir, 'home');
    mkdirSync(home);
    configPath = join(dir, 'switchboard.json');
    writeFileSync(configPath, JSON.stringify({ mcpServers: { first: { command: DEMO } } }, null, 2));
    // The remote server the registry's com.todoist/mcp points at: a demo server over HTTP on 127.0.0.1.
    const d = startAndWaitFor(DEMO, ['--http', '0'], 'stderr', /listening on (http:\/\/\S+)/, 'demo');
    demo = d.proc;
    const remoteUrl = (await d.match)[1];
    const r = startAndWaitFor('python3', [join(PEERS, 'scripts', 'mcp_registry.py'), '--documents', join(PEERS, 'registry'),
      '--remote-url', remoteUrl, '--tarball', join(PEERS, 'package.json')], 'stderr', /listening on (http:\/\/\S+)/, 'registry');
    registry = r.proc;
    const registryUrl = (await r.match)[1];
    // Run where npx finds server-everything in the peers' node_modules, and never asks the network.
    const env = { HOME: home, XDG_STATE_HOME: join(home, '.local', 'state'), XDG_CACHE_HOME: join(home, '.cache'),
      SWITCHBOARD_REGISTRY: registryUrl, npm_config_offline: 'true' };
    ({ proc: serve, base } = await serveGateway(['--config', configPath, '--db', join(dir, 'conversations.db')], PEERS, env));
    ({ browser, page } = await openPage(pageErrors));
  });

  after(async () => {
    await browser?.close();
    await stopProcess(serve);
    await stopProcess(registry);
    await stopProcess(demo);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const servers = () => JSON.parse(readFileSync(configPath, 'utf8')).mcpServers;
  const phaseIs = (name, phase) => page.getByTestId(`phase-${name}`).getByText(phase, { exact: true }).waitFor();
  const dialog = () => page.getByRole('dialog');

  async function openRegistry(term) {
    await page.goto(`${base}#/servers`);
    await phaseIs('first', 'connected');
    await page.getByRole('button', { name: 'Add from registry' }).click();
    await page.getByTestId('registry-search').fill(term);
    await dialog().getByRole('button', { name: 'Search' }).click();
  }

  test('a server that needs a secret: its command shown with the secret as a reference; nothing written', async () => {
    await openRegistry('airtable');
    await page.getByTestId('registry-result').filter({ hasText: 'airtable' }).click();
    const command = page.getByTestId('registry-command');
    // Not yet: the token is required.
    await dialog().getByRole('alert').filter({ hasText: 'AIRTABLE_API_KEY is required' }).waitFor();
    assert.equal(await page.getByTestId('registry-add').isDisabled(), true);
    const token = dialog().getByLabel('AIRTABLE_API_KEY');
    assert.equal(await token.getAttribute('type'), 'password');
    await token.fill('pat123.abc');
    await until('the command', async () => (await command.count()) && /airtable-mcp-server@1\.7\.2/.test(await command.textContent()));
    const shown = await command.textContent();
    assert.match(shown, /^AIRTABLE_API_KEY='\$\{AIRTABLE_MCP_SERVER_AIRTABLE_API_KEY\}' npx -y airtable-mcp-server@1\.7\.2$/);
    assert.ok(!shown.includes('pat123'), shown);
    assert.match(await dialog().textContent(), /Secrets AIRTABLE_MCP_SERVER_AIRTABLE_API_KEY go to the env file/);
    // The other ways to run it: the container image, and the bundle Switchboard cannot run.
    const use = dialog().getByLabel('Run it as');
    assert.deepEqual(await use.locator('option').allTextContents(), [
      'npm airtable-mcp-server@1.7.2',
      'oci docker.io/domdomegg/airtable-mcp-server:1.7.2',
      'mcpb https://github.com/domdomegg/airtable-mcp-server/releases/download/v1.7.2/airtable-mcp-server.mcpb (cannot run)',
    ]);
    await dialog().screenshot({ path: join(SCREENSHOTS, 'registry-add.png') });
    await dialog().getByRole('button', { name: 'Close' }).click();
    assert.deepEqual(Object.keys(servers()), ['first']);
  });

  test('a remote server from the registry → Add → connected', async () => {
    await openRegistry('todoist');
    await page.getByTestId('registry-result').filter({ hasText: 'com.todoist/mcp' }).click();
    await until('the command', async () => /^http http:\/\/127\.0\.0\.1:\d+/.test(await page.getByTestId('registry-command').textContent()));
    await page.getByTestId('registry-add').click();
    await phaseIs('mcp', 'connected');
    assert.equal(servers().mcp.type, 'http');
    assert.match(servers().mcp.url, /^http:\/\/127\.0\.0\.1:\d+/);
  });

  test('an npm server from the registry → Add → confined, pinned, connected', async () => {
    await openRegistry('everything');
    await page.getByTestId('registry-result').filter({ hasText: 'server-everything' }).click();
    await until('the command', async () =>
      (await page.getByTestId('registry-command').textContent()) === 'npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio');
    await page.getByTestId('registry-add').click();
    await phaseIs('server-everything', 'connected');
    assert.deepEqual(servers()['server-everything'], {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-everything@2026.8.31', 'stdio'],
      sandboxEnabled: true,
    });
  });

  test('a hostile document is refused with its reason, and nothing is written', async () => {
    await openRegistry('bad-shell');
    await page.getByTestId('registry-result').first().click();
    await dialog().getByRole('alert').filter({ hasText: 'a shell or the config would act on' }).waitFor();
    assert.equal(await page.getByTestId('registry-add').isDisabled(), true);
    await dialog().getByRole('button', { name: 'Close' }).click();
    assert.ok(!('bad-shell' in servers()));
  });

  test('paste a Claude config: every server added; a clash adds none', async () => {
    await page.goto(`${base}#/servers`);
    await page.getByRole('button', { name: 'Paste a config' }).click();
    await page.getByTestId('paste-config').fill(JSON.stringify({ mcpServers: { first: { command: DEMO }, other: { command: DEMO } } }));
    await dialog().getByRole('button', { name: 'Add servers' }).click();
    await dialog().getByRole('alert').filter({ hasText: 'a server named "first" already exists; nothing was added' }).waitFor();
    assert.ok(!('other' in servers()));
    // `"name": {...}` members as Claude's docs show them, without the braces around.
    await page.getByTestId('paste-config').fill(`"pasted": {"command": ${JSON.stringify(DEMO)}, "args": ["--legacy-only"]}`);
    await dialog().getByRole('button', { name: 'Add servers' }).click();
    await phaseIs('pasted', 'connected');
    assert.deepEqual(servers().pasted, { command: DEMO, args: ['--legacy-only'] });
    assert.deepEqual(pageErrors, []);
  });
});
