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

namespace switchboard::gateway {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Error;
using jsonrpc::Outcome;
namespace code = jsonrpc::code;
using Reply = mcp::ServerHandler::Reply<json::object>;

namespace {

Error invalid_params(std::string message) { return Error{code::invalid_params, std::move(message)}; }

// What an upstream adds to a result for its own era; the gateway's session adds its own.
void strip_upstream_meta(json::object& result) {
    result.erase("resultType");
    if (auto* m = result.if_contains("_meta"); m && m->is_object()) {
        m->get_object().erase(mcp::meta::server_info);
        if (m->get_object().empty()) result.erase("_meta");
    }
}

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
// Tools

std::string AggregateHandler::tool_list_key(bool renders_apps, const mcp::UiUriMap& uris) const {
    std::string key = renders_apps ? "apps " : "no-apps ";
    key.append(std::to_string(page_size_));
    key.push_back(' ');
    core::append_sized(key, uris.shared_uris());
    for (const auto& t : host_tools_) {
        core::append_sized(key, t.name);
        core::append_sized(key, t.description);
        core::append_sized(key, jsonrpc::serialize_members(t.input_schema));
    }
    return key;
}

Reply AggregateHandler::list_tools(std::string cursor, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    json::array tools;
    const auto index_ptr = context_->tool_index();
    const auto& index = *index_ptr;
    const auto uris = ui_uris();
    // An app-only tool (MCP Apps visibility ["app"]) is for a view to call: a client that renders no views would
    // only hand it to its model, which the extension forbids.
    const bool renders_apps = mcp::declares_ui(ctx.client_capabilities());
    // A page already built from this index, for what else it depends on, is answered as the text it was.
    const bool cache = tool_list_cache_ && ctx.takes_result_members();
    std::string key;
    if (cache) {
        key = tool_list_key(renders_apps, uris);
        if (auto members = tool_list_cache_->find(index_ptr, key, cursor)) {
            ctx.answer_with_members(std::move(members));
            co_return json::object();
        }
    }
    for (const auto& t : index.tools()) {
        if (!renders_apps && !mcp::model_visible(*t.tool)) continue;
        auto o = t.tool->to_json();
        o["name"] = t.name;
        mcp::rewrite_tool_ui_uri(o, [&](std::string_view uri) { return uris.exposed(t.server, uri); });
        tools.push_back(std::move(o));
    }
    for (const auto& t : host_tools_) {
        if (index.find(t.name)) continue;  // a server's tool of that name wins
        json::object o;
        o["name"] = t.name;
        o["description"] = t.description;
        o["inputSchema"] = t.input_schema;
        tools.push_back(std::move(o));
    }
    auto page = page_of(std::move(tools), "tools", "name", cursor, page_size_);
    if (!cache || !page) co_return page;
    auto members = std::make_shared<const std::string>(jsonrpc::serialize_members(*page));
    const auto* next = page->if_contains("nextCursor");
    tool_list_cache_->keep(index_ptr, key, cursor, members,
                           next && next->is_string() ? std::string(next->get_string()) : std::string());
    ctx.answer_with_members(std::move(members));
    co_return json::object();
}

Reply AggregateHandler::call_tool(std::string name, json::object arguments, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    // Looked up once: the entry stays valid until a co_await.
    const auto* indexed = context_->tools().find(name);
    if (!indexed)
        for (const auto& t : host_tools_)
            if (t.name == name) {
                auto call = t.call;  // the handler may change while this runs: the call holds its own
                co_return co_await call(std::move(arguments), std::move(ctx));
            }
    // A name the index has is resolved at once; only another (a server still starting may bring it) waits.
    std::optional<Outcome<host::ResolvedTool>> resolved_or;  // statements, not ?: around a co_await (GCC 12)
    if (indexed) {
        host::ResolvedTool now{indexed->server, indexed->tool->name};
        resolved_or.emplace(std::move(now));
    } else {
        resolved_or.emplace(co_await context_->resolve_tool(name));
    }
    auto& resolved = *resolved_or;
    if (!resolved) {
        auto e = resolved.error();
        e.local = false;
        if (e.code >= -5) e.code = code::invalid_params;
        co_return e;
    }
    // After a wait (resolve_tool), the index may be a new one: looked up again.
    const auto* entry = indexed ? indexed : context_->tools().find(name);
    if (entry && !mcp::model_visible(*entry->tool) && !mcp::declares_ui(ctx.client_capabilities()))
        co_return Error{code::invalid_params,
                        fmt::format("tool \"{}\" is only for its MCP App's view, and this client did not declare {}",
                                    name, mcp::ui_extension),
                        {},
                        false};
    const auto server = resolved->server;
    // Counted when the call ends, however it ends (a cancelled call's coroutine is destroyed: an error).
    struct Count {
        Metrics* metrics;
        std::string server, tool;
        std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
        bool error = true;
        ~Count() {
            if (metrics) metrics->record_call(server, tool, std::chrono::steady_clock::now() - began, error);
        }
    } count{metrics_.get(), server, resolved->tool};
    // While this call runs, `server`'s requests to its client (sampling, elicitation, roots) come to this client.
    ClientRelay::Registration registration;
    if (relay_) registration = relay_->enter(server, ctx);
    const auto call = ++next_call_;
    calls_[server].emplace_back(call, ctx);
    core::ScopeExit leave([this, server, call] {
        auto it = calls_.find(server);
        if (it == calls_.end()) return;
        std::erase_if(it->second, [call](const auto& c) { return c.first == call; });
        if (it->second.empty()) calls_.erase(it);
    });
    host::ToolCallOptions options;
    options.on_progress = [ctx](const jsonrpc::Progress& p) { ctx.progress(p.progress, p.total, p.message); };
    options.call_id = call_id_;
    options.whole_result = true;  // forwarded as it came: not split into blocks and put back together
    options.trace = ctx.trace();  // the upstream call continues the client's trace
    // A task goes to the client only if it declared the extension on this request; otherwise the upstream is not
    // told of it either, and answers at once or with -32021 (gateway/tasks.hpp).
    const bool task_wanted = tasks_ && GatewayTasks::wanted(ctx);
    if (tasks_) options.tasks = task_wanted ? mcp::TaskMode::hand_back : mcp::TaskMode::undeclared;
    // A task outlives the call: its lease is taken now, so a lazy server does not stop when the call's own is dropped.
    host::Lease task_lease;
    if (task_wanted)
        if (auto l = co_await tasks_->lease(server)) task_lease = std::move(*l);
    // The client's cancel cancels this coroutine, hence the upstream request (notifications/cancelled).
    // Resolved above: to the pool at once (Context::call_tool would look the name up again, in a coroutine of its
    // own), unless taking the task's lease awaited: then it is looked up again (the tool may be gone or switched off).
    std::optional<Outcome<mcp::CallToolResult>> r_or;  // statements, not ?: around a co_await (GCC 12)
    if (task_wanted)
        r_or.emplace(co_await context_->call_tool(std::move(name), std::move(arguments), std::move(options)));
    else
        r_or.emplace(co_await context_->pool().call_tool(server, std::move(resolved->tool), std::move(arguments),
                                                         std::move(options)));
    auto& r = *r_or;
    if (!r) {
        auto e = upstream_error(server, r.error());
        const bool local = r.error().local;
        // A 2026-07-28 client that lacks a capability the upstream needs gets -32021 itself; an older client, which
        // has no such error, a tool error.
        const bool missing_capability = r.error().code == code::missing_required_client_capability;
        const bool modern = ctx.era() == mcp::Era::modern;
        if ((local && r.error().code != code::cancelled && r.error().code != code::invalid_params &&
             !missing_capability) ||
            (missing_capability && !modern)) {
            // The upstream failed (crashed, timed out, closed): a tool error the client's model can read.
            json::object text;
            text["type"] = "text";
            text["text"] = e.message;
            json::array content;
            content.push_back(std::move(text));
            json::object result;
            result["content"] = std::move(content);
            result["isError"] = true;
            co_return result;
        }
        co_return e;
    }
    json::object result = std::move(*r).to_json();
    strip_upstream_meta(result);
    if (task_wanted && GatewayTasks::is_handle(result)) {
        count.error = false;
        co_return tasks_->hand_out(server, std::move(result), ctx, std::move(task_lease));
    }
    const auto* is_error = result.if_contains("isError");
    count.error = is_error && is_error->is_bool() && is_error->as_bool();
    co_return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Resources. A URI listed by several servers belongs to the first of them in config order.

Reply AggregateHandler::list_resources(std::string cursor, mcp::RequestContext) {
    auto self = shared_from_this();
    std::set<std::string> seen;
    json::array list;
    const auto uris = ui_uris();
    for (const auto& r : context_->resources()) {
        auto uri = uris.exposed(r.server, r.resource.uri);
        if (!seen.insert(uri).second) continue;
        list.push_back(r.resource.raw);
        list.back().get_object()["uri"] = std::move(uri);
    }
    co_return page_of(std::move(list), "resources", "uri", cursor, page_size_);
}

Reply AggregateHandler::list_resource_templates(std::string cursor, mcp::RequestContext) {
    auto self = shared_from_this();
    std::set<std::string> seen;
    json::array list;
    for (const auto& t : context_->resource_templates()) {
        if (!seen.insert(t.resource_template.uri_template).second) continue;
        list.push_back(t.resource_template.raw);
    }
    co_return page_of(std::move(list), "resourceTemplates", "uriTemplate", cursor, page_size_);
}

mcp::UiUriMap AggregateHandler::ui_uris() const {
    mcp::UiUriMap map;
    for (const auto& t : context_->tools().tools())
        if (auto ui = mcp::tool_ui(*t.tool); ui && !ui->resource_uri.empty()) map.add(t.server, ui->resource_uri);
    context_->visit_resources([&](const std::string& server, const mcp::Resource& r) { map.add(server, r.uri); });
    return map;
}

std::optional<std::string> AggregateHandler::owner_of_uri(const std::string& uri) const {
    std::optional<std::string> owner;
    context_->visit_resources([&](const std::string& server, const mcp::Resource& r) {
        if (!owner && r.uri == uri) owner = server;
    });
    if (owner) return owner;
    for (const auto& t : context_->resource_templates()) {
        mcp::ServerHandler::Args vars;
        if (mcp::match_uri_template(t.resource_template.uri_template, uri, vars)) return t.server;
    }
    return std::nullopt;
}

Reply AggregateHandler::read_resource(std::string uri, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    if (skills_ && skills_->declared()) {
        // A skill's files are routed by its directory (a renamed skill's URIs are the gateway's own).
        auto skill = co_await skills_->read(uri);
        if (skill) co_return skill_result(std::move(*skill));
    }
    // A ui:// view goes to the server whose it is; a shared URI comes renamed (ui_uris()) and is read by its own.
    std::optional<std::string> server;
    std::string exposed;
    if (uri.starts_with("ui://"))
        if (auto target = ui_uris().resolve(uri)) {
            server = std::move(target->server);
            exposed = std::exchange(uri, std::move(target->uri));
        }
    if (!server) server = owner_of_uri(uri);
    if (!server) {
        json::object data;
        data["uri"] = uri;
        co_return Error{ctx.era() == mcp::Era::modern ? code::invalid_params : code::resource_not_found_legacy,
                        fmt::format("Resource not found: no server of this gateway lists {} or has a template "
                                    "matching it",
                                    uri),
                        std::move(data)};
    }
    // As for tools/call: the server's requests to its client (2026-07-28 allows them here too) come to this client.
    ClientRelay::Registration registration;
    if (relay_) registration = relay_->enter(*server, ctx);
    auto r = co_await context_->read_resource(*server, std::move(uri), host::ReadMode::cached, ctx.trace());
    if (!r) co_return upstream_error(*server, r.error());
    auto result = r->to_json();
    strip_upstream_meta(result);
    if (!exposed.empty())  // the contents name the URI the client asked for
        if (auto* contents = result.if_contains("contents"); contents && contents->is_array())
            for (auto& c : contents->get_array())
                if (auto* o = c.if_object(); o && o->contains("uri")) (*o)["uri"] = exposed;
    co_return result;
}

Reply AggregateHandler::extension_request(std::string method, json::object params, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    if (tasks_ && mcp::is_tasks_method(method)) {
        auto tasks = tasks_;
        co_return co_await tasks->forward(std::move(method), std::move(params), std::move(ctx));
    }
    const bool skill_method = method == "skills/list" || method == "skills/get" || method == "resources/directory/read";
    if (!skill_method || !skills_ || !skills_->declared()) co_return mcp::method_not_found(method);
    auto answer = co_await skills_->answer(std::move(method), std::move(params));
    co_return skill_result(std::move(answer));
}

Outcome<json::object> AggregateHandler::skill_result(SkillAnswer answer) const {
    if (!answer.result) {
        if (answer.server.empty()) return answer.result.error();
        return upstream_error(answer.server, answer.result.error());
    }
    strip_upstream_meta(*answer.result);
    return std::move(*answer.result);
}

mcp::ServerHandler::Reply<void> AggregateHandler::subscribe(std::string uri, mcp::RequestContext) {
    auto self = shared_from_this();
    auto server = owner_of_uri(uri);
    if (!server) {
        json::object data;
        data["uri"] = uri;
        co_return Error{code::resource_not_found_legacy,
                        fmt::format("Resource not found: no server of this gateway lists {}", uri), std::move(data)};
    }
    if (subscribed_.count(uri)) co_return Outcome<void>{};
    // The pool counts holders: the first one subscribes upstream, and every client of the gateway holds its own.
    auto r = co_await context_->pool().subscribe_resource(*server, uri);
    if (!r) co_return upstream_error(*server, r.error());
    subscribed_[uri] = *server;
    co_return Outcome<void>{};
}

mcp::ServerHandler::Reply<void> AggregateHandler::unsubscribe(std::string uri, mcp::RequestContext) {
    auto self = shared_from_this();
    auto it = subscribed_.find(uri);
    if (it == subscribed_.end()) co_return Outcome<void>{};
    const auto server = it->second;
    subscribed_.erase(it);
    auto r = co_await context_->pool().unsubscribe_resource(server, uri);
    if (!r) co_return upstream_error(server, r.error());
    co_return Outcome<void>{};
}

// ---------------------------------------------------------------------------------------------------------------
// Prompts: a name several servers share becomes `server__prompt`, as for tools.

std::vector<AggregateHandler::ExposedPrompt> AggregateHandler::expose_prompts(
    const std::vector<host::PromptInfo>& prompts) {
    std::map<std::string, int> count;
    for (const auto& p : prompts) ++count[p.prompt.name];
    std::vector<ExposedPrompt> out;
    std::set<std::string> taken;
    for (const auto& p : prompts) {
        auto name = count[p.prompt.name] > 1 ? p.server + "__" + p.prompt.name : p.prompt.name;
        if (!taken.insert(name).second) continue;  // a server listing the same name twice
        out.push_back(ExposedPrompt{std::move(name), p.server, &p.prompt});
    }
    return out;
}

Reply AggregateHandler::list_prompts(std::string cursor, mcp::RequestContext) {
    auto self = shared_from_this();
    const auto prompts = context_->prompts();
    json::array list;
    for (const auto& e : expose_prompts(prompts)) {
        json::object o = e.prompt->raw;
        o["name"] = e.name;
        list.push_back(std::move(o));
    }
    co_return page_of(std::move(list), "prompts", "name", cursor, page_size_);
}

Reply AggregateHandler::get_prompt(std::string name, Args arguments, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    const auto prompts = context_->prompts();
    std::string server, own_name;
    for (const auto& e : expose_prompts(prompts)) {
        if (e.name != name) continue;
        server = e.server;
        own_name = e.prompt->name;
    }
    if (server.empty()) co_return invalid_params(fmt::format("Unknown prompt: {}", name));
    ClientRelay::Registration registration;
    if (relay_) registration = relay_->enter(server, ctx);
    auto r = co_await context_->get_prompt(server, std::move(own_name), std::move(arguments), ctx.trace());
    if (!r) co_return upstream_error(server, r.error());
    json::object result = r->raw;
    strip_upstream_meta(result);
    co_return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Completion: to the server that owns the ref.

Reply AggregateHandler::complete(json::object params, mcp::RequestContext) {
    auto self = shared_from_this();
    const auto* ref_value = params.if_contains("ref");
    if (!ref_value || !ref_value->is_object()) co_return invalid_params("missing \"ref\"");
    json::object ref = ref_value->get_object();
    const auto type = mcp::string_field(ref, "type");
    std::string server;
    if (type == "ref/prompt") {
        const auto name = mcp::string_field(ref, "name");
        const auto prompts = context_->prompts();
        for (const auto& e : expose_prompts(prompts)) {
            if (e.name != name) continue;
            server = e.server;
            ref["name"] = e.prompt->name;
        }
        if (server.empty()) co_return invalid_params(fmt::format("Unknown prompt: {}", name));
    } else if (type == "ref/resource") {
        const auto uri = mcp::string_field(ref, "uri");
        for (const auto& t : context_->resource_templates())
            if (t.resource_template.uri_template == uri) {
                server = t.server;
                break;
            }
        if (server.empty())
            for (const auto& r : context_->resources())
                if (r.resource.uri == uri) {
                    server = r.server;
                    break;
                }
        if (server.empty()) co_return invalid_params(fmt::format("Unknown resource or template: {}", uri));
    } else {
        co_return invalid_params(fmt::format("unknown ref type \"{}\"", type));
    }
    std::string argument, value;
    if (const auto* a = params.if_contains("argument"); a && a->is_object()) {
        argument = mcp::string_field(a->get_object(), "name");
        value = mcp::string_field(a->get_object(), "value");
    }
    Args context_args;
    if (const auto* c = params.if_contains("context"); c && c->is_object())
        context_args = mcp::to_args(c->get_object().if_contains("arguments"));
    auto r = co_await context_->complete(server, std::move(ref), std::move(argument), std::move(value),
                                         std::move(context_args));
    if (!r) co_return upstream_error(server, r.error());
    json::array values;
    for (const auto& v : r->values) values.emplace_back(v);
    json::object completion;
    completion["values"] = std::move(values);
    if (r->total) completion["total"] = *r->total;
    completion["hasMore"] = r->has_more;
    json::object result;
    result["completion"] = std::move(completion);
    co_return result;
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
    // Made on a line of its own: no temporary converted into a parameter inside the co_await (docs/design.md, GCC 12).
    std::shared_ptr<mcp::ServerHandler> handler = make_handler();
    co_return co_await mcp::Server::answer(options_.server, std::move(handler), std::move(request), std::move(send));
}

awaitable<void> Gateway::shutdown() { co_await mcp::cancel_suspended(options_.server.input_rounds); }

}  // namespace switchboard::gateway
