// The Streamable HTTP server: its route table on http::Server, the POST entry that tells the eras apart, and the
// delivery of one stream (a JSON answer, or SSE with keep-alives and a watcher that notices a client leaving).
#include "streamable_http_server_impl.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/trace.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/http/listener.hpp>

#include <boost/asio/ip/address.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace switchboard::transport {

namespace streamable {

std::string error_body(int code, std::string message, const json::value& id, json::value data) {
    return jsonrpc::serialize_error(id, jsonrpc::Error{code, std::move(message), std::move(data), false});
}
std::string error_body(int code, std::string message) { return error_body(code, std::move(message), nullptr, nullptr); }

Reply json_reply(bhttp::status status, std::string body) {
    Reply r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

bool contains(const std::vector<std::string>& list, std::string_view v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

std::string join(const std::vector<std::string>& list) {
    std::string out;
    for (const auto& s : list) out += (out.empty() ? "" : ", ") + s;
    return out;
}

void Pipe::push(Event e) {
    const std::size_t n = e.text ? e.text->size() : 0;
    if (!queue.empty() && bytes + n > limit) {
        overflow = true;
    } else {
        bytes += n;
        queue.push_back(std::move(e));
    }
    signal.cancel();
}

Event Pipe::pop() {
    Event e = std::move(queue.front());
    queue.pop_front();
    bytes -= e.text ? e.text->size() : 0;
    return e;
}

void Stream::emit(std::shared_ptr<const std::string> text, bool final, bhttp::status status) {
    Event e{next_seq++, std::move(text), final, status};
    if (final) done = true;
    if (max_log) {
        log_bytes += e.text->size();
        log.push_back(e);
        while (log_bytes > max_log && log.size() > 1) {
            log_bytes -= log.front().text->size();
            log.pop_front();
        }
    }
    if (pipe) pipe->push(std::move(e));
}

std::shared_ptr<Stream> Session::find_stream(std::string_view id) const {
    if (standalone->id == id) return standalone;
    for (const auto& [k, s] : active)
        if (s->id == id) return s;
    for (const auto& s : recent)
        if (s->id == id) return s;
    return nullptr;
}

}  // namespace streamable

using namespace streamable;
using asio::awaitable;
using core::as_tuple_awaitable;
using switchboard::http::header_value;
using switchboard::http::header_view;
using switchboard::http::ServerConnection;

HttpServer::Impl::Impl(asio::any_io_executor e, SessionHandler h, HttpServerOptions o)
    : ex(e), handler(std::move(h)), opt(std::move(o)), tasks(e), sweep_timer(e), watch_timer(e) {}

void HttpServer::Impl::start() {
    switchboard::http::ServerOptions so;
    so.name = "http";
    so.address = opt.address;
    so.port = opt.port;
    so.max_body_size = opt.max_message_size;
    so.allowed_origins = opt.allowed_origins;
    so.allowed_hosts = opt.allowed_hosts;
    so.bearer_token = opt.bearer_token;
    so.token_verifier = opt.token_verifier;
    so.cors = opt.cors;
    so.cors_allow_headers =
        "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID";
    if (!opt.cors_extra_allow_headers.empty()) so.cors_allow_headers += ", " + opt.cors_extra_allow_headers;
    so.cors_expose_headers = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate";
    so.max_connections = opt.max_connections;
    so.max_connections_per_address = opt.max_connections_per_address;
    so.header_timeout = opt.header_timeout;
    so.idle_timeout = opt.idle_timeout;
    so.read_timeout = opt.read_timeout;
    so.write_timeout = opt.write_timeout;
    so.error_body = [](bhttp::status, const std::string& message) { return error_body(code_transport, message); };
    so.access_log = opt.access_log;
    server = std::make_unique<switchboard::http::Server>(ex, routes(), std::move(so));
}

namespace {
using Member = awaitable<void> (HttpServer::Impl::*)(ServerRequest&, Responder&);

// Who sent the request, as the HTTP server verified it (its token), in the request's _meta for the handler; whatever
// a client put there itself is dropped.
void stamp_principal(jsonrpc::Message& msg, std::string_view principal) {
    auto* params = msg.params.if_object();
    if (!params) {
        if (principal.empty() || !msg.params.is_null()) return;
        params = &msg.params.emplace_object();
    }
    auto* meta = params->if_contains("_meta");
    if (meta && meta->is_object()) meta->get_object().erase(jsonrpc::meta_principal);
    if (principal.empty()) return;
    if (!meta || !meta->is_object()) {
        (*params)["_meta"].emplace_object()[jsonrpc::meta_principal] = principal;
        return;
    }
    meta->get_object()[jsonrpc::meta_principal] = principal;
}

// A client that sends its trace context as an HTTP header (SEP-2028) and not in _meta (SEP-414): the header's is put
// in _meta, where the server reads it. One in _meta wins.
void adopt_trace_header(jsonrpc::Message& msg, std::string_view traceparent, std::string_view tracestate) {
    if (traceparent.empty()) return;
    auto* params = msg.params.if_object();
    if (!params) {
        if (!msg.params.is_null()) return;
        params = &msg.params.emplace_object();
    }
    auto& meta = (*params)["_meta"];
    if (meta.is_null()) meta.emplace_object();
    auto* m = meta.if_object();
    if (!m || trace::SpanContext::from_meta(*m)) return;  // a valid one in _meta wins; an invalid one does not
    if (!trace::SpanContext::parse(traceparent)) return;
    (*m)["traceparent"] = traceparent;
    if (!tracestate.empty())
        (*m)["tracestate"] = tracestate;
    else
        m->erase("tracestate");  // not the header's context's
}

// Keeps the server state alive while one of its handlers runs.
awaitable<void> call(std::shared_ptr<HttpServer::Impl> self, Member member, ServerRequest& req, Responder& res) {
    co_await ((*self).*member)(req, res);
}
}  // namespace

// The whole route table: one endpoint; GET and DELETE exist only for legacy sessions.
switchboard::http::Router HttpServer::Impl::routes() {
    switchboard::http::Router r;
    auto bind = [weak = weak_from_this()](Member member) -> switchboard::http::Handler {
        return [weak, member](ServerRequest& req, Responder& res) {
            auto self = weak.lock();
            if (!self) throw switchboard::http::HttpError(bhttp::status::service_unavailable, "the server is stopping");
            return call(std::move(self), member, req, res);
        };
    };
    r.add(bhttp::verb::post, opt.path, bind(&Impl::handle_post));
    if (opt.legacy) {
        r.add(bhttp::verb::get, opt.path, bind(&Impl::handle_get));
        r.add(bhttp::verb::delete_, opt.path, bind(&Impl::handle_delete));
    }
    r.add_all(opt.extra_routes);
    return r;
}

// `on_end` runs when the handler returns (or throws): what it left unanswered must not wait forever.
void HttpServer::Impl::spawn_session(std::shared_ptr<jsonrpc::Channel> channel, std::function<void()> on_end) {
    auto run = [](SessionHandler h, std::shared_ptr<jsonrpc::Channel> ch,
                  std::function<void()> end) -> awaitable<void> {
        core::ScopeExit ended(std::move(end));
        co_await h(std::move(ch));
    };
    tasks.spawn(run(handler, std::move(channel), std::move(on_end)), "http: session");
}

void HttpServer::Impl::finish_stream(const std::shared_ptr<Stream>& st) {
    if (st && st->pipe) {
        st->pipe->finish = true;
        st->pipe->signal.cancel();
    }
}

awaitable<void> HttpServer::Impl::handle_post(ServerRequest& req, Responder& res) {
    if (!core::icontains(header_view(req, "Content-Type"), "application/json")) {
        co_await res.send(
            json_reply(bhttp::status::unsupported_media_type,
                       error_body(code_transport, "Unsupported Media Type: Content-Type must be application/json")));
        co_return;
    }
    const auto accept = header_view(req, "Accept");
    const bool any = accept.empty() || core::icontains(accept, "*/*");
    const bool accepts_sse = any || core::icontains(accept, "text/event-stream");
    if (!accepts_sse && !core::icontains(accept, "application/json")) {
        co_await res.send(json_reply(bhttp::status::not_acceptable,
                                     error_body(code_transport,
                                                "Not Acceptable: Accept must list application/json and "
                                                "text/event-stream")));
        co_return;
    }
    // HTTP/1.0 has no chunked encoding: such a client gets JSON only.
    const bool sse_ok = accepts_sse && req.version() >= 11;
    auto parsed = jsonrpc::parse_message(req.body());
    if (!parsed) {
        co_await res.send(
            json_reply(bhttp::status::bad_request, error_body(parsed.error().code, parsed.error().message)));
        co_return;
    }
    jsonrpc::Message& msg = *parsed;
    if (msg.kind == jsonrpc::Message::Kind::request) {
        stamp_principal(msg, header_view(req, http::principal_header));
        adopt_trace_header(msg, header_view(req, "traceparent"), header_view(req, "tracestate"));
    }
    if (msg.kind == jsonrpc::Message::Kind::response) {
        // A legacy session's answer to a request its server sent (sampling, elicitation, roots) goes to the session.
        if (opt.legacy && !header_view(req, "Mcp-Session-Id").empty()) {
            co_await handle_legacy(req, res, std::move(msg), header_value(req, "MCP-Protocol-Version"), sse_ok);
            co_return;
        }
        // Otherwise there is nobody to give it to (a stateless request asks through input_required): harmless.
        Reply r;
        r.status = bhttp::status::accepted;
        co_await res.send(std::move(r));
        co_return;
    }

    auto header_version = header_value(req, "MCP-Protocol-Version");
    std::optional<std::string> body_version;
    if (const auto* p = msg.params.if_object())
        if (const auto* m = p->if_contains("_meta"); m && m->is_object())
            if (const auto* v = m->get_object().if_contains(meta_protocol_version))
                body_version = v->is_string() ? std::string(v->get_string()) : json::serialize(*v);
    const bool modern = body_version || contains(opt.modern_versions, header_version);
    if (modern && opt.modern) {
        co_await handle_modern(req, res, std::move(msg), std::move(header_version), std::move(body_version), sse_ok);
        co_return;
    }
    if (opt.legacy) {
        co_await handle_legacy(req, res, std::move(msg), std::move(header_version), sse_ok);
        co_return;
    }
    json::array supported;
    for (const auto& v : opt.modern_versions) supported.emplace_back(v);
    json::object data;
    data["supported"] = std::move(supported);
    data["requested"] = header_version;
    auto body =
        error_body(code_unsupported_version,
                   fmt::format("Unsupported protocol version: this server speaks only {}", join(opt.modern_versions)),
                   msg.kind == jsonrpc::Message::Kind::request ? msg.id : json::value(nullptr), std::move(data));
    co_await res.send(json_reply(bhttp::status::bad_request, std::move(body)));
}

// Reading while a response is pending tells us when the client goes away. A well-behaved HTTP/1.1 client sends
// nothing meanwhile; anything it does send is kept for the next request.
awaitable<void> HttpServer::Impl::watch(std::shared_ptr<ServerConnection> c, std::shared_ptr<Pipe> p) {
    while (c->buffer.size() < 1024 * 1024) {
        auto [ec, n] = co_await c->socket.async_read_some(c->buffer.prepare(16 * 1024), as_tuple_awaitable);
        if (!ec) c->buffer.commit(n);
        if (p->stopping) co_return;
        if (ec) {
            p->disconnected = true;
            p->signal.cancel();
            co_return;
        }
    }
}

void HttpServer::Impl::start_watch(const std::shared_ptr<ServerConnection>& c, const std::shared_ptr<Pipe>& p) {
    p->watcher_done = false;
    asio::co_spawn(ex, watch(c, p), asio::bind_cancellation_slot(p->watch_stop.slot(), [p](std::exception_ptr e) {
                       core::log_exception(e, "http: stream watcher");
                       p->watcher_done = true;
                       p->signal.cancel();
                   }));
}

awaitable<void> HttpServer::Impl::stop_watch(std::shared_ptr<Pipe> p) {
    p->stopping = true;
    p->watch_stop.emit(asio::cancellation_type::terminal);
    while (!p->watcher_done) {
        p->signal.expires_at(clock::time_point::max());
        co_await p->signal.async_wait(as_tuple_awaitable);
    }
}

// How long an answer may take before the connection is watched for the client leaving.
constexpr auto watch_delay = std::chrono::milliseconds(10);

void HttpServer::Impl::watch_later(const std::shared_ptr<ServerConnection>& c, const std::shared_ptr<Pipe>& p) {
    if (stopped) return;  // nothing would drain the queue
    unwatched.push_back({p, c, clock::now() + watch_delay});
    if (watch_ticking) return;
    watch_ticking = true;
    auto run = [](std::shared_ptr<Impl> self) -> awaitable<void> { co_await self->start_due_watches(); };
    tasks.spawn(run(shared_from_this()), "http: stream watches");
}

// Runs while deliveries wait: wakes when the oldest is due, starts the watches of those due, drops those answered.
awaitable<void> HttpServer::Impl::start_due_watches() {
    core::ScopeExit done([this] { watch_ticking = false; });
    while (!stopped) {
        const auto now = clock::now();
        while (!unwatched.empty()) {
            auto& w = unwatched.front();
            auto p = w.pipe.lock();
            auto c = w.connection.lock();
            if (p && c && !p->delivered && !p->watching) {
                if (w.at > now) break;
                start_watch(c, p);
                p->watching = true;
            }
            unwatched.pop_front();
        }
        if (unwatched.empty()) co_return;
        watch_timer.expires_at(unwatched.front().at);
        auto [ec] = co_await watch_timer.async_wait(as_tuple_awaitable);
        if (ec) co_return;
    }
}

// Delivers a stream on this connection: as one application/json answer when the final response comes first, else
// as SSE.
awaitable<void> HttpServer::Impl::deliver(Responder& res, std::shared_ptr<Stream> st, std::shared_ptr<Pipe> pipe,
                                          DeliverOptions d) {
    // The watch starts only once the answer takes a while (start_due_watches): most answers come sooner, and a watch
    // costs a coroutine, a read and two scheduler passes. A client gone in the first moments is noticed when it
    // starts.
    bool queued = false;
    // If this coroutine is cancelled (server stop), the watcher must not outlive it.
    core::ScopeExit stop_watcher([pipe] {
        pipe->delivered = true;
        if (!pipe->watching) return;
        pipe->stopping = true;
        pipe->watch_stop.emit(asio::cancellation_type::terminal);
    });
    // Built when a stream starts (most answers are one JSON body).
    auto sse_headers = [&d] {
        switchboard::http::Fields h;
        h.emplace_back("Cache-Control", "no-cache, no-transform");
        h.emplace_back("X-Accel-Buffering", "no");
        if (!d.session_id.empty()) h.emplace_back("Mcp-Session-Id", d.session_id);
        return h;
    };
    bool sse = false, ok = true, ended = false;
    auto next_ping = clock::now() + opt.sse_keepalive;
    if (d.sse_now) {
        auto headers = sse_headers();
        ok = co_await res.begin_stream("text/event-stream", std::move(headers));
        sse = true;
        if (ok && d.priming) {
            auto id = fmt::format("id: {}-{}\ndata: ", st->id, st->next_seq - 1);
            ok = co_await res.write_chunk(id, "", "\n\n");
        }
    }
    while (ok) {
        if (pipe->disconnected || pipe->overflow) {
            if (pipe->overflow) spdlog::warn("http: a client reads too slowly; dropping its stream");
            ok = false;
            break;
        }
        if (pipe->queue.empty()) {
            if (pipe->finish) break;
            if (sse && clock::now() >= next_ping) {
                ok = co_await res.write_chunk(":", "", "\n\n");
                next_ping = clock::now() + opt.sse_keepalive;
                continue;
            }
            if (!queued) {
                watch_later(res.connection(), pipe);
                queued = true;
            }
            pipe->signal.expires_at(sse ? next_ping : clock::time_point::max());
            co_await pipe->signal.async_wait(as_tuple_awaitable);
            continue;
        }
        Event e = pipe->pop();
        if (!sse) {
            if (e.final) {
                Reply r = json_reply(e.status, *e.text);
                if (!d.session_id.empty()) r.headers.emplace_back("Mcp-Session-Id", d.session_id);
                co_await res.send(std::move(r));
                ended = true;
                break;
            }
            if (!d.sse_ok) continue;  // the client takes JSON only: notifications cannot reach it
            auto headers = sse_headers();
            ok = co_await res.begin_stream("text/event-stream", std::move(headers));
            sse = true;
            if (ok && d.priming) ok = co_await res.write_chunk(fmt::format("id: {}-0\ndata: ", st->id), "", "\n\n");
            if (!ok) break;
        }
        std::string prefix = st->id.empty() ? "data: " : fmt::format("id: {}-{}\ndata: ", st->id, e.seq);
        ok = co_await res.write_chunk(prefix, *e.text, "\n\n");
        next_ping = clock::now() + opt.sse_keepalive;
        if (ok && e.final) {
            ended = true;
            break;
        }
    }
    if (ok && sse) ok = co_await res.end_stream();
    if (ok && !sse && !ended && !pipe->disconnected) {
        Reply r = json_reply(d.unanswered_status, error_body(d.unanswered_code, std::string(d.unanswered_message),
                                                             d.unanswered_id, nullptr));
        if (!d.session_id.empty()) r.headers.emplace_back("Mcp-Session-Id", d.session_id);
        co_await res.send(std::move(r));
    }
    stop_watcher.release();
    pipe->delivered = true;
    if (pipe->watching) co_await stop_watch(pipe);
    if (st->pipe == pipe) st->pipe = nullptr;
    if (!ok && !ended && d.on_disconnect) d.on_disconnect();
    if (!ok || pipe->disconnected) res.set_keep_alive(false);
}

void HttpServer::Impl::stop() {
    if (stopped) return;
    stopped = true;
    server->stop();
    sweep_timer.cancel();
    watch_timer.cancel();
    auto all = sessions;
    for (auto& [id, s] : all) close_session(s, "the server is stopping");
}

HttpServer::HttpServer(asio::any_io_executor ex, SessionHandler handler, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(ex, std::move(handler), std::move(options))) {
    impl_->start();
}

HttpServer::~HttpServer() { impl_->stop(); }

boost::system::error_code HttpServer::listen() { return impl_->server->listen(); }

std::uint16_t HttpServer::port() const { return impl_->server->port(); }

std::string HttpServer::url() const {
    return fmt::format("http://{}:{}{}", switchboard::http::url_host(impl_->opt.address), port(), impl_->opt.path);
}

awaitable<void> HttpServer::run() {
    auto impl = impl_;
    auto sweep = [](std::shared_ptr<Impl> self) -> awaitable<void> { co_await self->sweep(); };
    impl->tasks.spawn(sweep(impl), "http: idle sweep");
    co_await impl->server->run();
}

void HttpServer::stop() { impl_->stop(); }

void HttpServer::stop_accepting() { impl_->server->stop_accepting(); }

std::vector<std::string> loopback_hosts() { return {"localhost", "127.0.0.1", "[::1]"}; }

bool is_loopback_address(const std::string& address) {
    if (core::iequals(address, "localhost")) return true;
    auto bare = address;
    if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
    boost::system::error_code ec;
    auto a = asio::ip::make_address(bare, ec);
    return !ec && a.is_loopback();
}

std::size_t HttpServer::session_count() const { return impl_->sessions.size(); }

}  // namespace switchboard::transport
