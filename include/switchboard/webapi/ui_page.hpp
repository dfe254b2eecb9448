// GET /: the web UI, one HTML page with its script and styles inlined, built from web/ by scripts/setup and embedded
// in the binary gzip-compressed (so `switchboard serve` needs no files beside it). Browsers get the gzip bytes as they
// are; a client that does not accept gzip gets them inflated. Served without the token (the page asks for it), behind
// the same Host and Origin checks as everything else, with a Content-Security-Policy that allows no other origin.
//
// Thread-safety: the page is built once, on first use, on the server's executor.
#pragma once

#include <switchboard/http/server.hpp>

#include <string>
#include <string_view>

namespace switchboard::webapi {

/// The routes of "/" and of "/sandbox" (the MCP Apps sandbox proxy, app_sandbox.cpp).
http::Router ui_routes();
/// GET /sandbox: the page the web UI frames MCP Apps in (docs/web-ui.md, "MCP Apps").
void add_sandbox_route(http::Router& r);
/// Where the page served for `host` (a Host header value) frames apps from: the other loopback name on the same port
/// ("127.0.0.1:8080" -> "http://localhost:8080" and the reverse); empty for any other host (apps are not shown).
std::string sandbox_origin(std::string_view host);

/// The embedded page as stored (gzip when ui_page_gzipped()), and whether the real UI was built into this binary (a
/// build without web/dist embeds a page saying how to build it).
std::string_view ui_page_bytes();
bool ui_page_gzipped();
bool ui_built();

}  // namespace switchboard::webapi
