#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/host/context.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace switchboard::host {

namespace json = boost::json;
using boost::asio::awaitable;

Context::Context(std::shared_ptr<ServerPool> pool, ContextOptions options)
    : pool_(std::move(pool)), options_(std::move(options)) {}

std::shared_ptr<Context> Context::create(std::shared_ptr<ServerPool> pool, ContextOptions options) {
    std::shared_ptr<Context> c(new Context(std::move(pool), std::move(options)));
    std::weak_ptr<Context> weak = c;
    c->subscription_ = c->pool_->events().subscribe([weak](const Event& e) {
        if (auto self = weak.lock()) self->on_pool_event(e);
    });
    return c;
}

Context::~Context() {
    pool_->events().unsubscribe(subscription_);
    // leases_ release on destruction: lazy servers nobody else holds stop after their keepWarmSeconds.
}

void Context::on_pool_event(const Event& e) {
    if (!e.server.empty() && !in_view(e.server)) return;
    if (e.kind == Event::Kind::tools_changed || e.kind == Event::Kind::phase_changed) index_dirty_ = true;
    events_.emit(e);
}

// ---------------------------------------------------------------------------------------------------------------
// Servers and overrides

bool Context::in_view(std::string_view server) const {
    if (leases_.count(server)) return true;
    const auto* sc = pool_->server_config(server);
    if (!sc || !sc->enabled) return false;
    if (!options_.servers) return !sc->lazy;
    const auto& list = *options_.servers;
    // A lazy server in an explicit list is seen once it is leased (above).
    return !sc->lazy && std::find(list.begin(), list.end(), server) != list.end();
}

bool Context::sees(std::string_view server) const { return in_view(server) && !servers_off_.count(server); }

std::vector<std::string> Context::servers() const {
    std::vector<std::string> out;
    for (const auto& sc : pool_->config().servers)
        if (sees(sc.name)) out.push_back(sc.name);
    return out;
}

std::vector<std::string> Context::leased() const {
    std::vector<std::string> out;
    for (const auto& [name, lease] : leases_) out.push_back(name);
    return out;
}

bool Context::as_made() const {
    return leases_.empty() && servers_off_.empty() && tools_off_.empty() && attachments_.items().empty();
}

awaitable<Outcome<void>> Context::add_server(std::string server) {
    if (leases_.count(server)) co_return Outcome<void>{};
    auto lease = co_await pool_->acquire(server);
    if (!lease) co_return lease.error();
    // A concurrent add_server of the same server may have won: keep one lease.
    if (!leases_.count(server)) leases_.emplace(server, std::move(*lease));
    index_dirty_ = true;
    co_return Outcome<void>{};
}

void Context::remove_server(std::string_view server) {
    auto it = leases_.find(server);
    if (it == leases_.end()) return;
    leases_.erase(it);
    index_dirty_ = true;
}

void Context::set_server_enabled(const std::string& server, bool enabled) {
    if (enabled)
        servers_off_.erase(server);
    else
        servers_off_.insert(server);
    index_dirty_ = true;
}

void Context::set_tool_enabled(const std::string& server, const std::string& tool, bool enabled) {
    if (enabled)
        tools_off_.erase({server, tool});
    else
        tools_off_.insert({server, tool});
    index_dirty_ = true;
}

bool Context::server_enabled(std::string_view server) const { return !servers_off_.count(server); }

bool Context::tool_enabled(std::string_view server, std::string_view tool) const {
    return !tools_off_.count({std::string(server), std::string(tool)});
}

bool Context::patterns_allow(std::string_view server, std::string_view tool) const {
    const auto qualified = fmt::format("{}__{}", server, tool);
    auto matches = [&](const std::string& pattern) {
        return core::glob_match(pattern, qualified) || core::glob_match(pattern, tool);
    };
    if (std::any_of(options_.deny_tools.begin(), options_.deny_tools.end(), matches)) return false;
    return options_.allow_tools.empty() ||
           std::any_of(options_.allow_tools.begin(), options_.allow_tools.end(), matches);
}

Outcome<void> Context::check_server(std::string_view server) const {
    if (sees(server)) return Outcome<void>{};
    if (!pool_->server_config(server))
        return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", server));
    if (in_view(server))
        return Error::make_local(code::invalid_params,
                                 fmt::format("server \"{}\" is switched off in this conversation", server));
    if (options_.calls_to_unseen_servers) return Outcome<void>{};
    return Error::make_local(code::invalid_params,
                             fmt::format("server \"{}\" is not available in context \"{}\"", server, options_.name));
}

// ---------------------------------------------------------------------------------------------------------------
// Tools

const ToolIndex& Context::tools() { return *tool_index(); }

namespace {

// Appends `items` to a cache key so that no two different lists read the same: each item with its length.
// (Plain appends, not fmt: a stateless gateway request builds this key for the context it makes.)
void append_list(std::string& key, const std::vector<std::string>& items) {
    key.push_back('[');
    key.append(std::to_string(items.size()));
    for (const auto& item : items) {
        key.push_back(' ');
        core::append_sized(key, item);
    }
    key.push_back(']');
}

}  // namespace

