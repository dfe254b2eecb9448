// The client side of MCP's HTTP transports, as jsonrpc::Channels on the caller's io_context:
//
// - Streamable HTTP (2025-03-26 .. 2025-11-25 and 2026-07-28): every message is its own POST with
//   `Accept: application/json, text/event-stream`; replies arrive as a JSON body or an SSE stream (notifications
//   first, then the response). Legacy era: `Mcp-Session-Id` from the initialize response, `MCP-Protocol-Version` from
//   its result, the optional GET stream for server-initiated messages, DELETE on close, a 404 on a live session
//   re-initialises once and retries, a broken SSE reply resumes with `Last-Event-ID` after the server's `retry:`.
//   Modern era (a request carrying `_meta` io.modelcontextprotocol/protocolVersion): no session, `Mcp-Method` /
//   `Mcp-Name` headers, cancellation by closing the reply stream.
//   An HTTP error on a request becomes a JSON-RPC error response for that request: the server's JSON-RPC error body
//   when there is one (so a modern server's UnsupportedProtocolVersion reaches the session), otherwise a description
//   of the status. This is how era detection works over HTTP: a legacy server refuses the modern probe with 400 and a
//   body that is not a modern error, and the session falls back to initialize.
// - HTTP+SSE (2024-11-05): GET the event stream, wait for the `endpoint` event, POST each message there.
//
// Plumbing shared by both: TLS with the system trust store plus an optional extra CA file and host-name verification,
// connect and read timeouts, a small keep-alive pool (concurrent requests use several connections), bounded bodies
// and events (the message size limit), at most `max_redirects` redirects and never from https to http, configured
// headers on every request and never in logs or error messages in full.
//
// Thread-safety: single owner; everything runs on the executor given at creation.
#pragma once

#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/jsonrpc/framing.hpp>
#include <switchboard/http/authorizer.hpp>
#include <switchboard/http/secrets.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace switchboard::transport {

struct HttpClientOptions {
    std::string server_name;                     ///< for error messages and logs
    std::map<std::string, std::string> headers;  ///< sent on every request
    std::size_t max_message_size = jsonrpc::default_max_message_size;
    std::chrono::milliseconds connect_timeout{10'000};  ///< resolve + connect + TLS handshake
    std::chrono::milliseconds read_timeout{0};          ///< idle time between received bytes; 0: none
    std::string ca_file;                                ///< extra trusted CA (PEM); the system store is always used
    int max_redirects = 5;
    std::shared_ptr<http::Authorizer> authorizer;  ///< OAuth: see http::ClientOptions::authorizer
};

std::shared_ptr<jsonrpc::Channel> make_streamable_http_channel(boost::asio::any_io_executor ex, std::string url,
                                                               HttpClientOptions options);

/// Legacy HTTP+SSE: connects the GET stream and waits for the `endpoint` event (within the connect timeout).
boost::asio::awaitable<jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>> connect_sse_channel(
    boost::asio::any_io_executor ex, std::string url, HttpClientOptions options);

enum class RemoteKind { streamable_http, sse, websocket };

/// The one rule for a remote server's transport when the config names none (the host's config uses it too):
/// ws:// and wss:// are WebSocket; a path ending in /sse is HTTP+SSE; anything else is Streamable HTTP. The path is
/// compared without its query or fragment, ignoring ASCII case and trailing slashes, so "https://h/sse/" is HTTP+SSE:
/// servers that publish /sse answer /sse/ the same way, and a slash typed by hand should not change the transport.
RemoteKind infer_remote_kind(std::string_view url);

using http::is_secret_header;
using http::redact_header_value;

}  // namespace switchboard::transport
