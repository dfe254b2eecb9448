#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/transport/http_server.hpp>

#include "listener.hpp"
#include "origin.hpp"
#include "push_channel.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <deque>
#include <map>
#include <system_error>

namespace switchboard::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using asio::awaitable;
using tcp = asio::ip::tcp;
using clock = std::chrono::steady_clock;
using Request = http::request<http::string_body>;

namespace {

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// The Streamable HTTP transport mirrors this body field into the MCP-Protocol-Version header (2026-07-28).
constexpr std::string_view meta_protocol_version = "io.modelcontextprotocol/protocolVersion";
constexpr int code_header_mismatch = -32020;
constexpr int code_missing_capability = -32021;
constexpr int code_unsupported_version = -32022;
// What the official SDKs answer for transport-level problems (no JSON-RPC meaning of their own).
constexpr int code_transport = -32000;
constexpr int code_session_not_found = -32001;

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

std::string error_body(int code, std::string message, const json::value& id, json::value data) {
    return jsonrpc::serialize_error(id, jsonrpc::Error{code, std::move(message), std::move(data), false});
}
std::string error_body(int code, std::string message) { return error_body(code, std::move(message), nullptr, nullptr); }

std::string size_text(std::size_t bytes) {
    if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0) return fmt::format("{} MiB", bytes / (1024 * 1024));
    return fmt::format("{} bytes", bytes);
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
    auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
    return it != haystack.end();
}

bool contains(const std::vector<std::string>& list, std::string_view v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

std::string join(const std::vector<std::string>& list) {
    std::string out;
    for (const auto& s : list) out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+' || c == '-') return 62;
        if (c == '/' || c == '_') return 63;
        return -1;
    };
    std::string out;
    unsigned buf = 0;
    int bits = 0;
    for (char c : in) {
        if (c == '=') break;
        int v = val(c);
        if (v < 0) return std::nullopt;
        buf = (buf << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buf >> bits) & 0xff);
        }
    }
    return out;
}

// A header value in the spec's "=?base64?...?=" sentinel form is decoded; anything else is taken as is.
std::optional<std::string> decode_header_value(std::string_view v) {
    constexpr std::string_view pre = "=?base64?", post = "?=";
    if (v.size() >= pre.size() + post.size() && v.starts_with(pre) && v.ends_with(post))
        return base64_decode(v.substr(pre.size(), v.size() - pre.size() - post.size()));
    for (char c : v)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return std::nullopt;
    return std::string(v);
}

std::string header(const Request& req, std::string_view name) {
    auto it = req.find(name);
    return it == req.end() ? std::string() : std::string(it->value());
}

struct Event {
    std::uint64_t seq = 0;
    std::shared_ptr<const std::string> text;  // one JSON-RPC message; null for none
    bool final = false;                       // the response that ends the stream
    http::status status = http::status::ok;   // for a final response sent as application/json
};

// Between the router and the HTTP response currently delivering one stream.
struct Pipe {
    explicit Pipe(const asio::any_io_executor& ex, std::size_t max_bytes) : signal(ex), limit(max_bytes) {}
    asio::steady_timer signal;
    std::deque<Event> queue;
    std::size_t bytes = 0, limit;
    bool overflow = false;      // the client reads slower than we produce: drop it
    bool finish = false;        // end the response (session gone) without a final message
    bool disconnected = false;  // the client closed the connection
    bool watcher_done = true;
    bool stopping = false;
    asio::cancellation_signal watch_stop;

    void push(Event e) {
        const std::size_t n = e.text ? e.text->size() : 0;
        if (!queue.empty() && bytes + n > limit) {
            overflow = true;
        } else {
            bytes += n;
            queue.push_back(std::move(e));
        }
        signal.cancel();
    }
    Event pop() {
        Event e = std::move(queue.front());
        queue.pop_front();
        bytes -= e.text ? e.text->size() : 0;
        return e;
    }
};

// One logical SSE stream: the answer to one request, or a session's server-initiated stream.
struct Stream {
    std::string id;           // event ids are "<id>-<seq>"; empty: no ids (2026-07-28 streams are not resumable)
    std::size_t max_log = 0;  // 0: keep no log
    std::deque<Event> log;
    std::size_t log_bytes = 0;
    std::uint64_t next_seq = 1;
    bool done = false;
    bool is_initialize = false;
    std::shared_ptr<Pipe> pipe;
    json::value request_id;                        // 2026-07-28: for cancellation on disconnect
    std::shared_ptr<detail::PushChannel> channel;  // 2026-07-28: the request's own session

