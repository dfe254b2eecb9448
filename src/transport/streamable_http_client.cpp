// The Streamable HTTP client channel. write() looks at each outgoing message once (method, id, `_meta`) to derive
// headers and the session's state; requests are POSTed in their own coroutines so that a slow call never delays the
// others; every message received (JSON bodies, SSE events of POST replies, the GET stream) is queued for read().
#include "http_client_channel.hpp"
#include "http_options.hpp"
#include "message_queue.hpp"

#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/transport/param_headers.hpp>
#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/http/client.hpp>
#include <switchboard/http/sse_parser.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace switchboard::transport {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using http::Exchange;
using http::Failure;
using http::Fields;
using http::SseEvent;
using http::SseParser;
using http::Url;
using jsonrpc::Received;
namespace bhttp = boost::beast::http;

namespace {

using core::as_tuple_awaitable;
constexpr std::size_t error_body_limit = 64 * 1024;
constexpr int max_resume_attempts = 3;
constexpr int max_get_failures = 5;
constexpr std::chrono::milliseconds default_retry{1000};
constexpr std::chrono::seconds post_message_timeout{30};  // a notification or response POST the server sits on
constexpr std::string_view protocol_version_key = "io.modelcontextprotocol/protocolVersion";

std::optional<json::value> parse_json(std::string_view text) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec) return std::nullopt;
    return v;
}

std::string string_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

struct StreamEnd {
    bool clean = false;  // the body ended normally
    Failure failure;     // otherwise
};

struct StreamableHttpState : std::enable_shared_from_this<StreamableHttpState> {
    struct Inflight {
        std::shared_ptr<http::Abort> abort = std::make_shared<http::Abort>();  // closes whatever the request uses
        bool cancelled = false;
    };

    StreamableHttpState(asio::any_io_executor e, std::string url_text, HttpClientOptions o)
        : ex(e),
          opts(std::move(o)),
          inbox(e),
          client(std::make_shared<http::Client>(e, client_options(opts))),
          tasks(e) {
        endpoint = http::parse_url(url_text, url_error);
    }

    asio::any_io_executor ex;
    HttpClientOptions opts;
    std::optional<Url> endpoint;
    std::string url_error;
    detail::MessageQueue inbox;  // what read() hands out; ended when `closed` is set
    std::shared_ptr<http::Client> client;
    core::TaskGroup tasks;  // the POSTs and the GET stream: close() cancels and joins them

    bool closed = false;

    // What passed through: the era, the negotiated version, the session and how to renew it.
    bool modern = false;
    std::string protocol_version, session_id;
    std::string init_request, init_id, initialized_note;
    int session_gen = 0;
    bool reinit_running = false, reinit_ok = false;
    std::shared_ptr<core::OneShotEvent> reinit_done;

    bool get_running = false;
    Exchange* get_exchange = nullptr;
    std::unordered_map<std::string, std::shared_ptr<Inflight>> inflight;  // key: serialized request id

    // SEP-2243 (modern era): x-mcp-header annotations of the listed tools, by tool name, and the tools/list requests
    // whose replies must be checked (a tool with invalid annotations is left out of the list).
    std::unordered_map<std::string, std::vector<ParamHeader>> param_headers;
    std::unordered_set<std::string> tools_list_ids;

    const std::string& name() const { return opts.server_name; }

    void push(Received r) { inbox.push(std::move(r)); }

    void push_error(const std::string& id_json, int code, std::string message) {
        inbox.push_message(detail::error_response(id_json, code, client->scrub(std::move(message))));
    }

    void fail_channel(std::string reason) {
        if (closed) return;
        spdlog::warn("[{}] {}", name(), reason);
        closed = true;
        inbox.end(client->scrub(std::move(reason)));
        client->close();
    }

    void spawn(awaitable<void> task) { tasks.spawn(std::move(task), fmt::format("[{}] HTTP transport", name())); }

    Fields post_fields(std::string_view method, std::string_view mcp_name) const {
        Fields f;
        f.emplace_back("Content-Type", "application/json");
        f.emplace_back("Accept", "application/json, text/event-stream");
        if (!protocol_version.empty()) f.emplace_back("MCP-Protocol-Version", protocol_version);
        if (!modern && !session_id.empty()) f.emplace_back("Mcp-Session-Id", session_id);
        if (modern && !method.empty()) {
            f.emplace_back("Mcp-Method", std::string(method));
            if (!mcp_name.empty()) f.emplace_back("Mcp-Name", encode_header_value(mcp_name));
        }
        return f;
    }

