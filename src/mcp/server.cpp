#include "client_trace.hpp"
#include "input_rounds.hpp"
#include "request_state.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/version.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>
#include <stdexcept>

namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

Error invalid_params(std::string msg) { return Error{code::invalid_params, std::move(msg)}; }

// The requests that may be answered with input_required (2026-07-28 "Supported Requests").
bool may_need_input(std::string_view method) {
    return method == "tools/call" || method == "prompts/get" || method == "resources/read";
}

bool can_answer_input(const json::object& client_capabilities) {
    return client_capabilities.contains("sampling") || client_capabilities.contains("elicitation") ||
           client_capabilities.contains("roots");
}

std::string_view list_name(ListKind kind) {
    switch (kind) {
    case ListKind::tools: return "tools";
    case ListKind::prompts: return "prompts";
    case ListKind::resources: return "resources";
    }
    return "tools";
}

}  // namespace

// One client on one channel.
struct Server::Session : ChangeListener, std::enable_shared_from_this<Server::Session> {
    const ServerOptions& options;
    std::shared_ptr<ServerHandler> handler;
    std::shared_ptr<jsonrpc::Connection> conn;
    std::shared_ptr<InputRounds> rounds;  // modern requests waiting for client input (the Server's)
    // {serverInfo} for every modern result's _meta, serialized once (jsonrpc::IncomingRequest::set_result_meta).
    std::shared_ptr<const jsonrpc::MetaMembers> result_meta;

    std::string legacy_version;  // set by initialize
    // From initialize: each request of the session shares them.
    std::shared_ptr<const json::object> legacy_client_capabilities;
    std::shared_ptr<const json::object> legacy_client_info;
    std::string legacy_log_level;  // logging/setLevel
    std::set<std::string> legacy_subscriptions;
    struct Listen {
        json::value id;
        std::set<ListKind> lists;
        std::set<std::string> uris;
    };
    std::map<std::string, Listen> listens;  // key: serialized request id

    Session(const ServerOptions& o, std::shared_ptr<ServerHandler> h, std::shared_ptr<jsonrpc::Connection> c,
            std::shared_ptr<InputRounds> r)
        : options(o),
          handler(std::move(h)),
          conn(std::move(c)),
          rounds(std::move(r)),
          result_meta(o.result_meta) {}  // the Server filled it in

    json::object capabilities() const {
        json::object caps = handler->capabilities();
        caps["logging"] = json::object{};
        return caps;
    }

    bool advertises_list_changed(ListKind kind) const {
        const auto caps = handler->capabilities();
        const auto* c = caps.if_contains(list_name(kind));
        const auto* flag = c && c->is_object() ? c->get_object().if_contains("listChanged") : nullptr;
        return flag && flag->is_bool() && flag->get_bool();
    }

    json::array supported_versions() const {
        json::array v;
        if (options.modern)
            for (auto m : modern_versions) v.emplace_back(m);
        if (options.legacy)
            for (auto l : legacy_versions) v.emplace_back(l);
        return v;
    }

    static bool is_cacheable(std::string_view method) {
        return method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
               method == "resources/list" || method == "resources/templates/list" || method == "resources/read";
    }

    // What a request's params._meta says (2026-07-28), found in one pass over it.
    struct MetaParts {
        const json::value* version = nullptr;  // present: the request is in the modern era
        json::value* capabilities = nullptr;   // the client's, required in that era (taken by context())
        const json::value* log_level = nullptr;
        json::value* client_info = nullptr;  // taken by context()
        const json::value* principal = nullptr;  // jsonrpc::meta_principal, from an authenticating transport
        const json::value* traceparent = nullptr;  // W3C trace context (SEP-414)
    };

    // The session is passed in, not captured: it stays alive as long as the request, and no coroutine of the
    // connection's callback stands between them.
    static awaitable<Outcome<json::value>> handle(std::shared_ptr<Session> self, std::string method, json::value params,
                                                  jsonrpc::IncomingRequest req) {
        Session& s = *self;
        return s.handle_request(std::move(self), std::move(method), std::move(params), std::move(req));
    }

