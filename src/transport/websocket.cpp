#include <switchboard/transport/websocket.hpp>

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/http/listener.hpp>
#include <switchboard/http/origin.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/url/parse.hpp>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "byte_stream.hpp"

#ifndef SWITCHBOARD_VERSION
#define SWITCHBOARD_VERSION "0.0.0"
#endif

namespace switchboard::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace ssl = asio::ssl;
using asio::awaitable;
using jsonrpc::Received;
using tcp = asio::ip::tcp;

namespace {

using core::as_tuple_awaitable;

// Plain or TLS, one WebSocket type (see byte_stream.hpp).
using Ws = websocket::stream<detail::ByteStream>;

class WebSocketChannel : public jsonrpc::Channel {
public:
    WebSocketChannel(std::unique_ptr<Ws> ws, std::size_t max, std::shared_ptr<ssl::context> tls)
        : ws_(std::move(ws)), max_(max), tls_(std::move(tls)) {
        ws_->read_message_max(max_);
        ws_->text(true);
    }

    awaitable<Received> read() override {
        Received r;
        r.kind = Received::Kind::closed;
        if (done_) {
            r.reason = reason_;
            co_return r;
        }
        auto [ec, n] = co_await ws_->async_read(buffer_, as_tuple_awaitable);
        if (!ec) {
            r.kind = Received::Kind::message;
            r.text = beast::buffers_to_string(buffer_.data());
            buffer_.clear();
            if (buffer_.capacity() > 1024 * 1024) buffer_.shrink_to_fit();
            co_return r;
        }
        done_ = true;
        if (ec == websocket::error::message_too_big) {
            reason_ = fmt::format(
                "sent a WebSocket message over the {} message size limit; the connection was closed "
                "(1009 message too big)",
                core::size_text(max_));
        } else if (closing_) {
            reason_ = "connection closed";
        } else if (const auto& cr = ws_->reason(); cr.code != websocket::close_code::none) {
            // The peer's close frame says why, even when tearing down the socket afterwards failed.
            std::string why = cr.code == websocket::close_code::too_big ? "message too big" : "";
            if (!cr.reason.empty()) why += (why.empty() ? "" : ": ") + std::string(cr.reason.c_str());
            reason_ = why.empty() ? fmt::format("closed the WebSocket connection (code {})", cr.code)
                                  : fmt::format("closed the WebSocket connection (code {}, {})", cr.code, why);
        } else {
            reason_ = "WebSocket connection lost: " + ec.message();
        }
        r.reason = reason_;
        co_return r;
    }

    awaitable<boost::system::error_code> write(std::string message) override {
        if (message.size() > max_) co_return asio::error::message_size;
        auto [ec, n] = co_await ws_->async_write(asio::buffer(message), as_tuple_awaitable);
        co_return ec;
    }

    awaitable<void> close() override {
        if (closing_) co_return;
        closing_ = true;
        if (ws_->is_open()) {
            websocket::stream_base::timeout t{};
            ws_->get_option(t);
            t.handshake_timeout = std::chrono::seconds(3);  // also bounds the close handshake
            ws_->set_option(t);
            auto [ec] = co_await ws_->async_close(websocket::close_code::normal, as_tuple_awaitable);
            if (ec) spdlog::debug("websocket: close: {}", ec.message());
        }
        abort();
    }

    /// Drops the connection at once (server stop).
    void abort() {
        beast::error_code ignored;
        ws_->next_layer().tcp().socket().close(ignored);
    }

