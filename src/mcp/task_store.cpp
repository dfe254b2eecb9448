#include "pending_asks.hpp"
#include "request_state.hpp"

#include <switchboard/core/task_group.hpp>
#include <switchboard/jsonrpc/signal.hpp>
#include <switchboard/mcp/task_store.hpp>

#include <boost/asio/this_coro.hpp>
#include <fmt/format.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

struct TaskStore::Entry {
    explicit Entry(asio::any_io_executor ex) : work(std::move(ex)) {}
    Task task;
    clock::time_point expires;
    core::TaskGroup work;                        // the task's coroutine: cancelled by tasks/cancel or expiry
    detail::PendingAsks asks;                    // what the work asked (inputRequests), and the client's answers
    std::optional<json::object> result;  // completed
    std::optional<Error> error;          // failed
    jsonrpc::Signal changed;             // an answer arrived
};

namespace {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// 128 bits from the system's CSPRNG: a task id is all that lets a client reach a task, so it must not be guessable
// from another (a seeded mt19937 would be, from one id).
std::string new_task_id() {
    std::array<unsigned char, 16> raw{};
    if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) throw std::runtime_error("RAND_bytes failed");
    std::string id;
    for (auto b : raw) id += fmt::format("{:02x}", b);
    return id;
}

}  // namespace

std::shared_ptr<TaskStore> TaskStore::create(asio::any_io_executor ex, TaskStoreOptions options) {
    return std::shared_ptr<TaskStore>(new TaskStore(std::move(ex), options));
}

TaskStore::TaskStore(asio::any_io_executor ex, TaskStoreOptions options)
    : executor_(std::move(ex)), options_(options) {}

TaskStore::~TaskStore() {
    for (auto& [id, e] : tasks_) e->work.cancel();
}

void TaskStore::touch(Entry& e, TaskStatus status) {
    e.task.status = status;
    e.task.last_updated_at = iso8601_utc(now_ms());
}

json::object TaskStore::start(Work work, const RequestContext& ctx) {
    expire();
    auto e = std::make_shared<Entry>(executor_);
    e->task.id = new_task_id();
    e->task.created_at = e->task.last_updated_at = iso8601_utc(now_ms());
    e->task.ttl_ms = options_.ttl.count();
    e->task.poll_interval_ms = options_.poll_interval.count();
    e->expires = clock::now() + options_.ttl;
    // The work's context: the client's capabilities as declared on the request that started it; its asks park the
    // task, its progress messages become the status message.
    auto state = std::make_shared<RequestContext::State>();
    state->era = ctx.era();
    state->method = ctx.method();
    state->client_capabilities = std::make_shared<const json::object>(ctx.client_capabilities());
    state->ask = [weak = std::weak_ptr<Entry>(e)](std::string key, std::string method, json::object params) {
        return ask(weak, std::move(key), std::move(method), std::move(params));
    };
    state->on_status = [weak = std::weak_ptr<Entry>(e)](std::string message) {
        if (auto entry = weak.lock(); entry && !is_terminal(entry->task.status)) {
            entry->task.status_message = std::move(message);
            entry->task.last_updated_at = iso8601_utc(now_ms());
        }
    };
    tasks_[e->task.id] = e;
    json::object r = e->task.to_json();  // as created: the work may run (and ask) before the caller goes on
    r["resultType"] = "task";
    e->work.spawn(run(e, std::move(work), std::move(state)), "task " + e->task.id);
    return r;
}

awaitable<void> TaskStore::run(std::shared_ptr<Entry> e, Work work, std::shared_ptr<RequestContext::State> state) {
    auto r = co_await work(RequestContext(std::move(state)));
    if (is_terminal(e->task.status)) co_return;  // cancelled meanwhile: the outcome is dropped
    e->asks.clear();
    if (r) {
        e->result = std::move(*r);
        touch(*e, TaskStatus::completed);
    } else {
        e->error = r.error();
        touch(*e, TaskStatus::failed);
    }
}

awaitable<Outcome<json::value>> TaskStore::ask(std::weak_ptr<Entry> weak, std::string wanted, std::string method,
                                               json::object params) {
    auto e = weak.lock();
    if (!e) co_return Error::make_local(code::cancelled, "the task is gone");
    const auto key = e->asks.ask(std::move(wanted), std::move(method), std::move(params));
    if (e->task.status == TaskStatus::working && e->asks.waiting()) touch(*e, TaskStatus::input_required);
    for (;;) {
        if (auto answer = e->asks.take(key)) co_return std::move(*answer);
        co_await e->changed.wait();
        auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none)
            co_return Error::make_local(code::cancelled, "the task was cancelled");
    }
}

