// Conversations and chat: the store's conversations (list, get, create, rename, delete, per-conversation switches),
// a message answered as a stream of the loop's events, approvals, Stop, continue, and the endpoint's models.
#include "client_watch.hpp"
#include "routes.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/mcp/apps.hpp>
#include <switchboard/webapi/chat_service.hpp>
#include <switchboard/store/transcript.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <algorithm>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

namespace switchboard::webapi {

namespace asio = boost::asio;
namespace json = boost::json;
namespace bhttp = http::bhttp;
using asio::awaitable;
using Service = std::shared_ptr<ChatService>;

namespace {


json::object info_json(const store::ConversationInfo& c) {
    return json::object{{"id", c.id},
                        {"title", c.title},
                        {"model", c.model},
                        {"createdMs", c.created_ms},
                        {"updatedMs", c.updated_ms},
                        {"messageCount", c.message_count}};
}

// The store's errors (a full disk, a locked or damaged file) name the file: 500 with that text.
template <class F>
auto with_store(F f) -> decltype(f()) {
    try {
        return f();
    } catch (const store::StoreError& e) {
        throw http::HttpError(bhttp::status::internal_server_error, e.what());
    }
}

std::int64_t id_field(const json::object& body, std::string_view key) {
    const auto* v = body.if_contains(key);
    if (!v || v->is_null()) return 0;
    if (!v->is_int64() && !v->is_uint64())
        throw http::HttpError(bhttp::status::bad_request, fmt::format("\"{}\" must be a conversation id", key));
    return v->to_number<std::int64_t>();
}

// ?name=12: a conversation id (400 naming the parameter otherwise).
std::int64_t query_id(const http::ServerRequest& req, std::string_view name) {
    try {
        return std::stoll(query_parameter(req, name));
    } catch (const std::exception&) {
        throw http::HttpError(bhttp::status::bad_request, fmt::format("?{}= must be a conversation id", name));
    }
}

std::shared_ptr<Chat> open_chat(ChatService& svc, std::int64_t id) {
    if (!svc.options().llm)
        throw http::HttpError(bhttp::status::conflict, "no model is configured: " + svc.options().not_configured_help);
    auto chat = with_store([&] { return svc.open(id); });
    if (!chat) throw http::HttpError(bhttp::status::not_found, fmt::format("no conversation {}", id));
    return chat;
}

awaitable<void> list(Service svc, http::ServerRequest& req, http::Responder& res) {
    const auto q = query_parameter(req, "q");
    json::array out;
    for (const auto& c : with_store([&] { return svc->store().list(q); })) out.push_back(info_json(c));
    json::object body;
    body["conversations"] = std::move(out);
    co_await send_json(res, std::move(body));
}

awaitable<void> get(Service svc, http::ServerRequest& req, http::Responder& res) {
    const auto id = query_id(req, "id");
    auto& db = with_store([&]() -> store::ConversationStore& { return svc->store(); });
    const auto info = with_store([&] { return db.find(id); });
    if (!info) throw http::HttpError(bhttp::status::not_found, fmt::format("no conversation {}", id));
    json::array messages;
    for (const auto& m : with_store([&] { return db.messages(id); }))
        messages.push_back(json::object{
            {"id", m.id}, {"createdMs", m.created_ms}, {"message", m.message.to_json()}, {"meta", m.meta}});
    json::object body;
    body["conversation"] = info_json(*info);
    body["messages"] = std::move(messages);
    body["settings"] = with_store([&] { return db.settings(id); }).to_json();
    body["running"] = svc->running(id);
    body["pendingApprovals"] = svc->pending_approvals(id);
    body["pendingRequests"] = svc->pending_requests(id);
    co_await send_json(res, std::move(body));
}

// GET /api/conversations/export?id=12&format=markdown|json: the whole conversation as a file to keep (what
// `conversations show --markdown` / `--json` print).
awaitable<void> export_conversation(Service svc, http::ServerRequest& req, http::Responder& res) {
    const auto id = query_id(req, "id");
    const auto format = query_parameter(req, "format");
    if (format != "markdown" && format != "json")
        throw http::HttpError(bhttp::status::bad_request, "?format= must be markdown or json");
    auto& db = with_store([&]() -> store::ConversationStore& { return svc->store(); });
    const auto info = with_store([&] { return db.find(id); });
    if (!info) throw http::HttpError(bhttp::status::not_found, fmt::format("no conversation {}", id));
    const auto messages = with_store([&] { return db.messages(id); });
    http::Reply r;
    if (format == "markdown") {
        r.content_type = "text/markdown; charset=utf-8";
        r.body = store::markdown_transcript(*info, messages);
    } else {
        json::value doc = store::transcript_json(*info, with_store([&] { return db.settings(id); }), messages);
        core::make_valid_utf8(doc);
        r.content_type = "application/json";
        r.body = json::serialize(doc);
    }
    r.headers.emplace_back("Content-Disposition", fmt::format("attachment; filename=\"conversation-{}.{}\"", id,
                                                              format == "markdown" ? "md" : "json"));
    r.headers.emplace_back("Cache-Control", "no-store");
    co_await res.send(std::move(r));
}

awaitable<void> create(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    const auto* t = body.if_contains("title");
    const std::string title =
        t && t->is_string() && !t->get_string().empty() ? std::string(t->get_string()) : "New chat";
    const auto model = svc->options().llm ? svc->options().llm->settings().model : std::string();
    const auto info = with_store([&] {
        auto& db = svc->store();
        return *db.find(db.create(core::shorten(title, 200), model));
    });
    json::object out;
    out["conversation"] = info_json(info);
    co_await send_json(res, std::move(out));
}

awaitable<void> rename(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    const auto id = id_field(body, "id");
    const auto title = required_string(body, "title");
    const auto info = with_store([&] {
        auto& db = svc->store();
        if (!db.rename(id, core::shorten(title, 200)))
            throw http::HttpError(bhttp::status::not_found, fmt::format("no conversation {}", id));
        return *db.find(id);
    });
    json::object out;
    out["conversation"] = info_json(info);
    co_await send_json(res, std::move(out));
}

awaitable<void> remove(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    const auto id = id_field(body, "id");
    svc->forget(id);
    const bool removed = with_store([&] { return svc->store().remove(id); });
    if (!removed) throw http::HttpError(bhttp::status::not_found, fmt::format("no conversation {}", id));
    co_await send_json(res, json::object());
}

awaitable<void> switches(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto chat = open_chat(*svc, id_field(body, "id"));
    auto next = store::ConversationSettings::from_json(body);
    svc->set_switches(*chat, std::move(next));
    json::object out;
    out["settings"] = chat->settings.to_json();
    co_await send_json(res, std::move(out));
}

// Watches the request's connection while a run streams, so that a client that goes away stops the run at once (a
// write would notice only at the next event or keep-alive, and a run waiting for an approval writes nothing). What the
// client sends meanwhile stays in the connection's buffer for its next request.
struct ClientWatch {
    explicit ClientWatch(asio::any_io_executor ex) : finished(std::move(ex)) {}
    asio::cancellation_signal stop;
    asio::steady_timer finished;
    bool stopping = false, done = false, gone = false;
};

awaitable<void> watch_client(std::shared_ptr<http::ServerConnection> c, std::shared_ptr<ClientWatch> w,
                             std::shared_ptr<EventQueue> q) {
    co_await until_client_leaves(std::move(c));
    if (w->stopping) co_return;
    w->gone = true;
    q->nudge();
}

enum class Pumped { done, gone, replaced };

// Writes the run's events as they come, until its `done` (or the client is gone, or a newer stream attached).
awaitable<Pumped> pump(std::shared_ptr<Chat> chat, std::uint64_t generation, std::shared_ptr<EventQueue> q,
                       std::shared_ptr<ClientWatch> w, http::Responder& res) {
    for (;;) {
        if (chat->stream_generation != generation) co_return Pumped::replaced;
        while (!q->empty()) {
            auto item = q->pop();
            const bool ok = co_await write_event(res, item.first, std::move(item.second));
            if (!ok) co_return Pumped::gone;
        }
        if (q->finished()) co_return Pumped::done;
        co_await q->wait(event_keep_alive_every);
        const auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none || w->gone) co_return Pumped::gone;
        if (q->empty() && !q->finished() && chat->stream_generation == generation) {
            const bool ok = co_await res.write_chunk(": keep-alive", "", "\n\n");
            if (!ok) co_return Pumped::gone;
        }
    }
}

// The run's events as a stream, for the page that started it or one that attached later (`prelude`: what that page
// needs first). The latest stream is the run's: an older one ends. When it goes away (a reload, a closed tab) the run
// goes on for ChatOptions::reattach_grace, for a page to attach again, then stops.
awaitable<void> stream_run(Service svc, std::shared_ptr<Chat> chat, std::shared_ptr<EventQueue> q,
                           std::vector<std::pair<std::string, json::object>> prelude, http::Responder& res) {
    const auto generation = ++chat->stream_generation;
    q->nudge();  // an older stream wakes up and sees it was replaced
    http::Fields headers;
    headers.emplace_back("Cache-Control", "no-store");
    headers.emplace_back("X-Accel-Buffering", "no");
    const bool started = co_await res.begin_stream("text/event-stream", std::move(headers));
    if (!started) {
        svc->stop_unless_reattached(chat, generation);
        co_return;
    }
    for (auto& [event, data] : prelude) {
        const bool ok = co_await write_event(res, event, std::move(data));
        if (!ok) {
            svc->stop_unless_reattached(chat, generation);
            co_return;
        }
    }
    auto ex = co_await asio::this_coro::executor;
    auto w = std::make_shared<ClientWatch>(ex);
    asio::co_spawn(ex, watch_client(res.connection(), w, q),
                   asio::bind_cancellation_slot(w->stop.slot(), [w](std::exception_ptr e) {
                       core::log_exception(e, "web api: chat client watch");
                       w->done = true;
                       w->finished.cancel();
                   }));
    const auto pumped = co_await pump(chat, generation, q, w, res);
    // The watcher reads from the connection: it must be gone before the server reads the next request.
    w->stopping = true;
    w->stop.emit(asio::cancellation_type::terminal);
    while (!w->done) {
        w->finished.expires_after(std::chrono::seconds(1));
        co_await w->finished.async_wait(core::as_tuple_awaitable);
    }
    if (pumped == Pumped::gone) {
        svc->stop_unless_reattached(chat, generation);
        res.set_keep_alive(false);
        co_return;
    }
    co_await res.end_stream();
}

// The model and turn limit a request asks for (the UI's settings): kept by the conversation for its next runs.
void apply_run_options(ChatService& svc, Chat& chat, const json::object& body) {
    auto& loop = chat.conversation->loop_options();
    if (const auto* m = body.if_contains("model"); m && m->is_string() && !m->get_string().empty()) {
        loop.model = m->get_string();
        with_store([&] { svc.store().set_model(chat.id, loop.model); });
    }
    if (const auto* t = body.if_contains("maxTurns"); t && !t->is_null()) {
        if (!t->is_int64() || t->get_int64() < 1 || t->get_int64() > 1000)
            throw http::HttpError(bhttp::status::bad_request, "\"maxTurns\" must be a whole number from 1 to 1000");
        loop.max_turns = static_cast<int>(t->get_int64());
    }
    // An MCP App's latest ui/update-model-context (docs/web-ui.md): with the next model request only.
    if (const auto* c = body.if_contains("appContext"); c && c->is_string())
        loop.app_context = core::shorten(c->get_string(), 32 * 1024);
}

awaitable<void> send(PoolRef weak, Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    auto text = required_string(body, "text");
    const auto id = id_field(body, "conversationId");
    if (!svc->options().llm)
        throw http::HttpError(bhttp::status::conflict, "no model is configured: " + svc->options().not_configured_help);
    auto chat = id ? open_chat(*svc, id) : with_store([&] { return svc->create_chat(text); });
    if (chat->running())
        throw http::HttpError(bhttp::status::conflict,
                              fmt::format("conversation {} is answering already: wait for it or stop it", chat->id));
    // A new conversation's switches, set on the page before its first message.
    if (const auto* settings = body.if_contains("settings"); !id && settings && settings->is_object())
        svc->set_switches(*chat, store::ConversationSettings::from_json(*settings));
    apply_run_options(*svc, *chat, body);
    // Attachments first: read now (or given whole: a prompt's embedded resource), they go with this message (and are
    // shown on it).
    if (const auto* list = body.if_contains("attachments"); list && list->is_array()) {
        for (const auto& a : list->as_array()) {
            if (!a.is_object()) continue;
            auto server = required_string(a.as_object(), "server");
            auto uri = required_string(a.as_object(), "uri");
            require_server(*pool, server);
            if (const auto* given = a.as_object().if_contains("contents"); given && given->is_array()) {
                chat->context->attach_contents(std::move(server), std::move(uri),
                                               mcp::ReadResourceResult::from_json(json::object{{"contents", *given}}));
                continue;
            }
            co_await chat->context->attach_resource(std::move(server), std::move(uri));
        }
    }
    auto q = svc->start(chat, std::move(text), false);
    std::vector<std::pair<std::string, json::object>> nothing_first;  // (no braced temporary inside co_await)
    co_await stream_run(svc, chat, q, std::move(nothing_first), res);
}

awaitable<void> resume(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto chat = open_chat(*svc, id_field(body, "conversationId"));
    if (chat->running())
        throw http::HttpError(bhttp::status::conflict, fmt::format("conversation {} is answering already", chat->id));
    apply_run_options(*svc, *chat, body);
    auto q = svc->start(chat, std::string(), true);
    std::vector<std::pair<std::string, json::object>> nothing_first;
    co_await stream_run(svc, chat, q, std::move(nothing_first), res);
}

// A page that opens a conversation while it answers (after a reload, or in another tab) takes its stream over: first
// the conversation, the answer's text so far and the open questions, then the events as they come.
awaitable<void> attach(Service svc, http::ServerRequest& req, http::Responder& res) {
    const auto id = query_id(req, "conversationId");
    auto chat = open_chat(*svc, id);
    if (!chat->running())
        throw http::HttpError(bhttp::status::conflict, fmt::format("conversation {} is not answering now", id));
    // First what no page has been sent yet that changed what is stored (a batch of messages, an answered question);
    // the rest of what waits in the queue is in the snapshot below (sent twice, a call would show twice and the text
    // doubled). Then what the turn under way showed so far, as the page that left saw it: its reasoning and text,
    // every call (started, its latest progress and task status, its log lines, ended), and the questions still open.
    std::vector<std::pair<std::string, json::object>> prelude;
    prelude.emplace_back("conversation", json::object{{"id", chat->id}});
    for (auto& queued : chat->events->take_all())
        if (queued.first == "messages" || queued.first == "approval_answered") prelude.push_back(std::move(queued));
    if (!chat->live_reasoning.empty())
        prelude.emplace_back("reasoning", json::object{{"text", chat->live_reasoning}});
    if (!chat->live_text.empty()) prelude.emplace_back("content", json::object{{"text", chat->live_text}});
    prelude.insert(prelude.end(), chat->replay.begin(), chat->replay.end());
    for (auto& question : svc->pending_approvals(id)) prelude.emplace_back("approval", std::move(question.as_object()));
    for (auto& asked : svc->pending_requests(id)) prelude.emplace_back("server_request", std::move(asked.as_object()));
    co_await stream_run(svc, chat, chat->events, std::move(prelude), res);
}

agent::Decision parse_decision(std::string_view decision) {
    using D = agent::Decision;
    if (decision == "once") return D::allow_once;
    if (decision == "tool") return D::always_tool;
    if (decision == "server") return D::always_server;
    if (decision == "deny") return D::deny;
    throw http::HttpError(bhttp::status::bad_request, "\"decision\" must be once, tool, server or deny");
}

json::object app_error_result(std::string text) {
    return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", std::move(text)}}}},
                        {"isError", true}};
}