    void emit(std::shared_ptr<const std::string> text, bool final, http::status status) {
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
};

struct Session {
    std::string id;
    std::shared_ptr<detail::PushChannel> channel;
    std::map<std::string, std::shared_ptr<Stream>> active;  // serialized request id -> its stream
    std::map<std::string, std::string> progress;            // serialized progress token -> request key
    std::deque<std::shared_ptr<Stream>> recent;             // answered streams, kept for resumption
    std::shared_ptr<Stream> standalone;                     // the GET stream
    std::uint64_t next_stream = 1;
    clock::time_point last_used = clock::now();
    std::string version;  // negotiated by initialize
    bool closed = false;

    std::shared_ptr<Stream> find_stream(std::string_view id) const {
        if (standalone->id == id) return standalone;
        for (const auto& [k, s] : active)
            if (s->id == id) return s;
        for (const auto& s : recent)
            if (s->id == id) return s;
        return nullptr;
    }
};

struct Conn {
    explicit Conn(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
};

struct Reply {
    http::status status = http::status::ok;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    bool close = false;
};

Reply json_reply(http::status status, std::string body) {
    Reply r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

// How a 2026-07-28 error answer maps to an HTTP status (the spec's table; clients detect the era from it).
http::status modern_status(const json::object& response) {
    const auto* e = response.if_contains("error");
    if (!e || !e->is_object()) return http::status::ok;
    const auto* c = e->get_object().if_contains("code");
    if (!c || !c->is_int64()) return http::status::ok;
    switch (c->get_int64()) {
    case code_header_mismatch:
    case code_missing_capability:
    case code_unsupported_version: return http::status::bad_request;
    case -32601: return http::status::not_found;
    default: return http::status::ok;
    }
}

struct DeliverOptions {
    bool sse_ok = true;      // the client accepts text/event-stream
    bool sse_now = false;    // open the stream at once (GET)
    bool priming = false;    // send an empty event carrying an id first
    std::string session_id;  // echoed as Mcp-Session-Id
    std::function<void()> on_disconnect;
    // Sent when the stream ends before any answer (its session ended): never leave the client waiting.
    http::status unanswered_status = http::status::internal_server_error;
    std::string unanswered_body;
};

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
    Impl(asio::any_io_executor e, SessionHandler h, HttpServerOptions o)
        : ex(e), handler(std::move(h)), opt(std::move(o)), acceptor(e), sweep_timer(e) {}

    asio::any_io_executor ex;
    SessionHandler handler;
    HttpServerOptions opt;
    tcp::acceptor acceptor;
    asio::steady_timer sweep_timer;
    std::map<std::string, std::shared_ptr<Session>> sessions;
    std::vector<std::weak_ptr<Conn>> conns;
    std::size_t conn_count = 0;
    bool stopped = false;

    std::size_t pipe_limit() const { return opt.max_message_size * 2 + 1024 * 1024; }

    // `on_end` runs when the handler returns (or throws): what it left unanswered must not wait forever.
    void spawn_session(std::shared_ptr<jsonrpc::Channel> channel, std::function<void()> on_end) {
        asio::co_spawn(ex, handler(std::move(channel)), [on_end = std::move(on_end)](std::exception_ptr e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    spdlog::error("http: session failed: {}", x.what());
                }
            }
            on_end();
        });
    }

    static void finish_stream(const std::shared_ptr<Stream>& st) {
        if (st && st->pipe) {
            st->pipe->finish = true;
            st->pipe->signal.cancel();
        }
    }

    // ---- sessions (legacy) ----

