// Connecting one configured server: spawn or dial, establish the MCP session, list what it offers. The server pool
// (health phases, reconnect, leases) builds on this.
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/host/events.hpp>
#include <switchboard/host/server_requests.hpp>
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
    ServerRequestHandlers handlers;
    std::function<void(const std::string& server, const std::string& method, const boost::json::value& params)>
        on_notification;
    /// Progress through the start: Phase::starting, initializing, listing (not called for the end result).
    std::function<void(Phase)> on_phase;
    /// From an earlier connect of the same server: skips the era probe.
    std::optional<mcp::Era> known_era;
    ChannelHooks channel_hooks;
    /// Called with the channel as soon as it is open, before the handshake: whoever gives up on the attempt can close
    /// it (a hung server is then stopped at once instead of running until its handshake times out).
    std::function<void(const std::shared_ptr<jsonrpc::Channel>&)> on_channel_open;
    mcp::Implementation client_info{"switchboard", SWITCHBOARD_VERSION, "Switchboard"};
};

/// One server after a connection attempt.
struct ServerConnection {
    const ServerConfig* config = nullptr;
    std::shared_ptr<mcp::ClientSession> session;  ///< set when the session was established (also when a listing failed)
    std::string error;                            ///< empty when connected; else names the cause, with the stderr tail
    std::chrono::milliseconds connect_time{0};
    std::vector<mcp::Tool> tools;
    std::vector<mcp::Resource> resources;
    std::vector<mcp::ResourceTemplate> resource_templates;
    std::vector<mcp::Prompt> prompts;
};

/// Connects one server and lists what it offers (a listing failure is an error of that server). The channel comes
/// from open_channel (transport_factory.hpp); the handshake is bounded by the server's startup timeout, and so is
/// each listing request (the session's default request timeout is the startup timeout; tool calls pass their own).
boost::asio::awaitable<ServerConnection> connect_server(boost::asio::any_io_executor ex, const ServerConfig& config,
                                                        const ConnectOptions& options);

}  // namespace switchboard::host
