// Requests an upstream server sends to its client (sampling/createMessage, elicitation/create, roots/list), routed to
// whoever made the call they belong to. The pool has one client session per server, shared by every caller, so the
// relay has to pick one: the caller whose call to that server is in flight, the most recent one when several are (a
// per-server stack of askers, pushed while a call runs): a gateway client's tools/call, prompts/get or resources/read
// (AggregateHandler: its RequestContext), a web conversation's tool call or a "Try it" call (webapi: the page that
// made it). In the 2026-07-28 era the upstream's keys are kept (the requests of one input round are relayed together,
// so a gateway client gets them in one round too).
// When no call to that server is in flight the fallback answers (serve: roots from the config) or the request is
// refused with a JSON-RPC error saying so; when the chosen
// gateway client did not declare the capability, RequestContext::ask refuses it (-32021).
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/host/server_requests.hpp>
#include <switchboard/mcp/request_context.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::gateway {

class ClientRelay : public std::enable_shared_from_this<ClientRelay> {
public:
    /// While alive, `ctx` is the client asked for `server`'s requests (unless a newer call to it is in flight).
    class Registration {
    public:
        Registration() = default;
        Registration(Registration&& o) noexcept { *this = std::move(o); }
        Registration& operator=(Registration&& o) noexcept;
        Registration(const Registration&) = delete;
        Registration& operator=(const Registration&) = delete;
        ~Registration();

    private:
        friend class ClientRelay;
        std::weak_ptr<ClientRelay> relay_;
        std::string server_;
        std::uint64_t id_ = 0;
    };

    static std::shared_ptr<ClientRelay> create() { return std::shared_ptr<ClientRelay>(new ClientRelay()); }

    /// The handlers to put in host::PoolOptions::handlers: all three are set, so upstream servers see the gateway
    /// declare sampling, elicitation and roots.
    host::ServerRequestHandlers handlers();

    /// Answers one of a server's requests: `method` with its `params` (`key`: the upstream's name for it in a modern
    /// input round, else empty).
    using Asker = std::function<boost::asio::awaitable<jsonrpc::Outcome<boost::json::value>>(
        std::string key, std::string method, boost::json::value params)>;

    /// Marks `asker` as calling `server` until the Registration is dropped.
    Registration enter(const std::string& server, Asker asker);
    /// A gateway client's request in flight: the server's requests go to that client.
    Registration enter(const std::string& server, mcp::RequestContext ctx);
    /// Who answers when nobody calls the server (a server asking for roots right after it connected): unset, such a
    /// request is refused.
    void set_fallback(Asker asker) { fallback_ = std::move(asker); }

    /// Relays `method` from `server` to the client of its most recent call in flight (in a modern input round, under
    /// `key`, the upstream's own name for the request, when given).
    boost::asio::awaitable<jsonrpc::Outcome<boost::json::value>> relay(std::string server, std::string method,
                                                                       boost::json::value params, std::string key);

    /// Calls in flight to `server` (for tests and status).
    std::size_t in_flight(const std::string& server) const;

private:
    ClientRelay() = default;
    void leave(const std::string& server, std::uint64_t id);

    std::map<std::string, std::vector<std::pair<std::uint64_t, Asker>>> active_;
    std::uint64_t next_ = 1;
    Asker fallback_;
};

}  // namespace switchboard::gateway