    Fields get_fields(const std::string& last_event_id) const {
        Fields f;
        f.emplace_back("Accept", "text/event-stream");
        if (!protocol_version.empty()) f.emplace_back("MCP-Protocol-Version", protocol_version);
        if (!session_id.empty()) f.emplace_back("Mcp-Session-Id", session_id);
        if (!last_event_id.empty()) f.emplace_back("Last-Event-ID", last_event_id);
        return f;
    }

    /// Queues a received message. True when it is the response to `id_json`.
    bool deliver(std::string_view text, const std::string& id_json) {
        bool is_reply = false;
        std::string rewritten;
        if (auto v = parse_json(text); v && v->is_object()) {
            auto& o = v->get_object();
            const auto* id = o.if_contains("id");
            if (id && !o.contains("method")) {
                const auto key = json::serialize(*id);
                is_reply = key == id_json;
                if (key == init_id && !init_id.empty())
                    if (const auto* r = o.if_contains("result"); r && r->is_object())
                        protocol_version = string_at(r->get_object(), "protocolVersion");
                if (tools_list_ids.erase(key) > 0)
                    if (auto* r = o.if_contains("result"); r && r->is_object() && check_tools(r->get_object()))
                        rewritten = json::serialize(o);
            }
        }
        push(Received{
            Received::Kind::message, rewritten.empty() ? std::string(text) : std::move(rewritten), 0, {}, {}, {},
            nullptr});
        return is_reply;
    }

    // Records each listed tool's x-mcp-header annotations; drops (with a warning) the tools whose annotations are
    // invalid. True when the list was changed.
    bool check_tools(json::object& result) {
        auto* tools = result.if_contains("tools");
        if (!tools || !tools->is_array()) return false;
        auto& list = tools->get_array();
        const auto before = list.size();
        for (auto it = list.begin(); it != list.end();) {
            const auto* t = it->if_object();
            const std::string tool = t ? string_at(*t, "name") : "";
            const auto* schema = t ? t->if_contains("inputSchema") : nullptr;
            auto spec = parse_param_headers(schema ? *schema : json::value());
            if (!spec.error.empty()) {
                spdlog::warn("[{}] ignoring tool \"{}\": {}", name(), tool, spec.error);
                param_headers.erase(tool);
                it = list.erase(it);
                continue;
            }
            if (spec.headers.empty())
                param_headers.erase(tool);
            else
                param_headers[tool] = std::move(spec.headers);
            ++it;
        }
        return list.size() != before;
    }

    // Reads an SSE body to its end, handing each `message` event to `on_message`.
    template <class OnMessage>
    awaitable<StreamEnd> consume(Exchange& x, SseParser& parser, OnMessage on_message, bool& saw_oversize) {
        SseEvent ev;
        for (;;) {
            auto piece = co_await x.read_some();
            if (!piece) co_return StreamEnd{false, piece.error()};
            if (piece->empty()) co_return StreamEnd{true, {}};
            parser.feed(*piece);
            while (parser.next(ev)) {
                if (ev.kind == SseEvent::Kind::oversize) {
                    saw_oversize = true;
                    detail::push_oversize(inbox, name(), ev, opts.max_message_size);
                } else if (ev.type == "message") {
                    on_message(ev.data);
                }
            }
        }
    }

    awaitable<void> wait(std::chrono::milliseconds d) {
        asio::steady_timer t(ex, d);
        co_await t.async_wait(as_tuple_awaitable);
    }

    // --- requests -----------------------------------------------------------------------------------------------