std::shared_ptr<const ToolIndex> Context::tool_index() {
    if (!index_dirty_ && index_) return index_;
    // The servers seen and connected, each with its tool list as last listed.
    std::vector<std::string> connected;
    std::vector<std::shared_ptr<const std::vector<mcp::Tool>>> lists;
    for (auto& name : servers()) {
        const auto phase = pool_->phase(name);
        if (phase != Phase::connected && phase != Phase::reconnecting) continue;
        lists.push_back(pool_->tools(name));
        connected.push_back(std::move(name));
    }
    // Only when no index of the same inputs is kept: the inputs copy each server's filters.
    auto build = [&] {
        std::vector<ServerTools> in;
        for (std::size_t i = 0; i < connected.size(); ++i) {
            const auto* sc = pool_->server_config(connected[i]);
            ServerTools st{connected[i], {}, sc->allowed_tools, sc->excluded_tools, {}, lists[i]};
            st.keep = [this, name = connected[i]](std::string_view tool) {
                return tool_enabled(name, tool) && patterns_allow(name, tool);
            };
            in.push_back(std::move(st));
        }
        return ToolIndex::build(in);
    };
    if (!tools_off_.empty()) {  // a tool switched off here: an index of this context's own
        index_ = std::make_shared<const ToolIndex>(build());
    } else {
        // What the index is made of: the servers seen and connected, each one's tool list (the list itself: a new
        // listing is a new list, and the pool keeps each list of a key alive, so that its address is not reused),
        // its config's allowed and excluded tools, and this context's patterns.
        std::string key;
        for (std::size_t i = 0; i < connected.size(); ++i) {
            const auto* sc = pool_->server_config(connected[i]);
            core::append_sized(key, connected[i]);
            key.push_back('@');
            key.append(std::to_string(reinterpret_cast<std::uintptr_t>(lists[i].get())));
            append_list(key, sc->allowed_tools);
            append_list(key, sc->excluded_tools);
        }
        key.push_back('|');
        append_list(key, options_.allow_tools);
        append_list(key, options_.deny_tools);
        index_ = pool_->shared_tool_index(key, lists, build);  // a copy: `build` reads them too
    }
    index_dirty_ = false;
    return index_;
}

void Context::share_index_of(Context& like) {
    const auto own_view = [](const Context& c) {
        return !c.leases_.empty() || !c.tools_off_.empty() || !c.servers_off_.empty();
    };
    if (&like == this || own_view(*this) || own_view(like)) return;
    index_ = like.tool_index();
    index_dirty_ = false;
}

