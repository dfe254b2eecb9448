// Connecting configured servers: one server (spawn or dial, establish the MCP session, list what it offers) or all
// of a config in parallel, where a failing or hung server never delays the others beyond its own startup timeout.
// The Host store (server registry, health phases, reconnect) builds on this.
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/host/events.hpp>
#include <switchboard/host/transport_factory.hpp>
#include <switchboard/mcp/client_session.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace switchboard::host {

struct ConnectOptions {
    bool list_tools = true;
    bool list_resources = true;
    bool list_prompts = true;
    std::size_t max_message_size = 64u * 1024 * 1024;
    mcp::ServerRequestHandlers handlers;
    std::function<void(const std::string& server, const std::string& method, const boost::json::value& params)>
        on_notification;
    /// Progress through the start: Phase::starting, initializing, listing (not called for the end result).
    std::function<void(Phase)> on_phase;
    /// From an earlier connect of the same server: skips the era probe.
    std::optional<mcp::Era> known_era;
    ChannelHooks channel_hooks;
    mcp::Implementation client_info{"switchboard", SWITCHBOARD_VERSION, "Switchboard"};
};

/// One server after a connection attempt.
struct ServerConnection {
    const ServerConfig* config = nullptr;
    enum class Phase { connected, error, disabled, lazy } phase = Phase::error;
    std::shared_ptr<mcp::ClientSession> session;  ///< set when connected
    std::string error;                            ///< set on error: names the cause, with the stderr tail
    std::chrono::milliseconds connect_time{0};
    std::vector<mcp::Tool> tools;
    std::vector<mcp::Resource> resources;
    std::vector<mcp::ResourceTemplate> resource_templates;
    std::vector<mcp::Prompt> prompts;
};

std::string_view to_string(ServerConnection::Phase phase);

/// Connects one server and lists what it offers (a listing failure is an error of that server). The channel comes
/// from open_channel (transport_factory.hpp); the handshake is bounded by the server's startup timeout, and so is
/// each listing request (the session's default request timeout is the startup timeout; tool calls pass their own).
boost::asio::awaitable<ServerConnection> connect_server(boost::asio::any_io_executor ex, const ServerConfig& config,
                                                        const ConnectOptions& options);

/// Connects every enabled, non-lazy server of `config` at once; disabled and lazy ones are reported as such.
/// Results are in config order.
boost::asio::awaitable<std::vector<ServerConnection>> connect_all(boost::asio::any_io_executor ex, const Config& config,
                                                                  const ConnectOptions& options);

/// Closes every connected session, in parallel.
boost::asio::awaitable<void> close_all(std::vector<ServerConnection>& servers);

}  // namespace switchboard::host
