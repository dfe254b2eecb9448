// The server side of MCP, dual-era: answers `initialize` (legacy, negotiating 2024-11-05 … 2025-11-25) and
// `server/discover` plus per-request `_meta` (2026-07-28) on the same channel, and passes every content request to a
// ServerHandler with a RequestContext. serve() runs one session on one channel.
//
// The session answers itself: ping, initialize, server/discover, logging/setLevel, resources/(un)subscribe (after
// asking the handler) and subscriptions/listen. Handler announcements reach each session as its era asks. In the
// modern era a tools/call, prompts/get or resources/read whose handler asks the client for input is answered with
// `input_required`; the handler stays suspended until the client retries with the answers (input_rounds.hpp).
//
// Thread-safety: single owner; serve() on one executor.
#pragma once

#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/mcp/server_handler.hpp>
#include <switchboard/mcp/static_handler.hpp>
#include <switchboard/mcp/types.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace switchboard::mcp {

class InputRounds;  // src/mcp/input_rounds.hpp

/// A store of modern requests suspended in input_required rounds, found again by their requestState, for servers made
/// one per request (the gateway's stateless sessions): share one through ServerOptions::input_rounds. Cancels what is
/// still suspended when the last owner lets go.
std::shared_ptr<InputRounds> make_input_rounds(boost::asio::any_io_executor ex, std::chrono::milliseconds timeout);
/// Cancels every request suspended in `rounds` and waits for them to end (a server's shutdown).
boost::asio::awaitable<void> cancel_suspended(std::shared_ptr<InputRounds> rounds);

struct ServerOptions {
    Implementation info{"switchboard-server", "0", ""};
    std::string instructions;
    bool legacy = true;  ///< answer `initialize`
    bool modern = true;  ///< answer `server/discover` and modern requests
    /// Modern: how long a handler that asked for input waits for the client's retry before it gets an error.
    std::chrono::milliseconds input_timeout{std::chrono::minutes(10)};
    /// Modern: where suspended requests wait for the client's retry. A stateless client's retry arrives on a new
    /// session, so they outlive the session that started them: by default in the Server (all its sessions), here in
    /// a store shared with other Servers (make_input_rounds).
    std::shared_ptr<InputRounds> input_rounds;
    /// Modern: the caching hints of server/discover, the lists and resources/read (2026-07-28 CacheableResult) when
    /// the handler's result carries none: `ttlMs` (0: stale at once, re-fetch when needed) and `cacheScope`
    /// ("private": results may differ per client, e.g. a gateway's per-client context).
    std::chrono::milliseconds cache_ttl{0};
    std::string cache_scope = "private";
    /// Whether a request's `_meta` principal (jsonrpc::meta_principal) is believed: set only where the transport put
    /// it there after checking the request's token (Streamable HTTP with an OAuth resource server), never over stdio.
    bool transport_principals = false;
    /// {serverInfo} as every modern result's _meta carries it, serialized once: made from `info` by the Server when
    /// unset. Servers made per session from one ServerOptions (a gateway) share it when it is set beforehand
    /// (server_result_meta).
    std::shared_ptr<const jsonrpc::MetaMembers> result_meta;
};

/// ServerOptions::result_meta for `info`.
std::shared_ptr<const jsonrpc::MetaMembers> server_result_meta(const Implementation& info);

class Server {
public:
    Server(ServerOptions options, std::shared_ptr<ServerHandler> handler);
    /// A server over a new, empty StaticHandler (see registry()).
    explicit Server(ServerOptions options);
    ~Server();

    /// Runs one session until the channel ends.
    boost::asio::awaitable<void> serve(std::shared_ptr<jsonrpc::Channel> channel);
    /// Answers one 2026-07-28 request on its own, as a session of that one request would, without the session: no
    /// channel, no jsonrpc::Connection (stateless HTTP, transport::HttpServerOptions::answer). What the request
    /// notifies on the way (progress, log messages) is written with `send`; the answer's text is returned, "" when the
    /// request saw its cancellation (the awaiting coroutine's: the client is gone; an answer after that is dropped by
    /// the transport anyway). subscriptions/listen, which lives on after its acknowledgment, needs a session: it is
    /// refused here.
    boost::asio::awaitable<std::string> answer(jsonrpc::Message request, std::function<void(std::string)> send);
    /// The same with a handler of this request's own (a gateway's per-client context). `options` must outlive the
    /// request and its input rounds (a member of the caller's); `options.input_rounds` keeps the rounds between a
    /// request and its retry, and must be set (else an internal error is the answer).
    static boost::asio::awaitable<std::string> answer(const ServerOptions& options,
                                                      std::shared_ptr<ServerHandler> handler, jsonrpc::Message request,
                                                      std::function<void(std::string)> send);

    /// The StaticHandler of Server(ServerOptions); std::logic_error for a server built with another handler.
    StaticHandler& registry();
    /// registry().add_tool(), kept for callers that build a server and its tools in one place.
    void add_tool(boost::json::object definition, StaticHandler::ToolFunction function) {
        registry().add_tool(std::move(definition), std::move(function));
    }

private:
    struct Session;
    ServerOptions options_;
    std::shared_ptr<ServerHandler> handler_;
};

}  // namespace switchboard::mcp
