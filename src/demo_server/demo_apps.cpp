// `--apps`: two MCP Apps (io.modelcontextprotocol/ui, spec 2026-01-26): `counter`, whose view shows the demo counter,
// bumps it through the app-only tool `counter_bump` and sends the value as a ui/message; and `csp_probe`, whose view
// declares no domains and fetches the URL it is given, reporting whether the host's CSP let it through.
// The views speak the app side of the protocol by hand (a page served by this server, not host code): ui/initialize,
// then ui/notifications/initialized, then tool-input / tool-result notifications and the requests below.
#include "demo_server.hpp"

#include <fmt/format.h>

namespace switchboard::demo {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Outcome;

namespace {

constexpr std::string_view app_mime = "text/html;profile=mcp-app";
constexpr std::string_view counter_uri = "ui://demo/counter.html";
constexpr std::string_view probe_uri = "ui://demo/csp-probe.html";

// The app side of the postMessage JSON-RPC: request() answers through a promise, notifications go to on(method).
constexpr std::string_view bridge_script = R"JS(
const handlers = {}, pending = new Map(); let nextId = 1;
function send(m) { window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, m), "*"); }
function request(method, params) {
  const id = nextId++; send({ id, method, params });
  return new Promise((ok, fail) => pending.set(id, { ok, fail }));
}
function notify(method, params) { send({ method, params }); }
function on(method, f) { handlers[method] = f; }
window.addEventListener("message", (e) => {
  if (e.source !== window.parent) return;
  const m = e.data; if (!m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined) {
    const p = pending.get(m.id); if (!p) return; pending.delete(m.id);
    if (m.error) p.fail(new Error(m.error.message)); else p.ok(m.result);
  } else if (m.id !== undefined) {
    if (m.method === "ui/resource-teardown" || m.method === "ping") send({ id: m.id, result: {} });
    else send({ id: m.id, error: { code: -32601, message: "method not found: " + m.method } });
  } else if (handlers[m.method]) handlers[m.method](m.params || {});
});
function textOf(result) {
  return ((result && result.content) || []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
}
function reportSize() {
  notify("ui/notifications/size-changed",
         { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight });
}
async function start(name) {
  const init = await request("ui/initialize", { protocolVersion: "2026-01-26",
    appInfo: { name, version: "1.0.0" }, appCapabilities: {} });
  const theme = init && init.hostContext && init.hostContext.theme;
  if (theme) document.documentElement.dataset.theme = theme;
  notify("ui/notifications/initialized", {});
  reportSize();
}
)JS";

constexpr std::string_view counter_body = R"HTML(<main>
<h1>Demo counter</h1>
<p>Value: <output id="value">?</output></p>
<button id="bump">Bump</button> <button id="send">Send to chat</button>
<p id="status"></p>
</main>
<script>
const value = document.getElementById("value"), status = document.getElementById("status");
function show(result) {
  const n = result && result.structuredContent && result.structuredContent.count;
  value.textContent = n !== undefined ? String(n) : textOf(result);
  document.body.dataset.count = value.textContent;
}
on("ui/notifications/tool-result", show);
on("ui/notifications/tool-input", (p) => { status.textContent = "input: " + JSON.stringify(p.arguments || {}); });
document.getElementById("bump").onclick = async () => {
  try { show(await request("tools/call", { name: "counter_bump", arguments: { by: 1 } })); }
  catch (e) { status.textContent = "error: " + e.message; }
};
document.getElementById("send").onclick = async () => {
  const text = "The counter is " + value.textContent;
  await request("ui/message", { role: "user", content: [{ type: "text", text }] });
  status.textContent = "sent";
};
start("demo-counter");
</script>)HTML";

constexpr std::string_view probe_body = R"HTML(<main>
<h1>CSP probe</h1>
<p>Fetching <code id="url">(waiting for the tool input)</code>: <output id="result">pending</output></p>
</main>
<script>
async function probe(url) {
  document.getElementById("url").textContent = url;
  let outcome;
  try { const r = await fetch(url, { mode: "no-cors" }); outcome = "allowed (" + r.type + ")"; }
  catch (e) { outcome = "blocked (" + e.message + ")"; }
  const verdict = outcome.startsWith("allowed") ? "allowed" : "blocked";
  document.getElementById("result").textContent = outcome;
  document.body.dataset.probe = verdict;
  reportSize();
  await request("ui/message", { role: "user", content: [{ type: "text", text: "csp_probe " + verdict + ": " + url }] });
}
on("ui/notifications/tool-input", (p) => probe((p.arguments && p.arguments.url) || "https://example.com/"));
start("demo-csp-probe");
</script>)HTML";

