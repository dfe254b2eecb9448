#include "aggregate_common.hpp"

#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/mcp/skills.hpp>
#include <switchboard/mcp/static_handler.hpp>
#include <switchboard/mcp/tasks.hpp>
#include <switchboard/mcp/version.hpp>

#include <boost/container/small_vector.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

// Tools: the list (a page kept as text per client kind, see ToolListCache) and a call, forwarded to the server that
// owns the name with its progress, its cancellation and its task.
namespace switchboard::gateway {

using detail::strip_upstream_meta;

namespace {

// A complete result's text (host::ToolCallOptions::result_text) made, where it is, into the members the gateway
// answers with (RequestContext::answer_with_members): what strip_upstream_meta does, done on the text (resultType and
// _meta.serverInfo left out, the rest as the upstream wrote it). False, with the text as it was, when it is built
// instead: a key with an escape or one twice, an isError result (the session's metrics read it), a _meta with more
// in it (merged with the session's own _meta), and, when the client may get a task, what may be a task's handle
// (GatewayTasks::is_handle reads it).
bool forwarded_members(jsonrpc::ResultText& result, bool task_wanted) {
    const auto& members = result.members_of();  // found by the session already (complete or not, it looked)
    if (!members) return false;
    boost::container::small_vector<std::string_view, 8> kept;  // each `"key":value` as written
    for (std::size_t i = 0; i < members->size(); ++i) {
        const auto& m = (*members)[i];
        for (std::size_t j = 0; j < i; ++j)
            if ((*members)[j].key == m.key) return false;
        if ((m.key == "isError" && m.value != "false") || (task_wanted && m.key == "taskId")) return false;
        if (m.key == "resultType") continue;
        if (m.key == "_meta") {
            auto meta = jsonrpc::object_members(m.value);
            if (!meta) return false;
            for (const auto& e : *meta)
                if (e.key != mcp::meta::server_info) return false;
            continue;
        }
        const char* from = m.key.data() - 1;  // the key's opening quote
        kept.emplace_back(from, static_cast<std::size_t>(m.value.data() + m.value.size() - from));
    }
    // Each kept member moved down to where the previous one ended: never past where it is read from.
    auto& text = result.text;
    std::size_t end = 0;
    for (const auto& k : kept) {
        if (end > 0) text[end++] = ',';
        std::memmove(text.data() + end, k.data(), k.size());
        end += k.size();
    }
    text.resize(end);
    result.members.reset();  // views of what the text was
    return true;
}

}  // namespace

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
                host_tool_called_ = true;  // it may keep what the client did (the skills it loaded): not reusable()
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
        // The server's entry stays when empty (one per server at most): not made and freed again for every call.
        std::erase_if(it->second, [call](const auto& c) { return c.first == call; });
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
    // A complete result comes as the text the upstream wrote, and goes out as that text (forwarded_members): never
    // built into values and written again. A task's handle comes as a value (mcp::CallOptions::result_text).
    std::shared_ptr<jsonrpc::ResultText> result_text;
    if (ctx.takes_result_members()) {
        result_text = std::make_shared<jsonrpc::ResultText>();
        options.result_text = result_text;
    }
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
    if (result_text && !result_text->text.empty()) {
        if (forwarded_members(*result_text, task_wanted)) {
            count.error = false;
            const auto* text = &result_text->text;
            ctx.answer_with_members(std::shared_ptr<const std::string>(std::move(result_text), text));
            co_return json::object();
        }
        *r = mcp::CallToolResult::whole(jsonrpc::parse_json_text(result_text->text));
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

}  // namespace switchboard::gateway