    awaitable<void> run_request(std::string message, std::string id_json, std::string method, std::string mcp_name,
                                Fields param_fields) {
        auto self = shared_from_this();
        auto infl = std::make_shared<Inflight>();
        inflight[id_json] = infl;
        bool renewed = false;
        for (;;) {
            const int gen = session_gen;
            const bool had_session = !session_id.empty();
            auto fields = post_fields(method, mcp_name);
            fields.insert(fields.end(), param_fields.begin(), param_fields.end());
            auto r = co_await client->send(*endpoint, bhttp::verb::post, message, std::move(fields), infl->abort);
            if (infl->cancelled || closed) break;
            if (!r) {
                const auto& f = r.error();
                if (f.kind == Failure::Kind::connect || f.kind == Failure::Kind::tls)
                    fail_channel(f.message);
                else if (f.kind != Failure::Kind::aborted)
                    push_error(id_json, jsonrpc::code::transport_error, f.message);
                break;
            }
            auto x = std::move(*r);
            if (method == "initialize")
                if (auto sid = x->header("Mcp-Session-Id"); !sid.empty()) session_id = std::string(sid);
            const unsigned status = x->status();
            if (status == 404 && had_session && !modern && method != "initialize" && !renewed) {
                x.reset();
                renewed = true;
                const bool ok = co_await reinitialize(gen);
                if (closed || infl->cancelled) break;
                if (ok) continue;
                push_error(
                    id_json, jsonrpc::code::transport_error,
                    fmt::format("server \"{}\": the session expired (HTTP 404) and re-initialising failed", name()));
                break;
            }
            if (status / 100 != 2) {
                co_await push_http_error(*x, id_json, method);
                break;
            }
            if (x->media_type() == "text/event-stream") {
                co_await consume_reply(std::move(x), infl, id_json, method);
                break;
            }
            if (status == 202 || status == 204) {
                push_error(id_json, jsonrpc::code::transport_error,
                           fmt::format("server \"{}\" accepted {} ({}) but sent no response", name(), method,
                                       http::status_text(status, x->reason())));
                break;
            }
            auto body = co_await x->read_all(opts.max_message_size);
            if (infl->cancelled || closed) break;
            if (!body) {
                if (body.error().kind != Failure::Kind::aborted)
                    push_error(id_json,
                               body.error().kind == Failure::Kind::oversize ? jsonrpc::code::protocol_violation
                                                                            : jsonrpc::code::transport_error,
                               fmt::format("server \"{}\": the reply to {}: {}", name(), method, body.error().message));
                break;
            }
            if (!parse_json(*body)) {
                push_error(id_json, jsonrpc::code::protocol_violation,
                           fmt::format("server \"{}\" answered {} with {} that is not JSON: {}", name(), method,
                                       x->header("Content-Type").empty() ? "a body" : x->header("Content-Type"),
                                       jsonrpc::preview(*body, 120)));
                break;
            }
            deliver(*body, id_json);
            break;
        }
        if (auto it = inflight.find(id_json); it != inflight.end() && it->second == infl) inflight.erase(it);
        tools_list_ids.erase(id_json);  // a tools/list that failed leaves no entry behind
    }

    // An HTTP error status: the server's JSON-RPC error when the body is one (re-addressed to our request, since
    // servers answer with a null id), otherwise the status and the start of the body.
    awaitable<void> push_http_error(Exchange& x, const std::string& id_json, const std::string& method) {
        const unsigned status = x.status();
        auto body = co_await x.read_all(error_body_limit);
        std::string text = body ? std::move(*body) : std::string();
        if (auto v = parse_json(text);
            v && v->is_object() && v->get_object().contains("error") && v->get_object().at("error").is_object()) {
            auto& o = v->get_object();
            o["jsonrpc"] = "2.0";
            o["id"] = *parse_json(id_json);
            push(Received{Received::Kind::message, json::serialize(o), 0, {}, {}, {}, nullptr});
            co_return;
        }
        std::string hint;
        if (status == 401 || status == 403) hint = " (check the \"headers\" configured for this server)";
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        push_error(id_json, jsonrpc::code::transport_error,
                   fmt::format("server \"{}\" answered {} with {}{}{}{}", name(), method,
                               http::status_text(status, x.reason()), text.empty() ? "" : ": ",
                               jsonrpc::preview(text, 200), hint));
    }