    awaitable<Outcome<json::value>> handle_request([[maybe_unused]] std::shared_ptr<Session> self, std::string method,
                                                   json::value params, jsonrpc::IncomingRequest req) {
        const std::string_view name = method;  // compared as a view: no strlen, no out-of-line compare per literal
        json::object p = params.is_object() ? std::move(params.get_object()) : json::object{};
        // One pass over the params and one over their _meta find what every request looks at (a lookup each scanned
        // them again, about 1k instructions a request).
        json::object* meta = nullptr;
        bool retried = false;  // a retry of an input round is answered from inputs outside the cache key: never fresh
        for (auto& kv : p) {
            const std::string_view k = kv.key();
            if (k == "_meta")
                meta = kv.value().if_object();
            else if (k == "requestState" || k == "inputResponses")
                retried = true;
        }
        MetaParts parts;
        if (meta) {
            for (auto& kv : *meta) {
                const std::string_view k = kv.key();
                if (k == meta::protocol_version)
                    parts.version = &kv.value();
                else if (k == meta::client_capabilities)
                    parts.capabilities = &kv.value();
                else if (k == meta::log_level)
                    parts.log_level = &kv.value();
                else if (k == meta::client_info)
                    parts.client_info = &kv.value();
                else if (k == jsonrpc::meta_principal)
                    parts.principal = &kv.value();
                else if (k == "traceparent")
                    parts.traceparent = &kv.value();
            }
        }
        const bool modern = parts.version != nullptr;

        if (name == "initialize" && !modern) co_return initialize(p);
        if (modern) {
            if (!options.modern)
                co_return Error{code::method_not_found,
                                "This server does not speak protocol " + std::string(modern_version)};
            const auto& v = *parts.version;
            std::string requested = v.is_string() ? std::string(v.get_string()) : json::serialize(v);
            if (!is_modern_version(requested))
                co_return Error{code::unsupported_protocol_version, "Unsupported protocol version",
                                json::object{{"supported", supported_versions()}, {"requested", requested}}};
            if (!parts.capabilities)
                co_return invalid_params(std::string("missing _meta \"") + std::string(meta::client_capabilities) +
                                         "\"");
            // The legacy handshake and session methods are gone from 2026-07-28 (a session-less client has no use
            // for them): an unknown method there.
            if (name == "initialize" || name == "ping" || name == "logging/setLevel" || name == "resources/subscribe" ||
                name == "resources/unsubscribe")
                co_return method_not_found(method);
        } else if (name == "server/discover" && !options.modern) {
            co_return method_not_found(method);
        }

        auto ctx = context(method, parts, modern, req);  // takes the client's capabilities and info out of `p`
        // The SERVER span continues the client's trace; without a traceparent or an exporter this costs two tests.
        trace::Span span;
        trace::OperationTimer timer(true, method);  // mcp.server.operation.duration
        if (parts.traceparent || trace::exporting()) {
            span = server_span(method, p, meta, parts.traceparent);
            ctx->trace = span.context();
        }
        Outcome<json::value> r = json::value();
        if (!session_method(name) && !in_rounds(*ctx, method)) {
            // A content request (tools/call, …) awaits the handler's own coroutine here: no coroutine of call()'s in
            // between, whose frame and the move of its result cost about 500 instructions a request.
            auto o = co_await ask_handler(method, std::move(p), RequestContext(std::move(ctx)));
            if (o)
                r = json::value(std::move(*o));
            else
                r = o.error();
        } else {
            r = co_await dispatch(method, std::move(p), std::move(ctx), req);
        }
        if (r && (modern || name == "server/discover") && r->is_object()) {
            auto& o = r->get_object();
            // Room for what is added below: one growth, not one per member (none for a tool result made with room
            // for its resultType).
            const bool cacheable = is_cacheable(method);
            o.reserve(o.size() + (cacheable ? 3 : 1));
            // emplace() keeps a resultType the handler set: one lookup for both.
            const auto type = o.emplace("resultType", "complete").first;
            if (cacheable && type->value() == "complete") {
                if (!o.contains("ttlMs")) o["ttlMs"] = retried ? 0 : options.cache_ttl.count();
                if (!o.contains("cacheScope")) o["cacheScope"] = options.cache_scope;
            }
            req.set_result_meta(result_meta);  // _meta.serverInfo, added as the result is written
        }
        if (span.recording()) end_server_span(span, r);
        if (auto type = detail::error_type(r); !type.empty()) timer.set_error(type);
        co_return r;
    }