awaitable<Outcome<ResolvedTool>> Context::resolve_tool(std::string exposed_name) {
    if (pool_->shutting_down())
        co_return Error::make_local(code::connection_closed, "the host is shutting down; the tool was not called");
    auto resolve = [&]() -> std::optional<ResolvedTool> {
        if (const auto* t = tools().find(exposed_name)) return ResolvedTool{t->server, t->tool->name};
        // "<server>__<tool>" names a server explicitly, even when the tool's name is unique.
        if (auto sep = exposed_name.find("__"); sep != std::string::npos) {
            auto server = exposed_name.substr(0, sep);
            if (pool_->server_config(server)) return ResolvedTool{server, exposed_name.substr(sep + 2)};
        }
        return std::nullopt;
    };
    // A server of this context that is still starting may bring the name: look again at every change, and go ahead
    // as soon as the servers that answered know it (a hung server does not hold up a call to a healthy one).
    auto resolved = resolve();
    if (!resolved) {  // (working out the deadline walks every server: only for a name not known yet)
        const auto deadline = std::chrono::steady_clock::now() + longest_startup_of_starting_servers();
        while (!resolved && std::chrono::steady_clock::now() < deadline) {
            auto changed = std::make_shared<core::OneShotEvent>();
            const auto id = pool_->events().subscribe([changed](const Event& e) {
                if (e.kind == Event::Kind::phase_changed || e.kind == Event::Kind::tools_changed) changed->set();
            });
            core::ScopeExit unsubscribe([this, id] { pool_->events().unsubscribe(id); });
            if (longest_startup_of_starting_servers().count() == 0) break;
            co_await changed->wait_for(deadline - std::chrono::steady_clock::now());
            resolved = resolve();
        }
    }
    if (!resolved) {
        // A tool its server changed (or added) since its definition was approved is held, not unknown.
        for (const auto& server : servers())
            for (const auto& h : pool_->held(server))
                if (h.kind == PinKind::tool && h.name == exposed_name)
                    co_return Error::make_local(code::invalid_params, held_message(h));
        std::vector<std::string> names;
        for (const auto& t : tools().tools()) {
            if (names.size() == 30) {
                names.push_back("...");
                break;
            }
            names.push_back(t.name);
        }
        co_return Error::make_local(code::invalid_params,
                                    fmt::format("no tool \"{}\" on any connected server (available: {})", exposed_name,
                                                names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (auto ok = check_server(resolved->server); !ok) co_return ok.error();
    if (!tool_enabled(resolved->server, resolved->tool) || !patterns_allow(resolved->server, resolved->tool))
        co_return Error::make_local(code::invalid_params,
                                    fmt::format("tool \"{}\" is switched off in this conversation", exposed_name));
    if (const auto* sc = pool_->server_config(resolved->server);
        sc && !tool_allowed(resolved->tool, sc->allowed_tools, sc->excluded_tools))
        co_return Error::make_local(
            code::invalid_params,
            fmt::format("tool \"{}\" of server \"{}\" is excluded by the config", resolved->tool, resolved->server));
    co_return std::move(*resolved);
}

std::chrono::milliseconds Context::longest_startup_of_starting_servers() const {
    std::chrono::milliseconds longest{0};
    for (const auto& name : servers())
        if (is_starting(pool_->phase(name))) longest = std::max(longest, pool_->server_config(name)->startup_timeout);
    return longest;
}

awaitable<Outcome<mcp::CallToolResult>> Context::call_tool(std::string exposed_name, json::object arguments,
                                                           ToolCallOptions options) {
    auto self = shared_from_this();  // alive across the call, whoever drops it meanwhile
    // A name the index has (nearly every call) is resolved here, without resolve_tool's coroutine.
    if (!pool_->shutting_down())
        if (const auto* t = tools().find(exposed_name)) {
            std::string server = t->server, tool = t->tool->name;
            co_return co_await pool_->call_tool(std::move(server), std::move(tool), std::move(arguments),
                                                std::move(options));
        }
    auto resolved = co_await resolve_tool(std::move(exposed_name));
    if (!resolved) co_return resolved.error();
    co_return co_await pool_->call_tool(resolved->server, resolved->tool, std::move(arguments), std::move(options));
}

// ---------------------------------------------------------------------------------------------------------------
// Resources, prompts

namespace {

// What `per_server` returns for each of `servers`, concatenated in order.
template <class F>
auto concat_over(const std::vector<std::string>& servers, F per_server) {
    decltype(per_server(std::string())) out;
    for (const auto& name : servers) {
        auto part = per_server(name);
        out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return out;
}

}  // namespace

std::vector<ResourceInfo> Context::resources() const {
    return concat_over(servers(), [this](const std::string& s) { return pool_->resources(s); });
}

void Context::visit_resources(const std::function<void(const std::string&, const mcp::Resource&)>& fn) const {
    for (const auto& name : servers()) pool_->visit_resources(name, [&](const mcp::Resource& r) { fn(name, r); });
}

std::vector<ResourceTemplateInfo> Context::resource_templates() const {
    return concat_over(servers(), [this](const std::string& s) { return pool_->resource_templates(s); });
}

std::vector<PromptInfo> Context::prompts() const {
    return concat_over(servers(), [this](const std::string& s) { return pool_->prompts(s); });
}

awaitable<Outcome<mcp::ReadResourceResult>> Context::read_resource(std::string server, std::string uri,
                                                                   ReadMode mode, trace::SpanContext trace) {
    if (auto ok = check_server(server); !ok) co_return ok.error();
    co_return co_await pool_->read_resource(std::move(server), std::move(uri), mode, std::move(trace));
}

awaitable<Outcome<mcp::GetPromptResult>> Context::get_prompt(std::string server, std::string name,
                                                             std::map<std::string, std::string> arguments,
                                                             trace::SpanContext trace) {
    if (auto ok = check_server(server); !ok) co_return ok.error();
    co_return co_await pool_->get_prompt(std::move(server), std::move(name), std::move(arguments), std::move(trace));
}

awaitable<Outcome<mcp::CompleteResult>> Context::complete(std::string server, json::object ref, std::string argument,
                                                          std::string value,
                                                          std::map<std::string, std::string> context) {
    if (auto ok = check_server(server); !ok) co_return ok.error();
    co_return co_await pool_->complete(std::move(server), std::move(ref), std::move(argument), std::move(value),
                                       std::move(context));
}

// ---------------------------------------------------------------------------------------------------------------
// Attachments

awaitable<std::uint64_t> Context::attach_resource(std::string server, std::string uri) {
    auto self = shared_from_this();
    const auto id = attachments_.add(server, uri).id;
    events_.emit(Event::attachments_changed(server, uri));
    auto r = co_await read_resource(server, uri, ReadMode::fresh);
    if (r)
        attachments_.set_content(id, std::move(*r));
    else
        attachments_.set_error(id, r.error().describe());
    events_.emit(Event::attachments_changed(server, uri));
    co_return id;
}

std::uint64_t Context::attach_contents(std::string server, std::string uri, mcp::ReadResourceResult contents) {
    const auto id = attachments_.add(server, uri).id;
    attachments_.set_content(id, std::move(contents));
    events_.emit(Event::attachments_changed(std::move(server), std::move(uri)));
    return id;
}

bool Context::remove_attachment(std::uint64_t id) {
    if (!attachments_.remove(id)) return false;
    events_.emit(Event::attachments_changed({}, {}));
    return true;
}

std::vector<Attachment> Context::consume_attachments() {
    auto taken = attachments_.consume();
    events_.emit(Event::attachments_changed({}, {}));
    return taken;
}

}  // namespace switchboard::host