    // An SSE reply: events until the response; a stream that breaks first is resumed with GET + Last-Event-ID.
    awaitable<void> consume_reply(std::unique_ptr<Exchange> x, std::shared_ptr<Inflight> infl, std::string id_json,
                                  std::string method) {
        bool got = false, saw_oversize = false;
        auto on_message = [this, &got, &id_json](std::string_view data) {
            if (deliver(data, id_json)) got = true;
        };
        SseParser parser(opts.max_message_size);
        auto end = co_await consume(*x, parser, on_message, saw_oversize);
        x.reset();
        std::string last_id = parser.last_event_id();
        auto retry = parser.retry().value_or(default_retry);
        int resumes = 0;
        // A stream the server ended on purpose before the reply (2025-11-25 polling: priming event, `retry:`, close)
        // is resumed the same way as one that broke.
        while (!got && !infl->cancelled && !closed && end.failure.kind != Failure::Kind::aborted && !last_id.empty() &&
               !modern && resumes < max_resume_attempts) {
            ++resumes;
            spdlog::info("[{}] the reply stream of {} broke; resuming after event \"{}\" in {} ms", name(), method,
                         last_id, retry.count());
            co_await wait(retry);
            if (infl->cancelled || closed) break;
            auto r =
                co_await client->send(*endpoint, bhttp::verb::get, std::string(), get_fields(last_id), infl->abort);
            if (infl->cancelled || closed) break;
            if (!r) {
                end = StreamEnd{false, r.error()};
                if (r.error().kind == Failure::Kind::connect) continue;
                break;
            }
            if ((*r)->status() / 100 != 2 || (*r)->media_type() != "text/event-stream") {
                end = StreamEnd{false, Failure{Failure::Kind::io,
                                               fmt::format("server \"{}\" refused to resume the reply stream ({})",
                                                           name(), http::status_text((*r)->status(), (*r)->reason()))}};
                break;
            }
            SseParser resumed(opts.max_message_size);
            end = co_await consume(**r, resumed, on_message, saw_oversize);
            if (!resumed.last_event_id().empty()) last_id = resumed.last_event_id();
            if (resumed.retry()) retry = *resumed.retry();
        }
        if (got || infl->cancelled || closed || end.failure.kind == Failure::Kind::aborted) co_return;
        std::string why;
        if (saw_oversize)
            why = fmt::format("server \"{}\": the reply to {} was over the {} byte message size limit", name(), method,
                              opts.max_message_size);
        else if (end.clean)
            why = fmt::format("server \"{}\" ended the reply stream of {} without a response", name(), method);
        else
            why = end.failure.message +
                  (resumes > 0 ? fmt::format(" (the reply to {} was lost after {} resume attempts)", method, resumes)
                               : fmt::format(" (no reply to {}; the stream gave no event id to resume from)", method));
        push_error(id_json, saw_oversize ? jsonrpc::code::protocol_violation : jsonrpc::code::transport_error, why);
    }

    // Legacy session expiry: replay initialize + initialized for a new session id, once for all waiting requests.
    awaitable<bool> reinitialize(int gen) {
        if (session_gen != gen) co_return reinit_ok;
        if (reinit_running) {
            auto done = reinit_done;
            co_await done->wait_for(opts.connect_timeout * 3 + std::chrono::seconds(30));
            co_return reinit_ok;
        }
        if (init_request.empty()) co_return false;
        auto self = shared_from_this();
        reinit_running = true;
        reinit_done = std::make_shared<core::OneShotEvent>();
        auto done = reinit_done;
        spdlog::warn("[{}] the session expired (HTTP 404); initialising a new one", name());
        session_id.clear();
        bool ok = false;
        auto r = co_await client->send(*endpoint, bhttp::verb::post, init_request, post_fields("initialize", ""));
        if (r && (*r)->status() / 100 == 2) {
            auto& x = **r;
            std::string sid(x.header("Mcp-Session-Id"));
            bool got = false;
            auto check = [&](std::string_view data) {
                auto v = parse_json(data);
                if (!v || !v->is_object()) return;
                if (const auto* id = v->get_object().if_contains("id"); id && json::serialize(*id) == init_id)
                    got = v->get_object().contains("result");
            };
            if (x.media_type() == "text/event-stream") {
                SseParser parser(opts.max_message_size);
                bool over = false;
                co_await consume(x, parser, check, over);
            } else if (auto body = co_await x.read_all(opts.max_message_size)) {
                check(*body);
            }
            if (got) {
                session_id = sid;
                ok = true;
            }
        } else {
            spdlog::warn("[{}] re-initialising failed: {}", name(),
                         r ? http::status_text((*r)->status(), (*r)->reason()) : r.error().message);
        }
        if (ok && !initialized_note.empty()) co_await post_message(initialized_note, "notifications/initialized");
        reinit_ok = ok;
        ++session_gen;
        reinit_running = false;
        done->set();
        if (ok && get_exchange) get_exchange->abort();  // the GET stream reconnects with the new session
        co_return ok;
    }

