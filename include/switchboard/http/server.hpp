// A generic HTTP/1.1 server: one route table (method + path -> handler), one exception boundary, and the checks every
// route shares, all in one place:
//
//   request -> limits (413 body, 431 header, 400 malformed) -> route lookup (404 unknown path)
//           -> Host check (403, when allowed_hosts is set: DNS rebinding) -> Origin check (403 unless loopback or
//           listed) -> CORS preflight (if enabled) -> bearer token (401, when set and the route requires it)
//           -> method (405 + Allow)
//           -> handler, inside the boundary: an HttpError, any other exception, or a handler that answered nothing
//              becomes a JSON error response here and nowhere else.
//
// Error bodies come from ServerOptions::error_body, so a JSON-RPC server can word them its way; the default is
// {"error":{"status":404,"message":"..."}}. A handler answers with Responder::send, or streams a chunked body.
// ServerOptions::access_log sees every answered request once it is done (method, path, status, time, bytes).
//
// Thread-safety: single owner; everything runs on the executor given at construction (one io_context, coroutines,
// no thread per connection).
#pragma once

#include <switchboard/http/fields.hpp>
#include <switchboard/http/router.hpp>
#include <switchboard/http/token_verifier.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchboard::http {

/// A complete response.
struct Reply {
    bhttp::status status = bhttp::status::ok;
    std::string body;
    /// Sent only with a body; empty: application/json (a default of that text would allocate for every reply: it is
    /// one byte too long to be held in the string itself).
    std::string content_type;
    Fields headers;
    bool close = false;  ///< close the connection after it
};

/// Thrown by a handler to answer with an error status; the server words the body (ServerOptions::error_body).
class HttpError : public std::runtime_error {
public:
    HttpError(bhttp::status status, const std::string& message) : std::runtime_error(message), status_(status) {}
    HttpError(bhttp::status status, const std::string& message, Fields headers)
        : std::runtime_error(message), status_(status), headers_(std::move(headers)) {}
    bhttp::status status() const { return status_; }
    const Fields& headers() const { return headers_; }

private:
    bhttp::status status_;
    Fields headers_;
};

/// Formats an error body from a status and a message.
using ErrorBody = std::function<std::string(bhttp::status status, const std::string& message)>;

/// One accepted connection: the socket and the bytes read ahead of the next request. The socket is non-blocking
/// (a write is tried at once, and awaited only when the kernel's buffer is full); while a read or write of the
/// server's own is pending, `deadline` says when the server's sweep closes the connection (its time limits).
struct ServerConnection {
    explicit ServerConnection(boost::asio::ip::tcp::socket s);
    boost::asio::ip::tcp::socket socket;
    boost::beast::flat_buffer buffer;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

/// The answer to one request on one connection. A handler either send()s one Reply, or begin_stream()s a chunked
/// response and write_chunk()s until end_stream(). Every call returns false once the client is gone.
class Responder {
public:
    Responder(std::shared_ptr<ServerConnection> conn, unsigned version, bool keep_alive,
              std::chrono::seconds write_timeout, const ErrorBody& error_body);

    boost::asio::awaitable<bool> send(Reply reply);
    /// A header every response of this Responder carries (CORS headers for an allowed origin).
    void add_header(std::string name, std::string value) { extra_.emplace_back(std::move(name), std::move(value)); }
    /// An error reply with the server's error body.
    boost::asio::awaitable<bool> send_error(bhttp::status status, const std::string& message, Fields headers);
    /// A 200 response header with chunked transfer encoding.
    boost::asio::awaitable<bool> begin_stream(std::string content_type, Fields headers);
    /// The same with another status (a proxied answer).
    boost::asio::awaitable<bool> begin_stream(bhttp::status status, std::string content_type, Fields headers);
    /// One chunk made of three pieces (saves a copy: "data: ", payload, "\n\n").
    boost::asio::awaitable<bool> write_chunk(std::string_view a, std::string_view b, std::string_view c);
    boost::asio::awaitable<bool> end_stream();

    /// True once a response (or a stream header) was written.
    bool started() const { return started_; }
    /// The status sent (0 before anything was sent).
    unsigned status() const { return status_; }
    /// Bytes written to the connection for this response (header, body, chunk framing).
    std::size_t bytes_sent() const { return bytes_sent_; }
    /// A header of the response as sent (the handler's own headers), empty when absent.
    std::string_view sent_header(std::string_view name) const;
    /// Whether the connection can carry the next request.
    bool reusable() const { return ok_ && keep_alive_; }
    void set_keep_alive(bool keep) { keep_alive_ = keep_alive_ && keep; }
    unsigned version() const { return version_; }
    std::string error_body(bhttp::status status, const std::string& message) const {
        return error_body_(status, message);
    }