    std::shared_ptr<Session> create_session() {
        auto s = std::make_shared<Session>();
        s->id = random_id();
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

    void close_session(const std::shared_ptr<Session>& s, std::string why) {
        if (s->closed) return;
        s->closed = true;
        sessions.erase(s->id);
        for (auto& [k, st] : s->active) finish_stream(st);
        finish_stream(s->standalone);
        s->channel->end(why);
        spdlog::debug("http: session {} ended: {}", s->id, why);
    }

    // Sends what a session wrote to the stream it belongs to.
    void route(const std::weak_ptr<Session>& weak, std::string text) {
        auto s = weak.lock();
        if (!s) return;
        boost::system::error_code ec;
        auto v = json::parse(text, ec);
        if (ec || !v.is_object()) return;
        const auto& o = v.get_object();
        auto shared = std::make_shared<const std::string>(std::move(text));
        if (o.contains("id") && !o.contains("method")) {
            auto key = json::serialize(o.at("id"));
            auto it = s->active.find(key);
            if (it == s->active.end()) {
                spdlog::debug("http: session {}: dropped a response to {} (no stream)", s->id, key);
                return;
            }
            auto st = it->second;
            s->active.erase(it);
            std::erase_if(s->progress, [&](const auto& kv) { return kv.second == key; });
            if (st->is_initialize) {
                const auto* r = o.if_contains("result");
                const auto* pv = r && r->is_object() ? r->get_object().if_contains("protocolVersion") : nullptr;
                if (pv && pv->is_string()) s->version = std::string(pv->get_string());
                if (o.contains("error"))
                    asio::post(ex, [self = shared_from_this(), s] { self->close_session(s, "initialize failed"); });
            }
            st->emit(std::move(shared), true, http::status::ok);
            s->recent.push_back(st);
            if (s->recent.size() > 16) s->recent.pop_front();
            return;
        }
        const auto* method = o.if_contains("method");
        if (method && method->is_string() && method->get_string() == "notifications/progress") {
            const auto* p = o.if_contains("params");
            const auto* token = p && p->is_object() ? p->get_object().if_contains("progressToken") : nullptr;
            if (token) {
                auto pit = s->progress.find(json::serialize(*token));
                if (pit != s->progress.end()) {
                    auto ait = s->active.find(pit->second);
                    if (ait != s->active.end()) {
                        ait->second->emit(std::move(shared), false, http::status::ok);
                        return;
                    }
                }
            }
        }
        s->standalone->emit(std::move(shared), false, http::status::ok);
    }

    // 2026-07-28: everything the request's own session writes belongs to its one stream.
    static void route_modern(const std::weak_ptr<Stream>& weak, std::string text) {
        auto st = weak.lock();
        if (!st || st->done) return;
        boost::system::error_code ec;
        auto v = json::parse(text, ec);
        if (ec || !v.is_object()) return;
        const auto& o = v.get_object();
        const bool response = o.contains("id") && !o.contains("method");
        auto status = response ? modern_status(o) : http::status::ok;
        st->emit(std::make_shared<const std::string>(std::move(text)), response, status);
        if (response && st->channel) st->channel->end("request answered");
    }

    // ---- HTTP plumbing ----

    awaitable<bool> send(std::shared_ptr<Conn> c, unsigned version, bool keep_alive, Reply r) {
        http::response<http::string_body> res{r.status, version};
        res.set(http::field::server, "switchboard");
        if (!r.body.empty()) res.set(http::field::content_type, "application/json");
        for (auto& [k, v] : r.headers) res.set(k, v);
        res.body() = std::move(r.body);
        res.keep_alive(keep_alive && !r.close);
        res.prepare_payload();
        c->stream.expires_after(opt.write_timeout);
        auto [ec, n] = co_await http::async_write(c->stream, res, as_tuple_awaitable);
        c->stream.expires_never();
        co_return !ec && res.keep_alive();
    }

    awaitable<void> watch(std::shared_ptr<Conn> c, std::shared_ptr<Pipe> p) {
        // Reading while a response is pending tells us when the client goes away. A well-behaved HTTP/1.1 client
        // sends nothing meanwhile; anything it does send is kept for the next request.
        while (c->buffer.size() < 1024 * 1024) {
            auto [ec, n] =
                co_await c->stream.socket().async_read_some(c->buffer.prepare(16 * 1024), as_tuple_awaitable);
            if (!ec) c->buffer.commit(n);
            if (p->stopping) co_return;
            if (ec) {
                p->disconnected = true;
                p->signal.cancel();
                co_return;
            }
        }
    }

    void start_watch(const std::shared_ptr<Conn>& c, const std::shared_ptr<Pipe>& p) {
        p->watcher_done = false;
        asio::co_spawn(ex, watch(c, p), asio::bind_cancellation_slot(p->watch_stop.slot(), [p](std::exception_ptr) {
                           p->watcher_done = true;
                           p->signal.cancel();
                       }));
    }

    awaitable<void> stop_watch(std::shared_ptr<Pipe> p) {
        p->stopping = true;
        p->watch_stop.emit(asio::cancellation_type::terminal);
        while (!p->watcher_done) {
            p->signal.expires_at(clock::time_point::max());
            co_await p->signal.async_wait(as_tuple_awaitable);
        }
    }

    awaitable<bool> write_chunk(std::shared_ptr<Conn> c, std::string_view prefix, std::string_view body,
                                std::string_view suffix) {
        std::array<asio::const_buffer, 3> parts{asio::buffer(prefix), asio::buffer(body), asio::buffer(suffix)};
        c->stream.expires_after(opt.write_timeout);
        auto [ec, n] = co_await asio::async_write(c->stream, http::make_chunk(parts), as_tuple_awaitable);
        c->stream.expires_never();
        co_return !ec;
    }

    awaitable<bool> write_sse_head(std::shared_ptr<Conn> c, unsigned version, std::string session_id) {
        http::response<http::empty_body> res{http::status::ok, version};
        res.set(http::field::server, "switchboard");
        res.set(http::field::content_type, "text/event-stream");
        res.set(http::field::cache_control, "no-cache, no-transform");
        res.set("X-Accel-Buffering", "no");
        if (!session_id.empty()) res.set("Mcp-Session-Id", session_id);
        res.keep_alive(true);
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        c->stream.expires_after(opt.write_timeout);
        auto [ec, n] = co_await http::async_write_header(c->stream, sr, as_tuple_awaitable);
        c->stream.expires_never();
        co_return !ec;
    }

    // Delivers a stream on this connection: as one application/json answer when the final response comes first,
    // else as SSE. Returns whether the connection can carry another request.
    awaitable<bool> deliver(std::shared_ptr<Conn> c, unsigned version, bool keep_alive, std::shared_ptr<Stream> st,
                            std::shared_ptr<Pipe> pipe, DeliverOptions d) {
        start_watch(c, pipe);
        bool sse = false, ok = true, ended = false;
        auto next_ping = clock::now() + opt.sse_keepalive;
        if (d.sse_now) {
            ok = co_await write_sse_head(c, version, d.session_id);
            sse = true;
            if (ok && d.priming) {
                auto id = fmt::format("id: {}-{}\ndata: ", st->id, st->next_seq - 1);
                ok = co_await write_chunk(c, id, "", "\n\n");
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
                    ok = co_await write_chunk(c, ":", "", "\n\n");
                    next_ping = clock::now() + opt.sse_keepalive;
                    continue;
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
                    keep_alive = co_await send(c, version, keep_alive, std::move(r));
                    ended = true;
                    break;
                }
                if (!d.sse_ok) continue;  // the client takes JSON only: notifications cannot reach it
                ok = co_await write_sse_head(c, version, d.session_id);
                sse = true;
                if (ok && d.priming) ok = co_await write_chunk(c, fmt::format("id: {}-0\ndata: ", st->id), "", "\n\n");
                if (!ok) break;
            }
            std::string prefix = st->id.empty() ? "data: " : fmt::format("id: {}-{}\ndata: ", st->id, e.seq);
            ok = co_await write_chunk(c, prefix, *e.text, "\n\n");
            next_ping = clock::now() + opt.sse_keepalive;
            if (ok && e.final) {
                ended = true;
                break;
            }
        }
        if (ok && sse) {
            c->stream.expires_after(opt.write_timeout);
            auto [ec, n] = co_await asio::async_write(c->stream, http::make_chunk_last(), as_tuple_awaitable);
            c->stream.expires_never();
            ok = !ec;
        }
        if (ok && !sse && !ended && !pipe->disconnected) {
            Reply r = json_reply(d.unanswered_status, d.unanswered_body);
            if (!d.session_id.empty()) r.headers.emplace_back("Mcp-Session-Id", d.session_id);
            keep_alive = co_await send(c, version, keep_alive, std::move(r));
        }
        co_await stop_watch(pipe);
        if (st->pipe == pipe) st->pipe = nullptr;
        if (!ok && !ended && d.on_disconnect) d.on_disconnect();
        co_return ok&& keep_alive && !pipe->disconnected;
    }

