// Tool calls answered with a task (the Tasks extension) in a stored conversation: recorded while they run, and picked
// up again by `chat --resume` after Switchboard stopped (a crash, kill -9, a closed terminal) while one ran.
#include "agent_session.hpp"

#include <switchboard/mcp/client_session.hpp>

#include <fmt/format.h>

#include <chrono>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

std::string task_status_line(const mcp::TaskProgress& task) {
    return fmt::format("  … task {}: {}{}", task.task_id, task.status,
                       task.status_message.empty() ? "" : " - " + task.status_message);
}

void AgentSession::track_task(const llm::ToolCall& call, const std::string& server, const mcp::TaskProgress& task) {
    if (!store_ || failed_ || id_ == 0 || !conversation_ || conversation_->messages().empty()) return;
    // Ended: its result is written with the turn's batch, which removes the record in the same transaction.
    if (task.status != "working" && task.status != "input_required") return;
    store::RunningTask t;
    t.conversation = id_;
    t.tool_call_id = call.id;
    t.server = server;
    t.tool = call.name;
    t.task_id = task.task_id;
    t.status = task.status;
    t.status_message = task.status_message;
    t.assistant = conversation_->messages().back();  // the loop runs the calls of the last message
    try {
        store_->save_task(t);
    } catch (const store::StoreError& e) {
        fmt::print(stderr, "switchboard: cannot record task {}: {}\n", task.task_id, e.what());
    }
}

namespace {

// One call of the interrupted message, brought to its result: its task followed again, or a note that it did not
// finish (a call that was not a task cannot be picked up).
awaitable<llm::ToolExecutionResult> resume_call(Host& h, const llm::ToolCall& call, const store::RunningTask* task,
                                                agent::Observer& observer) {
    if (!task)
        co_return llm::error_result(call, {}, "Switchboard stopped before this call returned; it was not finished",
                                    llm::ToolExecutionResult::Status::failed);
    if (observer.on_tool_start) observer.on_tool_start(call, task->server);
    auto session = co_await h.pool->session(task->server);
    if (!session) co_return llm::error_result(call, task->server, session.error().describe());
    mcp::CallOptions options;
    if (observer.on_task)
        options.on_task = [&observer, call, server = task->server](const mcp::TaskProgress& t) {
            observer.on_task(call, server, t);
        };
    auto r = co_await (*session)->resume_task(task->task_id, std::move(options));
    if (!r)
        co_return llm::error_result(call, task->server, r.error().describe(),
                                    r.error().code == jsonrpc::code::cancelled
                                        ? llm::ToolExecutionResult::Status::cancelled
                                        : llm::ToolExecutionResult::Status::failed);
    co_return llm::format_tool_result(call, task->server, *r);
}

}  // namespace

awaitable<bool> AgentSession::finish_running_tasks(Host& h, agent::Observer& observer) {
    if (!store_ || id_ == 0 || !conversation_) co_return false;
    auto tasks = store_->running_tasks(id_);
    if (tasks.empty()) co_return false;
    const auto assistant = tasks.front().assistant;  // one turn runs at a time: its calls share the message
    fmt::print(stderr, "switchboard: {} task(s) of conversation {} were running; following them again\n",
               tasks.size(), id_);
    std::vector<llm::Message> batch{assistant};
    std::vector<json::object> meta(1);
    meta[0]["resumed"] = true;
    for (const auto& call : assistant.tool_calls) {
        const store::RunningTask* task = nullptr;
        for (const auto& t : tasks)
            if (t.tool_call_id == call.id) task = &t;
        const auto start = std::chrono::steady_clock::now();
        auto result = co_await resume_call(h, call, task, observer);
        agent::ToolCallRecord record;
        record.id = call.id;
        record.name = call.name;
        record.server = task ? task->server : std::string();
        record.arguments = call.arguments;
        record.is_error = result.is_error || result.status != llm::ToolExecutionResult::Status::ok;
        record.ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
        if (observer.on_tool_end) observer.on_tool_end(record, result);
        batch.push_back(llm::Message::tool(result));
        auto m = record.to_json();
        m.erase("name");
        if (task) m["task"] = task->task_id;
        meta.push_back(std::move(m));
    }
    auto messages = conversation_->messages();
    messages.insert(messages.end(), batch.begin(), batch.end());
    conversation_->set_messages(std::move(messages));
    persist(batch, meta);  // the results and the end of the records, in one transaction
    co_return true;
}

}  // namespace switchboard::cli
