#include <switchboard/gateway/relay.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace switchboard::gateway {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Error;
using jsonrpc::Outcome;

ClientRelay::Registration& ClientRelay::Registration::operator=(Registration&& o) noexcept {
    if (this != &o) {
        if (auto r = relay_.lock()) r->leave(server_, id_);
        relay_ = std::move(o.relay_);
        server_ = std::move(o.server_);
        id_ = o.id_;
        o.relay_.reset();
        o.id_ = 0;
    }
    return *this;
}

ClientRelay::Registration::~Registration() {
    if (auto r = relay_.lock()) r->leave(server_, id_);
}

ClientRelay::Registration ClientRelay::enter(const std::string& server, Asker asker) {
    Registration reg;
    reg.relay_ = weak_from_this();
    reg.server_ = server;
    reg.id_ = next_++;
    active_[server].emplace_back(reg.id_, std::move(asker));
    return reg;
}

namespace {

awaitable<Outcome<json::value>> ask_client(mcp::RequestContext ctx, std::string key, std::string method,
                                           json::value params) {
    json::object p = params.is_object() ? std::move(params.get_object()) : json::object();
    // Under the upstream's own key, so the client sees the names the server chose.
    co_return co_await ctx.ask_as(std::move(key), std::move(method), std::move(p));
}

}  // namespace

ClientRelay::Registration ClientRelay::enter(const std::string& server, mcp::RequestContext ctx) {
    return enter(server, [ctx = std::move(ctx)](std::string key, std::string method, json::value params) {
        return ask_client(ctx, std::move(key), std::move(method), std::move(params));
    });
}

void ClientRelay::leave(const std::string& server, std::uint64_t id) {
    auto it = active_.find(server);
    if (it == active_.end()) return;
    // The server's entry stays when empty (one per server at most): not made and freed again for every call.
    std::erase_if(it->second, [id](const auto& e) { return e.first == id; });
}

std::size_t ClientRelay::in_flight(const std::string& server) const {
    auto it = active_.find(server);
    return it == active_.end() ? 0 : it->second.size();
}

awaitable<Outcome<json::value>> ClientRelay::relay(std::string server, std::string method, json::value params,
                                                   std::string key) {
    auto it = active_.find(server);
    if ((it == active_.end() || it->second.empty()) && fallback_) {
        Asker fallback = fallback_;  // a copy: it may be replaced while it answers
        auto self = shared_from_this();
        co_return co_await fallback(std::move(key), std::move(method), std::move(params));
    }
    if (it == active_.end() || it->second.empty()) {
        spdlog::info("gateway: {} from server \"{}\" refused: no client call to it is in flight", method, server);
        co_return Error{jsonrpc::code::invalid_request,
                        fmt::format("switchboard: cannot answer {} from server \"{}\": nobody is calling that server "
                                    "now (its requests are answered only during a call: a gateway client's "
                                    "tools/call, prompts/get or resources/read, or a web page's tool call)",
                                    method, server)};
    }
    // A copy: the registration may go away while we wait for the answer.
    Asker asker = it->second.back().second;
    auto self = shared_from_this();
    co_return co_await asker(std::move(key), std::move(method), std::move(params));
}

namespace {

awaitable<Outcome<json::value>> relay_call(std::weak_ptr<ClientRelay> weak, std::string method, std::string server,
                                           json::value params) {
    auto relay = weak.lock();
    if (!relay) co_return Error{jsonrpc::code::internal_error, "switchboard gateway: shutting down"};
    co_return co_await relay->relay(std::move(server), std::move(method), std::move(params), {});
}

awaitable<Outcome<json::value>> relay_keyed(std::weak_ptr<ClientRelay> weak, std::string server, std::string key,
                                            std::string method, json::value params) {
    auto relay = weak.lock();
    if (!relay) co_return Error{jsonrpc::code::internal_error, "switchboard gateway: shutting down"};
    co_return co_await relay->relay(std::move(server), std::move(method), std::move(params), std::move(key));
}

host::ServerRequestHandlers::Handler handler_for(std::weak_ptr<ClientRelay> weak, const char* method) {
    // Not a coroutine itself: the coroutine gets everything by value (no lambda captures to dangle).
    return [weak, method](std::string server, json::value params) {
        return relay_call(weak, method, std::move(server), std::move(params));
    };
}

}  // namespace

host::ServerRequestHandlers ClientRelay::handlers() {
    host::ServerRequestHandlers h;
    h.sampling = handler_for(weak_from_this(), "sampling/createMessage");
    h.elicitation = handler_for(weak_from_this(), "elicitation/create");
    h.roots = handler_for(weak_from_this(), "roots/list");
    h.keyed = [weak = weak_from_this()](std::string server, std::string key, std::string method, json::value params) {
        return relay_keyed(weak, std::move(server), std::move(key), std::move(method), std::move(params));
    };
    return h;
}

}  // namespace switchboard::gateway