std::string page(std::string_view server, std::string_view title, std::string_view body) {
    return fmt::format("<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta name=\"mcp-server\" "
                       "content=\"{}\"><title>{}</title>\n"
                       "<style>body{{font:14px system-ui,sans-serif;margin:12px}}"
                       "[data-theme=dark] body{{background:#222;color:#eee}}</style>\n"
                       "<script>{}</script></head>\n<body>{}</body></html>\n",
                       server, title, bridge_script, body);
}

json::object ui_meta(std::string_view uri, std::initializer_list<std::string_view> visibility) {
    json::array v;
    for (auto s : visibility) v.emplace_back(s);
    // The flat "ui/resourceUri" key too: hosts written against the first drafts of the spec read only that.
    return json::object{{"ui", json::object{{"resourceUri", uri}, {"visibility", std::move(v)}}},
                        {"ui/resourceUri", uri}};
}

json::object app_tool(std::string_view name, std::string_view title, std::string_view description,
                      json::object properties, json::object meta) {
    return json::object{{"name", name},
                        {"title", title},
                        {"description", description},
                        {"inputSchema", json::object{{"type", "object"}, {"properties", std::move(properties)}}},
                        {"_meta", std::move(meta)}};
}

json::object counter_result(std::int64_t count) {
    auto r = text_result(fmt::format("counter = {}", count));
    r["structuredContent"] = json::object{{"count", count}};
    return r;
}

void add_view(mcp::StaticHandler& server, std::string_view uri, std::string_view name, std::string_view description,
              std::string html) {
    // The contents item's _meta.ui is what a host must apply (it wins over the listing's): no domains declared, so
    // the view may load and connect to nothing outside itself.
    server.add_resource(
        json::object{{"uri", uri}, {"name", name}, {"description", description}, {"mimeType", app_mime}},
        [html = std::move(html)](const std::string& uri, const mcp::StaticHandler::Args&,
                                 mcp::RequestContext) -> awaitable<Outcome<json::object>> {
            json::object item{{"uri", uri}, {"mimeType", app_mime}, {"text", html}};
            item["_meta"] = json::object{{"ui", json::object{{"csp", json::object{}}, {"prefersBorder", true}}}};
            json::array list;
            list.push_back(std::move(item));
            co_return json::object{{"contents", std::move(list)}};
        });
}

}  // namespace

void add_app_tools(mcp::StaticHandler& server, DemoState& state) {
    server.add_tool(app_tool("counter", "Counter app",
                             "Shows the demo counter in an MCP App (ui://demo/counter.html): its Bump button calls the "
                             "app-only tool counter_bump, 'Send to chat' sends the value as a ui/message.",
                             json::object{}, ui_meta(counter_uri, {"model", "app"})),
                    [&state](json::object, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                        co_return counter_result(state.counter);
                    });
    server.add_tool(
        app_tool("counter_bump", "Bump the counter app", "Adds `by` (default 1) to the counter. Only for the app.",
                 json::object{{"by", json::object{{"type", "integer"}, {"description", "How much to add"}}}},
                 ui_meta(counter_uri, {"app"})),
        [&server, &state](json::object args, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
            const auto* by = args.if_contains("by");
            state.counter += by && by->is_int64() ? by->get_int64() : 1;
            server.notify_resource_updated("demo://counter");
            co_return counter_result(state.counter);
        });
    server.add_tool(
        app_tool("csp_probe", "CSP probe app",
                 "An MCP App (ui://demo/csp-probe.html) that declares no CSP domains and, on "
                 "ui/notifications/tool-input, "
                 "fetches `url` (mode no-cors). It reports the outcome as <body data-probe=\"blocked|allowed\">, in "
                 "#result, and as a ui/message 'csp_probe blocked: URL' or 'csp_probe allowed: URL'.",
                 json::object{{"url", json::object{{"type", "string"}, {"description", "The URL the view fetches"}}}},
                 ui_meta(probe_uri, {"model", "app"})),
        [](json::object args, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
            const auto* url = args.if_contains("url");
            co_return text_result(fmt::format("the view fetches {}",
                                              url && url->is_string() ? std::string(url->get_string())
                                                                      : std::string("https://example.com/")));
        });
    add_view(server, counter_uri, "counter-app", "The counter app's view",
             page(state.name, "Demo counter", counter_body));
    add_view(server, probe_uri, "csp-probe-app", "The CSP probe's view", page(state.name, "CSP probe", probe_body));
}

}  // namespace switchboard::demo
