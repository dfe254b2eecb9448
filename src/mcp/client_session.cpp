#include <switchboard/core/json_number.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/mcp/apps.hpp>
#include <switchboard/mcp/tasks.hpp>

#include "client_session_listen.hpp"
#include "client_trace.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

// A session's requests: each sent with its options and _meta, its reply checked and converted (input_required rounds
// answered, a task followed to its end), and the typed calls built on them. What the server asks of us is in
// client_session_server_requests.cpp, subscriptions/listen in client_session_listen.cpp, the handshake and tasks in
// their own files.
namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

// A bound on input_required rounds, so that a server that keeps asking cannot loop forever.
constexpr int max_input_rounds = 8;
// A bound on list pages, so that a server that keeps returning cursors cannot loop forever.
constexpr int max_list_pages = 10'000;

bool mrtr_method(std::string_view m) { return m == "tools/call" || m == "prompts/get" || m == "resources/read"; }
// The requests a server may answer with a task (the Tasks extension's "supported methods").
bool task_method(std::string_view m) { return m == "tools/call"; }

}  // namespace

ClientSession::ClientSession(std::shared_ptr<jsonrpc::Connection> c, ClientOptions o)
    : connection_(std::move(c)), options_(std::move(o)) {}

ClientSession::~ClientSession() {
    if (listen_) listen_->cancel.emit(asio::cancellation_type::terminal);
}

json::object ClientSession::client_capabilities() const {
    json::object caps;
    if (options_.handlers.roots) caps["roots"] = json::object{};
    if (options_.handlers.sampling) caps["sampling"] = json::object{};
    // Both modes (2025-11-25): a form, and a URL the user opens (the answer says whether they agreed to).
    if (options_.handlers.elicitation)
        caps["elicitation"] = json::object{{"form", json::object{}}, {"url", json::object{}}};
    // Tasks: a tools/call may be answered with a task, which the session follows to its end (client_session_tasks).
    auto& extensions = caps["extensions"];
    if (!extensions.is_object()) extensions.emplace_object();
    extensions.get_object()[tasks_extension] = json::object{};
    // MCP Apps: the host renders ui:// views (CLI: names them; web UI: draws them).
    extensions.get_object()[ui_extension] = ui_extension_capability();
    return caps;
}

std::shared_ptr<const jsonrpc::MetaMembers> ClientSession::meta_for(TaskMode mode) const {
    modern_meta();
    if (mode != TaskMode::undeclared) return meta_members_;
    if (meta_untasked_from_ != meta_members_.get()) {
        json::object meta = meta_cache_;
        if (auto* caps = meta[meta::client_capabilities].if_object())
            if (auto* e = caps->if_contains("extensions"); e && e->is_object()) e->get_object().erase(tasks_extension);
        meta_untasked_ = std::make_shared<const jsonrpc::MetaMembers>(meta);
        meta_untasked_from_ = meta_members_.get();
    }
    return meta_untasked_;
}

const json::object& ClientSession::modern_meta() const {
    if (!meta_cache_.empty() && meta_cache_version_ == protocol_version_ && meta_cache_level_ == log_level_)
        return meta_cache_;
    json::object meta;
    meta[meta::protocol_version] = protocol_version_.empty() ? std::string(modern_version) : protocol_version_;
    meta[meta::client_info] = options_.client_info.to_json();
    meta[meta::client_capabilities] = client_capabilities();
    if (!log_level_.empty()) meta[meta::log_level] = log_level_;
    meta_cache_ = std::move(meta);
    meta_members_ = std::make_shared<const jsonrpc::MetaMembers>(meta_cache_);
    meta_cache_version_ = protocol_version_;
    meta_cache_level_ = log_level_;
    return meta_cache_;
}

bool ClientSession::has_capability(std::string_view name, std::string_view flag) const {
    const auto* c = capabilities_.if_contains(name);
    if (!c || !c->is_object()) return false;
    if (flag.empty()) return true;
    const auto* f = c->get_object().if_contains(flag);
    return f && f->is_bool() && f->get_bool();
}

bool ClientSession::has_extension(std::string_view id) const {
    const auto* e = capabilities_.if_contains("extensions");
    const auto* x = e && e->is_object() ? e->get_object().if_contains(id) : nullptr;
    return x && x->is_object();
}

trace::Span ClientSession::client_span(std::string_view method, const json::object& params,
                                       const trace::SpanContext& parent) const {
    std::string_view target;
    if (method == "tools/call" || method == "prompts/get")
        if (const auto* n = params.if_contains("name"); n && n->is_string()) target = n->get_string();
    auto span = trace::Span::start(method, target, trace::SpanKind::client, parent);
    if (!span.recording()) return span;
    span.set("mcp.method.name", method);
    span.set("mcp.protocol.version", protocol_version_);
    span.set("network.transport", options_.network_transport);
    span.set("server.name", options_.server_name);
    if (method == "tools/call") {
        span.set("gen_ai.operation.name", "execute_tool");
        span.set("gen_ai.tool.name", target);
    } else if (method == "prompts/get") {
        span.set("gen_ai.prompt.name", target);
    } else if (method == "resources/read" || method == "resources/subscribe") {
        if (const auto* u = params.if_contains("uri"); u && u->is_string())
            span.set("mcp.resource.uri", u->get_string());
    }
    return span;
}