// Whether a view may call the tool: its _meta.ui.visibility includes "app" (as it does when absent).
bool app_callable(const host::ServerPool& pool, const std::string& server, const std::string& tool) {
    const auto tools = pool.tools(server);
    if (!tools) return true;
    const auto it = std::ranges::find(*tools, tool, &mcp::Tool::name);
    const auto ui = it == tools->end() ? std::nullopt : mcp::tool_ui(*it);
    return !ui || ui->app;
}

// An MCP App's tools/call in a conversation: the conversation's switches and approvals hold as for the model's calls.
// A call the approvals do not allow is not made: the answer is {"approval": {...}}, the page asks the user (saying the
// app asks) and sends the call again with the answer as "decision", which is remembered as the loop remembers one.
// Otherwise {"result": CallToolResult}; a refusal or a failure is an isError result, for the app to show.
awaitable<void> app_tool(PoolRef weak, Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    auto chat = open_chat(*svc, id_field(body, "conversationId"));
    const auto server = required_string(body, "server");
    const auto tool = required_string(body, "name");
    auto arguments = optional_object(body, "arguments");
    const auto* given = body.if_contains("decision");
    const auto decision = given && given->is_string() ? std::optional(parse_decision(given->get_string()))
                                                      : std::optional<agent::Decision>();
    const auto qualified = fmt::format("{}__{}", server, tool);
    json::object out;
    auto resolved = co_await chat->context->resolve_tool(qualified);  // the switches: "switched off here"
    if (!resolved) {
        out["result"] = app_error_result("Refused: " + resolved.error().message);
        co_await send_json(res, std::move(out));
        co_return;
    }
    if (!app_callable(*pool, resolved->server, resolved->tool)) {
        out["result"] = app_error_result(fmt::format(
            "Refused: the tool \"{}\" of server \"{}\" is not for apps (its _meta.ui.visibility has no \"app\")", tool,
            server));
        co_await send_json(res, std::move(out));
        co_return;
    }
    const auto name = chat->context->tools().exposed_name(server, tool).value_or(qualified);
    auto& approvals = chat->conversation->approvals();
    if (!approvals.allows(name, server, tool) && !decision) {
        out["approval"] = json::object{{"name", name}, {"server", server}, {"tool", tool}};
        co_await send_json(res, std::move(out));
        co_return;
    }
    if (decision) approvals.remember(*decision, name, server);
    if (decision == agent::Decision::deny) {
        out["result"] = app_error_result(fmt::format("The user denied this call of tool \"{}\".", name));
        co_await send_json(res, std::move(out));
        co_return;
    }
    host::ToolCallOptions options;  // the server's toolTimeoutMs
    auto result = co_await chat->context->call_tool(qualified, std::move(arguments), std::move(options));
    out["result"] = result ? std::move(*result).to_json() : app_error_result(result.error().message);
    co_await send_json(res, std::move(out));
}

