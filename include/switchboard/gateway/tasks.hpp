// The gateway's side of the Tasks extension. A client that declares the extension on a tools/call gets the upstream's
// task handle with a gateway task id (task_ids.hpp: the instance, the upstream server and its task id, the client,
// sealed); its tasks/get, tasks/update and tasks/cancel are forwarded to that upstream with the upstream's id, and the
// answers carry the gateway's id again. A client that does not declare the extension is never handed a task: its
// tools/call goes upstream without the declaration, so the upstream answers at once or with -32021 (SEP-2663: a
// server that cannot serve the request without a task answers -32021), and that answer reaches the client.
//
// A handed-out task keeps a lease on its upstream (a lazy server must not stop under it: its tasks would be lost)
// until tasks/get or tasks/update shows it ended, tasks/cancel succeeds, or its ttlMs passes (swept on each request;
// at most max_held tasks hold one).
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/gateway/task_ids.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/mcp/request_context.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace switchboard::gateway {

class GatewayTasks {
public:
    GatewayTasks(std::shared_ptr<host::ServerPool> pool, std::string instance_id, std::string key);

    /// Whether a tools/call of `ctx` may be answered with a task (a 2026-07-28 request declaring the extension).
    static bool wanted(const mcp::RequestContext& ctx);
    /// Whether a tools/call result handed back by the upstream session (mcp::TaskMode::hand_back, carried in a
    /// CallToolResult, which keeps no resultType) is a task handle.
    static bool is_handle(const boost::json::object& result);
    static constexpr std::size_t max_held = 1000;
    /// A lease on `server` for a tools/call that may become a task (taken before the call, so a lazy server does
    /// not stop between the call's own lease and the task's); an empty one for a server that is not lazy.
    boost::asio::awaitable<jsonrpc::Outcome<host::Lease>> lease(std::string server);
    /// `handle` (an upstream's CreateTaskResult from `server`) as the client gets it: the gateway's task id. `lease`
    /// is held while the task runs.
    boost::json::object hand_out(const std::string& server, boost::json::object handle,
                                 const mcp::RequestContext& ctx, host::Lease lease);
    /// How many handed-out tasks hold a lease now.
    std::size_t held() const { return held_.size(); }
    /// tasks/get, tasks/update or tasks/cancel from `ctx`'s client, answered by the upstream that runs the task.
    /// -32021 without the extension; -32602 for an id this client was not given (another client's, a forged one).
    boost::asio::awaitable<jsonrpc::Outcome<boost::json::object>> forward(std::string method,
                                                                         boost::json::object params,
                                                                         mcp::RequestContext ctx);

private:
    struct Held {
        host::Lease lease;
        std::chrono::steady_clock::time_point expires;
    };
    void sweep();

    std::shared_ptr<host::ServerPool> pool_;
    TaskIds ids_;
    std::map<std::string, Held> held_;  ///< by the gateway's task id
};

}  // namespace switchboard::gateway
