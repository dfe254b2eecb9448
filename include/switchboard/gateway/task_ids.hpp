// The task ids a gateway gives its clients (the Tasks extension): each names the instance that made it, the upstream
// server that runs the task, the upstream's own task id and the client it belongs to, sealed with an HMAC-SHA256 so
// that a client can neither forge one nor point one at another upstream task. "a.<payload>.<mac>": an instance id
// first, so a load balancer can route tasks/* by the Mcp-Name header's prefix (the task lives in that instance's
// upstream process); instances that share the key (SWITCHBOARD_TASK_KEY) accept each other's ids, so with shared
// (HTTP) upstreams any instance can serve them.
//
// Thread-safety: immutable after construction; encode/decode are const and pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchboard::gateway {

struct TaskRef {
    std::string server;       ///< the upstream server (config name)
    std::string upstream_id;  ///< the task id the upstream gave
    std::string owner;        ///< the client it belongs to (see client_owner in aggregate_handler.cpp)
};

class TaskIds {
public:
    /// `key` empty: a random one (ids then only valid at this process).
    TaskIds(std::string instance_id, std::string key);

    std::string encode(const TaskRef& ref) const;
    /// nullopt for anything this gateway (or one sharing its key) did not make, and for another owner's task: to
    /// that client it does not exist.
    std::optional<TaskRef> decode(std::string_view id, std::string_view owner) const;

private:
    std::string mac(std::string_view text) const;
    std::string instance_;
    std::string key_;
};

}  // namespace switchboard::gateway
