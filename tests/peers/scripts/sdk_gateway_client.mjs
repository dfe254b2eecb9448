// The official TypeScript SDK client (1.x) against `switchboard serve`, over Streamable HTTP or stdio. Prints one
// JSON line with what it saw; the C++ test (tests/integration/gateway_test.cpp) checks it.
//   node sdk_gateway_client.mjs http URL SCENARIO [TOKEN]
//   node sdk_gateway_client.mjs stdio SCENARIO COMMAND ARGS...
// Scenarios:
//   basic   list tools, prompts, resources; call a__echo; b__slow with progress; read a resource; get a prompt
//   cancel  start a__slow (10 s), abort it after 0.5 s, then call b__echo
//   crash   call a__exit (the upstream dies mid-call), then b__echo
//   relay   a client with sampling and roots (no elicitation) calls a__ask_model, a__list_roots, a__ask_user: the
//           upstream's requests come to this client through the gateway
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [kind, ...rest] = process.argv.slice(2);
let transport, scenario;
if (kind === 'http') {
  const [url, sc, token] = rest;
  scenario = sc;
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
} else {
  const [sc, command, ...args] = rest;
  scenario = sc;
  transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
}
const capabilities = scenario === 'relay' ? { sampling: {}, roots: { listChanged: false } } : {};
const client = new Client({ name: 'sdk-gateway-client', version: '1.0.0' }, { capabilities });
if (scenario === 'relay') {
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    role: 'assistant',
    content: { type: 'text', text: `the model read: ${req.params.messages[0].content.text}` },
    model: 'gateway-test-model',
  }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///gateway-root', name: 'r' }] }));
}
await client.connect(transport);
const out = { server: client.getServerVersion()?.name ?? null };
const text = (r) => (r.content ?? []).map((c) => c.text ?? '').join('');

if (scenario === 'basic') {
  out.capabilities = client.getServerCapabilities();
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  out.echo = text(await client.callTool({ name: 'a__echo', arguments: { message: 'hello through the gateway' } }));
  let progress = 0;
  const slow = await client.callTool({ name: 'b__slow', arguments: { seconds: 0.4, steps: 4 } }, undefined, {
    onprogress: () => { progress++; },
  });
  out.slow = text(slow);
  out.progress = progress;
  out.prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();
  const prompt = await client.getPrompt({ name: 'b__greet', arguments: { name: 'Ada' } });
  out.prompt = JSON.stringify(prompt.messages);
  out.resources = (await client.listResources()).resources.map((r) => r.uri);
  out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  const read = await client.readResource({ uri: 'demo://greeting/Bob' });
  out.read = read.contents[0].text;
  const completion = await client.complete({
    ref: { type: 'ref/prompt', name: 'a__greet' },
    argument: { name: 'name', value: '' },
  });
  out.completion = completion.completion.values;
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
    out.unknown = 'no error';
  } catch (e) {
    out.unknown = String(e.message);
  }
} else if (scenario === 'cancel') {
  const controller = new AbortController();
  setTimeout(() => controller.abort('test cancels'), 500);
  try {
    await client.callTool({ name: 'a__slow', arguments: { seconds: 10, steps: 10 } }, undefined, {
      signal: controller.signal,
    });
    out.slow = 'finished';
  } catch (e) {
    out.slow = `aborted: ${e.message}`;
  }
  await new Promise((r) => setTimeout(r, 500));
  out.echo = text(await client.callTool({ name: 'b__echo', arguments: { message: 'still here' } }));
} else if (scenario === 'crash') {
  try {
    const r = await client.callTool({ name: 'a__exit', arguments: { code: 3 } });
    out.crash = { isError: r.isError ?? false, text: text(r) };
  } catch (e) {
    out.crash = { error: String(e.message) };
  }
  out.echo = text(await client.callTool({ name: 'b__echo', arguments: { message: 'b still works' } }));
} else if (scenario === 'relay') {
  out.sampling = text(await client.callTool({ name: 'a__ask_model', arguments: { question: 'what is 2+2?' } }));
  out.roots = text(await client.callTool({ name: 'a__list_roots', arguments: {} }));
  const user = await client.callTool({ name: 'a__ask_user', arguments: { message: 'name?' } });
  out.elicitation = { isError: user.isError ?? false, text: text(user) };
}
console.log(JSON.stringify(out));
if (kind === 'http') await transport.terminateSession().catch(() => {});
await client.close();