// POST /api/chat/respond {"conversationId", "requestId", "answer"}: the page's answer to what a server asked during
// the conversation's call (a form's values are checked against the server's schema: 400 keeps the question open).
awaitable<void> respond(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    const auto id = id_field(body, "conversationId");
    const auto request = required_string(body, "requestId");
    auto answer = optional_object(body, "answer");
    open_chat(*svc, id);
    if (const auto* question = svc->find_request(id, request))
        if (auto problem = answer_problem(*question, answer); !problem.empty())
            throw http::HttpError(bhttp::status::bad_request, problem);
    if (!svc->answer_request(id, request, std::move(answer)))
        throw http::HttpError(bhttp::status::not_found,
                              fmt::format("no open request {} in conversation {} (answered, ended or stopped)", request,
                                          id));
    co_await send_json(res, json::object());
}

awaitable<void> approve(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto chat = open_chat(*svc, id_field(body, "conversationId"));
    const auto request = required_string(body, "requestId");
    const auto decision = required_string(body, "decision");
    const auto it = chat->approvals.find(request);
    if (it == chat->approvals.end())
        throw http::HttpError(
            bhttp::status::not_found,
            fmt::format("no open question {} in conversation {} (answered or stopped)", request, chat->id));
    it->second->decision = parse_decision(decision);
    it->second->answered.set();
    // The page that asked may not be the one that answered: it closes its question.
    if (chat->events)
        chat->events->push("approval_answered", json::object{{"requestId", request}, {"decision", decision}});
    co_await send_json(res, json::object());
}