    std::size_t max_message_size() const override { return max_; }

private:
    std::unique_ptr<Ws> ws_;
    std::size_t max_;
    std::shared_ptr<ssl::context> tls_;  // outlives the stream that uses it
    beast::flat_buffer buffer_;
    bool done_ = false, closing_ = false;
    std::string reason_;
};

jsonrpc::Error transport_error(std::string message) {
    return jsonrpc::Error::make_local(jsonrpc::code::transport_error, std::move(message));
}

std::string tls_failure(ssl::stream<beast::tcp_stream>& s, const boost::system::error_code& ec) {
    std::string what = ec.message();
    const long verify = SSL_get_verify_result(s.native_handle());
    if (verify != X509_V_OK) what += fmt::format(" ({})", X509_verify_cert_error_string(verify));
    return what;
}

void set_client_options(Ws& ws, const WebSocketClientOptions& options, std::chrono::milliseconds handshake,
                        switchboard::http::Fields credential) {
    websocket::stream_base::timeout t = websocket::stream_base::timeout::suggested(beast::role_type::client);
    t.handshake_timeout = std::max<std::chrono::milliseconds>(handshake, std::chrono::milliseconds(1));
    ws.set_option(t);
    auto headers = options.headers;
    ws.set_option(websocket::stream_base::decorator([headers, credential](websocket::request_type& req) {
        req.set(http::field::user_agent, std::string("switchboard/") + SWITCHBOARD_VERSION);
        req.set(http::field::sec_websocket_protocol, "mcp");
        for (const auto& [k, v] : headers) req.set(k, v);
        for (const auto& [k, v] : credential) req.set(k, v);  // Authorization (and a DPoP proof)
    }));
}

// After TCP (and TLS): the WebSocket upgrade. Returns an error message, empty on success.
awaitable<std::string> ws_handshake(Ws& ws, std::string host, std::string target, websocket::response_type& res) {
    auto [ec] = co_await ws.async_handshake(res, host, target, as_tuple_awaitable);
    if (ec == websocket::error::upgrade_declined || (ec && res.result_int() != 0 && res.result_int() != 101))
        co_return fmt::format("WebSocket handshake rejected: HTTP {} {}", res.result_int(), std::string(res.reason()));
    if (ec) co_return "WebSocket handshake failed: " + ec.message();
    auto proto = res[http::field::sec_websocket_protocol];
    if (proto != "mcp")
        spdlog::debug("websocket: the server did not select the mcp subprotocol ({})",
                      proto.empty() ? "none" : std::string(proto));
    co_return std::string();
}

}  // namespace

