// The official TypeScript SDK client (1.x) against `switchboard serve` whose one upstream (the demo server with
// --changing-tools, over HTTP) changes echo's description mid-session: what the client is offered, whether its call is
// refused, and what it is offered after a person approves the change (APPROVE... is run for that). One JSON line for
// the C++ test (tests/integration/gateway_test.cpp).
//   node sdk_pins_client.mjs URL APPROVE_COMMAND [ARGS...]
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, ...approve] = process.argv.slice(2);
const client = new Client({ name: 'sdk-pins-client', version: '1.0.0' }, { capabilities: {} });
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanged++;
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const echo = async () => (await client.listTools()).tools.find((t) => t.name === 'echo')?.description ?? null;
const until = async (what, check) => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};
const text = (r) => (r.content ?? []).map((c) => c.text ?? '').join('');

const out = { before: await echo() };
await client.callTool({ name: 'change_tools', arguments: { step: 'description' } });
out.heldNotified = await until('list_changed', () => listChanged > 0);
out.held = await echo();
const refused = await client.callTool({ name: 'echo', arguments: { message: 'hi' } }).catch((e) => ({ error: e.message }));
out.call = refused.error ?? text(refused);
const seen = listChanged;
execFileSync(approve[0], approve.slice(1), { stdio: 'inherit' });
out.approvedNotified = await until('list_changed', () => listChanged > seen);
out.after = await echo();
out.callAfter = text(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }));
console.log(JSON.stringify(out));
await client.close();