    trace::Span server_span(std::string_view method, const json::object& p, const json::object* meta,
                            const json::value* traceparent) const {
        std::optional<trace::SpanContext> parent;
        if (traceparent && meta) parent = trace::SpanContext::from_meta(*meta);
        std::string_view target;
        if (method == "tools/call" || method == "prompts/get")
            if (const auto* n = p.if_contains("name"); n && n->is_string()) target = n->get_string();
        auto span = trace::Span::start_remote(method, target, trace::SpanKind::server, parent);
        if (!span.recording()) return span;
        span.set("mcp.method.name", method);
        if (method == "tools/call") {
            span.set("gen_ai.operation.name", "execute_tool");
            span.set("gen_ai.tool.name", target);
        }
        if (const auto* u = p.if_contains("uri"); u && u->is_string()) span.set("mcp.resource.uri", u->get_string());
        return span;
    }

    void end_server_span(trace::Span& span, const Outcome<json::value>& r) const {
        span.set("mcp.protocol.version", legacy_version.empty() ? std::string(modern_version) : legacy_version);
        detail::end_span(span, r);
    }

    // The context of one request: what the client declared, and how to ask it for input in its era. A modern
    // request's capabilities and client info are moved out of its _meta, not copied (nothing reads them there
    // afterwards; they are left as empty objects).
    std::shared_ptr<RequestContext::State> context(const std::string& method, const MetaParts& parts, bool modern,
                                                   const jsonrpc::IncomingRequest& req) const {
        auto state = std::make_shared<RequestContext::State>();
        state->era = modern ? Era::modern : Era::legacy;
        state->method = method;
        state->request = req;
        if (const auto* who = parts.principal; who && who->is_string() && options.transport_principals)
            state->principal = std::string(who->get_string());
        if (modern) {
            if (auto* c = parts.capabilities; c && c->is_object())
                state->client_capabilities = std::make_shared<const json::object>(std::move(c->get_object()));
            if (const auto* l = parts.log_level; l && l->is_string()) state->log_level = std::string(l->get_string());
            if (auto* i = parts.client_info; i && i->is_object())
                state->client_info = std::make_shared<const json::object>(std::move(i->get_object()));
            // Outside the input rounds a modern server cannot ask (the spec allows input_required only there).
            state->ask = [](std::string, std::string asked, json::object) -> awaitable<Outcome<json::value>> {
                co_return Error::make_local(code::protocol_violation,
                                            fmt::format("in protocol {} a server asks the client for {} only while "
                                                        "answering tools/call, prompts/get or resources/read",
                                                        modern_version, asked));
            };
        } else {
            state->client_capabilities = legacy_client_capabilities;
            state->client_info = legacy_client_info;
            state->log_level = legacy_log_level;
            state->ask = [weak = std::weak_ptr<jsonrpc::Connection>(conn)](
                             std::string, std::string asked, json::object params) -> awaitable<Outcome<json::value>> {
                auto c = weak.lock();
                if (!c) co_return Error::make_local(code::connection_closed, "the client is gone");
                co_return co_await c->request(std::move(asked), json::value(std::move(params)));
            };
        }
        return state;
    }

    Outcome<json::value> initialize(const json::object& p) {
        // A modern-only server names the versions it speaks: a legacy client can only show this message.
        if (!options.legacy)
            return Error{
                code::unsupported_protocol_version,
                fmt::format("This server speaks only protocol {}; initialize is not supported", modern_version),
                json::object{{"supported", supported_versions()}}};
        auto requested = string_field(p, "protocolVersion");
        legacy_version = is_legacy_version(requested) ? requested : std::string(latest_legacy_version);
        if (const auto* c = p.if_contains("capabilities"); c && c->is_object())
            legacy_client_capabilities = std::make_shared<const json::object>(c->get_object());
        if (const auto* i = p.if_contains("clientInfo"); i && i->is_object())
            legacy_client_info = std::make_shared<const json::object>(i->get_object());
        json::object r{{"protocolVersion", legacy_version},
                       {"capabilities", capabilities()},
                       {"serverInfo", options.info.to_json()}};
        if (!options.instructions.empty()) r["instructions"] = options.instructions;
        return json::value(std::move(r));
    }

