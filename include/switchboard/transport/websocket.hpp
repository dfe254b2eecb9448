// MCP over WebSocket (subprotocol `mcp`): one JSON-RPC message per text frame, both sides.
// - connect_websocket_channel: a client Channel to ws:// or wss:// (TLS with the system CA store or `ca_file`,
//   host-name verification and SNI).
// - WebSocketServer: accepts connections on a port (optionally over TLS); each connection becomes a Channel run by a
//   SessionHandler (mcp::Server::serve fits).
// The message size limit is enforced per message (a larger one closes the connection with 1009 and is reported);
// close() sends a close frame.
//
// Thread-safety: single owner; everything on the executor given at construction.
#pragma once

#include <switchboard/http/authorizer.hpp>

#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/jsonrpc/framing.hpp>
#include <switchboard/transport/http_server.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace switchboard::transport {

struct WebSocketClientOptions {
    std::string server_name;  ///< for error messages
    std::map<std::string, std::string> headers;
    std::size_t max_message_size = jsonrpc::default_max_message_size;
    std::chrono::milliseconds connect_timeout{10'000};  ///< resolve + TCP + TLS + WebSocket handshake
    std::string ca_file;                                ///< extra CA bundle (PEM) besides the system store
    /// OAuth: its header on the upgrade request; a 401 (or 403 insufficient_scope) shown to it, the handshake tried
    /// again when it has a new authorization.
    std::shared_ptr<http::Authorizer> authorizer;
};

/// Connects to `url` (ws:// or wss://). Errors name the server and the cause (refused, TLS, HTTP status, ...).
boost::asio::awaitable<jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>> connect_websocket_channel(
    boost::asio::any_io_executor ex, std::string url, WebSocketClientOptions options);

struct WebSocketServerOptions {
    std::string address = "127.0.0.1";
    std::uint16_t port = 0;  ///< 0: any free port
    std::size_t max_message_size = jsonrpc::default_max_message_size;
    /// Origins accepted besides loopback ones; "*" accepts any. No Origin header: accepted.
    std::vector<std::string> allowed_origins;
    std::size_t max_connections = 512;
    /// Both set (PEM files): serve wss:// (TLS) instead of ws://.
    std::string tls_cert_file, tls_key_file;
};

class WebSocketServer {
public:
    WebSocketServer(boost::asio::any_io_executor ex, SessionHandler handler, WebSocketServerOptions options);
    ~WebSocketServer();
    WebSocketServer(const WebSocketServer&) = delete;
    WebSocketServer& operator=(const WebSocketServer&) = delete;

    boost::system::error_code listen();
    std::uint16_t port() const;
    /// "ws://ADDRESS:PORT/" (wss:// with TLS)
    std::string url() const;
    /// Accepts connections until stop().
    boost::asio::awaitable<void> run();
    void stop();

    struct Impl;

private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace switchboard::transport
