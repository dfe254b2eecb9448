// Legacy Streamable HTTP (2025-03-26 .. 2025-11-25): `initialize` creates a session; POSTed requests are answered
// as JSON or as an SSE stream with event ids; GET opens the session's server-initiated stream or resumes an answer's
// stream after Last-Event-ID (replayed from a bounded log); DELETE ends the session; idle sessions are swept.
#include "streamable_http_server_impl.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/text.hpp>

#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <system_error>

namespace switchboard::transport {

using namespace streamable;
using asio::awaitable;
using core::as_tuple_awaitable;
using switchboard::http::header_value;

namespace {

std::string random_id() {
    std::array<unsigned char, 16> b{};
    std::size_t got = 0;
    while (got < b.size()) {
        auto n = ::getrandom(b.data() + got, b.size() - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::system_error(errno, std::generic_category(), "getrandom");
        }
        got += static_cast<std::size_t>(n);
    }
    std::string out;
    for (auto c : b) out += fmt::format("{:02x}", c);
    return out;
}

}  // namespace

std::shared_ptr<Session> HttpServer::Impl::create_session() {
    auto s = std::make_shared<Session>();
    s->id = opt.session_id_prefix.empty() ? random_id() : opt.session_id_prefix + "." + random_id();
    s->standalone = std::make_shared<Stream>();
    s->standalone->id = "0";
    s->standalone->max_log = opt.replay_bytes;
    std::weak_ptr<Session> weak = s;
    auto self = shared_from_this();
    s->channel = std::make_shared<detail::PushChannel>(
        ex, opt.max_message_size, [weak, self](std::string text) { self->route(weak, std::move(text)); });
    sessions[s->id] = s;
    spawn_session(s->channel, [weak, self] {
        if (auto sp = weak.lock()) self->close_session(sp, "the session's handler ended");
    });
    spdlog::debug("http: session {} created", s->id);
    return s;
}

void HttpServer::Impl::close_session(const std::shared_ptr<Session>& s, std::string why) {
    if (s->closed) return;
    s->closed = true;
    sessions.erase(s->id);
    for (auto& [k, st] : s->active) finish_stream(st);
    finish_stream(s->standalone);
    s->channel->end(why);
    spdlog::debug("http: session {} ended: {}", s->id, why);
}

void HttpServer::Impl::route(const std::weak_ptr<Session>& weak, std::string text) {
    auto s = weak.lock();
    if (!s) return;
    // A response as the session writes it is routed by its id's text, read from the first bytes: parsed only when
    // more of it is needed (the answer to initialize, for its version).
    const auto peek = jsonrpc::peek_envelope(text);
    json::value v;
    auto parse = [&] {
        boost::system::error_code ec;
        v = json::parse(text, ec);
        return !ec && v.is_object();
    };
    if (!(peek && peek->kind == jsonrpc::Message::Kind::response) && !parse()) return;
    const bool response = peek ? peek->kind == jsonrpc::Message::Kind::response
                               : v.get_object().contains("id") && !v.get_object().contains("method");
    if (response) {
        auto key = peek ? std::string(peek->id) : json::serialize(v.get_object().at("id"));
        auto it = s->active.find(key);
        if (it == s->active.end()) {
            spdlog::debug("http: session {}: dropped a response to {} (no stream)", s->id, key);
            return;
        }
        auto st = it->second;
        if (st->is_initialize && v.is_null() && !parse()) return;
        s->active.erase(it);
        std::erase_if(s->progress, [&](const auto& kv) { return kv.second == key; });
        if (st->is_initialize) {
            const auto& o = v.get_object();
            const auto* r = o.if_contains("result");
            const auto* pv = r && r->is_object() ? r->get_object().if_contains("protocolVersion") : nullptr;
            if (pv && pv->is_string()) s->version = std::string(pv->get_string());
            if (o.contains("error"))
                asio::post(ex, [self = shared_from_this(), s] { self->close_session(s, "initialize failed"); });
        }
        st->emit(std::make_shared<const std::string>(std::move(text)), true, bhttp::status::ok);
        s->recent.push_back(st);
        if (s->recent.size() > 16) s->recent.pop_front();
        return;
    }
    const auto& o = v.get_object();  // parsed above: only a response is routed without
    auto shared = std::make_shared<const std::string>(std::move(text));
    const auto* method = o.if_contains("method");
    if (method && method->is_string() && method->get_string() == "notifications/progress") {
        const auto* p = o.if_contains("params");
        const auto* token = p && p->is_object() ? p->get_object().if_contains("progressToken") : nullptr;
        if (token) {
            auto pit = s->progress.find(json::serialize(*token));
            if (pit != s->progress.end()) {
                auto ait = s->active.find(pit->second);
                if (ait != s->active.end()) {
                    ait->second->emit(std::move(shared), false, bhttp::status::ok);
                    return;
                }
            }
        }
    }
    // A log message while exactly one request is in flight belongs to that request (a tool logging as it runs): on
    // its stream, where a client that opened no GET stream sees it. With several in flight the owner is unknown (the
    // JSON-RPC layer does not say), and it goes to the standalone stream.
    if (method && method->is_string() && method->get_string() == "notifications/message" && s->active.size() == 1) {
        s->active.begin()->second->emit(std::move(shared), false, bhttp::status::ok);
        return;
    }
    s->standalone->emit(std::move(shared), false, bhttp::status::ok);
}

std::shared_ptr<Session> HttpServer::Impl::find_session(const ServerRequest& req, Reply& refusal) {
    auto pv = header_value(req, "MCP-Protocol-Version");
    if (!pv.empty() && !contains(opt.legacy_versions, pv) && !contains(opt.modern_versions, pv)) {
        refusal = json_reply(bhttp::status::bad_request,
                             error_body(code_transport, fmt::format("Bad Request: Unsupported protocol version: {} "
                                                                    "(supported versions: {})",
                                                                    pv, join(opt.legacy_versions))));
        return nullptr;
    }
    auto sid = header_value(req, "Mcp-Session-Id");
    if (sid.empty()) {
        refusal = json_reply(bhttp::status::bad_request,
                             error_body(code_transport, "Bad Request: Mcp-Session-Id header is required"));
        return nullptr;
    }
    auto it = sessions.find(sid);
    if (it == sessions.end()) {
        refusal = json_reply(bhttp::status::not_found, error_body(code_session_not_found, "Session not found"));
        return nullptr;
    }
    it->second->last_used = clock::now();
    return it->second;
}

awaitable<void> HttpServer::Impl::handle_legacy(ServerRequest& req, Responder& res, jsonrpc::Message msg,
                                                std::string header_version, bool sse_ok) {
    std::shared_ptr<Session> s;
    const bool initialize = msg.kind == jsonrpc::Message::Kind::request && msg.method == "initialize";
    if (initialize) {
        if (sessions.size() >= opt.max_sessions) {
            auto r = json_reply(bhttp::status::service_unavailable,
                                error_body(code_transport, "Service Unavailable: too many sessions", msg.id, nullptr));
            co_await res.send(std::move(r));
            co_return;
        }
        if (!header_version.empty() && !contains(opt.legacy_versions, header_version)) {
            Reply refusal;
            find_session(req, refusal);  // words the unsupported-version refusal
            co_await res.send(std::move(refusal));
            co_return;
        }
        s = create_session();
    } else {
        Reply refusal;
        s = find_session(req, refusal);
        if (!s) {
            co_await res.send(std::move(refusal));
            co_return;
        }
    }

    if (msg.kind != jsonrpc::Message::Kind::request) {  // a notification, or an answer to the server's request
        s->channel->push(std::move(req.body()));
        Reply r;
        r.status = bhttp::status::accepted;
        r.headers.emplace_back("Mcp-Session-Id", s->id);
        co_await res.send(std::move(r));
        co_return;
    }
    // The id's JSON text, as route() reads it back from the answer; an integer (the usual id) without a serializer.
    auto key = msg.id.is_int64() ? std::string(fmt::format_int(msg.id.get_int64()).c_str()) : json::serialize(msg.id);
    if (s->active.size() >= opt.max_requests_per_session) {
        auto r = json_reply(
            bhttp::status::too_many_requests,
            error_body(code_transport,
                       fmt::format("Too Many Requests: {} requests of this session are unanswered", s->active.size()),
                       msg.id, nullptr));
        co_await res.send(std::move(r));
        co_return;
    }
    if (s->active.count(key)) {
        auto r = json_reply(
            bhttp::status::bad_request,
            error_body(-32600, "Invalid Request: request id " + key + " is already in progress", msg.id, nullptr));
        co_await res.send(std::move(r));
        co_return;
    }
    auto st = std::make_shared<Stream>();
    st->id = std::to_string(s->next_stream++);
    st->max_log = opt.replay_bytes;
    st->is_initialize = initialize;
    auto pipe = std::make_shared<Pipe>(ex, pipe_limit());
    st->pipe = pipe;
    s->active[key] = st;
    if (const auto* p = msg.params.if_object())
        if (const auto* m = p->if_contains("_meta"); m && m->is_object())
            if (const auto* t = m->get_object().if_contains("progressToken")) s->progress[json::serialize(*t)] = key;
    json::value id = msg.id;
    s->channel->push_parsed(std::move(msg));  // parsed once, by handle_post

    DeliverOptions d;
    d.sse_ok = sse_ok;
    // Clients before 2025-11-25 may not expect an event without data.
    d.priming = s->version >= "2025-11-25";
    d.session_id = s->id;
    d.unanswered_status = bhttp::status::not_found;
    d.unanswered_code = code_session_not_found;
    d.unanswered_message = "Session ended before the request was answered";
    d.unanswered_id = std::move(id);
    std::weak_ptr<Session> weak = s;
    d.on_disconnect = [weak] {
        // Legacy: a dropped connection is not a cancellation; the answer waits in the stream's log.
        if (auto sp = weak.lock()) sp->last_used = clock::now();
    };
    co_await deliver(res, st, pipe, std::move(d));
}

awaitable<void> HttpServer::Impl::handle_get(ServerRequest& req, Responder& res) {
    const auto accept = header_value(req, "Accept");
    if (!core::icontains(accept, "text/event-stream") && !core::icontains(accept, "*/*")) {
        auto r = json_reply(bhttp::status::not_acceptable,
                            error_body(code_transport, "Not Acceptable: Accept must list text/event-stream"));
        co_await res.send(std::move(r));
        co_return;
    }
    Reply refusal;
    auto s = find_session(req, refusal);
    if (!s) {
        co_await res.send(std::move(refusal));
        co_return;
    }

    std::shared_ptr<Stream> st;
    std::uint64_t after = 0;
    bool resumed = false;
    if (auto last = header_value(req, "Last-Event-ID"); !last.empty()) {
        auto dash = last.rfind('-');
        if (dash != std::string::npos) {
            auto seq = std::string_view(last).substr(dash + 1);
            auto [p, ec] = std::from_chars(seq.data(), seq.data() + seq.size(), after);
            if (ec == std::errc() && p == seq.data() + seq.size()) st = s->find_stream(last.substr(0, dash));
        }
        resumed = st != nullptr;
    }
    if (!st) {
        st = s->standalone;
        after = st->next_seq - 1;
    }
    if (st->pipe) {
        if (!resumed) {
            auto r = json_reply(bhttp::status::conflict,
                                error_body(code_transport, "Conflict: only one SSE stream is allowed per session"));
            co_await res.send(std::move(r));
            co_return;
        }
        st->pipe->finish = true;  // the client reconnected: the new response takes over
        st->pipe->signal.cancel();
    }
    auto pipe = std::make_shared<Pipe>(ex, pipe_limit());
    st->pipe = pipe;
    bool final_replayed = false;
    for (const auto& e : st->log)
        if (e.seq > after) {
            pipe->push(e);
            final_replayed = final_replayed || e.final;
        }
    if (st->done && !final_replayed) pipe->finish = true;  // nothing more will come

    DeliverOptions d;
    d.sse_now = true;
    d.priming = !resumed;
    d.session_id = s->id;
    co_await deliver(res, st, pipe, std::move(d));
}

awaitable<void> HttpServer::Impl::handle_delete(ServerRequest& req, Responder& res) {
    Reply refusal;
    auto s = find_session(req, refusal);
    if (!s) {
        co_await res.send(std::move(refusal));
        co_return;
    }
    close_session(s, "the client ended the session (DELETE)");
    Reply r;
    co_await res.send(std::move(r));
    co_return;
}

awaitable<void> HttpServer::Impl::sweep() {
    const auto period =
        std::min<clock::duration>(std::chrono::seconds(30), opt.session_idle_timeout / 2 + std::chrono::seconds(1));
    while (!stopped) {
        sweep_timer.expires_after(period);
        co_await sweep_timer.async_wait(as_tuple_awaitable);
        if (stopped) break;
        std::vector<std::shared_ptr<Session>> idle;
        for (auto& [id, s] : sessions)
            if (s->active.empty() && !s->standalone->pipe && clock::now() - s->last_used > opt.session_idle_timeout)
                idle.push_back(s);
        for (auto& s : idle) close_session(s, "idle timeout");
    }
}
}  // namespace switchboard::transport
