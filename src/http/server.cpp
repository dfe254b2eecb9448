#include <switchboard/http/listener.hpp>
#include <switchboard/http/request_gate.hpp>
#include <switchboard/http/server.hpp>

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/core/text.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <map>

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
    sent_ = r.headers;
    bhttp::response<bhttp::string_body> res{r.status, version_};
    res.set(bhttp::field::server, "switchboard");
    if (!r.body.empty()) res.set(bhttp::field::content_type, r.content_type);
    for (auto& [k, v] : extra_) res.set(k, v);
    for (auto& [k, v] : r.headers) res.set(k, v);
    res.body() = std::move(r.body);
    res.keep_alive(keep_alive_ && !r.close);
    res.prepare_payload();
    conn_->stream.expires_after(write_timeout_);
    auto [ec, n] = co_await bhttp::async_write(conn_->stream, res, as_tuple_awaitable);
    conn_->stream.expires_never();
    bytes_sent_ += n;
    keep_alive_ = res.keep_alive();
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
    sent_ = headers;
    bhttp::response<bhttp::empty_body> res{status, version_};
    res.set(bhttp::field::server, "switchboard");
    res.set(bhttp::field::content_type, content_type);
    for (auto& [k, v] : extra_) res.set(k, v);
    for (auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(true);
    res.chunked(true);
    bhttp::response_serializer<bhttp::empty_body> sr{res};
    conn_->stream.expires_after(write_timeout_);
    auto [ec, n] = co_await bhttp::async_write_header(conn_->stream, sr, as_tuple_awaitable);
    conn_->stream.expires_never();
    bytes_sent_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
}

awaitable<bool> Responder::write_chunk(std::string_view a, std::string_view b, std::string_view c) {
    std::array<asio::const_buffer, 3> parts{asio::buffer(a), asio::buffer(b), asio::buffer(c)};
    conn_->stream.expires_after(write_timeout_);
    auto [ec, n] = co_await asio::async_write(conn_->stream, bhttp::make_chunk(parts), as_tuple_awaitable);
    conn_->stream.expires_never();
    bytes_sent_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
}

awaitable<bool> Responder::end_stream() {
    conn_->stream.expires_after(write_timeout_);
    auto [ec, n] = co_await asio::async_write(conn_->stream, bhttp::make_chunk_last(), as_tuple_awaitable);
    conn_->stream.expires_never();
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

    // Reads one request under the slow-client limits: on a kept-alive connection the first byte within idle_timeout;
    // the head within header_timeout (of the connection's start, or of that first byte); the body at min_body_rate
    // after header_timeout's grace (a chunked body, of no announced length: within read_timeout); all of it within
    // read_timeout. A client past a limit is closed (beast's timeout closes the stream).
    awaitable<beast::error_code> read_request(ServerConnection& conn, bhttp::request_parser<bhttp::string_body>& parser,
                                              bool kept_alive) {
        auto& stream = conn.stream;
        auto& buffer = conn.buffer;
        const auto began = std::chrono::steady_clock::now();
        if (kept_alive && buffer.size() == 0) {
            stream.expires_after(opt.idle_timeout);
            auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096), as_tuple_awaitable);
            stream.expires_never();
            if (ec) co_return ec;
            buffer.commit(n);
        }
        stream.expires_after(std::min(opt.header_timeout, opt.read_timeout));
        auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, parser, as_tuple_awaitable);
        if (!ec && !parser.is_done()) {
            auto allowed = std::chrono::duration_cast<std::chrono::milliseconds>(opt.read_timeout);
            if (const auto length = parser.content_length(); length && opt.min_body_rate > 0)
                allowed = std::min(allowed, std::chrono::duration_cast<std::chrono::milliseconds>(opt.header_timeout) +
                                                std::chrono::milliseconds(*length * 1000 / opt.min_body_rate));
            const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                                     began);
            stream.expires_after(std::max(allowed - spent, std::chrono::milliseconds(1)));
            auto [body_ec, body_n] = co_await bhttp::async_read(stream, buffer, parser, as_tuple_awaitable);
            ec = body_ec;
        }
        stream.expires_never();
        co_return ec;
    }

    awaitable<void> serve(std::shared_ptr<ServerConnection> conn, boost::asio::ip::address peer) {
        auto& stream = conn->stream;
        core::ScopeExit count_down([this, peer, self = shared_from_this()] {
            --count;
            if (auto it = per_address.find(peer); it != per_address.end() && --it->second == 0) per_address.erase(it);
        });
        for (bool kept_alive = false;; kept_alive = true) {
            bhttp::request_parser<bhttp::string_body> parser;
            limit_request_parser(parser, opt);
            auto ec = co_await read_request(*conn, parser, kept_alive);
            if (ec) {
                Responder res(conn, parser.get().version() ? parser.get().version() : 11, false, opt.write_timeout,
                              opt.error_body);
                if (auto refusal = read_refusal(ec, opt)) co_await res.send_error(refusal->status, refusal->message, {});
                break;
            }
            ServerRequest req = parser.release();
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
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        stream.close();
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
        co_await accept_loop(acceptor, opt.name, stopped, open_count, opt.max_connections, start);
    }

    void stop() {
        if (stopped) return;
        stopped = true;
        boost::system::error_code ignored;
        acceptor.close(ignored);
        for (auto& w : conns)
            if (auto c = w.lock()) c->stream.socket().close(ignored);
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
