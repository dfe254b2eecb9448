#include <switchboard/agent/task_resume.hpp>

#include <switchboard/host/pool.hpp>
#include <switchboard/llm/tool_result.hpp>

#include <fmt/format.h>

#include <chrono>

namespace switchboard::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

// One call brought to its result: its task followed again, or a note that it did not finish (a call that was not a
// task cannot be picked up).
awaitable<llm::ToolExecutionResult> follow_one(std::shared_ptr<host::ServerPool> pool, const llm::ToolCall& call,
                                               const InterruptedTask* task, Observer& observer) {
    using Status = llm::ToolExecutionResult::Status;
    if (!task)
        co_return llm::error_result(call, {}, "Switchboard stopped before this call returned; it was not finished",
                                    Status::failed);
    if (observer.on_tool_start) observer.on_tool_start(call, task->server);
    const auto failed = [&](const jsonrpc::Error& e) {
        return llm::error_result(call, task->server,
                                 fmt::format("task {} on server \"{}\" could not be followed after a restart: {}",
                                             task->task_id, task->server, e.describe()),
                                 e.code == jsonrpc::code::cancelled ? Status::cancelled : Status::failed);
    };
    // Held while the task is followed: a lazy server stays up (and a dormant one starts); others only count it.
    auto lease = co_await pool->acquire(task->server);
    if (!lease) co_return failed(lease.error());
    auto session = co_await pool->session(task->server);
    if (!session) co_return failed(session.error());
    mcp::CallOptions options;
    if (observer.on_task)
        options.on_task = [&observer, call, server = task->server](const mcp::TaskProgress& t) {
            observer.on_task(call, server, t);
        };
    auto r = co_await (*session)->resume_task(task->task_id, std::move(options));
    if (!r) co_return failed(r.error());
    co_return llm::format_tool_result(call, task->server, *r);
}

}  // namespace

awaitable<ResumedBatch> follow_interrupted_tasks(std::shared_ptr<host::ServerPool> pool, llm::Message assistant,
                                                 std::vector<InterruptedTask> tasks, Observer& observer) {
    ResumedBatch batch;
    batch.meta.emplace_back();
    batch.meta[0]["resumed"] = true;
    for (const auto& call : assistant.tool_calls) {
        const InterruptedTask* task = nullptr;
        for (const auto& t : tasks)
            if (t.tool_call_id == call.id) task = &t;
        const auto start = std::chrono::steady_clock::now();
        auto result = co_await follow_one(pool, call, task, observer);
        ToolCallRecord record;
        record.id = call.id;
        record.name = call.name;
        record.server = task ? task->server : std::string();
        record.arguments = call.arguments;
        record.is_error = result.is_error || result.status != llm::ToolExecutionResult::Status::ok;
        record.ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
        if (observer.on_tool_end) observer.on_tool_end(record, result);
        batch.messages.push_back(llm::Message::tool(result));
        auto m = record.to_json();
        m.erase("name");
        if (task) m["task"] = task->task_id;
        batch.meta.push_back(std::move(m));
    }
    batch.messages.insert(batch.messages.begin(), std::move(assistant));
    co_return batch;
}

}  // namespace switchboard::agent
