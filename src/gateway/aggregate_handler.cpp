#include "aggregate_common.hpp"

#include <switchboard/gateway/aggregate_handler.hpp>

#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/mcp/skills.hpp>
#include <switchboard/mcp/static_handler.hpp>
#include <switchboard/mcp/tasks.hpp>
#include <switchboard/mcp/version.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

// The aggregate handler's life and what it shares: creation, capabilities, the index's events, errors named by their
// server, and the Gateway that makes one handler per client. Tools are in aggregate_tools.cpp, resources in
// aggregate_resources.cpp, prompts and completion in aggregate_prompts.cpp.
namespace switchboard::gateway {

namespace {

void replace_all(std::string& text, const std::string& secret) {
    if (secret.size() < 4) return;  // too short to tell from ordinary words
    for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos))
        text.replace(pos, secret.size(), "[redacted]");
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------

std::shared_ptr<AggregateHandler> AggregateHandler::create(std::shared_ptr<host::Context> context,
                                                           std::shared_ptr<ClientRelay> relay) {
    return create(std::move(context), std::move(relay), nullptr);
}

std::shared_ptr<AggregateHandler> AggregateHandler::create(std::shared_ptr<host::Context> context,
                                                           std::shared_ptr<ClientRelay> relay,
                                                           std::shared_ptr<Metrics> metrics) {
    auto h = std::shared_ptr<AggregateHandler>(new AggregateHandler(std::move(context), std::move(relay)));
    h->metrics_ = std::move(metrics);
    h->call_id_ = "gateway:" + h->context_->name();
    h->last_tools_ = h->context_->tool_index();
    h->subscription_ =
        h->context_->events().subscribe([weak = std::weak_ptr<AggregateHandler>(h)](const host::Event& e) {
            if (auto self = weak.lock()) self->on_event(e);
        });
    return h;
}

AggregateHandler::AggregateHandler(std::shared_ptr<host::Context> context, std::shared_ptr<ClientRelay> relay)
    : context_(std::move(context)), relay_(std::move(relay)) {}

AggregateHandler::~AggregateHandler() {
    context_->events().unsubscribe(subscription_);
    // A client that goes away lets go of its subscriptions (the pool unsubscribes upstream after the last holder).
    auto pool = context_->pool().shared_from_this();
    for (const auto& [uri, server] : subscribed_)
        core::spawn_logged(
            pool->executor(),
            [pool, server, uri]() -> boost::asio::awaitable<void> { co_await pool->unsubscribe_resource(server, uri); },
            "gateway: unsubscribe " + uri);
}

bool AggregateHandler::reusable() const {
    return !host_tool_called_ && subscribed_.empty() && context_->as_made() &&
           std::all_of(calls_.begin(), calls_.end(), [](const auto& server) { return server.second.empty(); });
}

json::object AggregateHandler::capabilities() const {
    json::object list_changed{{"listChanged", true}};
    json::object caps;
    caps["tools"] = list_changed;
    caps["prompts"] = list_changed;
    json::object resources{{"listChanged", true}, {"subscribe", true}};
    caps["resources"] = std::move(resources);
    caps["completions"] = json::object();
    json::object extensions;
    if (skills_ && skills_->declared()) {
        json::object skills;
        if (skills_->directory_read()) skills["directoryRead"] = true;
        extensions[mcp::skills_extension] = std::move(skills);
    }
    if (tasks_) extensions[mcp::tasks_extension] = json::object();
    // MCP Apps: tools' _meta.ui and the ui:// views pass through (shared URIs renamed: ui_uris()).
    extensions[mcp::ui_extension] = mcp::ui_extension_capability();
    if (!extensions.empty()) caps["extensions"] = std::move(extensions);
    return caps;
}

namespace {

// Whether two indexes expose the same names (a new listing of the same tools is no change for a client).
bool same_names(const host::ToolIndex& a, const host::ToolIndex& b) {
    return std::equal(a.tools().begin(), a.tools().end(), b.tools().begin(), b.tools().end(),
                      [](const auto& x, const auto& y) { return x.name == y.name; });
}

}  // namespace

// The context re-emits the pool's events for its servers. A phase change may add or drop a server's tools (the
// index leaves out servers that are not connected), so tools are compared by their exposed names.
void AggregateHandler::on_event(const host::Event& e) {
    using Kind = host::Event::Kind;
    switch (e.kind) {
    case Kind::tools_changed:
    case Kind::phase_changed: {
        // The index is shared and stays as it is: the same one means the same tools, without comparing names.
        auto now = context_->tool_index();
        const bool changed = now != last_tools_ && !same_names(*now, *last_tools_);
        last_tools_ = std::move(now);
        if (changed) notify_list_changed(mcp::ListKind::tools);
        break;
    }
    case Kind::prompts_changed: notify_list_changed(mcp::ListKind::prompts); break;
    case Kind::resources_changed: notify_list_changed(mcp::ListKind::resources); break;
    case Kind::log_message: forward_log(e); break;
    case Kind::resource_updated:
        if (!e.uri.empty()) notify_resource_updated(e.uri);
        break;
    default: break;  // progress goes through each call's own callback
    }
}

// notifications/message {level, logger?, data} from `e.server`: to this client's most recent call to that server.
void AggregateHandler::forward_log(const host::Event& e) {
    auto it = calls_.find(e.server);
    if (it == calls_.end() || it->second.empty() || !e.data.is_object()) return;
    const auto& p = e.data.get_object();
    auto level = mcp::string_field(p, "level");
    if (level.empty()) level = "info";
    const auto* data = p.if_contains("data");
    it->second.back().second.log(level, data ? *data : json::value(nullptr), mcp::string_field(p, "logger"));
}

Error AggregateHandler::upstream_error(const std::string& server, Error e) const {
    const auto named = fmt::format("server \"{}\"", server);
    if (e.message.find(named) == std::string::npos) e.message = named + ": " + e.message;
    // Never let a configured secret reach a client: header values and env values of every server.
    for (const auto& sc : context_->pool().config().servers) {
        for (const auto& [k, v] : sc.headers) replace_all(e.message, v);
        for (const auto& [k, v] : sc.env) replace_all(e.message, v);
    }
    // Upstream data is not inspected for secrets: left out, except the gateway's own -32021 (its client lacks a
    // capability a relayed request needs) whose data names the capabilities.
    if (!e.data.is_null() && e.code != code::missing_required_client_capability) e.data = nullptr;
    e.local = false;
    if (e.code < -32768 || e.code > -32000) {
        // Local codes (timeout, closed, ...) are not JSON-RPC codes: the client gets an internal error.
        if (e.code > 0 || e.code >= -5) e.code = code::internal_error;
    }
    return e;
}

// ---------------------------------------------------------------------------------------------------------------

std::shared_ptr<Gateway> Gateway::create(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<ClientRelay> relay,
                                         GatewayOptions options) {
    return std::shared_ptr<Gateway>(new Gateway(std::move(pool), std::move(relay), std::move(options)));
}

std::shared_ptr<AggregateHandler> Gateway::make_handler() {
    host::ContextOptions co = options_.context;
    co.name = options_.context.name + ':' + std::to_string(next_++);
    auto context = host::Context::create(pool_, std::move(co));
    // Every client's context has the same options: it takes the index a keeper context holds instead of working
    // it out again (Context::share_index_of).
    if (!index_keeper_) index_keeper_ = host::Context::create(pool_, options_.context);
    context->share_index_of(*index_keeper_);
    auto handler = AggregateHandler::create(context, relay_, options_.metrics);
    if (options_.host_tools) handler->set_host_tools(options_.host_tools(context));
    handler->set_skills(skills_);
    handler->set_page_size(options_.page_size);
    handler->set_tool_list_cache(tool_list_cache_);
    handler->set_tasks(tasks_);
    return handler;
}

std::shared_ptr<AggregateHandler> Gateway::stateless_handler() {
    if (idle_.empty()) return make_handler();
    auto handler = std::move(idle_.back());
    idle_.pop_back();
    // The index may have changed while it waited: the keeper's is taken again rather than worked out anew.
    handler->context().share_index_of(*index_keeper_);
    return handler;
}

void Gateway::keep_idle(std::shared_ptr<AggregateHandler> handler) {
    // A handler something still holds (a task it started, a call left running) is not handed on.
    if (!stopping_ && idle_.size() < max_idle_handlers && handler.use_count() == 1 && handler->reusable())
        idle_.push_back(std::move(handler));
}

namespace {
struct Count {
    std::size_t& n;
    explicit Count(std::size_t& counter) : n(counter) { ++n; }
    ~Count() { --n; }
    Count(const Count&) = delete;
    Count& operator=(const Count&) = delete;
};
}  // namespace

awaitable<void> Gateway::serve(std::shared_ptr<jsonrpc::Channel> channel) {
    auto self = shared_from_this();
    mcp::Server server(options_.server, make_handler());
    Count count(sessions_);
    co_await server.serve(std::move(channel));
}

awaitable<std::string> Gateway::answer(jsonrpc::Message request, std::function<void(std::string)> send) {
    auto self = shared_from_this();
    Count count(sessions_);
    auto handler = stateless_handler();
    // Made on a line of its own: no temporary converted into a parameter inside the co_await (docs/design.md, GCC 12).
    std::shared_ptr<mcp::ServerHandler> as_server = handler;
    auto text =
        co_await mcp::Server::answer(options_.server, std::move(as_server), std::move(request), std::move(send));
    keep_idle(std::move(handler));
    co_return text;
}

awaitable<void> Gateway::shutdown() {
    stopping_ = true;  // requests still answered meanwhile keep no handler
    idle_.clear();
    co_await mcp::cancel_suspended(options_.server.input_rounds);
}

}  // namespace switchboard::gateway
