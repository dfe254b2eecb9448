// An MCP App server for the web UI's CSP test (tests/browser/web_ui_apps.test.mjs), on the TS SDK v1: the tool
// `allowed_probe` has a view that fetches argv[2] on load; the resource *listing* declares argv[2]'s origin in
// _meta.ui.csp.connectDomains and the read contents carry no _meta, so the host must take the listing's (the
// contents' would win); it also declares the clipboardWrite permission. The view reports <body data-probe="allowed|blocked">. `model_only` is a tool apps may not call.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const target = process.argv[2];
const uri = 'ui://csp-test/allowed.html';
const mimeType = 'text/html;profile=mcp-app';
const html = `<!doctype html><html><body><p id="result">pending</p><script>
fetch(${JSON.stringify(target)}, { mode: 'no-cors' })
  .then(() => 'allowed', () => 'blocked')
  .then((v) => { document.body.dataset.probe = v; document.getElementById('result').textContent = v; });
</script></body></html>`;

const server = new McpServer({ name: 'app-csp-test', version: '1.0.0' });
server.registerResource(
  'allowed-probe-view',
  uri,
  { mimeType, _meta: { ui: { csp: { connectDomains: [new URL(target).origin] }, permissions: { clipboardWrite: {} } } } },
  async () => ({ contents: [{ uri, mimeType, text: html }] }),
);
server.registerTool(
  'allowed_probe',
  { description: 'Shows a view that fetches a declared origin', _meta: { ui: { resourceUri: uri } } },
  async () => ({ content: [{ type: 'text', text: `the view fetches ${target}` }] }),
);
// A tool for the model only (_meta.ui.visibility ["model"]): a view of this server must not be able to call it.
let modelOnlyCalls = 0;
server.registerTool(
  'model_only',
  { description: 'For the model, not for apps; says how often it was called', _meta: { ui: { visibility: ['model'] } } },
  async () => ({ content: [{ type: 'text', text: `model_only calls: ${++modelOnlyCalls}` }] }),
);
await server.connect(new StdioServerTransport());
