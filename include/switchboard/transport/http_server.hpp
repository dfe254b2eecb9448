// The server side of MCP's Streamable HTTP transport, both eras on one endpoint:
// - legacy (2025-03-26 … 2025-11-25): `initialize` creates a session (Mcp-Session-Id); POSTed requests are
//   answered as application/json, or as an SSE stream (with event ids, resumable through GET + Last-Event-ID) when
//   notifications come before the result; GET opens the session's server-initiated stream; DELETE ends it.
// - modern (2026-07-28): stateless; every POST is checked against its Mcp-Method / Mcp-Name / MCP-Protocol-Version
//   headers and answered on its own: by the RequestAnswerer when one is given (mcp::Server::answer fits), else by a
//   session of its own; closing the response stream cancels the request.
// Each session runs on a channel handed to a SessionHandler (mcp::Server::serve fits), so this layer knows HTTP and
// the transport rules, not the MCP methods.
//
// Thread-safety: single owner; everything runs on the executor given at construction (one io_context, coroutines,
// no thread per connection).
#pragma once

#include <switchboard/http/server.hpp>
#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/framing.hpp>
#include <switchboard/transport/param_headers.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::transport {

/// Runs one MCP session on `channel` until the channel ends (e.g. mcp::Server::serve).
using SessionHandler = std::function<boost::asio::awaitable<void>(std::shared_ptr<jsonrpc::Channel> channel)>;
/// Answers one stateless 2026-07-28 request without a session (mcp::Server::answer fits): `send` writes a message on
/// the request's stream (a notification); the answer's text is returned ("" for none: the request was cancelled).
/// The awaiting coroutine is cancelled when the client closes the stream.
using RequestAnswerer =
    std::function<boost::asio::awaitable<std::string>(jsonrpc::Message request, std::function<void(std::string)> send)>;

struct HttpServerOptions {
    std::string address = "127.0.0.1";  ///< loopback unless told otherwise
    std::uint16_t port = 0;             ///< 0: any free port (read it back with port())
    std::string path = "/mcp";
    std::size_t max_message_size = jsonrpc::default_max_message_size;  ///< larger bodies get 413
    /// Origins accepted besides loopback ones (http[s]://localhost|127.0.0.1|[::1][:port]); "*" accepts any.
    /// A request without Origin is accepted (not a browser).
    std::vector<std::string> allowed_origins;
    /// Host header names accepted (port ignored), against DNS rebinding; empty: any. loopback_hosts() for a
    /// loopback server. Others get 403.
    std::vector<std::string> allowed_hosts;
    /// When set, every request needs `Authorization: Bearer <token>`; 401 with WWW-Authenticate: Bearer otherwise.
    std::string bearer_token;
    /// OAuth resource server: checks every request's bearer token (see http::ServerOptions::token_verifier).
    std::shared_ptr<http::TokenVerifier> token_verifier;
    /// Answer CORS preflights from allowed origins, and let their pages read the responses (Mcp-Session-Id included).
    bool cors = false;
    bool legacy = true;  ///< sessions and `initialize`
    bool modern = true;  ///< stateless 2026-07-28 requests
    /// When set, a 2026-07-28 request is answered by this instead of a session of its own on a channel (the session
    /// handler still serves subscriptions/listen, which stays open): no channel and no jsonrpc::Connection per
    /// request, and its task starts at once instead of being posted (core::TaskGroup::start).
    RequestAnswerer answer;
    /// MCP-Protocol-Version values accepted, per era (fill from mcp/version.hpp).
    std::vector<std::string> legacy_versions;
    std::vector<std::string> modern_versions;
    std::size_t max_connections = 512;
    std::size_t max_connections_per_address = 64;  ///< from one client address at once (http::ServerOptions)
    std::chrono::seconds header_timeout{10};       ///< a request head must be complete within this (slow clients)
    std::chrono::seconds idle_timeout{60};         ///< a kept-alive connection with nothing to say is closed
    std::size_t max_sessions = 1024;
    /// Put before every legacy session id ("a" gives "a.<32 hex digits>"), so that a load balancer in front of
    /// several servers can send a session's requests to the one that created it (`switchboard serve --instance-id`).
    std::string session_id_prefix;
    std::size_t max_requests_per_session = 256;          ///< unanswered at once; more get 429
    std::chrono::seconds session_idle_timeout{30 * 60};  ///< a session with no traffic and no open stream ends
    std::chrono::seconds read_timeout{120};              ///< the longest a request (head and body) may take
    std::chrono::seconds write_timeout{60};              ///< a client that stops reading is dropped
    std::chrono::seconds sse_keepalive{15};              ///< comment line on quiet streams
    std::size_t replay_bytes = 4u * 1024 * 1024;         ///< per stream, kept for Last-Event-ID resumption
    /// Served beside `path` on the same listener, with the same Host, Origin and token checks (a route may opt out
    /// of the token: http::RouteOptions). For a host's own endpoints (health, metrics, ...).
    switchboard::http::Router extra_routes;
    /// Every routed request once answered (http::ServerOptions::access_log).
    switchboard::http::AccessLog access_log;
    /// 2026-07-28 tools/call: the `x-mcp-header` annotations of a tool's inputSchema (transport/param_headers.hpp), so
    /// that the request's `Mcp-Param-*` headers are checked against its arguments (-32020 and 400 when one is
    /// missing, malformed or different). Unset, or nullopt for an unknown tool: not checked.
    std::function<std::optional<std::vector<ParamHeader>>(std::string_view tool)> tool_param_headers;
    /// Appended to the request headers a CORS preflight allows (e.g. "*" for a proxy's arbitrary header names).
    std::string cors_extra_allow_headers;
};

/// The Host names of a loopback server: localhost, 127.0.0.1, [::1].
std::vector<std::string> loopback_hosts();
/// Whether `address` (a bind address) is a loopback one: localhost, 127.x.x.x, ::1.
bool is_loopback_address(const std::string& address);

class HttpServer {
public:
    HttpServer(boost::asio::any_io_executor ex, SessionHandler handler, HttpServerOptions options);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    /// Binds and listens on options.address:options.port.
    boost::system::error_code listen();
    /// The bound port (after listen()).
    std::uint16_t port() const;
    /// "http://ADDRESS:PORT/PATH"
    std::string url() const;
    /// Accepts connections until stop(). listen() first.
    boost::asio::awaitable<void> run();
    /// Stops accepting, drops every connection and ends every session.
    void stop();
    /// Stops accepting new connections; open connections and sessions go on.
    void stop_accepting();
    std::size_t session_count() const;

    struct Impl;

private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace switchboard::transport
