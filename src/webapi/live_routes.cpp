// Streams that follow something live for one page: a tool call ("Try it": progress, task status and the server's log
// messages while it runs, then the result; closing the stream cancels the call on the server) and a watched resource
// (subscribed while the stream is open, its contents sent again after every update).
#include "client_watch.hpp"
#include "routes.hpp"

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <fmt/format.h>

#include <chrono>

namespace switchboard::webapi {

namespace asio = boost::asio;
namespace json = boost::json;
namespace bhttp = http::bhttp;
using asio::awaitable;

namespace {

awaitable<bool> begin_events(http::Responder& res) {
    http::Fields headers;
    headers.emplace_back("Cache-Control", "no-store");
    headers.emplace_back("X-Accel-Buffering", "no");  // a reverse proxy must pass each event on at once
    return res.begin_stream("text/event-stream", std::move(headers));
}

// Writes the queue's events until it is finished (true), or until a write fails: the client is gone (false).
awaitable<bool> pump(std::shared_ptr<EventQueue> q, http::Responder& res) {
    for (;;) {
        while (!q->empty()) {
            auto item = q->pop();
            const bool ok = co_await write_event(res, item.first, std::move(item.second));
            if (!ok) co_return false;
        }
        if (q->finished()) co_return true;
        co_await q->wait(event_keep_alive_every);
        if (q->empty() && !q->finished()) {
            const bool ok = co_await res.write_chunk(": keep-alive", "", "\n\n");
            if (!ok) co_return false;
        }
    }
}

json::object progress_json(const jsonrpc::Progress& p) {
    json::object o{{"progress", p.progress}};
    if (p.total) o["total"] = *p.total;
    if (!p.message.empty()) o["message"] = p.message;
    return o;
}

// The call itself: its outcome is the stream's last event.
awaitable<void> run_call(std::shared_ptr<host::ServerPool> pool, std::string server, std::string tool,
                         json::object arguments, std::shared_ptr<EventQueue> q) {
    core::ScopeExit finished([q] { q->finish(); });
    host::ToolCallOptions options;  // the server's toolTimeoutMs
    options.call_id = "try";
    options.on_progress = [q](const jsonrpc::Progress& p) { q->push("progress", progress_json(p)); };
    options.on_task = [q](const mcp::TaskProgress& t) {
        q->push("task", json::object{{"taskId", t.task_id}, {"status", t.status}, {"statusMessage", t.status_message}});
    };
    const auto started = std::chrono::steady_clock::now();
    auto result = co_await pool->call_tool(server, tool, std::move(arguments), std::move(options));
    if (!result) {
        q->push("error", json::object{{"status", 502},
                                      {"message", fmt::format("server \"{}\": {}", server, result.error().describe())}});
        co_return;
    }
    auto out = std::move(*result).to_json();
    out["durationMs"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    q->push("result", std::move(out));
}

}  // namespace

awaitable<void> stream_tool_call(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<ChatService> chat,
                                 std::string server, std::string tool, json::object arguments, http::Responder& res) {
    auto q = std::make_shared<EventQueue>(co_await asio::this_coro::executor);
    // What the server asks while the call runs is this page's to answer (its elicitations, its sampling).
    auto questions = std::make_shared<QuestionBox>(
        [q](std::string_view event, json::object data) { q->push(std::string(event), std::move(data)); });
    auto asks = chat ? chat->options().asks : nullptr;
    std::string call_id;
    gateway::ClientRelay::Registration asking;
    if (asks) {
        call_id = asks->add_call(questions);
        json::object which{{"callId", call_id}};
        asking = asks->enter(server, PageAsker{questions, chat->options().llm, std::move(which)});
    }
    core::ScopeExit forget([asks, call_id, questions] {
        questions->cancel_all();
        if (asks) asks->remove_call(call_id);
    });
    q->push("call", json::object{{"id", call_id}});
    // The server's log messages while the call runs (a server's messages are not tied to a request: all of its own).
    const auto logs = pool->events().subscribe([q, server](const host::Event& e) {
        if (e.kind != host::Event::Kind::log_message || e.server != server || q->finished()) return;
        q->push("log", e.data.is_object() ? e.data.get_object() : json::object{{"data", e.data}});
    });
    std::weak_ptr<host::ServerPool> weak = pool;
    core::ScopeExit unsubscribe([weak, logs] {
        if (auto p = weak.lock()) p->events().unsubscribe(logs);
    });
    const bool started = co_await begin_events(res);
    if (!started) co_return;
    // Whichever ends first: the call with its last event written, or the client (the call is then cancelled, which
    // reaches the server as notifications/cancelled, or tasks/cancel for a task).
    using namespace asio::experimental::awaitable_operators;
    auto ended = co_await ((run_call(std::move(pool), std::move(server), std::move(tool), std::move(arguments), q) &&
                            pump(q, res)) ||
                           until_client_leaves(res.connection()));
    if (ended.index() == 0 && std::get<0>(ended)) {
        co_await res.end_stream();
        co_return;
    }
    res.set_keep_alive(false);
}

awaitable<void> respond_to_call(std::shared_ptr<ChatService> chat, Options o, http::ServerRequest& req,
                                http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    const auto call_id = required_string(body, "callId");
    const auto request = required_string(body, "requestId");
    auto answer = optional_object(body, "answer");
    auto asks = chat ? chat->options().asks : nullptr;
    auto questions = asks ? asks->call(call_id) : nullptr;
    if (const auto* question = questions ? questions->find(request) : nullptr)
        if (auto problem = answer_problem(*question, answer); !problem.empty())
            throw http::HttpError(bhttp::status::bad_request, problem);
    if (!questions || !questions->answer(request, std::move(answer)))
        throw http::HttpError(bhttp::status::not_found,
                              fmt::format("no open request {} of call {} (answered, or the call ended)", request,
                                          call_id));
    co_await send_json(res, json::object());
}

namespace {

// Sends the resource's contents as the server has them now: a `contents` event, else an `error` event.
awaitable<bool> send_contents(std::weak_ptr<host::ServerPool> weak, const std::string& server, const std::string& uri,
                              http::Responder& res) {
    auto pool = weak.lock();
    if (!pool) co_return false;
    auto r = co_await pool->read_resource(server, uri, host::ReadMode::fresh);
    json::object data;
    std::string_view event = "contents";
    if (r) {
        data = r->to_json();
        data["readAtMs"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    } else {
        event = "error";
        data["message"] = fmt::format("server \"{}\": {}", server, r.error().describe());
    }
    co_return co_await write_event(res, event, std::move(data));
}

awaitable<void> follow_updates(std::weak_ptr<host::ServerPool> weak, std::string server, std::string uri,
                               std::shared_ptr<std::shared_ptr<core::OneShotEvent>> updated, http::Responder& res) {
    bool ok = co_await send_contents(weak, server, uri, res);
    while (ok) {
        auto next = *updated;
        const bool changed = co_await next->wait_for(event_keep_alive_every);
        if (!changed) {
            ok = co_await res.write_chunk(": keep-alive", "", "\n\n");
            continue;
        }
        *updated = std::make_shared<core::OneShotEvent>();
        ok = co_await send_contents(weak, server, uri, res);
    }
}

}  // namespace

awaitable<void> watch_resource(PoolRef weak, http::ServerRequest& req, http::Responder& res) {
    auto server = query_parameter(req, "server");
    auto uri = query_parameter(req, "uri");
    if (server.empty() || uri.empty())
        throw http::HttpError(bhttp::status::bad_request, "?server= and ?uri= name the resource to watch");
    {
        auto pool = lock(weak);
        require_server(*pool, server);
        auto subscribed = co_await pool->subscribe_resource(server, uri);
        if (!subscribed) {
            if (subscribed.error().code == jsonrpc::code::method_not_found)
                throw http::HttpError(bhttp::status::conflict, subscribed.error().message);
            upstream_failed(server, subscribed.error());
        }
    }
    // Let go once the stream ends, however it ends (the pool counts holders: the gateway's clients keep theirs).
    core::ScopeExit unsubscribe([weak, server, uri] {
        if (auto pool = weak.lock(); pool && !pool->shutting_down())
            core::spawn_logged(
                pool->executor(), [pool, server, uri]() -> awaitable<void> {
                    co_await pool->unsubscribe_resource(server, uri);
                },
                "web api: unwatch " + uri);
    });
    auto updated = std::make_shared<std::shared_ptr<core::OneShotEvent>>(std::make_shared<core::OneShotEvent>());
    host::EventBus::Id events = 0;
    if (auto pool = weak.lock())
        events = pool->events().subscribe([updated, server, uri](const host::Event& e) {
            if (e.kind == host::Event::Kind::resource_updated && e.server == server && e.uri == uri) (*updated)->set();
        });
    core::ScopeExit stop_events([weak, events] {
        if (auto pool = weak.lock()) pool->events().unsubscribe(events);
    });
    const bool started = co_await begin_events(res);
    if (!started) co_return;
    using namespace asio::experimental::awaitable_operators;
    co_await (follow_updates(weak, server, uri, updated, res) || until_client_leaves(res.connection()));
    res.set_keep_alive(false);  // ended by the client, or by a write that failed
}

}  // namespace switchboard::webapi