    // A notification or a response to the server: POSTed in order; the server answers 202.
    // Bounded: writes are sent one at a time, so a POST the server never answers must not hold up every later one.
    awaitable<bool> post_message(std::string message, std::string method) {
        auto self = shared_from_this();
        auto abort = std::make_shared<http::Abort>();
        auto limit = std::make_shared<asio::steady_timer>(ex, post_message_timeout);
        auto timed_out = std::make_shared<bool>(false);
        limit->async_wait([abort, timed_out](boost::system::error_code ec) {
            if (ec) return;
            *timed_out = true;
            abort->fire();
        });
        auto r = co_await client->send(*endpoint, bhttp::verb::post, std::move(message), post_fields("", ""), abort);
        if (!r) {
            limit->cancel();
            const auto& f = r.error();
            if (f.kind == Failure::Kind::connect || f.kind == Failure::Kind::tls)
                fail_channel(f.message);
            else if (f.kind != Failure::Kind::aborted || *timed_out)
                spdlog::warn(
                    "[{}] sending {} failed: {}", name(), method.empty() ? "a response" : method,
                    *timed_out ? fmt::format("no answer within {} s", post_message_timeout.count()) : f.message);
            co_return false;
        }
        auto& x = **r;
        auto body = co_await x.read_all(error_body_limit);
        limit->cancel();
        if (x.status() / 100 != 2) {
            spdlog::warn("[{}] {} was refused: {}{}{}", name(), method.empty() ? "a response" : method,
                         http::status_text(x.status(), x.reason()), body && !body->empty() ? ": " : "",
                         body ? client->scrub(jsonrpc::preview(*body, 200)) : "");
            co_return false;
        }
        co_return true;
    }

    // --- the legacy GET stream ------------------------------------------------------------------------------------

    void start_get_stream() {
        if (modern || get_running || closed) return;
        get_running = true;
        spawn(get_loop());
    }

    awaitable<void> get_loop() {
        auto self = shared_from_this();
        std::string last_id;
        auto retry = default_retry;
        int failures = 0;
        while (!closed) {
            auto r = co_await client->send(*endpoint, bhttp::verb::get, std::string(), get_fields(last_id));
            if (closed) break;
            if (r && (*r)->status() == 405) {
                spdlog::debug("[{}] the server offers no GET stream (HTTP 405)", name());
                break;
            }
            if (!r || (*r)->status() / 100 != 2 || (*r)->media_type() != "text/event-stream") {
                if (++failures > max_get_failures) {
                    spdlog::warn("[{}] giving up on the GET stream: {}", name(),
                                 r ? http::status_text((*r)->status(), (*r)->reason()) : r.error().message);
                    break;
                }
                co_await wait(retry);
                continue;
            }
            failures = 0;
            SseParser parser(opts.max_message_size);
            bool over = false;
            get_exchange = r->get();
            const std::string none;
            auto on_message = [this, &none](std::string_view d) { deliver(d, none); };
            auto end = co_await consume(**r, parser, on_message, over);
            get_exchange = nullptr;
            if (!parser.last_event_id().empty()) last_id = parser.last_event_id();
            if (parser.retry()) retry = *parser.retry();
            if (closed) break;
            if (!end.clean) spdlog::debug("[{}] the GET stream broke: {}", name(), end.failure.message);
            if (end.failure.kind != Failure::Kind::aborted) co_await wait(retry);
        }
        get_running = false;
    }

    // --- Channel ----------------------------------------------------------------------------------------------------