    json::value discover() const {
        json::object r{{"supportedVersions", supported_versions()}, {"capabilities", capabilities()}};
        if (!options.instructions.empty()) r["instructions"] = options.instructions;
        r["_meta"] = json::object{{meta::server_info, options.info.to_json()}};
        return r;
    }

    // Not a coroutine: it picks the coroutine that answers, so the common path (a content request) costs no frame of
    // its own. A coroutine's frame holds the temporaries of all its branches at once: as a coroutine this one had
    // grown past 1 KiB, and cost a malloc and a free per request.
    awaitable<Outcome<json::value>> dispatch(std::string method, json::object p,
                                             std::shared_ptr<RequestContext::State> ctx,
                                             const jsonrpc::IncomingRequest& req) {
        const std::string_view name = method;
        if (name == "ping") return answer(json::value(json::object{}));
        if (name == "server/discover") return answer(discover());
        if (name == "subscriptions/listen") return listen(std::move(p), RequestContext(ctx), req);
        if (name == "logging/setLevel") {
            if (ctx->era == Era::legacy) legacy_log_level = string_field(p, "level");
            return answer(json::value(json::object{}));
        }
        if (name == "resources/subscribe" || name == "resources/unsubscribe")
            return subscription(name == "resources/subscribe", string_field(p, "uri"), std::move(ctx));
        if (in_rounds(*ctx, method)) {
            auto self = shared_from_this();
            auto call = [self, method](json::object params, RequestContext c) {
                return self->call(method, std::move(params), std::move(c));
            };
            return rounds->round(std::move(p), std::move(ctx), std::move(call));
        }
        return call(std::move(method), std::move(p), RequestContext(std::move(ctx)));
    }

    // The requests the session answers itself; the others go to the handler (see ask_handler).
    static bool session_method(std::string_view name) {
        return name == "ping" || name == "server/discover" || name == "subscriptions/listen" ||
               name == "logging/setLevel" || name == "resources/subscribe" || name == "resources/unsubscribe";
    }

    // Whether a request runs as an input round (2026-07-28: its handler may ask the client). A client that declared
    // none of sampling, elicitation and roots is never asked (RequestContext::ask refuses first): its requests skip
    // the rounds, which cost a task per call.
    static bool in_rounds(const RequestContext::State& ctx, const std::string& method) {
        return ctx.era == Era::modern && may_need_input(method) && ctx.client_capabilities &&
               can_answer_input(*ctx.client_capabilities);
    }

    static awaitable<Outcome<json::value>> answer(Outcome<json::value> r) { co_return std::move(r); }

    awaitable<Outcome<json::value>> subscription(bool on, std::string uri, std::shared_ptr<RequestContext::State> ctx) {
        if (uri.empty()) co_return invalid_params("missing \"uri\"");
        Outcome<void> r;
        if (on)
            r = co_await handler->subscribe(uri, RequestContext(ctx));
        else
            r = co_await handler->unsubscribe(uri, RequestContext(ctx));
        if (!r) co_return r.error();
        if (on)
            legacy_subscriptions.insert(uri);
        else
            legacy_subscriptions.erase(uri);
        co_return json::value(json::object{});
    }

    // The content requests, answered by the handler.
    awaitable<Outcome<json::value>> call(std::string method, json::object p, RequestContext ctx) {
        auto r = co_await ask_handler(method, std::move(p), std::move(ctx));
        if (!r) co_return r.error();
        co_return json::value(std::move(*r));
    }

    // Not a coroutine either (see dispatch): the handler's own coroutine is what call() awaits.
    awaitable<Outcome<json::object>> ask_handler(const std::string& method, json::object p, RequestContext ctx) {
        const std::string_view name = method;
        if (name == "tools/list") return handler->list_tools(string_field(p, "cursor"), std::move(ctx));
        if (name == "tools/call") {
            auto* a = p.if_contains("arguments");
            json::object args = a && a->is_object() ? json::object(std::move(a->get_object())) : json::object();
            return handler->call_tool(string_field(p, "name"), std::move(args), std::move(ctx));
        }
        if (name == "resources/list") return handler->list_resources(string_field(p, "cursor"), std::move(ctx));
        if (name == "resources/templates/list")
            return handler->list_resource_templates(string_field(p, "cursor"), std::move(ctx));
        if (name == "resources/read") return handler->read_resource(string_field(p, "uri"), std::move(ctx));
        if (name == "prompts/list") return handler->list_prompts(string_field(p, "cursor"), std::move(ctx));
        if (name == "prompts/get") {
            auto args = to_args(p.if_contains("arguments"));
            return handler->get_prompt(string_field(p, "name"), std::move(args), std::move(ctx));
        }
        if (name == "completion/complete") return handler->complete(std::move(p), std::move(ctx));
        return handler->extension_request(method, std::move(p), std::move(ctx));
    }

