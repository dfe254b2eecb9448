// The Tasks extension (io.modelcontextprotocol/tasks) on the client side: a tools/call answered with a task handle
// (resultType "task") is polled with tasks/get until it ends, its input_required rounds are answered through the same
// handlers as a request's (tasks/update), a cancelled caller cancels it on the server (tasks/cancel), and the caller
// gets the final result as if the call had been synchronous.
#include <switchboard/core/json_number.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/mcp/tasks.hpp>

#include "client_session_listen.hpp"
#include "client_trace.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using std::chrono::milliseconds;

namespace {

// A server's pollIntervalMs, bounded: polling every millisecond would flood it, once an hour would look hung.
constexpr milliseconds min_task_poll{100};
constexpr milliseconds max_task_poll{30'000};
constexpr milliseconds default_task_poll{1'000};
// The backstop poll of a task whose states the server pushes (notifications/tasks).
constexpr milliseconds notified_task_poll{5'000};
// How long a cancelled caller waits for the server to acknowledge tasks/cancel.
constexpr milliseconds task_cancel_timeout{5'000};

bool legacy_task_support(const json::value& tool) {
    const auto* o = tool.if_object();
    const auto* e = o ? o->if_contains("execution") : nullptr;
    const auto* support = e && e->is_object() ? e->get_object().if_contains("taskSupport") : nullptr;
    return support && support->is_string() && (support->get_string() == "required" || support->get_string() == "optional");
}

double unit_random() {
    thread_local std::mt19937 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

}  // namespace

milliseconds task_poll_delay(std::optional<milliseconds> suggested, double unit_random) {
    const auto base = std::clamp(suggested.value_or(default_task_poll), min_task_poll, max_task_poll);
    // +-10 %, so that many clients told the same interval do not poll in lockstep.
    return milliseconds(static_cast<std::int64_t>(static_cast<double>(base.count()) * (0.9 + 0.2 * unit_random)));
}

void ClientSession::note_legacy_task_tools(const std::vector<json::value>& tools) {
    legacy_task_tools_.clear();
    for (const auto& t : tools)
        if (legacy_task_support(t)) legacy_task_tools_.insert(string_field(t.get_object(), "name"));
}

bool ClientSession::wants_legacy_task(const std::string& tool) const {
    if (era_ != Era::legacy || !legacy_task_tools_.contains(tool)) return false;
    const auto* tasks = capabilities_.if_contains("tasks");
    const auto* requests = tasks && tasks->is_object() ? tasks->get_object().if_contains("requests") : nullptr;
    const auto* tools = requests && requests->is_object() ? requests->get_object().if_contains("tools") : nullptr;
    return tools && tools->is_object() && tools->get_object().contains("call");
}

bool ClientSession::is_legacy_task_handle(const std::string& method, const json::object& result) {
    const auto* task = result.if_contains("task");
    return method == "tools/call" && task && task->is_object() && task->get_object().contains("taskId") &&
           !result.contains("content");
}

// A task's own subscriptions/listen stream: the server's notifications/tasks wake the follower between polls.
struct ClientSession::TaskWatch {
    std::string task_id;
    std::shared_ptr<Listen> stream;
    bool accepted = false;                // the acknowledgment lists the task
    std::optional<json::value> latest;    // the newest notification's task, not taken yet
    asio::steady_timer* waiting = nullptr;  // the follower's poll timer, cancelled to wake it
};

std::shared_ptr<ClientSession::TaskWatch> ClientSession::watch_task(const std::string& task_id) {
    auto w = std::make_shared<TaskWatch>();
    w->task_id = task_id;
    w->stream = std::make_shared<Listen>();
    json::object filter;
    filter["taskIds"] = json::array{json::value(task_id)};
    // The follower ends the stream with cancel when the task ends.
    open_listen(w->stream, std::move(filter),
                fmt::format("[{}] subscriptions/listen for a task", options_.server_name));
    task_watches_[task_id] = w;
    return w;
}

bool ClientSession::on_task_notification(const std::string& method, const json::value& params) {
    const auto* p = params.if_object();
    if (!p) return false;
    if (method == "notifications/tasks") {
        auto it = task_watches_.find(string_field(*p, "taskId"));
        if (it == task_watches_.end()) return false;
        auto& w = *it->second;
        w.latest = params;
        if (w.waiting) w.waiting->cancel();
        return true;
    }
    if (method != "notifications/subscriptions/acknowledged") return false;
    const auto* m = p->if_contains("_meta");
    const auto* id = m && m->is_object() ? m->get_object().if_contains(meta::subscription_id) : nullptr;
    const auto sid = id ? core::json_exact_integer(*id) : std::nullopt;
    for (auto& [task_id, w] : task_watches_) {
        if (!sid || *sid != w->stream->id) continue;
        const auto* n = p->if_contains("notifications");
        const auto* ids = n && n->is_object() ? n->get_object().if_contains("taskIds") : nullptr;
        if (ids && ids->is_array())
            for (const auto& v : ids->get_array())
                if (v.is_string() && v.get_string() == task_id) w->accepted = true;
        return true;
    }
    return false;
}

awaitable<Outcome<json::value>> ClientSession::task_request(std::string method, std::string task_id,
                                                            json::object extra, trace::SpanContext parent) {
    json::value params(std::move(extra));
    auto span = client_span(method, params.get_object(), parent);
    if (span.recording()) span.set("mcp.task.id", task_id);
    if (span.context().valid()) detail::inject_trace(params.get_object(), span.context());
    params.get_object()["taskId"] = std::move(task_id);
    jsonrpc::RequestOptions ro;
    ro.timeout = options_.request_timeout;
    if (era_ == Era::modern) {
        modern_meta();  // the per-request capabilities declare the extension, which tasks/* requires
        ro.meta = meta_members_;
    }
    auto r = co_await connection_->request_view(method, params, std::move(ro));
    detail::end_span(span, r);
    co_return r;
}

awaitable<Outcome<void>> ClientSession::cancel_task(std::string task_id) {
    jsonrpc::RequestOptions ro;
    json::value params(json::object{{"taskId", task_id}});
    ro.timeout = task_cancel_timeout;
    if (era_ == Era::modern) {
        modern_meta();
        ro.meta = meta_members_;
    }
    auto r = co_await connection_->request_view("tasks/cancel", params, std::move(ro));
    if (!r) {
        spdlog::warn("[{}] tasks/cancel {}: {}", options_.server_name, task_id, r.error().describe());
        co_return r.error();
    }
    co_return Outcome<void>{};
}

namespace {

// The failure of a tasks/get, said with the task it was for.
Error task_poll_error(const std::string& server, const std::string& task_id, Error e) {
    if (e.local && (e.code == code::connection_closed || e.code == code::transport_error))
        e.message = fmt::format("server \"{}\" went away while task {} was running: {}", server, task_id, e.message);
    else if (!e.local && e.code == code::invalid_params)
        e.message = fmt::format("server \"{}\" no longer knows task {} (expired, or lost in a restart): {}", server,
                                task_id, e.message);
    else
        e.message = fmt::format("server \"{}\": tasks/get {} failed: {}", server, task_id, e.message);
    return e;
}

// A task state the follower cannot use: no taskId, or a status the extension does not define.
Error unreadable_task(const std::string& server, const json::object& o) {
    const auto* id = o.if_contains("taskId");
    if (!id || !id->is_string())
        return Error::make_local(code::protocol_violation,
                                 fmt::format("server \"{}\" answered with a task that has no taskId", server));
    return Error::make_local(code::protocol_violation,
                             fmt::format("server \"{}\": task {} has an unknown status \"{}\"", server,
                                         std::string_view(id->get_string()), string_field(o, "status")));
}

// A terminal task's outcome: its result, or why there is none. nullopt: not terminal.
std::optional<Outcome<json::value>> task_outcome(const std::string& server, const Task& t, json::object& o) {
    if (t.status == TaskStatus::completed) {
        auto* result = o.if_contains("result");
        if (!result || !result->is_object())
            return Outcome<json::value>(Error::make_local(
                code::protocol_violation,
                fmt::format("server \"{}\": task {} completed without a result object", server, t.id)));
        return Outcome<json::value>(std::move(*result));
    }
    if (t.status == TaskStatus::failed) {
        Error e = o.contains("error") ? Error::from_json(o.at("error")) : Error{code::internal_error, "", {}, false};
        e.message = fmt::format("task {} on server \"{}\" failed: {}", t.id, server,
                                e.message.empty() ? t.status_message : e.message);
        return Outcome<json::value>(std::move(e));
    }
    if (t.status == TaskStatus::cancelled)
        return Outcome<json::value>(Error::make_local(
            code::cancelled, fmt::format("server \"{}\" cancelled task {}{}", server, t.id,
                                         t.status_message.empty() ? std::string() : ": " + t.status_message)));
    return std::nullopt;
}

}  // namespace

awaitable<Outcome<json::value>> ClientSession::follow_task(json::value handle, CallOptions options) {
    const auto& server = options_.server_name;
    // 2025-11-25's tasks: the handle is {"task": {...}}, and the result comes from tasks/result.
    const bool legacy = !handle.get_object().contains("taskId") && handle.get_object().contains("task");
    if (legacy) {
        json::value inner = handle.get_object().at("task");
        handle = std::move(inner);
    }
    auto first = Task::from_json(handle, false);
    if (!first) co_return unreadable_task(server, handle.get_object());
    Task task = std::move(*first);
    const std::string id = task.id;
    spdlog::debug("[{}] following task {}", server, id);
    const auto started = std::chrono::steady_clock::now();
    std::set<std::string> answered;  // inputRequests keys already answered: a poll repeats them until processed
    std::string last_status, last_message;
    double updates = 0;
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const json::object no_params;
    // A modern server may push the task's states (notifications/tasks) on a listen stream of its own; polls go on as
    // a backstop, less often once it agreed.
    std::shared_ptr<TaskWatch> watch;
    if (!legacy && era_ == Era::modern) watch = watch_task(id);
    core::ScopeExit unwatch([this, watch] {
        if (!watch) return;
        watch->waiting = nullptr;
        task_watches_.erase(watch->task_id);
        watch->stream->cancel.emit(asio::cancellation_type::terminal);  // ends the stream (notifications/cancelled)
    });
    // The loop ends by returning the task's outcome, or by a break when the caller is cancelled.
    for (json::value current = std::move(handle);;) {
        auto& o = current.get_object();
        auto parsed = Task::from_json(current, false);
        if (!parsed) co_return unreadable_task(server, o);
        task = std::move(*parsed);
        const std::string status(to_string(task.status));
        if (status != last_status || task.status_message != last_message) {
            last_status = status;
            last_message = task.status_message;
            updates += 1;
            if (options.on_task) options.on_task(TaskProgress{id, status, task.status_message});
            if (options.on_progress)
                options.on_progress(jsonrpc::Progress{updates, std::nullopt,
                                                      task.status_message.empty() ? status : task.status_message});
        }
        if (legacy && (task.status == TaskStatus::completed || task.status == TaskStatus::failed ||
                       task.status == TaskStatus::input_required)) {
            // tasks/result waits for the end; meanwhile the task's requests (elicitation, sampling) come as the
            // server's own requests, answered by the same handlers.
            jsonrpc::RequestOptions ro;
            ro.timeout =
                std::max<milliseconds>(options_.request_timeout, milliseconds(task.ttl_ms.value_or(3'600'000)));
            json::value params(json::object{{"taskId", id}});
            auto r = co_await connection_->request_view("tasks/result", params, std::move(ro));
            if (!r && r.error().local && r.error().code == code::cancelled) break;
            if (!r) {
                Error e = r.error();
                e.message = fmt::format("task {} on server \"{}\" failed: {}", id, server, e.message);
                co_return e;
            }
            co_return std::move(*r);
        }
        if (auto end = task_outcome(server, task, o)) co_return std::move(*end);
        if (task.status == TaskStatus::input_required) {
            json::object requests;
            if (const auto* reqs = o.if_contains("inputRequests"); reqs && reqs->is_object())
                for (const auto& [key, req] : reqs->get_object())
                    if (!answered.contains(std::string(key))) requests[key] = req;
            if (!requests.empty()) {
                auto answers = co_await answer_input_requests(requests);
                if (!answers) {
                    // The caller may have been cancelled (that may be why there is no answer): tasks/cancel is sent
                    // all the same.
                    co_await asio::this_coro::reset_cancellation_state();
                    co_await cancel_task(id);  // nothing will ever answer it
                    co_return answers.error();
                }
                for (const auto& [key, unused] : requests) answered.insert(std::string(key));
                json::object extra;
                extra["inputResponses"] = std::move(*answers);
                auto ack = co_await task_request("tasks/update", id, std::move(extra), options.trace);
                if (!ack && ack.error().local && ack.error().code == code::cancelled) break;
                if (!ack) co_return task_poll_error(server, id, ack.error());
            }
        }
        if (task.ttl_ms && std::chrono::steady_clock::now() - started > milliseconds(*task.ttl_ms))
            co_return Error::make_local(
                code::timeout, fmt::format("task {} on server \"{}\" outlived its ttlMs ({} ms) unfinished", id, server,
                                           *task.ttl_ms));
        std::optional<milliseconds> poll;
        if (task.poll_interval_ms) poll = milliseconds(*task.poll_interval_ms);
        auto delay = task_poll_delay(poll, unit_random());
        if (watch && watch->accepted) delay = std::max(delay, notified_task_poll);
        if (!(watch && watch->latest)) {  // a notification that came meanwhile is taken at once
            timer.expires_after(delay);
            if (watch) watch->waiting = &timer;
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));  // woken early: cancelled, or notified
            if (watch) watch->waiting = nullptr;
        }
        auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none) break;
        if (watch && watch->latest && watch->latest->is_object()) {
            current = std::move(*watch->latest);
            watch->latest.reset();
            continue;
        }
        auto next = co_await task_request("tasks/get", id, no_params, options.trace);
        if (!next && next.error().local && next.error().code == code::cancelled) break;
        if (!next) co_return task_poll_error(server, id, next.error());
        if (!next->is_object())
            co_return Error::make_local(code::protocol_violation,
                                        fmt::format("server \"{}\": tasks/get {} is not an object", server, id));
        current = std::move(*next);
    }
    // The caller was cancelled (Ctrl-C, a shutdown): the task is cancelled on the server too, the spec's way
    // (tasks/cancel, never notifications/cancelled), before the caller hears of it.
    co_await asio::this_coro::reset_cancellation_state();
    co_await cancel_task(id);
    co_return Error::make_local(code::cancelled,
                                fmt::format("server \"{}\": task {} cancelled by the client", server, id));
}

awaitable<Outcome<CallToolResult>> ClientSession::resume_task(std::string task_id, CallOptions options) {
    const json::object no_params;
    auto first = co_await task_request("tasks/get", task_id, no_params, options.trace);
    if (!first) co_return task_poll_error(options_.server_name, task_id, first.error());
    if (!first->is_object())
        co_return Error::make_local(code::protocol_violation, fmt::format("server \"{}\": tasks/get {} is not an object",
                                                                          options_.server_name, task_id));
    // A 2025-11-25 server's task is followed in its dialect (the result from tasks/result): shaped as its handle.
    json::value handle = era_ == Era::legacy ? json::value(json::object{{"task", std::move(*first)}}) : std::move(*first);
    auto r = co_await follow_task(std::move(handle), std::move(options));
    if (!r) co_return r.error();
    co_return CallToolResult::from_json(std::move(*r));
}

}  // namespace switchboard::mcp
