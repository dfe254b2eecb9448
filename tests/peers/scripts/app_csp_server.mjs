// An MCP App server for the web UI's CSP test (tests/browser/web_ui_apps.test.mjs), on the TS SDK v1: the tool
// `allowed_probe` has a view that fetches argv[2] on load; the resource *listing* declares argv[2]'s origin in
// _meta.ui.csp.connectDomains and the read contents carry no _meta, so the host must take the listing's (the
// contents' would win). The view reports <body data-probe="allowed|blocked">.
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
  { mimeType, _meta: { ui: { csp: { connectDomains: [new URL(target).origin] } } } },
  async () => ({ contents: [{ uri, mimeType, text: html }] }),
);
server.registerTool(
  'allowed_probe',
  { description: 'Shows a view that fetches a declared origin', _meta: { ui: { resourceUri: uri } } },
  async () => ({ content: [{ type: 'text', text: `the view fetches ${target}` }] }),
);
await server.connect(new StdioServerTransport());
