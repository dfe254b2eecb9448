// The state behind a RequestContext, filled in by the session that answers the request (private to the mcp layer).
#pragma once

#include <switchboard/mcp/request_context.hpp>

#include <functional>

namespace switchboard::mcp {

struct RequestContext::State {
    /// `key`: the name wanted for the request in a modern input round (empty: any).
    using Asker = std::function<boost::asio::awaitable<Outcome<boost::json::value>>(std::string key, std::string method,
                                                                                    boost::json::object params)>;
    Era era = Era::legacy;
    std::string method;
    /// Shared, not copied per request: a legacy session's requests all point at what initialize said (null: {}).
    std::shared_ptr<const boost::json::object> client_capabilities;
    std::shared_ptr<const boost::json::object> client_info;
    /// Who sent the request, as the transport authenticated it (ServerOptions::transport_principals); empty: unknown.
    std::string principal;
    /// The request's SERVER span, or the client's context as it came (see RequestContext::trace).
    trace::SpanContext trace;
    /// The lowest level sent; empty: everything (legacy) or nothing (modern).
    std::string log_level;
    /// The JSON-RPC request of the current round; none for a task's work, which outlives the request that started it.
    std::optional<jsonrpc::IncomingRequest> request;
    /// A task's work: where progress messages go (they become the task's statusMessage).
    std::function<void(std::string message)> on_status;
    /// Sends a request to the client and returns its result (legacy: on the connection; modern: an input round).
    Asker ask;
};

}  // namespace switchboard::mcp
