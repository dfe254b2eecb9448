// GET /sandbox: the MCP Apps sandbox proxy (io.modelcontextprotocol/ui, spec 2026-01-26, "Sandbox proxy"). The web UI
// loads it in an iframe from the other loopback host name (the UI on 127.0.0.1 frames localhost, and the reverse), so
// the proxy is on a different origin from the UI; it is also served with a CSP `sandbox` without allow-same-origin,
// so its origin is opaque: an app inside can read neither the UI's storage (the token) nor call /api from an origin
// the API accepts (its Origin is "null", which post_body refuses). The proxy puts the app's HTML into an inner srcdoc
// frame with a CSP built only from the domains the resource declares, and relays JSON-RPC messages both ways.
#include <switchboard/webapi/ui_page.hpp>

namespace switchboard::webapi {

namespace bhttp = http::bhttp;
using boost::asio::awaitable;

std::string sandbox_origin(std::string_view host);

namespace {

// The proxy's script. A declared domain is kept only if it is a plain origin or host pattern (no quotes, spaces,
// commas or semicolons that could add a directive); everything undeclared stays 'none'.
constexpr std::string_view sandbox_page = R"HTML(<!doctype html>
<html><head><meta charset="utf-8"><title>MCP App sandbox</title>
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}
iframe{border:0;width:100%;height:100%;display:block}</style></head><body>
<script>
(() => {
  const up = window.parent;
  let inner = null;
  const valid = (d) => typeof d === "string" && /^(https?|wss?):\/\/(\*\.)?[a-z0-9.-]+(:(\d+|\*))?(\/[^\s;,'"]*)?$/i.test(d);
  const list = (ds) => (Array.isArray(ds) ? ds.filter(valid) : []);
  function policy(csp) {
    csp = csp || {};
    const res = list(csp.resourceDomains).join(" ");
    const connect = list(csp.connectDomains), frames = list(csp.frameDomains), base = list(csp.baseUriDomains);
    return [
      "default-src 'none'",
      `script-src 'self' 'unsafe-inline' blob: ${res}`,
      `style-src 'self' 'unsafe-inline' ${res}`,
      `img-src 'self' data: blob: ${res}`,
      `font-src 'self' data: ${res}`,
      `media-src 'self' data: blob: ${res}`,
      `connect-src ${connect.length ? connect.join(" ") : "'none'"}`,
      `frame-src ${frames.length ? frames.join(" ") : "'none'"}`,
      `base-uri ${base.length ? base.join(" ") : "'none'"}`,
      "object-src 'none'",
      "form-action 'none'",
      "worker-src 'self' blob:",
    ].map((d) => d.trim()).join("; ");
  }
  function withPolicy(html, csp) {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp).replace(/"/g, "&quot;")}">`;
    const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
    return doctype ? doctype[0] + meta + html.slice(doctype[0].length) : meta + html;
  }
  const allowOf = (p) => ["camera", "microphone", "geolocation", "clipboardWrite"]
    .filter((k) => p && p[k]).map((k) => (k === "clipboardWrite" ? "clipboard-write" : k)).join("; ");
  window.addEventListener("message", (e) => {
    const m = e.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (e.source === up) {
      if (m.method === "ui/notifications/sandbox-resource-ready") {
        const p = m.params || {};
        if (inner) inner.remove();
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", typeof p.sandbox === "string" ? p.sandbox : "allow-scripts allow-same-origin allow-forms");
        const allow = allowOf(p.permissions);
        if (allow) inner.setAttribute("allow", allow);
        inner.srcdoc = withPolicy(String(p.html || ""), p.csp);
        document.body.appendChild(inner);
      } else if (inner && inner.contentWindow) {
        inner.contentWindow.postMessage(m, "*");
      }
    } else if (inner && e.source === inner.contentWindow) {
      up.postMessage(m, "*");
    }
  });
  up.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
})();
</script></body></html>
)HTML";

awaitable<void> sandbox(http::ServerRequest& req, http::Responder& res) {
    // Only the UI on the other loopback name may frame it.
    const auto ui = sandbox_origin(http::header_value(req, "Host"));
    http::Reply r;
    r.content_type = "text/html; charset=utf-8";
    r.body = std::string(sandbox_page);
    // Opaque origin (no allow-same-origin); no fetch directives here: the inner frame inherits this policy, and its
    // own (from the resource's declared domains) is the one that limits it.
    r.headers.emplace_back("Content-Security-Policy",
                           "sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals; "
                           "frame-ancestors " + (ui.empty() ? std::string("'none'") : ui));
    r.headers.emplace_back("Cache-Control", "no-cache");
    r.headers.emplace_back("X-Content-Type-Options", "nosniff");
    r.headers.emplace_back("Referrer-Policy", "no-referrer");
    co_await res.send(std::move(r));
}

}  // namespace

std::string sandbox_origin(std::string_view host) {
    // Host is "name:port" (request_gate has checked the name is an allowed one).
    const auto colon = host.rfind(':');
    const auto name = host.substr(0, colon);
    const auto port = colon == std::string_view::npos ? std::string_view() : host.substr(colon);
    if (name == "127.0.0.1") return "http://localhost" + std::string(port);
    if (name == "localhost") return "http://127.0.0.1" + std::string(port);
    return {};
}

void add_sandbox_route(http::Router& r) {
    http::RouteOptions open;
    open.requires_token = false;  // it holds nothing: the UI sends it the app's HTML
    r.add(bhttp::verb::get, "/sandbox", sandbox, open);
}

}  // namespace switchboard::webapi