    // ---- requests ----

    awaitable<bool> handle(std::shared_ptr<Conn> c, Request& req) {
        const unsigned version = req.version();
        const bool keep = req.keep_alive();
        std::string_view target = req.target();
        if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
        if (target != opt.path) {
            auto r = json_reply(http::status::not_found,
                                error_body(code_transport, "Not Found: the MCP endpoint is " + opt.path));
            co_return co_await send(c, version, keep, std::move(r));
        }
        if (auto origin = req.find(http::field::origin); origin != req.end()) {
            if (!detail::origin_allowed(origin->value(), opt.allowed_origins)) {
                auto r = json_reply(http::status::forbidden,
                                    error_body(code_transport, fmt::format("Forbidden: origin {} is not allowed",
                                                                           std::string_view(origin->value()))));
                co_return co_await send(c, version, keep, std::move(r));
            }
        }
        switch (req.method()) {
        case http::verb::post: co_return co_await handle_post(c, req);
        case http::verb::get: co_return co_await handle_get(c, req);
        case http::verb::delete_: co_return co_await handle_delete(c, req);
        default: break;
        }
        auto r = json_reply(http::status::method_not_allowed, error_body(code_transport, "Method Not Allowed"));
        r.headers.emplace_back("Allow", opt.legacy ? "GET, POST, DELETE" : "POST");
        co_return co_await send(c, version, keep, std::move(r));
    }