json::object TaskStore::detailed(const Entry& e) const {
    json::object r = e.task.to_json();
    if (e.task.status == TaskStatus::completed && e.result) {
        auto& result = r["result"].emplace_object() = *e.result;
        result.emplace("resultType", "complete");  // a 2026-07-28 CallToolResult, as tools/call would have given it
    }
    if (e.task.status == TaskStatus::failed && e.error) {
        json::object error;
        error["code"] = e.error->code;
        error["message"] = e.error->message;
        if (!e.error->data.is_null()) error["data"] = e.error->data;
        r["error"] = std::move(error);
    }
    if (e.task.status == TaskStatus::input_required) r["inputRequests"] = e.asks.requests();
    return r;
}

void TaskStore::expire() {
    const auto now = clock::now();
    for (auto it = tasks_.begin(); it != tasks_.end();) {
        if (it->second->expires > now) {
            ++it;
            continue;
        }
        it->second->work.cancel();
        it = tasks_.erase(it);
    }
}

awaitable<Outcome<json::object>> TaskStore::handle(std::string method, json::object params, RequestContext ctx) {
    auto self = shared_from_this();
    if (!declares_tasks(ctx.client_capabilities())) co_return tasks_capability_required(method);
    expire();
    const auto* id = params.if_contains("taskId");
    if (!id || !id->is_string()) co_return Error{code::invalid_params, method + ": missing string \"taskId\""};
    auto it = tasks_.find(std::string(id->get_string()));
    if (it == tasks_.end())
        co_return Error{code::invalid_params, fmt::format("Unknown taskId \"{}\" (never created, or expired)",
                                                          std::string_view(id->get_string()))};
    auto e = it->second;
    if (method == tasks_method::get) co_return detailed(*e);
    if (method == tasks_method::update) {
        const auto* responses = params.if_contains("inputResponses");
        if (!responses || !responses->is_object())
            co_return Error{code::invalid_params, "tasks/update: \"inputResponses\" must be an object"};
        e->asks.answer(responses->get_object());  // keys not asked are ignored
        if (e->task.status == TaskStatus::input_required && !e->asks.waiting()) touch(*e, TaskStatus::working);
        e->changed.fire();
        co_return json::object{};
    }
    if (method == tasks_method::cancel) {
        if (!is_terminal(e->task.status)) {  // a terminal task stays as it ended: the ack is the same
            e->asks.clear();
            touch(*e, TaskStatus::cancelled);
            e->work.cancel();
        }
        co_return json::object{};
    }
    co_return method_not_found(method);
}

awaitable<void> TaskStore::shutdown() {
    auto self = shared_from_this();
    auto tasks = std::move(tasks_);
    tasks_.clear();
    for (auto& [id, e] : tasks) e->work.cancel();
    for (auto& [id, e] : tasks) co_await e->work.join();
}

Error tasks_capability_required(std::string_view what) {
    json::object extensions;
    extensions[tasks_extension] = json::object{};
    return Error{code::missing_required_client_capability,
                 fmt::format("{} needs the client capability extensions[\"{}\"]", what, tasks_extension),
                 json::object{{"requiredCapabilities", json::object{{"extensions", std::move(extensions)}}}}};
}

StaticHandler::ToolFunction task_tool(std::shared_ptr<TaskStore> store, TaskSupport support,
                                      StaticHandler::ToolFunction fn) {
    return [store = std::move(store), support, fn = std::move(fn)](json::object args,
                                                                  RequestContext ctx) -> awaitable<Outcome<json::object>> {
        const bool declared = declares_tasks(ctx.client_capabilities());
        if (support == TaskSupport::forbidden || (!declared && support == TaskSupport::optional))
            co_return co_await fn(std::move(args), std::move(ctx));
        if (!declared) co_return tasks_capability_required("this tool runs only as a task; it");
        auto work = [fn, args = std::move(args)](RequestContext c) { return fn(args, std::move(c)); };
        co_return store->start(std::move(work), ctx);
    };
}

}  // namespace switchboard::mcp