/// One connect attempt. `rejected` receives the upgrade's response when the server declined it.
static awaitable<jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>> connect_websocket_once(
    asio::any_io_executor ex, std::string url, WebSocketClientOptions options, switchboard::http::Fields credential,
    websocket::response_type& rejected) {
    using Result = jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>;
    auto u = boost::urls::parse_uri(url);
    if (!u) co_return Result(transport_error("invalid URL: " + url));
    const bool tls = u->scheme() == "wss";
    if (!tls && u->scheme() != "ws") co_return Result(transport_error("not a ws:// or wss:// URL: " + url));
    const std::string host = u->host_address();
    if (host.empty()) co_return Result(transport_error("no host in URL: " + url));
    const std::string port = u->has_port() ? std::string(u->port()) : std::string(tls ? "443" : "80");
    std::string target = u->encoded_path().empty() ? std::string("/") : std::string(u->encoded_path());
    if (u->has_query()) target += "?" + std::string(u->encoded_query());
    const std::string host_header = std::string(u->encoded_host_and_port());
    const auto deadline = std::chrono::steady_clock::now() + options.connect_timeout;
    auto remaining = [&] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    };
    const std::string where = fmt::format("{}:{}", host, port);

    // Resolve, bounded by the connect timeout (the resolver has no timeout of its own).
    auto resolver = std::make_shared<tcp::resolver>(ex);
    auto guard = std::make_shared<asio::steady_timer>(ex, deadline);
    guard->async_wait([resolver](boost::system::error_code ec) {
        if (!ec) resolver->cancel();
    });
    auto [rec, endpoints] = co_await resolver->async_resolve(host, port, as_tuple_awaitable);
    guard->cancel();
    if (rec == asio::error::operation_aborted)
        co_return Result(transport_error(
            fmt::format("cannot resolve {}: timed out after {} ms", host, options.connect_timeout.count())));
    if (rec) co_return Result(transport_error(fmt::format("cannot resolve {}: {}", host, rec.message())));

    if (!tls) {
        beast::tcp_stream tcp_layer(ex);
        tcp_layer.expires_after(remaining());
        auto [cec, ep] = co_await tcp_layer.async_connect(endpoints, as_tuple_awaitable);
        if (cec) co_return Result(transport_error(fmt::format("cannot connect to {}: {}", where, cec.message())));
        tcp_layer.socket().set_option(tcp::no_delay(true));
        tcp_layer.expires_never();
        auto ws = std::make_unique<Ws>(detail::ByteStream(std::move(tcp_layer)));
        set_client_options(*ws, options, remaining(), credential);
        auto failure = co_await ws_handshake(*ws, host_header, target, rejected);
        if (!failure.empty()) co_return Result(transport_error(fmt::format("{}: {}", url, failure)));
        co_return Result(std::make_shared<WebSocketChannel>(std::move(ws), options.max_message_size, nullptr));
    }

    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    boost::system::error_code cec;
    ctx->set_default_verify_paths(cec);
    if (cec) spdlog::warn("websocket: cannot load the system CA store: {}", cec.message());
    if (!options.ca_file.empty()) {
        ctx->load_verify_file(options.ca_file, cec);
        if (cec)
            co_return Result(
                transport_error(fmt::format("cannot load CA file {}: {}", options.ca_file, cec.message())));
    }
    ctx->set_verify_mode(ssl::verify_peer);
    ssl::stream<beast::tcp_stream> tls_layer(ex, *ctx);
    boost::system::error_code addr_ec;
    asio::ip::make_address(host, addr_ec);
    if (addr_ec) SSL_set_tlsext_host_name(tls_layer.native_handle(), host.c_str());  // SNI for names only
    // OpenSSL checks the name itself too, so that a mismatch is reported as "hostname mismatch", not "unspecified".
    auto* param = SSL_get0_param(tls_layer.native_handle());
    if (addr_ec)
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    else
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
    tls_layer.set_verify_callback(ssl::host_name_verification(host));
    auto& tcp_layer = tls_layer.next_layer();
    tcp_layer.expires_after(remaining());
    auto [connect_ec, ep] = co_await tcp_layer.async_connect(endpoints, as_tuple_awaitable);
    if (connect_ec)
        co_return Result(transport_error(fmt::format("cannot connect to {}: {}", where, connect_ec.message())));
    tcp_layer.socket().set_option(tcp::no_delay(true));
    auto [hec] = co_await tls_layer.async_handshake(ssl::stream_base::client, as_tuple_awaitable);
    if (hec)
        co_return Result(
            transport_error(fmt::format("TLS handshake with {} failed: {}", where, tls_failure(tls_layer, hec))));
    tcp_layer.expires_never();
    auto ws = std::make_unique<Ws>(detail::ByteStream(std::move(tls_layer)));
    set_client_options(*ws, options, remaining(), credential);
    auto failure = co_await ws_handshake(*ws, host_header, target, rejected);
    if (!failure.empty()) co_return Result(transport_error(fmt::format("{}: {}", url, failure)));
    co_return Result(std::make_shared<WebSocketChannel>(std::move(ws), options.max_message_size, ctx));
}