    /// The connection, to watch for a client that goes away during a long response (data it sends meanwhile must
    /// be kept in its buffer for the next request). Shared: a watcher may outlive the handler by a step.
    const std::shared_ptr<ServerConnection>& connection() const { return conn_; }

private:
    std::shared_ptr<ServerConnection> conn_;
    unsigned version_;
    bool keep_alive_;
    std::chrono::seconds write_timeout_;
    const ErrorBody& error_body_;
    bool started_ = false, ok_ = true;
    unsigned status_ = 0;
    std::size_t bytes_sent_ = 0;
    Fields extra_;
    Fields sent_;
};

/// One answered request, for ServerOptions::access_log.
struct AccessEntry {
    const ServerRequest& request;                  ///< headers and body as received (never log Authorization)
    const Responder& response;                     ///< status(), bytes_sent(), sent_header()
    std::string_view path;                         ///< the target without its query
    std::chrono::steady_clock::duration duration;  ///< from the request being read to the response's end
    std::size_t body_bytes = 0;                    ///< the body as received (a handler may move it out of `request`)
};
using AccessLog = std::function<void(const AccessEntry& entry)>;

struct ServerOptions {
    std::string name = "http";                      ///< log prefix
    std::string address = "127.0.0.1";              ///< loopback unless told otherwise
    std::uint16_t port = 0;                         ///< 0: any free port (read it back with port())
    std::size_t max_body_size = 64u * 1024 * 1024;  ///< larger bodies get 413
    std::size_t max_header_size = 64u * 1024;       ///< larger headers get 431
    /// Origins accepted besides loopback ones; "*" accepts any. A request without Origin is accepted.
    std::vector<std::string> allowed_origins;
    /// Answer CORS preflights (OPTIONS + Access-Control-Request-Method) from allowed origins for known paths.
    /// With cors, the responses to an allowed origin also carry Access-Control-Allow-Origin and expose these headers.
    bool cors = false;
    std::string cors_allow_headers = "Content-Type, Authorization";
    std::string cors_expose_headers;
    /// Host header names accepted (port ignored, case-insensitive; "[::1]" for IPv6); empty: any. A loopback server
    /// lists its loopback names so that a DNS-rebinding page (Host: evil.example) is refused with 403.
    std::vector<std::string> allowed_hosts;
    /// When set, every request but a CORS preflight needs `Authorization: Bearer <token>` (else 401 with
    /// WWW-Authenticate: Bearer).
    std::string bearer_token;
    /// An OAuth resource server: every request to a route that needs the token is checked by it instead (401/403
    /// with its challenge when refused). bearer_token, when also set, is accepted besides (the web UI's token).
    std::shared_ptr<TokenVerifier> token_verifier;
    std::size_t max_connections = 512;
    /// Connections from one client address at once (more are closed at accept): one client cannot take every slot.
    std::size_t max_connections_per_address = 64;
    /// A request head must be complete this long after the connection opened, or after its first byte on a kept-alive
    /// connection (slow-header clients are closed).
    std::chrono::seconds header_timeout{10};
    /// A kept-alive connection that sends nothing for this long is closed.
    std::chrono::seconds idle_timeout{60};
    /// A body must arrive at this many bytes a second at least, counted after header_timeout's grace.
    std::size_t min_body_rate = 1024;
    std::chrono::seconds read_timeout{120};  ///< the longest a request (head and body) may take to arrive
    std::chrono::seconds write_timeout{60};  ///< a client that stops reading is dropped
    /// The body of every error response; default {"error":{"status":N,"message":"..."}}.
    ErrorBody error_body;
    /// Called once per routed request after its response ended (a stream: when it closed). Not for requests
    /// refused before routing (413, 431, 400).
    AccessLog access_log;
};

class Server {
public:
    Server(boost::asio::any_io_executor ex, Router routes, ServerOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Binds and listens on options.address:options.port.
    boost::system::error_code listen();
    /// The bound port (after listen()).
    std::uint16_t port() const;
    /// Accepts connections until stop(). listen() first.
    boost::asio::awaitable<void> run();
    /// Stops accepting and cancels every connection.
    void stop();
    /// Stops accepting new connections; the open ones go on (a graceful stop drains them, then stop()s).
    void stop_accepting();
    std::size_t connection_count() const;

    struct Impl;

private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace switchboard::http