    // 2026-07-28: a long-lived request; acknowledged at once, then held open until the client cancels it.
    awaitable<Outcome<json::value>> listen(json::object p, RequestContext ctx, const jsonrpc::IncomingRequest& req) {
        const auto key = json::serialize(req.id());
        Listen l{req.id(), {}, {}};
        json::object agreed;
        const auto* n = p.if_contains("notifications");
        const json::object* filter = n && n->is_object() ? &n->get_object() : nullptr;
        if (const auto* rs = filter ? filter->if_contains("resourceSubscriptions") : nullptr; rs && rs->is_array()) {
            json::array list;
            for (const auto& u : rs->get_array()) {
                if (!u.is_string()) continue;
                auto uri = std::string(u.get_string());
                auto ok = co_await handler->subscribe(uri, ctx);
                if (!ok) continue;  // left out of the acknowledgment
                l.uris.insert(uri);
                list.push_back(u);
            }
            agreed["resourceSubscriptions"] = std::move(list);
        }
        for (auto kind : {ListKind::tools, ListKind::prompts, ListKind::resources}) {
            const auto flag = std::string(list_name(kind)) + "ListChanged";
            const auto* f = filter ? filter->if_contains(flag) : nullptr;
            if (!f || !f->is_bool() || !f->get_bool() || !advertises_list_changed(kind)) continue;
            agreed[flag] = true;
            l.lists.insert(kind);
        }
        const auto uris = l.uris;
        listens[key] = std::move(l);
        json::object ack{{"_meta", json::object{{meta::subscription_id, req.id()}}},
                         {"notifications", std::move(agreed)}};
        conn->notify("notifications/subscriptions/acknowledged", std::move(ack));
        asio::steady_timer forever(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
        co_await forever.async_wait(core::as_tuple_awaitable);  // ends on cancellation
        listens.erase(key);
        co_await asio::this_coro::reset_cancellation_state();  // the end of the stream is not the end of the work
        for (const auto& uri : uris) {
            auto r = co_await handler->unsubscribe(uri, ctx);
            if (!r) spdlog::debug("unsubscribe {} after listen: {}", uri, r.error().describe());
        }
        co_return json::value(json::object{{"_meta", json::object{{meta::subscription_id, req.id()}}}});
    }

    void list_changed(ListKind kind) override {
        const auto method = fmt::format("notifications/{}/list_changed", list_name(kind));
        if (!legacy_version.empty()) conn->notify(method, json::object{});
        for (const auto& [key, l] : listens)
            if (l.lists.count(kind))
                conn->notify(method, json::object{{"_meta", json::object{{meta::subscription_id, l.id}}}});
    }

    void resource_updated(const std::string& uri) override {
        if (legacy_subscriptions.count(uri))
            conn->notify("notifications/resources/updated", json::object{{"uri", uri}});
        for (const auto& [key, l] : listens) {
            if (!l.uris.count(uri)) continue;
            conn->notify("notifications/resources/updated",
                         json::object{{"_meta", json::object{{meta::subscription_id, l.id}}}, {"uri", uri}});
        }
    }
};

std::shared_ptr<const jsonrpc::MetaMembers> server_result_meta(const Implementation& info) {
    return std::make_shared<jsonrpc::MetaMembers>(json::object{{meta::server_info, info.to_json()}});
}

Server::Server(ServerOptions options, std::shared_ptr<ServerHandler> handler)
    : options_(std::move(options)), handler_(std::move(handler)) {
    if (!options_.result_meta) options_.result_meta = server_result_meta(options_.info);
}

Server::Server(ServerOptions options) : Server(std::move(options), std::make_shared<StaticHandler>()) {}

Server::~Server() = default;

StaticHandler& Server::registry() {
    auto* registry = dynamic_cast<StaticHandler*>(handler_.get());
    if (!registry) throw std::logic_error("this mcp::Server serves a handler that is not a StaticHandler");
    return *registry;
}

std::shared_ptr<InputRounds> make_input_rounds(asio::any_io_executor ex, std::chrono::milliseconds timeout) {
    return std::make_shared<InputRounds>(std::move(ex), timeout);
}

awaitable<void> cancel_suspended(std::shared_ptr<InputRounds> rounds) {
    if (rounds) co_await rounds->shutdown();
}

awaitable<void> Server::serve(std::shared_ptr<jsonrpc::Channel> channel) {
    auto ex = co_await asio::this_coro::executor;
    jsonrpc::Connection::Options copts;
    copts.peer_name = "client";
    copts.reply_to_invalid = true;
    copts.finish_incoming_on_eof = std::chrono::seconds(5);
    auto conn = jsonrpc::Connection::create(ex, std::move(channel), copts);
    if (!options_.input_rounds) options_.input_rounds = make_input_rounds(ex, options_.input_timeout);
    auto session = std::make_shared<Session>(options_, handler_, conn, options_.input_rounds);
    handler_->add_listener(session);
    std::weak_ptr<Session> weak = session;
    // Not a coroutine: the session's own coroutine is what the connection awaits (one frame less per request).
    conn->on_request([weak](std::string method, json::value params,
                            jsonrpc::IncomingRequest req) -> awaitable<Outcome<json::value>> {
        auto s = weak.lock();
        if (!s) return Session::answer(Error{code::internal_error, "server is shutting down"});
        return Session::handle(std::move(s), std::move(method), std::move(params), std::move(req));
    });
    conn->on_notification(
        [](const std::string& method, const json::value&) { spdlog::debug("client notification {}", method); });
    core::OneShotEvent ended;
    conn->on_close([&ended](const Error& why) {
        spdlog::debug("session ended: {}", why.message);
        ended.set();
    });
    conn->start();
    while (!ended.is_set()) co_await ended.wait();
    // Requests suspended in input rounds stay: the client's retry may come on another session (stateless HTTP).
    co_await conn->close();
}

awaitable<std::string> Server::answer(jsonrpc::Message request, std::function<void(std::string)> send) {
    if (!options_.input_rounds) {
        auto ex = co_await asio::this_coro::executor;
        options_.input_rounds = make_input_rounds(ex, options_.input_timeout);
    }
    co_return co_await answer(options_, handler_, std::move(request), std::move(send));
}

// What Server::serve's Connection does with one request (Connection::handle_incoming), without the Connection.
awaitable<std::string> Server::answer(const ServerOptions& options, std::shared_ptr<ServerHandler> handler,
                                      jsonrpc::Message request, std::function<void(std::string)> send) {
    const jsonrpc::Id id = request.id;
    if (request.method == "subscriptions/listen")
        co_return jsonrpc::serialize_error(id, method_not_found(request.method));  // needs a session to stay open in
    if (!options.input_rounds)
        co_return jsonrpc::serialize_error(
            id, Error{code::internal_error, "Internal error: the server has no store for input rounds", {}, false});
    auto req = jsonrpc::IncomingRequest::detached(id, request.params, std::move(send));
    auto session = std::make_shared<Session>(options, std::move(handler), nullptr, options.input_rounds);
    if (!session->result_meta) session->result_meta = server_result_meta(options.info);
    Outcome<json::value> out = json::value();  // always assigned below
    try {
        out = co_await Session::handle(std::move(session), std::move(request.method), std::move(request.params), req);
    } catch (const std::exception& e) {
        out = Error::from_exception(e);
    }
    const auto state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) co_return std::string();  // no answer after that
    if (out) {
        const auto meta = req.result_meta();
        const auto members = req.result_members();
        co_return *jsonrpc::serialize_result(id, *out, std::string::npos, meta.get(),
                                             members ? std::string_view(*members) : std::string_view());
    }
    co_return jsonrpc::serialize_failure(id, std::move(out.error()));
}

}  // namespace switchboard::mcp