awaitable<jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>> connect_websocket_channel(
    asio::any_io_executor ex, std::string url, WebSocketClientOptions options) {
    auto authorizer = options.authorizer;
    // The authorizer knows HTTP URLs: ws(s)://h/p is authorized as http(s)://h/p (its resource).
    std::optional<switchboard::http::Url> http_url;
    if (authorizer) {
        std::string error, text = url;
        if (text.rfind("ws", 0) == 0) text.replace(0, 2, "http");
        http_url = switchboard::http::parse_url(text, error);
    }
    for (int attempt = 1;; ++attempt) {
        switchboard::http::Fields credential;
        if (http_url) credential = co_await authorizer->authorization(http::verb::get, *http_url);
        websocket::response_type rejected;
        auto r = co_await connect_websocket_once(ex, url, options, credential, rejected);
        const unsigned status = rejected.result_int();
        if (r || !http_url || attempt >= 3 || (status != 401 && status != 403)) co_return r;
        auto challenge = rejected[http::field::www_authenticate];
        if (status == 403 && challenge.find("insufficient_scope") == beast::string_view::npos) co_return r;
        switchboard::http::Fields fields;
        for (const auto& f : rejected) fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
        const bool again = co_await authorizer->challenged(*http_url, status, fields, credential);
        if (!again) co_return r;
    }
}

struct WebSocketServer::Impl : std::enable_shared_from_this<WebSocketServer::Impl> {
    Impl(asio::any_io_executor e, SessionHandler h, WebSocketServerOptions o)
        : ex(e), handler(std::move(h)), opt(std::move(o)), acceptor(e) {}

    asio::any_io_executor ex;
    SessionHandler handler;
    WebSocketServerOptions opt;
    tcp::acceptor acceptor;
    std::vector<std::weak_ptr<WebSocketChannel>> channels;
    std::vector<std::weak_ptr<beast::tcp_stream>> upgrading;
    std::size_t count = 0;
    bool stopped = false;
    std::shared_ptr<ssl::context> tls;  // set when serving wss

    awaitable<void> refuse(detail::ByteStream& stream, unsigned version, http::status status, std::string text) {
        http::response<http::string_body> res{status, version};
        res.set(http::field::server, "switchboard");
        res.set(http::field::content_type, "text/plain");
        res.body() = std::move(text);
        res.keep_alive(false);
        res.prepare_payload();
        stream.tcp().expires_after(std::chrono::seconds(10));
        co_await http::async_write(stream, res, as_tuple_awaitable);
    }

    awaitable<void> serve_conn(std::shared_ptr<beast::tcp_stream> stream) {
        if (!tls) {
            detail::ByteStream plain(std::move(*stream));
            co_await upgrade(std::move(plain));
            co_return;
        }
        ssl::stream<beast::tcp_stream> secure(std::move(*stream), *tls);
        beast::get_lowest_layer(secure).expires_after(std::chrono::seconds(30));
        auto [ec] = co_await secure.async_handshake(ssl::stream_base::server, as_tuple_awaitable);
        if (ec) {
            spdlog::debug("websocket: TLS handshake failed: {}", ec.message());
            co_return;
        }
        detail::ByteStream bytes(std::move(secure));
        co_await upgrade(std::move(bytes));
    }

