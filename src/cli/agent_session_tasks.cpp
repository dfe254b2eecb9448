// Tool calls answered with a task (the Tasks extension) in a stored conversation: recorded while they run, and picked
// up again by `chat --resume` after Switchboard stopped (a crash, kill -9, a closed terminal) while one ran.
#include "agent_session.hpp"

#include <switchboard/agent/task_resume.hpp>
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

awaitable<bool> AgentSession::finish_running_tasks(Host& h, agent::Observer& observer) {
    if (!store_ || id_ == 0 || !conversation_) co_return false;
    auto tasks = store_->running_tasks(id_);
    if (tasks.empty()) co_return false;
    const auto assistant = tasks.front().assistant;  // one turn runs at a time: its calls share the message
    fmt::print(stderr, "switchboard: {} task(s) of conversation {} were running; following them again\n",
               tasks.size(), id_);
    std::vector<agent::InterruptedTask> interrupted;
    for (const auto& t : tasks) interrupted.push_back({t.tool_call_id, t.server, t.task_id});
    auto resumed = co_await agent::follow_interrupted_tasks(h.pool, assistant, std::move(interrupted), observer);
    // The assistant message is stored with the results (it was not before).
    std::span<const llm::Message> batch = resumed.messages;
    const auto& meta = resumed.meta;
    auto messages = conversation_->messages();
    messages.insert(messages.end(), batch.begin(), batch.end());
    conversation_->set_messages(std::move(messages));
    persist(batch, meta);  // the results and the end of the records, in one transaction
    co_return true;
}

}  // namespace switchboard::cli
