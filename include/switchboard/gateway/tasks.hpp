// The gateway's side of the Tasks extension. A client that declares the extension on a tools/call gets the upstream's
// task handle with a gateway task id (task_ids.hpp: the instance, the upstream server and its task id, the client,
// sealed); its tasks/get, tasks/update and tasks/cancel are forwarded to that upstream with the upstream's id, and the
// answers carry the gateway's id again. A client that does not declare the extension is never handed a task: its
// tools/call goes upstream without the declaration, so the upstream answers at once or with -32021 (SEP-2663: a
// server that cannot serve the request without a task answers -32021), and that answer reaches the client.
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/gateway/task_ids.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/mcp/request_context.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

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
    /// `handle` (an upstream's CreateTaskResult from `server`) as the client gets it: the gateway's task id.
    boost::json::object hand_out(const std::string& server, boost::json::object handle,
                                 const mcp::RequestContext& ctx) const;
    /// tasks/get, tasks/update or tasks/cancel from `ctx`'s client, answered by the upstream that runs the task.
    /// -32021 without the extension; -32602 for an id this client was not given (another client's, a forged one).
    boost::asio::awaitable<jsonrpc::Outcome<boost::json::object>> forward(std::string method,
                                                                         boost::json::object params,
                                                                         mcp::RequestContext ctx);

private:
    std::shared_ptr<host::ServerPool> pool_;
    TaskIds ids_;
};

}  // namespace switchboard::gateway