    // Reads the HTTP upgrade request on `next` (plain TCP or TLS), checks it, and runs the session.
    awaitable<void> upgrade(detail::ByteStream next) {
        beast::flat_buffer buffer;
        http::request_parser<http::string_body> parser;
        parser.header_limit(64 * 1024);
        parser.body_limit(64 * 1024);
        next.tcp().expires_after(std::chrono::seconds(30));
        auto [ec, n] = co_await http::async_read(next, buffer, parser, as_tuple_awaitable);
        if (ec) co_return;
        auto req = parser.release();
        if (!websocket::is_upgrade(req)) {
            co_await refuse(next, req.version(), http::status::upgrade_required,
                            "This is an MCP WebSocket endpoint: connect with a WebSocket client (subprotocol mcp).\n");
            co_return;
        }
        if (auto origin = req.find(http::field::origin);
            origin != req.end() && !switchboard::http::origin_allowed(origin->value(), opt.allowed_origins)) {
            co_await refuse(next, req.version(), http::status::forbidden,
                            fmt::format("Forbidden: origin {} is not allowed\n", std::string_view(origin->value())));
            co_return;
        }
        bool offered_mcp = false;
        {
            std::string_view offered = req[http::field::sec_websocket_protocol];
            for (std::size_t pos = 0; pos <= offered.size();) {
                auto comma = offered.find(',', pos);
                auto token =
                    offered.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
                while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
                while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
                if (token == "mcp") offered_mcp = true;
                if (comma == std::string_view::npos) break;
                pos = comma + 1;
            }
        }
        next.tcp().expires_never();
        auto ws = std::make_unique<Ws>(std::move(next));
        ws->set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
        ws->set_option(websocket::stream_base::decorator([offered_mcp](websocket::response_type& res) {
            res.set(http::field::server, "switchboard");
            if (offered_mcp) res.set(http::field::sec_websocket_protocol, "mcp");
        }));
        ws->read_message_max(opt.max_message_size);
        auto [aec] = co_await ws->async_accept(req, as_tuple_awaitable);
        if (aec) {
            spdlog::debug("websocket: handshake failed: {}", aec.message());
            co_return;
        }
        auto channel = std::make_shared<WebSocketChannel>(std::move(ws), opt.max_message_size, tls);
        std::erase_if(channels, [](const auto& w) { return w.expired(); });
        channels.push_back(channel);
        if (stopped) co_return;
        co_await handler(channel);
        co_await channel->close();
    }

    awaitable<void> run() {
        auto self = shared_from_this();
        std::function<std::size_t()> open_count = [this] { return count; };
        std::function<void(tcp::socket)> start = [this, self](tcp::socket sock) {
            auto stream = std::make_shared<beast::tcp_stream>(std::move(sock));
            std::erase_if(upgrading, [](const auto& w) { return w.expired(); });
            upgrading.push_back(stream);
            ++count;
            // Not a TaskGroup: stop() closes the sockets and channels, and each session still ends its own way.
            asio::co_spawn(ex, serve_conn(stream), [self](std::exception_ptr e) {
                --self->count;
                core::log_exception(e, "websocket: connection");
            });
        };
        const std::string name = "websocket";
        co_await switchboard::http::accept_loop(acceptor, name, stopped, open_count, opt.max_connections, start);
    }

    void stop() {
        if (stopped) return;
        stopped = true;
        boost::system::error_code ignored;
        acceptor.close(ignored);
        for (auto& w : upgrading)
            if (auto s = w.lock()) s->socket().close(ignored);
        for (auto& w : channels)
            if (auto c = w.lock()) c->abort();
    }
};

WebSocketServer::WebSocketServer(asio::any_io_executor ex, SessionHandler handler, WebSocketServerOptions options)
    : impl_(std::make_shared<Impl>(ex, std::move(handler), std::move(options))) {}

WebSocketServer::~WebSocketServer() { impl_->stop(); }

boost::system::error_code WebSocketServer::listen() {
    boost::system::error_code ec;
    const auto& o = impl_->opt;
    if (!o.tls_cert_file.empty() || !o.tls_key_file.empty()) {
        auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
        if (ctx->use_certificate_chain_file(o.tls_cert_file, ec)) return ec;
        if (ctx->use_private_key_file(o.tls_key_file, ssl::context::pem, ec)) return ec;
        impl_->tls = std::move(ctx);
    }
    return switchboard::http::open_listener(impl_->acceptor, impl_->opt.address, impl_->opt.port);
}

std::uint16_t WebSocketServer::port() const { return switchboard::http::listening_port(impl_->acceptor); }

std::string WebSocketServer::url() const {
    return fmt::format("{}://{}:{}/", impl_->tls ? "wss" : "ws", switchboard::http::url_host(impl_->opt.address),
                       port());
}

awaitable<void> WebSocketServer::run() {
    auto impl = impl_;
    co_await impl->run();
}

void WebSocketServer::stop() { impl_->stop(); }

}  // namespace switchboard::transport
