// Requests through the pool: tool calls, resources (listing and content caches, subscriptions), prompts, completion.
// Each waits for a server that is starting and leases a lazy server for its own duration.
#include "pool_server.hpp"

#include <switchboard/core/json_number.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/host/tool_index.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace switchboard::host {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

// Counts a request as active for shutdown's drain; wakes shutdown when the last one ends.
class ActiveRequest {
public:
    ActiveRequest(std::size_t& counter, std::shared_ptr<ServerPool::Shared> shared)
        : counter_(counter), shared_(std::move(shared)) {
        ++counter_;
    }
    ~ActiveRequest() {
        if (--counter_ == 0 && shared_->idle) {
            shared_->idle->set();
            shared_->idle.reset();
        }
    }
    ActiveRequest(const ActiveRequest&) = delete;
    ActiveRequest& operator=(const ActiveRequest&) = delete;

private:
    std::size_t& counter_;
    std::shared_ptr<ServerPool::Shared> shared_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// What servers offer

std::shared_ptr<const std::vector<mcp::Tool>> ServerPool::tools(std::string_view server) const {
    auto s = find(server);
    return s ? s->tools : no_tools();
}

std::shared_ptr<const ToolIndex> ServerPool::shared_tool_index(
    const std::string& key, std::vector<std::shared_ptr<const std::vector<mcp::Tool>>> lists,
    const std::function<ToolIndex()>& build) {
    for (auto it = tool_indexes_.begin(); it != tool_indexes_.end(); ++it)
        if (it->key == key) {
            std::rotate(it, it + 1, tool_indexes_.end());  // most recently used last
            return tool_indexes_.back().index;
        }
    // A few: each keeps its tool lists (schemas) alive, old ones too after a relist, until it is dropped here.
    constexpr std::size_t kept = 4;
    if (tool_indexes_.size() >= kept) tool_indexes_.erase(tool_indexes_.begin());
    auto index = std::make_shared<const ToolIndex>(build());
    tool_indexes_.push_back(KeptIndex{key, std::move(lists), index});
    return index;
}

std::vector<ResourceInfo> ServerPool::resources(std::string_view server) const {
    std::vector<ResourceInfo> out;
    if (auto s = find(server))
        for (const auto& r : s->listing.resources) out.push_back({s->config.name, r});
    return out;
}

void ServerPool::visit_resources(std::string_view server, const std::function<void(const mcp::Resource&)>& fn) const {
    if (auto s = find(server))
        for (const auto& r : s->listing.resources) fn(r);
}

std::vector<ResourceTemplateInfo> ServerPool::resource_templates(std::string_view server) const {
    std::vector<ResourceTemplateInfo> out;
    if (auto s = find(server))
        for (const auto& t : s->listing.templates) out.push_back({s->config.name, t});
    return out;
}

std::vector<PromptInfo> ServerPool::prompts(std::string_view server) const {
    std::vector<PromptInfo> out;
    if (auto s = find(server))
        for (const auto& p : s->prompts) out.push_back({s->config.name, p});
    return out;
}

Phase ServerPool::phase(std::string_view server) const {
    auto s = find(server);
    return s ? s->phase : Phase::idle;
}

const ServerConfig* ServerPool::server_config(std::string_view server) const {
    auto s = find(server);
    return s ? &s->config : nullptr;
}

// ---------------------------------------------------------------------------------------------------------------
// Tools

awaitable<Outcome<mcp::CallToolResult>> ServerPool::call_tool(std::string server, std::string tool,
                                                              json::object arguments, ToolCallOptions options) {
    if (stopping_) co_return Error::make_local(code::connection_closed, "the host is shutting down");
    auto shared = shared_;
    ActiveRequest active(active_requests_, shared);
    std::optional<Outcome<Held>> held_or;  // statements, not ?: around a co_await (GCC 12)
    if (auto now = held_at_once(server)) {
        held_or.emplace(std::move(*now));
    } else {
        // Waiting for the server (a lazy load, a start, a reconnect) is a span of the call's trace.
        auto wait = trace::Span::start("connect", server, trace::SpanKind::internal, options.trace);
        if (wait.recording()) {
            const auto s = find(server);
            const auto phase = s ? s->phase : Phase::idle;
            wait.set("switchboard.server.phase", to_string(phase));
            if (phase == Phase::reconnecting)
                wait.add_event("reconnect", {trace::Attribute{"attempt", std::int64_t{s->attempt}}});
        }
        held_or.emplace(co_await hold_for_request(server));
        if (!*held_or) wait.set_error("unavailable", held_or->error().message);
    }
    auto& held = *held_or;
    if (!held) co_return held.error();
    auto s = held->server;
    if (const auto* h = held_named(server, PinKind::tool, tool))  // (any caller: a model, an app, the gateway)
        co_return Error::make_local(code::invalid_params, held_message(*h));
    auto session = s->session;  // kept alive across the await: a reconnect may drop s->session meanwhile
    ++s->active_calls;
    core::ScopeExit per_server([s] { --s->active_calls; });

    mcp::CallOptions co;
    co.timeout = options.timeout.count() > 0 ? options.timeout : s->config.tool_timeout;
    std::weak_ptr<ServerPool> weak = weak_from_this();
    co.on_progress = [weak, user = std::move(options.on_progress), id = options.call_id,
                      server](const jsonrpc::Progress& p) {
        if (user) user(p);
        auto pool = weak.lock();
        if (!pool) return;
        json::object data;
        data["progress"] = p.progress;
        if (p.total) data["total"] = *p.total;
        if (!p.message.empty()) data["message"] = p.message;
        pool->events_.emit(Event::progress(server, id, std::move(data)));
    };
    co.on_task = std::move(options.on_task);
    co.tasks = options.tasks;
    co.whole_result = options.whole_result;
    co.result_text = std::move(options.result_text);
    co.trace = std::move(options.trace);
    // A shutdown cancels what still runs through the session (Connection::cancel_requests), not by racing every
    // call against an event here.
    auto r = co_await session->call_tool(tool, std::move(arguments), std::move(co));
    if (!r && r.error().code == code::cancelled && stopping_)
        co_return Error::make_local(
            code::cancelled,
            fmt::format("server \"{}\": tools/call {} cancelled: the host is shutting down", server, tool));
    if (!r && r.error().local &&
        (r.error().code == code::connection_closed || r.error().code == code::transport_error)) {
        Error e = r.error();
        e.message = fmt::format("server \"{}\" disconnected during the call to {} ({}); the host is reconnecting it",
                                server, tool, e.message);
        co_return e;
    }
    co_return r;
}

// ---------------------------------------------------------------------------------------------------------------
// Resources

awaitable<Outcome<ResourceListing>> ServerPool::list_resources(std::string server) {
    auto existing = find(server);
    if (existing && existing->phase == Phase::connected && existing->listing.fresh()) co_return existing->listing;
    auto held = co_await hold_for_request(server);
    if (!held) co_return held.error();
    auto s = held->server;
    if (s->listing.fresh()) co_return s->listing;
    const auto gen = s->gen;
    auto session = s->session;
    if (!session->has_capability("resources")) {
        auto l = make_listing(*s);
        l.templates = s->listing.templates;
        s->listing = l;
        co_return l;
    }
    auto r = co_await session->list_resources();
    if (!r) co_return r.error();
    auto t = co_await session->list_resource_templates();
    if (!t && t.error().code == code::method_not_found) t = std::vector<mcp::ResourceTemplate>{};  // optional
    if (!t) co_return t.error();
    if (s->gen != gen) {  // reconnected meanwhile: this listing is of a session gone
        auto listing = make_listing(*s);
        listing.resources = std::move(*r);
        listing.templates = std::move(*t);
        co_return listing;
    }
    s->listing = make_listing(*s);
    s->listing.resources = std::move(*r);
    set_served(*s, std::nullopt, std::nullopt, std::move(*t));  // templates as pinned
    co_return s->listing;
}

awaitable<Outcome<mcp::ReadResourceResult>> ServerPool::read_resource(std::string server, std::string uri,
                                                                      ReadMode mode, trace::SpanContext trace) {
    if (mode == ReadMode::cached)
        if (auto hit = cache_.get(server, uri)) co_return std::move(*hit);
    if (stopping_) co_return Error::make_local(code::connection_closed, "the host is shutting down");
    ActiveRequest active(active_requests_, shared_);
    auto held = co_await hold_for_request(server);
    if (!held) co_return held.error();
    auto s = held->server;
    mcp::CallOptions co;
    co.timeout = s->config.tool_timeout;
    co.trace = std::move(trace);
    auto session = s->session;  // kept alive across the await
    auto r = co_await session->read_resource(uri, co);
    if (!r) co_return r.error();
    // Kept for later automatic reads only while something says it is current: the server's ttlMs, or a subscription
    // whose notifications/resources/updated drops it. Without either, the next read asks again.
    std::optional<std::chrono::milliseconds> ttl;
    if (const auto* t = r->raw.if_contains("ttlMs"); t && t->is_number())
        // The server's number, bounded: 1e300 must not become undefined behaviour nor overflow the clock.
        ttl = std::chrono::milliseconds(std::clamp<std::int64_t>(core::clamp_to_int64(t->to_number<double>()), 0,
                                                                 24 * 3600 * 1000));
    if (ttl || s->subscriptions.count(uri))
        cache_.put(server, uri, *r, ttl);
    else
        cache_.erase(server, uri);
    co_return std::move(*r);
}

std::optional<CachedContents> ServerPool::cached_resource(const std::string& server, const std::string& uri) {
    auto hit = cache_.lookup(server, uri);
    if (!hit) return std::nullopt;
    return CachedContents{std::move(hit->value),
                          std::chrono::duration_cast<std::chrono::milliseconds>(pool_clock::now() - hit->stored)};
}

awaitable<Outcome<void>> ServerPool::subscribe_resource(std::string server, std::string uri) {
    auto ready_server = co_await ready(server);
    if (!ready_server) co_return ready_server.error();
    auto s = *ready_server;
    if (auto it = s->subscriptions.find(uri); it != s->subscriptions.end()) {
        ++it->second;  // subscribed already: one more holder
        co_return Outcome<void>{};
    }
    auto session = s->session;  // kept alive across the await
    if (!session->has_capability("resources", "subscribe"))
        co_return Error::make_local(code::method_not_found,
                                    fmt::format("server \"{}\" does not offer resource subscriptions", server));
    auto r = co_await session->subscribe(uri);
    if (!r) co_return r.error();
    ++s->subscriptions[uri];  // a concurrent first subscribe may have counted itself meanwhile
    cache_.erase(server, uri);  // cached without notifications; from now on updates invalidate it
    co_return Outcome<void>{};
}

awaitable<Outcome<void>> ServerPool::unsubscribe_resource(std::string server, std::string uri) {
    auto s = find(server);
    if (!s) co_return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", server));
    auto it = s->subscriptions.find(uri);
    if (it == s->subscriptions.end()) co_return Outcome<void>{};
    if (--it->second > 0) co_return Outcome<void>{};  // others still hold it
    s->subscriptions.erase(it);
    cache_.erase(server, uri);
    if (!s->session || !s->session->is_open()) co_return Outcome<void>{};
    auto session = s->session;
    co_return co_await session->unsubscribe(uri);
}

// ---------------------------------------------------------------------------------------------------------------
// Server log messages

awaitable<Outcome<void>> ServerPool::set_log_level(std::string server, std::string level) {
    auto s = find(server);
    if (!s) co_return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", server));
    if (!mcp::is_log_level(level))
        co_return Error::make_local(code::invalid_params,
                                    fmt::format("\"{}\" is not a log level (debug, info, notice, warning, error, "
                                                "critical, alert, emergency)",
                                                level));
    if (!s->serving()) {
        s->log_level = std::move(level);  // for the next connection
        co_return Outcome<void>{};
    }
    auto session = s->session;
    if (session->era() != mcp::Era::modern && !session->has_capability("logging"))
        co_return Error::make_local(code::method_not_found,
                                    fmt::format("server \"{}\" does not offer logging", server));
    s->log_level = level;  // also for the next connection
    co_return co_await session->set_logging_level(std::move(level));
}

void ServerPool::notify_roots_changed() {
    if (!options_.handlers.roots) return;  // not declared: no server asks us
    for (const auto& [name, s] : servers_)
        if (s->serving() && s->session->era() == mcp::Era::legacy)
            s->session->connection().notify("notifications/roots/list_changed", json::object{});
}

std::vector<LogMessage> ServerPool::recent_logs(std::string_view server) const {
    auto s = find(server);
    if (!s) return {};
    return {s->log.begin(), s->log.end()};
}

// ---------------------------------------------------------------------------------------------------------------
// Prompts, completion, sessions

awaitable<Outcome<mcp::GetPromptResult>> ServerPool::get_prompt(std::string server, std::string name,
                                                                std::map<std::string, std::string> arguments,
                                                                trace::SpanContext trace) {
    auto held = co_await hold_for_request(server);
    if (!held) co_return held.error();
    mcp::CallOptions co;
    co.timeout = held->server->config.tool_timeout;
    co.trace = std::move(trace);
    auto session = held->server->session;
    co_return co_await session->get_prompt(std::move(name), std::move(arguments), co);
}

awaitable<Outcome<mcp::CompleteResult>> ServerPool::complete(std::string server, json::object ref, std::string argument,
                                                             std::string value,
                                                             std::map<std::string, std::string> context) {
    auto held = co_await hold_for_request(server);
    if (!held) co_return held.error();
    auto session = held->server->session;
    if (!session->has_capability("completions"))
        co_return Error::make_local(code::method_not_found,
                                    fmt::format("server \"{}\" does not offer argument completion", server));
    auto r = co_await session->complete(std::move(ref), std::move(argument), std::move(value), std::move(context));
    if (!r && r.error().code == code::method_not_found && !r.error().local) {
        // Declared but not answered: no suggestions, as for a server that has none.
        spdlog::warn(
            "server \"{}\": completion/complete answered \"method not found\" although it declares "
            "completions; no suggestions",
            server);
        co_return mcp::CompleteResult{};
    }
    co_return r;
}

awaitable<Outcome<std::shared_ptr<mcp::ClientSession>>> ServerPool::session(std::string server) {
    auto ready_server = co_await ready(std::move(server));
    if (!ready_server) co_return ready_server.error();
    co_return (*ready_server)->session;
}

}  // namespace switchboard::host