jsonrpc::RequestOptions ClientSession::request_options(const CallOptions& o) const {
    jsonrpc::RequestOptions ro;
    ro.timeout = o.timeout;
    ro.max_total_timeout = o.max_total_timeout;
    ro.on_progress = o.on_progress;
    ro.blobs = o.blobs;
    ro.result_text = o.result_text;
    return ro;
}

namespace {

// A result's resultType, read in place ("" when absent or not a string): it is looked at on every request.
std::string_view result_type_of(const json::object& o) {
    const auto* t = o.if_contains("resultType");
    return t && t->is_string() ? std::string_view(t->get_string()) : std::string_view();
}

// Whether a result's text (CallOptions::result_text) is complete as it stands: no resultType but "complete" (not a
// task, no input asked for) and no 2025-11-25 task handle. `is_error`: its isError.
bool complete_as_text(jsonrpc::ResultText& text, bool& is_error) {
    const auto& members = text.members_of();  // kept for the next reader (a gateway forwarding the text)
    if (!members) return false;               // a key with an escape: read as values
    for (const auto& m : *members) {
        if ((m.key == "resultType" && m.value != "\"complete\"") || m.key == "task") return false;
        if (m.key == "isError") is_error = m.value == "true";
    }
    return true;
}

}  // namespace

std::optional<Error> ClientSession::unusable_result(const std::string& method, const json::value& result,
                                                    int round) const {
    const auto* o = result.if_object();
    if (!o)
        return Error::make_local(
            code::protocol_violation,
            fmt::format("server \"{}\": the result of {} is not an object", options_.server_name, method));
    const auto result_type = result_type_of(*o);
    if (result_type.empty() || result_type == "complete") return std::nullopt;
    if (result_type == "task" && task_method(method)) return std::nullopt;  // followed to its end
    if (result_type != "input_required" || !mrtr_method(method))
        return Error::make_local(code::protocol_violation,
                                 fmt::format("server \"{}\": unrecognized resultType \"{}\" for {}",
                                             options_.server_name, result_type, method));
    if (round + 1 >= max_input_rounds)
        return Error::make_local(code::protocol_violation,
                                 fmt::format("server \"{}\" still asked for input after {} rounds of {}",
                                             options_.server_name, max_input_rounds, method));
    return std::nullopt;
}