    // The legacy-era checks shared by POST, GET and DELETE. Returns the session, or a reply to send instead.
    std::shared_ptr<Session> find_session(const Request& req, Reply& refusal) {
        auto pv = header(req, "MCP-Protocol-Version");
        if (!pv.empty() && !contains(opt.legacy_versions, pv) && !contains(opt.modern_versions, pv)) {
            refusal = json_reply(http::status::bad_request,
                                 error_body(code_transport, fmt::format("Bad Request: Unsupported protocol version: {} "
                                                                        "(supported versions: {})",
                                                                        pv, join(opt.legacy_versions))));
            return nullptr;
        }
        auto sid = header(req, "Mcp-Session-Id");
        if (sid.empty()) {
            refusal = json_reply(http::status::bad_request,
                                 error_body(code_transport, "Bad Request: Mcp-Session-Id header is required"));
            return nullptr;
        }
        auto it = sessions.find(sid);
        if (it == sessions.end()) {
            refusal = json_reply(http::status::not_found, error_body(code_session_not_found, "Session not found"));
            return nullptr;
        }
        it->second->last_used = clock::now();
        return it->second;
    }

    awaitable<bool> handle_post(std::shared_ptr<Conn> c, Request& req) {
        const unsigned version = req.version();
        const bool keep = req.keep_alive();
        if (!contains_ci(header(req, "Content-Type"), "application/json")) {
            auto r =
                json_reply(http::status::unsupported_media_type,
                           error_body(code_transport, "Unsupported Media Type: Content-Type must be application/json"));
            co_return co_await send(c, version, keep, std::move(r));
        }
        const auto accept = header(req, "Accept");
        const bool any = accept.empty() || contains_ci(accept, "*/*");
        const bool accepts_sse = any || contains_ci(accept, "text/event-stream");
        if (!accepts_sse && !contains_ci(accept, "application/json")) {
            auto r = json_reply(http::status::not_acceptable,
                                error_body(code_transport,
                                           "Not Acceptable: Accept must list application/json and "
                                           "text/event-stream"));
            co_return co_await send(c, version, keep, std::move(r));
        }
        // HTTP/1.0 has no chunked encoding: such a client gets JSON only.
        const bool sse_ok = accepts_sse && req.version() >= 11;
        auto parsed = jsonrpc::parse_message(req.body());
        if (!parsed) {
            auto r = json_reply(http::status::bad_request, error_body(parsed.error().code, parsed.error().message));
            co_return co_await send(c, version, keep, std::move(r));
        }
        jsonrpc::Message& msg = *parsed;
        if (msg.kind == jsonrpc::Message::Kind::response) {
            // We never ask the client anything, but a stray answer is harmless.
            Reply r;
            r.status = http::status::accepted;
            co_return co_await send(c, version, keep, std::move(r));
        }

        const auto header_version = header(req, "MCP-Protocol-Version");
        std::optional<std::string> body_version;
        if (const auto* p = msg.params.if_object())
            if (const auto* m = p->if_contains("_meta"); m && m->is_object())
                if (const auto* v = m->get_object().if_contains(meta_protocol_version))
                    body_version = v->is_string() ? std::string(v->get_string()) : json::serialize(*v);
        const bool modern = body_version || contains(opt.modern_versions, header_version);
        if (modern && opt.modern)
            co_return co_await handle_modern(c, req, std::move(msg), header_version, body_version, sse_ok);
        if (!opt.legacy) {
            json::array supported;
            for (const auto& v : opt.modern_versions) supported.emplace_back(v);
            json::object data;
            data["supported"] = std::move(supported);
            data["requested"] = header_version;
            auto r = json_reply(
                http::status::bad_request,
                error_body(
                    code_unsupported_version,
                    fmt::format("Unsupported protocol version: this server speaks only {}", join(opt.modern_versions)),
                    msg.kind == jsonrpc::Message::Kind::request ? msg.id : json::value(nullptr), std::move(data)));
            co_return co_await send(c, version, keep, std::move(r));
        }

        std::shared_ptr<Session> s;
        const bool initialize = msg.kind == jsonrpc::Message::Kind::request && msg.method == "initialize";
        if (initialize) {
            if (sessions.size() >= opt.max_sessions) {
                auto r =
                    json_reply(http::status::service_unavailable,
                               error_body(code_transport, "Service Unavailable: too many sessions", msg.id, nullptr));
                co_return co_await send(c, version, keep, std::move(r));
            }
            if (!header_version.empty() && !contains(opt.legacy_versions, header_version)) {
                Reply refusal;
                find_session(req, refusal);  // words the unsupported-version refusal
                co_return co_await send(c, version, keep, std::move(refusal));
            }
            s = create_session();
        } else {
            Reply refusal;
            s = find_session(req, refusal);
            if (!s) co_return co_await send(c, version, keep, std::move(refusal));
        }

        if (msg.kind == jsonrpc::Message::Kind::notification) {
            s->channel->push(std::move(req.body()));
            Reply r;
            r.status = http::status::accepted;
            r.headers.emplace_back("Mcp-Session-Id", s->id);
            co_return co_await send(c, version, keep, std::move(r));
        }
        auto key = json::serialize(msg.id);
        if (s->active.size() >= opt.max_requests_per_session) {
            auto r = json_reply(http::status::too_many_requests,
                                error_body(code_transport,
                                           fmt::format("Too Many Requests: {} requests of this session are unanswered",
                                                       s->active.size()),
                                           msg.id, nullptr));
            co_return co_await send(c, version, keep, std::move(r));
        }
        if (s->active.count(key)) {
            auto r = json_reply(
                http::status::bad_request,
                error_body(-32600, "Invalid Request: request id " + key + " is already in progress", msg.id, nullptr));
            co_return co_await send(c, version, keep, std::move(r));
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
                if (const auto* t = m->get_object().if_contains("progressToken"))
                    s->progress[json::serialize(*t)] = key;
        s->channel->push(std::move(req.body()));

        DeliverOptions d;
        d.sse_ok = sse_ok;
        // Clients before 2025-11-25 may not expect an event without data.
        d.priming = s->version >= "2025-11-25";
        d.session_id = s->id;
        d.unanswered_status = http::status::not_found;
        d.unanswered_body =
            error_body(code_session_not_found, "Session ended before the request was answered", msg.id, nullptr);
        std::weak_ptr<Session> weak = s;
        d.on_disconnect = [weak] {
            // Legacy: a dropped connection is not a cancellation; the answer waits in the stream's log.
            if (auto sp = weak.lock()) sp->last_used = clock::now();
        };
        co_return co_await deliver(c, version, keep, st, pipe, std::move(d));
    }

    awaitable<bool> handle_modern(std::shared_ptr<Conn> c, Request& req, jsonrpc::Message msg,
                                  std::string header_version, std::optional<std::string> body_version, bool sse_ok) {
        const unsigned version = req.version();
        const bool keep = req.keep_alive();
        if (msg.kind != jsonrpc::Message::Kind::request) {
            // 2026-07-28 defines no client notifications over HTTP (closing a stream cancels); accept and drop.
            Reply r;
            r.status = http::status::accepted;
            co_return co_await send(c, version, keep, std::move(r));
        }
        std::string mismatch;
        const std::string body_v = body_version.value_or("");
        if (header_version.empty())
            mismatch = "MCP-Protocol-Version header is required";
        else if (!body_version)
            mismatch = fmt::format("MCP-Protocol-Version header is {} but the request's _meta has no {}",
                                   header_version, meta_protocol_version);
        else if (header_version != body_v)
            mismatch = fmt::format("MCP-Protocol-Version header value '{}' does not match body value '{}'",
                                   header_version, body_v);
        if (mismatch.empty()) {
            auto m = header(req, "Mcp-Method");
            if (m.empty())
                mismatch = "Mcp-Method header is required";
            else if (m != msg.method)
                mismatch = fmt::format("Mcp-Method header value '{}' does not match body value '{}'", m, msg.method);
        }
        if (mismatch.empty() &&
            (msg.method == "tools/call" || msg.method == "prompts/get" || msg.method == "resources/read")) {
            const char* field = msg.method == "resources/read" ? "uri" : "name";
            std::string expected;
            if (const auto* p = msg.params.if_object())
                if (const auto* v = p->if_contains(field); v && v->is_string()) expected = std::string(v->get_string());
            auto raw = header(req, "Mcp-Name");
            auto decoded = decode_header_value(raw);
            if (raw.empty())
                mismatch = "Mcp-Name header is required for " + msg.method;
            else if (!decoded)
                mismatch = "Mcp-Name header value is malformed";
            else if (*decoded != expected)
                mismatch = fmt::format("Mcp-Name header value '{}' does not match body value '{}'", *decoded, expected);
        }
        if (!mismatch.empty()) {
            auto r = json_reply(http::status::bad_request,
                                error_body(code_header_mismatch, "Header mismatch: " + mismatch, msg.id, nullptr));
            co_return co_await send(c, version, keep, std::move(r));
        }

        auto st = std::make_shared<Stream>();
        st->request_id = msg.id;
        auto pipe = std::make_shared<Pipe>(ex, pipe_limit());
        st->pipe = pipe;
        std::weak_ptr<Stream> weak = st;
        st->channel = std::make_shared<detail::PushChannel>(
            ex, opt.max_message_size, [weak](std::string text) { route_modern(weak, std::move(text)); });
        spawn_session(st->channel, [weak] { finish_stream(weak.lock()); });
        st->channel->push(std::move(req.body()));

        DeliverOptions d;
        d.sse_ok = sse_ok;
        d.unanswered_body = error_body(-32603, "Internal error: the request ended without an answer", msg.id, nullptr);
        d.on_disconnect = [weak] {
            // Closing the response stream is the cancellation signal of 2026-07-28.
            auto sp = weak.lock();
            if (!sp || sp->done) return;
            json::object params{{"requestId", sp->request_id}, {"reason", "the client closed the HTTP stream"}};
            sp->channel->push(jsonrpc::serialize_notification("notifications/cancelled", params));
            sp->channel->end("the client closed the HTTP stream");
        };
        auto result = co_await deliver(c, version, keep, st, pipe, std::move(d));
        st->channel->end("request finished");
        co_return result;
    }

    awaitable<bool> handle_get(std::shared_ptr<Conn> c, Request& req) {
        const unsigned version = req.version();
        const bool keep = req.keep_alive();
        if (!opt.legacy) {
            auto r = json_reply(http::status::method_not_allowed, error_body(code_transport, "Method Not Allowed"));
            r.headers.emplace_back("Allow", "POST");
            co_return co_await send(c, version, keep, std::move(r));
        }
        const auto accept = header(req, "Accept");
        if (!contains_ci(accept, "text/event-stream") && !contains_ci(accept, "*/*")) {
            auto r = json_reply(http::status::not_acceptable,
                                error_body(code_transport, "Not Acceptable: Accept must list text/event-stream"));
            co_return co_await send(c, version, keep, std::move(r));
        }
        Reply refusal;
        auto s = find_session(req, refusal);
        if (!s) co_return co_await send(c, version, keep, std::move(refusal));

        std::shared_ptr<Stream> st;
        std::uint64_t after = 0;
        bool resumed = false;
        if (auto last = header(req, "Last-Event-ID"); !last.empty()) {
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
                auto r = json_reply(http::status::conflict,
                                    error_body(code_transport, "Conflict: only one SSE stream is allowed per session"));
                co_return co_await send(c, version, keep, std::move(r));
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
        co_return co_await deliver(c, version, keep, st, pipe, std::move(d));
    }

    awaitable<bool> handle_delete(std::shared_ptr<Conn> c, Request& req) {
        const unsigned version = req.version();
        const bool keep = req.keep_alive();
        if (!opt.legacy) {
            auto r = json_reply(http::status::method_not_allowed, error_body(code_transport, "Method Not Allowed"));
            r.headers.emplace_back("Allow", "POST");
            co_return co_await send(c, version, keep, std::move(r));
        }
        Reply refusal;
        auto s = find_session(req, refusal);
        if (!s) co_return co_await send(c, version, keep, std::move(refusal));
        close_session(s, "the client ended the session (DELETE)");
        Reply r;
        co_return co_await send(c, version, keep, std::move(r));
    }

    awaitable<void> serve_conn(std::shared_ptr<Conn> c) {
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.header_limit(64 * 1024);
            parser.body_limit(opt.max_message_size);
            c->stream.expires_after(opt.read_timeout);
            auto [ec, n] = co_await http::async_read(c->stream, c->buffer, parser, as_tuple_awaitable);
            c->stream.expires_never();
            if (ec == http::error::body_limit) {
                auto r =
                    json_reply(http::status::payload_too_large,
                               error_body(code_transport, fmt::format("Payload Too Large: the message size limit is {}",
                                                                      size_text(opt.max_message_size))));
                r.close = true;
                co_await send(c, parser.get().version(), false, std::move(r));
                break;
            }
            if (ec == http::error::header_limit) {
                auto r = json_reply(http::status::request_header_fields_too_large,
                                    error_body(code_transport, "Request Header Fields Too Large"));
                r.close = true;
                co_await send(c, 11, false, std::move(r));
                break;
            }
            if (ec) {
                if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
                    ec != http::error::end_of_stream && ec != http::error::partial_message) {
                    auto r =
                        json_reply(http::status::bad_request,
                                   error_body(code_transport, "Bad Request: malformed HTTP (" + ec.message() + ")"));
                    r.close = true;
                    co_await send(c, 11, false, std::move(r));
                }
                break;
            }
            Request req = parser.release();
            bool keep = co_await handle(c, req);
            if (!keep || stopped) break;
        }
        beast::error_code ignored;
        c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        c->stream.close();
    }

