// The official TypeScript SDK v2 client (@modelcontextprotocol/client) as an MCP Apps host would use it, against
// `switchboard serve` (tests/integration/gateway_apps_test.cpp): declares io.modelcontextprotocol/ui, lists the tools
// and their _meta.ui, reads every ui:// view a tool names, and calls the tools given. Prints one JSON line.
//
//   node sdk_apps_client.mjs URL legacy|modern [TOOL=JSON_ARGS ...]
// With SDK_APPS_NO_UI=1 it is a host without MCP Apps: it declares no extension, and a refused call is recorded as
// {error: message}.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, era = 'legacy', ...calls] = process.argv.slice(2);
const versionNegotiation = era === 'modern' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' };
const capabilities = process.env.SDK_APPS_NO_UI === '1'
  ? {}
  : { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const client = new Client({ name: 'sdk-apps-client', version: '1.0.0' }, { versionNegotiation, capabilities });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const out = { extensions: client.getServerCapabilities()?.extensions ?? null, tools: {}, resources: [], views: {}, calls: {} };
for (let cursor; ;) {
  const page = await client.listTools(cursor ? { cursor } : undefined);
  for (const t of page.tools) out.tools[t.name] = t._meta ?? null;
  if (!(cursor = page.nextCursor)) break;
}
for (let cursor; ;) {
  const page = await client.listResources(cursor ? { cursor } : undefined);
  for (const r of page.resources) if (r.uri.startsWith('ui://')) out.resources.push(r.uri);
  if (!(cursor = page.nextCursor)) break;
}
const uris = new Set(Object.values(out.tools).map((m) => m?.ui?.resourceUri).filter(Boolean));
for (const uri of uris) {
  const read = await client.readResource({ uri });
  const item = read.contents[0];
  out.views[uri] = {
    uri: item.uri,
    mimeType: item.mimeType,
    server: /<meta name="mcp-server" content="([^"]*)"/.exec(item.text ?? '')?.[1] ?? null,
    html: /<html/i.test(item.text ?? ''),
    meta: item._meta ?? null,
  };
}
for (const call of calls) {
  const eq = call.indexOf('=');
  const name = call.slice(0, eq);
  try {
    const r = await client.callTool({ name, arguments: JSON.parse(call.slice(eq + 1)) });
    out.calls[name] = { text: (r.content ?? []).map((c) => c.text ?? '').join(''), structured: r.structuredContent ?? null };
  } catch (e) {
    out.calls[name] = { error: String(e?.message ?? e) };
  }
}
console.log(JSON.stringify(out));
await client.close();