// The error paths live in the two functions above: a coroutine's frame holds the temporaries of all its branches at
// once, and this one, on every request's path, is kept small (a frame is allocated for every request).
template <class Result>
awaitable<Outcome<Result>> ClientSession::request_as(std::string method, json::object params, CallOptions options,
                                                     Result (*convert)(json::value&&)) {
    bool version_retried = false;
    // One CLIENT span for the request with its retries and input rounds; the server continues it (_meta.traceparent).
    auto span = client_span(method, params, options.trace);
    trace::OperationTimer timer(false, method);  // mcp.client.operation.duration
    if (span.context().valid()) detail::inject_trace(params, span.context());
    for (int round = 0;; ++round) {
        // The params are read where they are (a retry needs them again: no copy per attempt). The _meta is not
        // copied in either: the cached, serialized one is spliced in as the request is written.
        auto ro = request_options(options);
        if (era_ == Era::modern) {  // the 2026-07-28 _meta goes in as it is written, serialized once per session
            modern_meta();  // refreshes meta_members_ with meta_cache_ when the version or log level changed
            ro.meta = meta_for(options.tasks);
        }
        if (span.recording())
            ro.on_sent = [&span](std::int64_t id) { span.set("jsonrpc.request.id", std::to_string(id)); };
        json::value sent(std::move(params));  // moved in and back out: no copy
        auto r = co_await connection_->request_view(method, sent, std::move(ro));
        params = std::move(sent.get_object());
        if (!r) {
            if (!version_retried && adopt_supported_version(r.error())) {
                version_retried = true;
                span.add_event("retry", {{"reason", std::string("protocol version")},
                                         {"mcp.protocol.version", protocol_version_}});
                continue;
            }
            detail::end_span(span, r, &timer);
            co_return r.error();
        }
        if (options.result_text && !options.result_text->text.empty()) {
            // The result came as text: handed over as it is when complete, else built and read on as usual.
            bool is_error = false;
            if (complete_as_text(*options.result_text, is_error)) {
                detail::end_span_text(span, is_error, &timer);
                co_return convert(json::value());
            }
            *r = jsonrpc::parse_json_text(options.result_text->text);
            options.result_text->assign(std::string());
        }
        if (auto bad = unusable_result(method, *r, round)) {
            span.set_error("protocol_violation", bad->message);
            timer.set_error(std::to_string(bad->code));
            co_return std::move(*bad);
        }
        const auto result_type = result_type_of(r->get_object());
        if (result_type == "task" && options.tasks == TaskMode::hand_back) {
            span.set("mcp.task.handed_back", true);
            co_return convert(std::move(*r));
        }
        if (result_type == "task" || (era_ == Era::legacy && is_legacy_task_handle(method, r->get_object()))) {
            // The Tasks extension (or 2025-11-25's tasks): polled to its end, then given as if synchronous.
            options.trace = span.context();  // its polls are the call's children
            options.result_text.reset();     // its end comes as a value
            auto final_result = co_await follow_task(std::move(*r), std::move(options));
            detail::end_span(span, final_result, &timer);
            if (!final_result) co_return final_result.error();
            co_return convert(std::move(*final_result));
        }
        if (result_type != "input_required") {  // complete
            detail::end_span(span, r, &timer);
            co_return convert(std::move(*r));
        }
        // Multi round-trip (input_required): answer what it asks, echo requestState, retry with a new id.
        const auto& o = r->get_object();
        params.erase("inputResponses");
        params.erase("requestState");
        if (const auto* reqs = o.if_contains("inputRequests"); reqs && reqs->is_object()) {
            auto input = trace::Span::start("input_required", "", trace::SpanKind::internal, span.context());
            input.set("switchboard.input.round", round + 1);
            input.set("switchboard.input.requests", static_cast<std::int64_t>(reqs->get_object().size()));
            auto answers = co_await answer_input_requests(reqs->get_object());
            if (!answers) {
                input.set_error(std::to_string(answers.error().code), answers.error().message);
                span.set_error(std::to_string(answers.error().code), answers.error().message);
                timer.set_error(std::to_string(answers.error().code));
                co_return answers.error();
            }
            params["inputResponses"] = std::move(*answers);
        }
        if (const auto* state = o.if_contains("requestState"); state && state->is_string())
            params["requestState"] = *state;
    }
}

namespace {
// request_as's conversions.
json::value as_value(json::value&& v) { return std::move(v); }
CallToolResult as_tool_result(json::value&& v) { return CallToolResult::from_json(std::move(v)); }
CallToolResult as_whole_tool_result(json::value&& v) {
    if (v.is_null()) return CallToolResult{};  // the result is in CallOptions::result_text
    return CallToolResult::whole(std::move(v));
}
}  // namespace

awaitable<Outcome<json::value>> ClientSession::request(std::string method, json::object params, CallOptions options) {
    options.result_text.reset();  // only call_tool hands a result over as text
    return request_as<json::value>(std::move(method), std::move(params), std::move(options), &as_value);
}

awaitable<Outcome<std::vector<json::value>>> ClientSession::list_all(std::string method, std::string_view key) {
    std::vector<json::value> items;
    std::set<std::string> seen_cursors;
    std::optional<std::string> cursor;
    for (int page = 0; page < max_list_pages; ++page) {
        json::object params;
        if (cursor) params["cursor"] = *cursor;
        auto r = co_await request(method, std::move(params));
        if (!r) co_return r.error();
        auto& o = r->get_object();
        if (page == 0) {
            const auto* ttl = o.if_contains("ttlMs");
            // The server's number, bounded: 1e300 must not become undefined behaviour nor overflow the clock.
            list_ttl_[method] = ttl && ttl->is_number() && ttl->to_number<double>() >= 0
                                    ? std::optional(std::chrono::milliseconds(std::min<std::int64_t>(
                                          core::clamp_to_int64(ttl->to_number<double>()), 24 * 3600 * 1000)))
                                    : std::nullopt;
        }
        if (auto* list = o.if_contains(key); list && list->is_array())
            for (auto& item : list->get_array()) items.push_back(std::move(item));
        const auto* next = o.if_contains("nextCursor");
        if (!next || !next->is_string() || next->get_string().empty()) co_return items;
        cursor = std::string(next->get_string());
        if (!seen_cursors.insert(*cursor).second)
            co_return Error::make_local(code::protocol_violation,
                                        fmt::format("server \"{}\" repeated the cursor \"{}\" while paging {}",
                                                    options_.server_name, *cursor, method));
    }
    co_return Error::make_local(code::protocol_violation, fmt::format("server \"{}\": {} did not end after {} pages",
                                                                      options_.server_name, method, max_list_pages));
}

template <class T>
static std::vector<T> convert_all(std::vector<json::value>& items) {
    std::vector<T> out;
    out.reserve(items.size());
    for (auto& v : items) out.push_back(T::from_json(v));
    return out;
}

