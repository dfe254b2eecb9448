// The official TypeScript SDK client (1.x) against `switchboard serve` whose one upstream (the demo server with
// --changing-tools, over HTTP) changes mid-session, in three steps: echo's description, then echo's schema, then a new
// tool (newcomer). For each: what the client is offered, whether its call is refused, and what it is offered after a
// person approves the change (APPROVE... is run for that: it approves everything the server holds). One JSON line
// for the C++ test (tests/integration/gateway_test.cpp).
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

const tool = async (name) => (await client.listTools()).tools.find((t) => t.name === name) ?? null;
const until = async (what, check) => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};
const text = (r) => (r.content ?? []).map((c) => c.text ?? '').join('');

// What the client sees of the tool each step is about: its description, its arguments, or whether it is there.
const steps = [
  { step: 'description', name: 'echo', seen: (t) => t?.description ?? null },
  { step: 'schema', name: 'echo', seen: (t) => (t ? Object.keys(t.inputSchema?.properties ?? {}).sort().join(',') : null) },
  // A new tool held changes nothing the client is offered: no list_changed to wait for (its refusal shows it held).
  { step: 'add', name: 'newcomer', seen: (t) => t?.description ?? null, quiet: true },
];
const out = { steps: [] };
for (const { step, name, seen, quiet } of steps) {
  const r = { step, before: seen(await tool(name)) };
  let notified = listChanged;
  await client.callTool({ name: 'change_tools', arguments: { step } });
  r.heldNotified = quiet ? null : await until('list_changed', () => listChanged > notified);
  r.held = seen(await tool(name));
  // A quiet step has nothing to wait for: until the gateway has listed the server again, the tool is simply unknown
  // to it (asked again, at most 5 s; a slow run under a sanitizer takes a moment).
  const call = () => client.callTool({ name, arguments: { message: 'hi' } }).catch((e) => ({ error: e.message }));
  let refused = await call();
  for (let i = 0; quiet && i < 100 && refused.error?.includes(`no tool "${name}"`); i++) {
    await new Promise((r) => setTimeout(r, 50));
    refused = await call();
  }
  r.call = refused.error ?? text(refused);
  notified = listChanged;
  execFileSync(approve[0], approve.slice(1), { stdio: 'inherit' });
  r.approvedNotified = await until('list_changed', () => listChanged > notified);
  r.after = seen(await tool(name));
  r.callAfter = text(await client.callTool({ name, arguments: { message: 'hi' } }));
  out.steps.push(r);
}
console.log(JSON.stringify(out));
await client.close();
