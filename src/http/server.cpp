#include <switchboard/http/listener.hpp>
#include <switchboard/http/request_gate.hpp>
#include <switchboard/http/server.hpp>

#include "plain_request.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/core/text.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/container/small_vector.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <span>
#include <map>
#include <optional>

namespace switchboard::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace json = boost::json;
using asio::awaitable;
using core::as_tuple_awaitable;
using tcp = asio::ip::tcp;

namespace {

std::string default_error_body(bhttp::status status, const std::string& message) {
    json::object error;
    error["status"] = static_cast<unsigned>(status);
    error["message"] = message;
    json::object body;
    body["error"] = std::move(error);
    return json::serialize(body);
}

}  // namespace

// --- Writing -----------------------------------------------------------------------------------------------------

// Responses are written by hand, not by Beast's serializer: a head built in one string, then the head and the body
// in one gather write, tried at once on the non-blocking socket and awaited only for what the kernel did not take
// (the serializer and its composed operations cost about 15 k instructions a response, and a scheduler pass).

namespace {

using clock = std::chrono::steady_clock;

// A header value as it may go on the wire: a CR or LF would end the header early (response splitting).
void append_field(std::string& head, std::string_view name, std::string_view value) {
    head.append(name);
    head.append(": ");
    const auto at = head.size();
    head.append(value);  // whole, then mended where needed (a value almost never needs it)
    for (auto i = at; i < head.size(); ++i)
        if (head[i] == '\r' || head[i] == '\n') head[i] = ' ';
    head.append("\r\n");
}

// A head's fields as views, in the order they are set: what every response starts with, the Responder's own, the
// reply's, then what the framing needs.
using FieldViews = boost::container::small_vector<std::pair<std::string_view, std::string_view>, 10>;

void add_fields(FieldViews& out, const Fields& fields) {
    for (const auto& [k, v] : fields) out.emplace_back(k, v);
}

// The Connection header a response needs for `keep_alive` (HTTP/1.1 keeps alive unless told, 1.0 closes); empty:
// none.
std::string_view connection_value(unsigned version, bool keep_alive) {
    if (version >= 11 && !keep_alive) return "close";
    if (version < 11 && keep_alive) return "keep-alive";
    return {};
}

// The head for `fields` as Beast's set() would leave them: a later field replaces an earlier one of the same name, in
// the earlier one's place. Written in one string; the fields are never copied into a list of their own.
std::string response_head(unsigned version, bhttp::status status, const FieldViews& fields) {
    std::string head;
    head.reserve(256);
    head.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    head.append(fmt::format_int(static_cast<unsigned>(status)).c_str());
    head.push_back(' ');
    const auto reason = bhttp::obsolete_reason(status);
    head.append(reason.data(), reason.size());
    head.append("\r\n");
    // Each name's length and first letter folded, compared before the names themselves (most differ there).
    boost::container::small_vector<std::uint32_t, 10> keys;
    for (const auto& f : fields)
        keys.push_back(static_cast<std::uint32_t>(f.first.size()) << 8 |
                       (f.first.empty() ? 0u : static_cast<unsigned char>(f.first[0] | 0x20)));
    const auto same = [&](std::size_t a, std::size_t b) {
        return keys[a] == keys[b] && core::iequals(fields[a].first, fields[b].first);
    };
    for (std::size_t i = 0; i < fields.size(); ++i) {
        bool replaced_earlier = false;  // written already, in the place of the first of its name
        for (std::size_t j = 0; j < i && !replaced_earlier; ++j) replaced_earlier = same(j, i);
        if (replaced_earlier) continue;
        auto value = fields[i].second;
        for (std::size_t j = i + 1; j < fields.size(); ++j)
            if (same(j, i)) value = fields[j].second;
        append_field(head, fields[i].first, value);
    }
    head.append("\r\n");
    return head;
}

// A whole reply's head: Server, Content-Type (with a body), the Responder's fields, the reply's, Connection,
// Content-Length.
std::string reply_head(unsigned version, bool keep_alive, const Fields& extra, const Reply& r, bool no_body) {
    const fmt::format_int length(r.body.size());
    FieldViews fields{{"Server", "switchboard"}};
    if (!r.body.empty())
        fields.emplace_back("Content-Type", r.content_type.empty() ? std::string_view("application/json")
                                                                   : std::string_view(r.content_type));
    add_fields(fields, extra);
    add_fields(fields, r.headers);
    if (const auto c = connection_value(version, keep_alive); !c.empty()) fields.emplace_back("Connection", c);
    if (!no_body) fields.emplace_back("Content-Length", std::string_view(length.data(), length.size()));
    return response_head(version, r.status, fields);
}

// A chunked stream's head.
std::string stream_head(unsigned version, bhttp::status status, std::string_view content_type, const Fields& extra,
                        const Fields& headers) {
    FieldViews fields{{"Server", "switchboard"}, {"Content-Type", content_type}};
    add_fields(fields, extra);
    add_fields(fields, headers);
    if (const auto c = connection_value(version, true); !c.empty()) fields.emplace_back("Connection", c);
    fields.emplace_back("Transfer-Encoding", "chunked");
    return response_head(version, status, fields);
}

bool bodiless(bhttp::status status) {
    const auto code = static_cast<unsigned>(status);
    return code < 200 || code == 204 || code == 304;
}

// Writes every byte of `buffers` within `timeout` (the server's sweep closes a connection past its deadline).
// Returns the bytes written and the error, if any.
template <std::size_t N>
awaitable<std::pair<beast::error_code, std::size_t>> write_all(ServerConnection& c,
                                                               std::array<asio::const_buffer, N> buffers,
                                                               std::chrono::seconds timeout) {
    const std::size_t total = asio::buffer_size(buffers);
    beast::error_code ec;
    std::size_t n = total ? c.socket.write_some(buffers, ec) : 0;
    if (ec == asio::error::would_block || ec == asio::error::try_again) ec = {};
    if (ec || n == total) co_return std::pair{ec, n};
    // The kernel took part of it: the rest, awaited.
    std::size_t first = 0;
    for (std::size_t skip = n; first < N; ++first) {
        if (skip < buffers[first].size()) {
            buffers[first] += skip;
            break;
        }
        skip -= buffers[first].size();
    }
    c.deadline = clock::now() + timeout;
    auto [wec, m] = co_await asio::async_write(c.socket, std::span(buffers.data() + first, N - first),
                                               as_tuple_awaitable);
    c.deadline = clock::time_point::max();
    co_return std::pair{wec, n + m};
}

}  // namespace