awaitable<Outcome<void>> ClientSession::ping(CallOptions options) {
    // 2026-07-28 removed ping; server/discover is the cheapest request every modern server answers.
    auto r = co_await request(era_ == Era::modern ? "server/discover" : "ping", json::object{}, std::move(options));
    if (!r) co_return r.error();
    co_return Outcome<void>{};
}

awaitable<Outcome<std::vector<Tool>>> ClientSession::list_tools() {
    auto r = co_await list_all("tools/list", "tools");
    if (!r) co_return r.error();
    note_legacy_task_tools(*r);
    co_return convert_all<Tool>(*r);
}

awaitable<Outcome<CallToolResult>> ClientSession::call_tool(std::string name, json::object arguments,
                                                            CallOptions options) {
    const bool as_task = options.tasks != TaskMode::undeclared && wants_legacy_task(name);
    json::object params(as_task ? 3 : 2);  // emplaced, not an init-list: the arguments are moved, not copied
    params.emplace("name", std::move(name));
    params.emplace("arguments", std::move(arguments));
    if (as_task) params.emplace("task", json::object());  // 2025-11-25 tasks: the server's default ttl
    if (!options.whole_result) options.result_text.reset();  // only a whole result is forwarded as text
    const auto convert = options.whole_result ? &as_whole_tool_result : &as_tool_result;
    return request_as<CallToolResult>("tools/call", std::move(params), std::move(options), convert);
}

awaitable<Outcome<std::vector<Resource>>> ClientSession::list_resources() {
    auto r = co_await list_all("resources/list", "resources");
    if (!r) co_return r.error();
    co_return convert_all<Resource>(*r);
}

awaitable<Outcome<std::vector<ResourceTemplate>>> ClientSession::list_resource_templates() {
    auto r = co_await list_all("resources/templates/list", "resourceTemplates");
    if (!r) co_return r.error();
    co_return convert_all<ResourceTemplate>(*r);
}

awaitable<Outcome<ReadResourceResult>> ClientSession::read_resource(std::string uri, CallOptions options) {
    json::object params{{"uri", std::move(uri)}};
    // A big blob comes decoded, straight from the stream (ResourceContents::blob_bytes), never as base64 too.
    auto blobs = std::make_shared<jsonrpc::DecodedBlobs>();
    options.blobs = blobs;
    auto r = co_await request("resources/read", std::move(params), std::move(options));
    if (!r) co_return r.error();
    co_return ReadResourceResult::from_json(std::move(*r), std::move(*blobs));
}

awaitable<Outcome<std::vector<Prompt>>> ClientSession::list_prompts() {
    auto r = co_await list_all("prompts/list", "prompts");
    if (!r) co_return r.error();
    co_return convert_all<Prompt>(*r);
}

awaitable<Outcome<GetPromptResult>> ClientSession::get_prompt(std::string name,
                                                              std::map<std::string, std::string> arguments,
                                                              CallOptions options) {
    json::object args;
    for (auto& [k, v] : arguments) args[k] = v;
    json::object params{{"name", std::move(name)}, {"arguments", std::move(args)}};
    auto r = co_await request("prompts/get", std::move(params), std::move(options));
    if (!r) co_return r.error();
    co_return GetPromptResult::from_json(*r);
}

awaitable<Outcome<CompleteResult>> ClientSession::complete(json::object ref, std::string argument, std::string value,
                                                           std::map<std::string, std::string> context) {
    json::object params{{"ref", std::move(ref)},
                        {"argument", json::object{{"name", std::move(argument)}, {"value", std::move(value)}}}};
    if (!context.empty()) {
        json::object args;
        for (auto& [k, v] : context) args[k] = v;
        params["context"] = json::object{{"arguments", std::move(args)}};
    }
    auto r = co_await request("completion/complete", std::move(params));
    if (!r) co_return r.error();
    co_return CompleteResult::from_json(*r);
}

awaitable<Outcome<void>> ClientSession::set_logging_level(std::string level) {
    if (era_ == Era::modern) {
        log_level_ = std::move(level);  // 2026-07-28: per request, in _meta
        co_return Outcome<void>{};
    }
    json::object params{{"level", std::move(level)}};
    auto r = co_await request("logging/setLevel", std::move(params));
    if (!r) co_return r.error();
    co_return Outcome<void>{};
}

awaitable<void> ClientSession::close() {
    if (listen_) {
        listen_->cancel.emit(asio::cancellation_type::terminal);
        listen_.reset();
        // Let the listen request run its cancellation, so that notifications/cancelled is queued (and flushed by
        // close) before stdin closes; otherwise the server keeps the stream open until its end-of-input grace ends.
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    }
    co_await connection_->close();
}

}  // namespace switchboard::mcp
