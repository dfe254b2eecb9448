// The one place that turns a server's config into a channel: every connect and reconnect goes through open_channel,
// so every transport kind gets the same lifecycle (parallel start, phases, reconnect, shutdown). stdio spawns the
// command, http is Streamable HTTP, sse the legacy HTTP+SSE transport, ws WebSocket.
//
// Thread-safety: free function; the channel is single-owner on `ex`.
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/host/sandbox.hpp>
#include <switchboard/http/authorizer.hpp>
#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

namespace switchboard::host {

struct ChannelHooks {
    /// stdio: each line the server writes to stderr (the host keeps a tail for its status).
    std::function<void(std::string_view line)> on_stderr_line;
    /// http, sse, ws: authorizes the requests (OAuth); null: none.
    std::shared_ptr<http::Authorizer> authorizer;
    /// stdio: confines a server whose entry asks for it (sandbox.hpp), and fills in ${SWITCHBOARD_STATE_DIR}. Null:
    /// a server that asks to be confined is refused (never run unconfined by mistake).
    std::shared_ptr<Sandboxer> sandboxer;
};

/// The OAuth authorizer of a remote server (null for stdio, for `"oauth": false`, and when the config sets an
/// Authorization header itself). Non-interactive: a server that needs a login leaves it in needs_login().
std::shared_ptr<auth::OAuthAuthorizer> make_authorizer(boost::asio::any_io_executor ex, const ServerConfig& config,
                                                       std::shared_ptr<auth::TokenStore> store);

/// Opens the transport `config` names. Fails with an error naming the server and the cause (the process cannot be
/// started, the SSE stream cannot be opened, the WebSocket handshake fails, ...).
boost::asio::awaitable<jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>> open_channel(
    boost::asio::any_io_executor ex, const ServerConfig& config, std::size_t max_message_size,
    const ChannelHooks& hooks);

}  // namespace switchboard::host
