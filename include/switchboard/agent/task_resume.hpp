// Tool calls a server answered with a task (the Tasks extension) that were still running when Switchboard stopped:
// followed again after a restart (`chat --resume`, `run --resume`, `serve`), each brought to a tool message for the
// assistant message that asked for them. What the front ends share; storing the batch is theirs (the store's append
// ends the running-task records in the same transaction, so a result lands once).
#pragma once

#include <switchboard/agent/conversation.hpp>
#include <switchboard/llm/message.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchboard::host {
class ServerPool;
}

namespace switchboard::agent {

/// One recorded task: the tool call it answers, on which server, under which task id.
struct InterruptedTask {
    std::string tool_call_id;
    std::string server;
    std::string task_id;
};

/// The tool messages for `assistant`'s calls, with their meta ({"resumed": true} for the assistant message first,
/// then each call's ToolCallRecord, "task" naming its task id).
struct ResumedBatch {
    std::vector<llm::Message> messages;  ///< `assistant`, then one tool message per call, in call order
    std::vector<boost::json::object> meta;
};

/// Follows each call's task to its end on its server (a lazy server is leased while it is followed; a server still
/// starting is waited for). A call without a task, a server that is gone, or a task the server no longer knows
/// becomes an error result naming the task and the cause. The observer sees on_tool_start, on_task, on_tool_end.
boost::asio::awaitable<ResumedBatch> follow_interrupted_tasks(std::shared_ptr<host::ServerPool> pool,
                                                              llm::Message assistant,
                                                              std::vector<InterruptedTask> tasks, Observer& observer);

}  // namespace switchboard::agent
