// The server side of the Tasks extension (tasks.hpp): a store of tasks a ServerHandler starts instead of answering a
// tools/call at once. Each task's work is a coroutine in a task group of its own; tasks/get reads its state (the
// result inlined once completed, the error once failed), tasks/update answers what it asked, tasks/cancel cancels it.
// The work gets a RequestContext like a tool's: its elicit()/create_message() park the task in `input_required`
// with the asks as `inputRequests` until tasks/update answers them (partially or all at once), and a progress
// message becomes the task's statusMessage. A task is forgotten `ttl` after its creation (its work cancelled if it
// still runs). Task ids are 128 random bits.
//
// Thread-safety: single owner; all calls on the executor given to create().
#pragma once

#include <switchboard/mcp/request_context.hpp>
#include <switchboard/mcp/static_handler.hpp>
#include <switchboard/mcp/tasks.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace switchboard::mcp {

struct TaskStoreOptions {
    std::chrono::milliseconds ttl{std::chrono::hours(1)};  ///< how long a task is kept after its creation
    std::chrono::milliseconds poll_interval{500};          ///< suggested to clients as pollIntervalMs
};

class TaskStore : public std::enable_shared_from_this<TaskStore> {
public:
    /// The work of a task: returns a CallToolResult object (a tool error is a completed task with isError) or an
    /// Error (the task fails with it).
    using Work = std::function<boost::asio::awaitable<Outcome<boost::json::object>>(RequestContext ctx)>;

    static std::shared_ptr<TaskStore> create(boost::asio::any_io_executor ex, TaskStoreOptions options);
    ~TaskStore();

    /// Starts `work` as a task for the request of `ctx` (its client's capabilities go with it) and returns the
    /// CreateTaskResult. The task is in the store before this returns: a tasks/get right after finds it.
    boost::json::object start(Work work, const RequestContext& ctx);
    /// Answers tasks/get, tasks/update or tasks/cancel: -32021 when the request does not declare the extension,
    /// -32602 for an unknown (or expired) taskId.
    boost::asio::awaitable<Outcome<boost::json::object>> handle(std::string method, boost::json::object params,
                                                                RequestContext ctx);
    /// Cancels every task's work and waits for it to end.
    boost::asio::awaitable<void> shutdown();
    std::size_t size() const { return tasks_.size(); }

private:
    struct Entry;
    TaskStore(boost::asio::any_io_executor ex, TaskStoreOptions options);
    static boost::asio::awaitable<void> run(std::shared_ptr<Entry> entry, Work work,
                                            std::shared_ptr<RequestContext::State> state);
    static boost::asio::awaitable<Outcome<boost::json::value>> ask(std::weak_ptr<Entry> weak, std::string key,
                                                                   std::string method, boost::json::object params);
    boost::json::object detailed(const Entry& e) const;
    static void touch(Entry& e, TaskStatus status);
    void expire();

    boost::asio::any_io_executor executor_;
    TaskStoreOptions options_;
    std::map<std::string, std::shared_ptr<Entry>> tasks_;
};

/// How a tool may run as a task: never (answered at once), when the client declared the extension, or only so (a
/// client that did not declare it gets -32021).
enum class TaskSupport { forbidden, optional, required };

/// The -32021 error for a request that needs the extension the client did not declare.
Error tasks_capability_required(std::string_view what);

/// A tool function that runs `fn` as a task of `store` when the client declared the extension, and otherwise at once
/// (`optional`) or not at all (`required`: -32021).
StaticHandler::ToolFunction task_tool(std::shared_ptr<TaskStore> store, TaskSupport support,
                                      StaticHandler::ToolFunction fn);

}  // namespace switchboard::mcp
