// A CORS proxy compatible with the llama.cpp web UI: a page from an allowed origin reaches an MCP server (or any
// http/https URL) that does not answer CORS itself.
//
//   GET|POST /cors-proxy?url=<percent-encoded URL>   forwards the method and body to the URL and streams the answer
//                                                    back (status, body, a few safe headers; never Set-Cookie)
//   DELETE   /cors-proxy                             answered here with 200; nothing is forwarded
//
// Request headers: only `x-llama-server-proxy-header-<name>` ones are forwarded, as `<name>` (plus the request's own
// Content-Type and Accept): the client's Cookie and Authorization never reach the target. Hop-by-hop and framing
// names (Host, Content-Length, Transfer-Encoding, Connection, ...) are not forwarded even with the prefix.
//
// Targets: http and https only, no userinfo. Every address connected to is checked with an AddressPolicy (loopback,
// private, link-local, CGNAT, unspecified, multicast and metadata addresses are refused unless allowed), on each
// redirect hop too (at most 5, followed here): 403 with a text naming the refused address.
//
// The routes go through the server's usual checks (Host, Origin, token, CORS headers for allowed origins).
//
// Thread-safety: the handlers run on the client's executor.
#pragma once

#include <switchboard/http/address_policy.hpp>
#include <switchboard/http/client.hpp>
#include <switchboard/http/server.hpp>

#include <memory>
#include <string>

namespace switchboard::http {

struct CorsProxyOptions {
    std::string path = "/cors-proxy";
    AddressPolicy policy;
    std::chrono::milliseconds connect_timeout{10'000};
    int max_redirects = 5;
};

/// The header prefix the llama.cpp web UI uses for headers meant for the target.
inline constexpr std::string_view proxy_header_prefix = "x-llama-server-proxy-header-";

/// The routes of the proxy; they share one client (its connections are kept alive per origin).
Router cors_proxy_routes(boost::asio::any_io_executor ex, CorsProxyOptions options);

}  // namespace switchboard::http
