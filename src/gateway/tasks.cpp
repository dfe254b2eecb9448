#include <switchboard/gateway/tasks.hpp>

#include <switchboard/mcp/client_session.hpp>
#include <switchboard/mcp/task_store.hpp>
#include <switchboard/mcp/tasks.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace switchboard::gateway {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Error;
using jsonrpc::Outcome;
namespace code = jsonrpc::code;

namespace {

// Who a task belongs to: the subject (and issuer) of an authenticated request's token; else (unauthenticated, on
// loopback) what the client says of itself, its clientInfo, which two users of the same client app share. The task id
// itself (sealed, unguessable) is what keeps other clients out; the owner check makes a client that is handed
// another's id see "not found".
std::string client_owner(const mcp::RequestContext& ctx) {
    if (const auto& who = ctx.principal(); !who.empty()) return "principal:" + who;
    const auto& info = ctx.client_info();
    return "client:" + mcp::string_field(info, "name");
}

// A task without a ttlMs holds its server at most this long.
constexpr std::chrono::hours untimed_task_hold{24};

Error unknown_task(std::string_view id) {
    return Error{code::invalid_params, fmt::format("Unknown taskId \"{}\" (never created, expired, or not yours)", id)};
}

}  // namespace

GatewayTasks::GatewayTasks(std::shared_ptr<host::ServerPool> pool, std::string instance_id, std::string key)
    : pool_(std::move(pool)), ids_(std::move(instance_id), std::move(key)) {}

bool GatewayTasks::wanted(const mcp::RequestContext& ctx) {
    return ctx.era() == mcp::Era::modern && mcp::declares_tasks(ctx.client_capabilities());
}

bool GatewayTasks::is_handle(const json::object& result) {
    const auto* id = result.if_contains("taskId");
    const auto* status = result.if_contains("status");
    const auto* content = result.if_contains("content");
    const bool no_content = !content || (content->is_array() && content->get_array().empty());
    return id && id->is_string() && status && status->is_string() && no_content;
}

awaitable<Outcome<host::Lease>> GatewayTasks::lease(std::string server) {
    // Only a lazy server stops when its leases are gone: any other needs none (and a lease costs every call that may
    // become a task two events to every listener of the pool).
    if (const auto* sc = pool_->server_config(server); sc && !sc->lazy) co_return host::Lease{};
    co_return co_await pool_->acquire(std::move(server));
}

void GatewayTasks::sweep() {
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(held_, [now](const auto& h) { return h.second.expires <= now; });
    while (held_.size() >= max_held) {  // the one that expires first goes
        auto first = std::min_element(held_.begin(), held_.end(), [](const auto& a, const auto& b) {
            return a.second.expires < b.second.expires;
        });
        held_.erase(first);
    }
}

json::object GatewayTasks::hand_out(const std::string& server, json::object handle, const mcp::RequestContext& ctx,
                                    host::Lease lease) {
    auto id = ids_.encode(TaskRef{server, mcp::string_field(handle, "taskId"), client_owner(ctx)});
    if (lease) {
        sweep();
        auto task = mcp::Task::from_json(handle);
        const auto hold = task && task->ttl_ms && *task->ttl_ms >= 0
                              ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::milliseconds(*task->ttl_ms))
                              : std::chrono::duration_cast<std::chrono::steady_clock::duration>(untimed_task_hold);
        held_[id] = Held{std::move(lease), std::chrono::steady_clock::now() + hold};
    }
    handle["taskId"] = std::move(id);
    handle.erase("content");  // put in by CallToolResult, which carried the handle here; not part of a task
    handle["resultType"] = "task";
    return handle;
}

awaitable<Outcome<json::object>> GatewayTasks::forward(std::string method, json::object params,
                                                       mcp::RequestContext ctx) {
    if (!wanted(ctx)) co_return mcp::tasks_capability_required(method);
    sweep();
    const auto id = mcp::string_field(params, "taskId");
    if (id.empty()) co_return Error{code::invalid_params, method + ": missing string \"taskId\""};
    auto ref = ids_.decode(id, client_owner(ctx));
    if (!ref) co_return unknown_task(id);
    auto lease = co_await pool_->acquire(ref->server);  // a lazy server is held for the request
    if (!lease) co_return unknown_task(id);
    auto session = co_await pool_->session(ref->server);
    if (!session) co_return unknown_task(id);
    params.erase("_meta");  // the upstream gets the gateway's own _meta (its version, its declaration)
    params["taskId"] = ref->upstream_id;
    mcp::CallOptions options;
    options.tasks = mcp::TaskMode::hand_back;
    options.trace = ctx.trace();  // the client's poll continues its trace upstream
    auto r = co_await (*session)->request(method, std::move(params), std::move(options));
    if (!r) {
        Error e = r.error();
        // The upstream no longer knows it (expired, restarted): for the client it is the gateway's id that is unknown.
        if (!e.local && e.code == code::invalid_params) {
            held_.erase(id);
            co_return unknown_task(id);
        }
        e.message = fmt::format("server \"{}\": {} failed: {}", ref->server, method, e.message);
        co_return e;
    }
    if (!r->is_object()) co_return Error{code::internal_error, fmt::format("server \"{}\": {} is not an object",
                                                                            ref->server, method)};
    auto result = std::move(r->get_object());
    // Ended (or cancelled): its server need not stay up for it any more.
    auto task = mcp::Task::from_json(result);
    if (method == mcp::tasks_method::cancel || (task && mcp::is_terminal(task->status))) held_.erase(id);
    if (result.contains("taskId")) result["taskId"] = id;
    // The inlined CallToolResult as a 2026-07-28 tools/call gives it (an upstream may leave its resultType out).
    if (auto* inlined = result.if_contains("result"); inlined && inlined->is_object())
        inlined->get_object().emplace("resultType", "complete");
    if (auto* meta = result.if_contains("_meta"); meta && meta->is_object())
        meta->get_object().erase(mcp::meta::server_info);  // the gateway's own goes in
    co_return result;
}

}  // namespace switchboard::gateway