ServerConnection::ServerConnection(tcp::socket s) : socket(std::move(s)) {
    boost::system::error_code ignored;
    socket.non_blocking(true, ignored);
}

// --- Responder ---------------------------------------------------------------------------------------------------

Responder::Responder(std::shared_ptr<ServerConnection> conn, unsigned version, bool keep_alive,
                     std::chrono::seconds write_timeout, const ErrorBody& error_body)
    : conn_(std::move(conn)),
      version_(version),
      keep_alive_(keep_alive),
      write_timeout_(write_timeout),
      error_body_(error_body) {}

std::string_view Responder::sent_header(std::string_view name) const {
    for (const auto& [k, v] : sent_)
        if (core::iequals(k, name)) return v;
    return {};
}

awaitable<bool> Responder::send(Reply r) {
    started_ = true;
    status_ = static_cast<unsigned>(r.status);
    const bool no_body = bodiless(r.status);
    if (no_body) r.body.clear();
    keep_alive_ = keep_alive_ && !r.close;
    const auto head = reply_head(version_, keep_alive_, extra_, r, no_body);
    sent_ = std::move(r.headers);
    std::array<asio::const_buffer, 2> parts{asio::buffer(head), asio::buffer(r.body)};
    auto [ec, n] = co_await write_all(*conn_, parts, write_timeout_);
    bytes_sent_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
}

awaitable<bool> Responder::send_error(bhttp::status status, const std::string& message, Fields headers) {
    Reply r;
    r.status = status;
    r.body = error_body_(status, message);
    r.headers = std::move(headers);
    co_return co_await send(std::move(r));
}

awaitable<bool> Responder::begin_stream(std::string content_type, Fields headers) {
    co_return co_await begin_stream(bhttp::status::ok, std::move(content_type), std::move(headers));
}

awaitable<bool> Responder::begin_stream(bhttp::status status, std::string content_type, Fields headers) {
    started_ = true;
    status_ = static_cast<unsigned>(status);
    const auto head = stream_head(version_, status, content_type, extra_, headers);
    sent_ = std::move(headers);
    std::array<asio::const_buffer, 1> parts{asio::buffer(head)};
    auto [ec, n] = co_await write_all(*conn_, parts, write_timeout_);
    bytes_sent_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
}