    awaitable<void> sweep() {
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

    awaitable<void> run() {
        auto self = shared_from_this();
        asio::co_spawn(ex, sweep(), [self](std::exception_ptr) {});
        while (!stopped) {
            auto [ec, sock] = co_await acceptor.async_accept(as_tuple_awaitable);
            if (stopped) break;
            if (ec) {
                if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor) break;
                spdlog::warn("http: accept failed: {}", ec.message());
                asio::steady_timer pause(ex, std::chrono::milliseconds(100));  // e.g. out of file descriptors
                co_await pause.async_wait(as_tuple_awaitable);
                continue;
            }
            if (conn_count >= opt.max_connections) {
                spdlog::warn("http: over {} connections; refusing one", opt.max_connections);
                continue;  // the socket closes here
            }
            boost::system::error_code ignored;
            sock.set_option(tcp::no_delay(true), ignored);
            auto c = std::make_shared<Conn>(std::move(sock));
            std::erase_if(conns, [](const auto& w) { return w.expired(); });
            conns.push_back(c);
            ++conn_count;
            asio::co_spawn(ex, serve_conn(c), [self, c](std::exception_ptr e) {
                --self->conn_count;
                if (!e) return;
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    spdlog::error("http: connection failed: {}", x.what());
                }
                beast::error_code ignored2;
                c->stream.socket().close(ignored2);
            });
        }
    }

    void stop() {
        if (stopped) return;
        stopped = true;
        boost::system::error_code ignored;
        acceptor.close(ignored);
        sweep_timer.cancel();
        for (auto& w : conns)
            if (auto c = w.lock()) c->stream.socket().close(ignored);
        auto all = sessions;
        for (auto& [id, s] : all) close_session(s, "the server is stopping");
    }
};

HttpServer::HttpServer(asio::any_io_executor ex, SessionHandler handler, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(ex, std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() { impl_->stop(); }

boost::system::error_code HttpServer::listen() {
    return open_listener(impl_->acceptor, impl_->opt.address, impl_->opt.port);
}

std::uint16_t HttpServer::port() const { return listening_port(impl_->acceptor); }

std::string HttpServer::url() const {
    return fmt::format("http://{}:{}{}", url_host(impl_->opt.address), port(), impl_->opt.path);
}

awaitable<void> HttpServer::run() {
    auto impl = impl_;
    co_await impl->run();
}

void HttpServer::stop() { impl_->stop(); }

std::size_t HttpServer::session_count() const { return impl_->sessions.size(); }

}  // namespace switchboard::transport