awaitable<void> stop(Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto chat = open_chat(*svc, id_field(body, "conversationId"));
    json::object out;
    out["stopped"] = chat->running();
    svc->stop(*chat);
    co_await send_json(res, std::move(out));
}

awaitable<void> models(Service svc, http::Responder& res) {
    if (!svc->options().llm)
        throw http::HttpError(bhttp::status::conflict, "no model is configured: " + svc->options().not_configured_help);
    auto list = co_await svc->options().llm->models();
    if (!list) throw http::HttpError(bhttp::status::bad_gateway, "the model endpoint: " + list.error().message);
    json::array out;
    for (const auto& m : *list) out.emplace_back(m.id);
    json::object body;
    body["models"] = std::move(out);
    co_await send_json(res, std::move(body));
}

}  // namespace

void add_chat_routes(http::Router& r, PoolRef pool, Service svc, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    add_route(r, bhttp::verb::get, "/api/conversations", [svc](Req& q, Res& res) { return list(svc, q, res); });
    add_route(r, bhttp::verb::get, "/api/conversations/get", [svc](Req& q, Res& res) { return get(svc, q, res); });
    add_route(r, bhttp::verb::post, "/api/conversations/create",
              [svc, o](Req& q, Res& res) { return create(svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/conversations/rename",
              [svc, o](Req& q, Res& res) { return rename(svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/conversations/delete",
              [svc, o](Req& q, Res& res) { return remove(svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/conversations/settings",
              [svc, o](Req& q, Res& res) { return switches(svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/chat",
              [pool, svc, o](Req& q, Res& res) { return send(pool, svc, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/conversations/export",
              [svc](Req& q, Res& res) { return export_conversation(svc, q, res); });
    add_route(r, bhttp::verb::get, "/api/chat/attach", [svc](Req& q, Res& res) { return attach(svc, q, res); });
    add_route(r, bhttp::verb::post, "/api/chat/continue",
              [svc, o](Req& q, Res& res) { return resume(svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/chat/respond",
              [svc, o](Req& q, Res& res) { return respond(svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/chat/approve",
              [svc, o](Req& q, Res& res) { return approve(svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/chat/app-tool",
              [pool, svc, o](Req& q, Res& res) { return app_tool(pool, svc, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/chat/stop", [svc, o](Req& q, Res& res) { return stop(svc, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/models", [svc](Req&, Res& res) { return models(svc, res); });
}

}  // namespace switchboard::webapi