awaitable<bool> Responder::write_chunk(std::string_view a, std::string_view b, std::string_view c) {
    const std::size_t size = a.size() + b.size() + c.size();
    if (size == 0) co_return ok_;  // an empty chunk would end the stream
    char prefix[24];
    const auto len = fmt::format_to_n(prefix, sizeof prefix - 2, "{:x}\r\n", size).size;
    std::array<asio::const_buffer, 5> parts{asio::buffer(prefix, len), asio::buffer(a), asio::buffer(b),
                                            asio::buffer(c), asio::buffer("\r\n", 2)};
    auto [ec, n] = co_await write_all(*conn_, parts, write_timeout_);
    bytes_sent_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
}

awaitable<bool> Responder::end_stream() {
    static constexpr std::string_view last = "0\r\n\r\n";
    std::array<asio::const_buffer, 1> parts{asio::buffer(last.data(), last.size())};
    auto [ec, n] = co_await write_all(*conn_, parts, write_timeout_);
    bytes_sent_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
}

// --- Server ------------------------------------------------------------------------------------------------------

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
    Impl(asio::any_io_executor e, Router r, ServerOptions o)
        : ex(e), routes(std::move(r)), opt(std::move(o)), acceptor(e), connections(e) {
        if (!opt.error_body) opt.error_body = default_error_body;
    }

    using Parser = bhttp::request_parser<bhttp::string_body>;

    asio::any_io_executor ex;
    Router routes;
    ServerOptions opt;
    tcp::acceptor acceptor;
    core::TaskGroup connections;
    std::vector<std::weak_ptr<ServerConnection>> conns;
    std::size_t count = 0;
    std::map<boost::asio::ip::address, std::size_t> per_address;  // open connections per client address
    std::chrono::steady_clock::time_point last_refusal_log{};
    bool stopped = false;

    // The one place where a request meets its handler: the shared checks (request_gate.hpp), the OAuth verifier,
    // and the exception boundary.
    awaitable<void> dispatch(ServerRequest& req, Responder& res) {
        req.erase(principal_header);  // only the verifier below names who is asking
        RequestVerdict verdict = gate_request(req, routes, opt);
        const std::string_view path = verdict.path;
        for (auto& [name, value] : verdict.response_headers) res.add_header(name, value);
        if (verdict.verify_token) {
            auto verifier = opt.token_verifier;
            const auto allowed = co_await verifier->verify(req);
            if (!allowed.allowed) {
                Fields challenge;
                if (!allowed.challenge.empty()) challenge.emplace_back("WWW-Authenticate", allowed.challenge);
                co_await res.send_error(allowed.status, allowed.message, std::move(challenge));
                co_return;
            }
            if (!allowed.principal.empty()) req.set(principal_header, allowed.principal);
        }
        if (verdict.action == RequestVerdict::Action::refuse) {
            co_await res.send_error(verdict.status, verdict.message, std::move(verdict.headers));
            co_return;
        }
        if (verdict.action == RequestVerdict::Action::preflight) {
            Reply r;
            r.status = bhttp::status::no_content;
            r.headers = std::move(verdict.headers);
            co_await res.send(std::move(r));
            co_return;
        }
        const Handler* handler = &verdict.route->handler;
        bhttp::status status = bhttp::status::internal_server_error;
        std::string message;
        Fields headers;
        bool failed = false;
        try {
            co_await (*handler)(req, res);
        } catch (const HttpError& e) {
            failed = true;
            status = e.status();
            message = e.what();
            headers = e.headers();
        } catch (const std::exception& e) {
            failed = true;
            message = fmt::format("Internal Server Error: {}", e.what());
            if (!stopped)  // a handler cancelled by stop() is no error
                spdlog::error("{}: {} {} failed: {}", opt.name, std::string_view(req.method_string()), path, e.what());
        }
        if (stopped) co_return;
        if (!failed && res.started()) co_return;
        if (!failed) message = "Internal Server Error: the handler sent no response";
        if (res.started()) {
            res.set_keep_alive(false);  // a half-written response cannot be repaired: end the connection
            co_return;
        }
        co_await res.send_error(status, message, std::move(headers));
    }

    // What the buffer holds goes to the parser; more is read from the socket when it needs more. Stops when the
    // message is complete, or its head when `head_only`. The same steps as Beast's http::read, without its composed
    // operations (a scheduler pass each) and its per-operation timers.
    static awaitable<beast::error_code> read_parsed(ServerConnection& c,
                                                    bhttp::request_parser<bhttp::string_body>& parser, bool head_only) {
        for (;;) {
            if (c.buffer.size() > 0) {
                beast::error_code ec;
                const auto used = parser.put(c.buffer.data(), ec);
                c.buffer.consume(used);
                if (ec && ec != bhttp::error::need_more) co_return ec;
                if (parser.is_done() || (head_only && parser.is_header_done())) co_return beast::error_code{};
                if (!ec && used > 0) continue;
            }
            auto [ec, n] = co_await c.socket.async_read_some(c.buffer.prepare(64 * 1024), as_tuple_awaitable);
            if (ec == asio::error::eof) {
                if (!parser.got_some()) co_return bhttp::error::end_of_stream;
                beast::error_code eof;
                parser.put_eof(eof);
                co_return eof;
            }
            if (ec) co_return ec;
            c.buffer.commit(n);
        }
    }

    // Reads one request under the slow-client limits: on a kept-alive connection the first byte within idle_timeout;
    // the head within header_timeout (of the connection's start, or of that first byte); the body at min_body_rate
    // after header_timeout's grace (a chunked body, of no announced length: within read_timeout); all of it within
    // read_timeout. A client past a limit is closed by the sweep. A plain request already in the buffer (what a
    // kept-alive client sends: the whole request in one write) is read without Beast's parser
    // (detail::read_plain_request); any other is read by `parser`, made then.
    awaitable<beast::error_code> read_request(ServerConnection& conn, ServerRequest& req, std::optional<Parser>& parser,
                                              bool kept_alive) {
        auto began = clock::now();
        if (kept_alive && conn.buffer.size() == 0) {
            conn.deadline = began + opt.idle_timeout;
            auto [ec, n] = co_await conn.socket.async_read_some(conn.buffer.prepare(16 * 1024), as_tuple_awaitable);
            conn.deadline = clock::time_point::max();
            if (ec) co_return ec;
            conn.buffer.commit(n);
            began = clock::now();
        }
        if (conn.buffer.size() > 0) {
            const auto data = conn.buffer.data();
            const std::string_view bytes(static_cast<const char*>(data.data()), data.size());
            if (const auto used = detail::read_plain_request(bytes, opt.max_header_size, opt.max_body_size, req)) {
                conn.buffer.consume(used);
                co_return beast::error_code{};
            }
        }
        parser.emplace();
        parser->eager(true);
        limit_request_parser(*parser, opt);
        auto ec = co_await read_by_parser(conn, *parser, began);
        if (!ec) req = parser->release();
        co_return ec;
    }

    awaitable<beast::error_code> read_by_parser(ServerConnection& conn, Parser& parser, clock::time_point began) {
        conn.deadline = began + std::min(opt.header_timeout, opt.read_timeout);
        auto ec = co_await read_parsed(conn, parser, true);
        if (!ec && !parser.is_done()) {
            auto allowed = std::chrono::duration_cast<std::chrono::milliseconds>(opt.read_timeout);
            if (const auto length = parser.content_length(); length && opt.min_body_rate > 0)
                allowed = std::min(allowed, std::chrono::duration_cast<std::chrono::milliseconds>(opt.header_timeout) +
                                                std::chrono::milliseconds(*length * 1000 / opt.min_body_rate));
            const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - began);
            conn.deadline = clock::now() + std::max(allowed - spent, std::chrono::milliseconds(1));
            ec = co_await read_parsed(conn, parser, false);
        }
        conn.deadline = clock::time_point::max();
        co_return ec;
    }

    // Closes every connection past its deadline (a read or write of the server's own that took too long): one timer
    // for all connections instead of one per operation. It looks a quarter of the shortest limit apart, between
    // 250 ms and 1 s (once a second with the defaults: an idle server is not woken more).
    awaitable<void> sweep() {
        auto self = shared_from_this();  // the server may be dropped while this waits: stop() ends it
        const auto shortest = std::min({opt.header_timeout, opt.idle_timeout, opt.read_timeout, opt.write_timeout});
        const auto period = std::clamp<std::chrono::milliseconds>(shortest / 4, std::chrono::milliseconds(250),
                                                                  std::chrono::seconds(1));
        asio::steady_timer timer(ex);
        while (!stopped) {
            timer.expires_after(period);
            co_await timer.async_wait(as_tuple_awaitable);
            const auto now = clock::now();
            for (auto& w : conns)
                if (auto c = w.lock(); c && c->deadline <= now) {
                    beast::error_code ignored;
                    c->socket.close(ignored);
                }
        }
    }

    awaitable<void> serve(std::shared_ptr<ServerConnection> conn, boost::asio::ip::address peer) {
        core::ScopeExit count_down([this, peer, self = shared_from_this()] {
            --count;
            if (auto it = per_address.find(peer); it != per_address.end() && --it->second == 0) per_address.erase(it);
        });
        for (bool kept_alive = false;; kept_alive = true) {
            ServerRequest req;
            std::optional<Parser> parser;
            auto ec = co_await read_request(*conn, req, parser, kept_alive);
            if (ec) {
                const unsigned version = parser && parser->get().version() ? parser->get().version() : 11;
                Responder res(conn, version, false, opt.write_timeout, opt.error_body);
                if (auto refusal = read_refusal(ec, opt)) co_await res.send_error(refusal->status, refusal->message, {});
                break;
            }
            Responder res(conn, req.version(), req.keep_alive(), opt.write_timeout, opt.error_body);
            const auto began = std::chrono::steady_clock::now();
            const auto body_bytes = req.body().size();  // the handler may move the body out
            co_await dispatch(req, res);
            if (opt.access_log && res.started()) {
                try {
                    opt.access_log(AccessEntry{req, res, path_of(req.target()), std::chrono::steady_clock::now() - began,
                                               body_bytes});
                } catch (const std::exception& e) {
                    spdlog::warn("{}: access log: {}", opt.name, e.what());
                }
            }
            if (!res.reusable() || stopped) break;
        }
        beast::error_code ignored;
        conn->socket.shutdown(tcp::socket::shutdown_send, ignored);
        conn->socket.close(ignored);
    }

    awaitable<void> run() {
        auto self = shared_from_this();
        std::function<std::size_t()> open_count = [this] { return count; };
        std::function<void(tcp::socket)> start = [this](tcp::socket sock) {
            boost::system::error_code ec;
            const auto peer = sock.remote_endpoint(ec).address();
            if (ec) return;  // already gone
            auto& from_peer = per_address[peer];
            if (from_peer >= opt.max_connections_per_address) {
                // Said at most once a second, not once per refused connection.
                const auto now = std::chrono::steady_clock::now();
                if (now - last_refusal_log >= std::chrono::seconds(1)) {
                    last_refusal_log = now;
                    spdlog::warn("{}: {} connections from {}; refusing more from it", opt.name, from_peer,
                                 peer.to_string());
                }
                return;  // the socket closes here
            }
            ++from_peer;
            auto conn = std::make_shared<ServerConnection>(std::move(sock));
            std::erase_if(conns, [](const auto& w) { return w.expired(); });
            conns.push_back(conn);
            ++count;
            connections.spawn(serve(conn, peer), opt.name + " connection");
        };
        connections.spawn(sweep(), opt.name + " sweep");
        co_await accept_loop(acceptor, opt.name, stopped, open_count, opt.max_connections, start);
    }

    void stop() {
        if (stopped) return;
        stopped = true;
        boost::system::error_code ignored;
        acceptor.close(ignored);
        for (auto& w : conns)
            if (auto c = w.lock()) c->socket.close(ignored);
        connections.cancel();
    }
};

Server::Server(asio::any_io_executor ex, Router routes, ServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(ex), std::move(routes), std::move(options))) {}

Server::~Server() { impl_->stop(); }

boost::system::error_code Server::listen() {
    return open_listener(impl_->acceptor, impl_->opt.address, impl_->opt.port);
}

std::uint16_t Server::port() const { return listening_port(impl_->acceptor); }

awaitable<void> Server::run() {
    auto impl = impl_;
    co_await impl->run();
}

void Server::stop() { impl_->stop(); }

void Server::stop_accepting() {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
}

std::size_t Server::connection_count() const { return impl_->count; }

}  // namespace switchboard::http