    awaitable<boost::system::error_code> write(std::string message) {
        if (closed) co_return asio::error::make_error_code(asio::error::not_connected);
        if (!endpoint) {
            fail_channel(fmt::format("server \"{}\": {}", name(), url_error));
            co_return boost::system::error_code{};
        }
        auto v = parse_json(message);
        if (!v || !v->is_object()) co_return asio::error::make_error_code(asio::error::invalid_argument);
        auto& o = v->get_object();
        const std::string method = string_at(o, "method");
        const auto* id = o.if_contains("id");
        const auto* params = o.if_contains("params");
        const auto* p = params && params->is_object() ? &params->get_object() : nullptr;

        if (!method.empty() && id) {  // a request
            const auto* meta = p ? p->if_contains("_meta") : nullptr;
            const auto* version =
                meta && meta->is_object() ? meta->get_object().if_contains(protocol_version_key) : nullptr;
            if (version && version->is_string()) {
                modern = true;
                protocol_version = std::string(version->get_string());
            }
            if (method == "initialize") {
                modern = false;
                protocol_version.clear();
                init_request = message;
                init_id = json::serialize(*id);
            }
            std::string mcp_name;
            if (p && (method == "tools/call" || method == "prompts/get")) mcp_name = string_at(*p, "name");
            if (p && method == "resources/read") mcp_name = string_at(*p, "uri");
            if (p && method.starts_with("tasks/")) mcp_name = string_at(*p, "taskId");  // the Tasks extension's routing
            Fields param_fields;
            if (modern && method == "tools/list") tools_list_ids.insert(json::serialize(*id));
            if (modern && p && method == "tools/call")
                if (auto it = param_headers.find(mcp_name); it != param_headers.end()) {
                    const auto* args = p->if_contains("arguments");
                    param_fields = param_header_fields(it->second, args ? *args : json::value());
                }
            // The trace context in _meta (SEP-414) also as W3C headers, for proxies and servers that read those.
            if (meta && meta->is_object()) {
                const auto& m = meta->get_object();
                for (const char* key : {"traceparent", "tracestate"})
                    if (const auto* v = m.if_contains(key); v && v->is_string())
                        param_fields.emplace_back(key, std::string(v->get_string()));
            }
            spawn(run_request(std::move(message), json::serialize(*id), method, std::move(mcp_name),
                              std::move(param_fields)));
            co_return boost::system::error_code{};
        }
        if (method == "notifications/cancelled") {
            const auto* rid = p ? p->if_contains("requestId") : nullptr;
            if (rid)
                if (auto it = inflight.find(json::serialize(*rid)); it != inflight.end()) {
                    it->second->cancelled = true;
                    it->second->abort->fire();
                }
            if (modern) co_return boost::system::error_code{};  // closing the stream is the cancellation
        }
        if (method == "notifications/initialized") initialized_note = message;
        const bool ok = co_await post_message(std::move(message), method);
        if (ok && method == "notifications/initialized") start_get_stream();
        co_return boost::system::error_code{};
    }

    awaitable<void> close() {
        if (closed) co_return;
        auto self = shared_from_this();
        if (!modern && !session_id.empty() && endpoint) {
            // DELETE ends the session on the server; bounded so that a dead server cannot hold shutdown.
            auto limit = std::make_shared<asio::steady_timer>(ex, std::chrono::seconds(2));
            limit->async_wait([weak = std::weak_ptr<http::Client>(client)](boost::system::error_code ec) {
                if (auto h = weak.lock(); h && !ec) h->close();
            });
            Fields f;
            f.emplace_back("Mcp-Session-Id", session_id);
            if (!protocol_version.empty()) f.emplace_back("MCP-Protocol-Version", protocol_version);
            auto r = co_await client->send(*endpoint, bhttp::verb::delete_, std::string(), std::move(f));
            if (r) co_await (*r)->read_all(error_body_limit);
            limit->cancel();
        }
        closed = true;
        inbox.end("closed");
        client->close();
        co_await tasks.shutdown();
    }

    // For StateChannel (the channel destroyed): everything ended at once, nothing waited for.
    void abandon() {
        closed = true;
        inbox.end({});
        client->close();
        tasks.cancel();
    }
};

using StreamableHttpChannel = detail::StateChannel<StreamableHttpState>;

}  // namespace

std::shared_ptr<jsonrpc::Channel> make_streamable_http_channel(asio::any_io_executor ex, std::string url,
                                                               HttpClientOptions options) {
    auto state = std::make_shared<StreamableHttpState>(ex, std::move(url), std::move(options));
    return std::make_shared<StreamableHttpChannel>(std::move(state));
}

}  // namespace switchboard::transport
