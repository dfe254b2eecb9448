#include <switchboard/host/egress_proxy.hpp>

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/http/listener.hpp>
#include <switchboard/http/url.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <deque>
#include <filesystem>

namespace switchboard::host {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::awaitable;
using asio::ip::tcp;
using core::as_tuple_awaitable;

struct EgressProxy::State {
    explicit State(asio::any_io_executor e) : ex(e), tcp_acceptor(e), unix_acceptor(e), tasks(e) {}
    asio::any_io_executor ex;
    std::string server;
    EgressPolicy policy;
    std::string unix_path;
    bool owns_file = false;  // the socket file is ours to remove
    unsigned short port = 0;
    tcp::acceptor tcp_acceptor;
    asio::local::stream_protocol::acceptor unix_acceptor;
    core::TaskGroup tasks;
    // EgressClient sockets, closed by close() (a Beast read may not heed cancellation alone).
    std::vector<std::weak_ptr<asio::generic::stream_protocol::socket>> clients;
    std::deque<EgressRefusal> refusals;
    std::function<void(const EgressRefusal&)> on_refused;
    std::size_t open = 0;
    bool closed = false;
};

namespace {

using EgressClient = asio::generic::stream_protocol::socket;
using EgressState = EgressProxy::State;

constexpr std::size_t egress_header_limit = 16 * 1024;
constexpr auto egress_header_timeout = std::chrono::seconds(30);
constexpr auto egress_connect_timeout = std::chrono::seconds(10);
constexpr std::size_t egress_max_connections = 256;
constexpr std::size_t egress_refusals_kept = 20;

// Lower case, one trailing dot dropped, an IP literal in its canonical form; empty when not a plausible host
// (anything but letters, digits, '-', '.', '_' and ':' is refused, so a name is safe to log).
std::string egress_host(std::string_view raw) {
    std::string h = core::ascii_lower(raw);
    if (!h.empty() && h.back() == '.') h.pop_back();
    if (h.empty()) return {};
    for (char c : h)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_' && c != ':') return {};
    boost::system::error_code ec;
    const auto a = asio::ip::make_address(h, ec);
    if (!ec) return a.to_string();
    return h.find(':') == std::string::npos ? h : std::string();
}

bool egress_is_ip(std::string_view host) {
    boost::system::error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

std::string egress_target(const std::string& host, const std::string& port) {
    return fmt::format("{}:{}", http::url_host(host), port);
}

bool egress_valid_port(std::string_view p) {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), n);
    return ec == std::errc() && end == p.data() + p.size() && n > 0 && n <= 65535;
}

// A whole answer with a one-line text body; the connection ends after it.
awaitable<void> egress_answer(EgressClient& c, unsigned status, std::string_view phrase, std::string_view text) {
    const std::string body = fmt::format("switchboard: {}\n", text);
    const std::string msg = fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: "
        "close\r\n\r\n{}",
        status, phrase, body.size(), body);
    co_await asio::async_write(c, asio::buffer(msg), as_tuple_awaitable);
}

awaitable<void> egress_refuse(std::shared_ptr<EgressState> s, EgressClient& c, std::string target, std::string reason) {
    spdlog::warn("egress proxy of server \"{}\": refused {}: {}", s->server, target, reason);
    EgressRefusal r{std::move(target), reason, std::chrono::system_clock::now()};
    s->refusals.push_back(r);
    if (s->refusals.size() > egress_refusals_kept) s->refusals.pop_front();
    if (s->on_refused) {
        try {
            s->on_refused(r);
        } catch (const std::exception& e) {
            spdlog::warn("egress proxy of server \"{}\": on_refused: {}", s->server, e.what());
        }
    }
    co_await egress_answer(c, 403, "Forbidden", reason);
}

// Judges the name, resolves it, judges every address and connects to one that passed. False when it could not: the
// client has had its answer (403, 502 or 504).
awaitable<bool> egress_connect(std::shared_ptr<EgressState> s, EgressClient& client, std::string host, std::string port,
                               beast::tcp_stream& upstream) {
    const auto target = egress_target(host, port);
    if (auto why = egress_name_refusal(s->policy, s->server, host); !why.empty()) {
        co_await egress_refuse(s, client, target, std::move(why));
        co_return false;
    }
    std::vector<tcp::endpoint> candidates;
    if (egress_is_ip(host)) {
        candidates.emplace_back(asio::ip::make_address(host), static_cast<unsigned short>(std::stoi(port)));
    } else {
        auto resolver = std::make_shared<tcp::resolver>(s->ex);
        asio::steady_timer timer(s->ex, egress_connect_timeout);
        timer.async_wait([resolver](boost::system::error_code ec) {
            if (!ec) resolver->cancel();
        });
        auto [rec, results] = co_await resolver->async_resolve(host, port, as_tuple_awaitable);
        timer.cancel();
        if (rec) {
            const auto text = fmt::format("cannot resolve {}: {}", host, rec.message());
            co_await egress_answer(client, 502, "Bad Gateway", text);
            co_return false;
        }
        for (const auto& e : results) candidates.push_back(e.endpoint());
    }
    // Only addresses that pass are connected to: the very addresses checked.
    std::vector<tcp::endpoint> allowed;
    std::vector<std::string> refused;
    for (const auto& ep : candidates) {
        auto why = s->policy.addresses.check(ep.address());
        if (why.empty())
            allowed.push_back(ep);
        else if (std::find(refused.begin(), refused.end(), why) == refused.end())
            refused.push_back(std::move(why));
    }
    if (allowed.empty()) {
        auto why = fmt::format("\"{}\" has no address server \"{}\" may reach ({})", host, s->server,
                               fmt::join(refused, "; "));
        co_await egress_refuse(s, client, target, std::move(why));
        co_return false;
    }
    upstream.expires_after(egress_connect_timeout);
    auto [cec, ep] = co_await upstream.async_connect(allowed, as_tuple_awaitable);
    upstream.expires_never();
    if (cec) {
        const bool timed_out = cec == beast::error::timeout;
        const unsigned status = timed_out ? 504 : 502;
        const std::string_view phrase = timed_out ? "Gateway Timeout" : "Bad Gateway";
        const auto text = fmt::format("cannot connect to {}: {}", target, cec.message());
        co_await egress_answer(client, status, phrase, text);
        co_return false;
    }
    co_return true;
}

// Copies bytes one way. End of stream is passed on as a half-close; an error ends both ways.
template <class From, class To>
awaitable<void> egress_pump(From& from, To& to) {
    std::array<char, 16 * 1024> buf;
    boost::system::error_code ignored;
    for (;;) {
        auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), as_tuple_awaitable);
        if (n > 0) {
            auto [wec, wn] = co_await asio::async_write(to, asio::buffer(buf.data(), n), as_tuple_awaitable);
            if (wec) break;
        }
        if (ec == asio::error::eof) {
            to.shutdown(asio::socket_base::shutdown_send, ignored);
            co_return;
        }
        if (ec) break;
    }
    from.close(ignored);
    to.close(ignored);
}

awaitable<void> egress_tunnel(std::shared_ptr<EgressState> s, EgressClient& client, beast::flat_buffer& buffer,
                              std::string_view authority) {
    // "host:port" or "[v6]:port"; the port is required.
    std::string_view host, port;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close != std::string_view::npos && close + 1 < authority.size() && authority[close + 1] == ':') {
            host = authority.substr(1, close - 1);
            port = authority.substr(close + 2);
        }
    } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    const auto name = egress_host(host);
    if (name.empty() || !egress_valid_port(port)) {
        co_await egress_answer(client, 400, "Bad Request", "CONNECT needs host:port");
        co_return;
    }
    beast::tcp_stream upstream(s->ex);
    const bool connected = co_await egress_connect(s, client, name, std::string(port), upstream);
    if (!connected) co_return;
    spdlog::debug("egress proxy of server \"{}\": tunnel to {}", s->server, egress_target(name, std::string(port)));
    const std::string_view established = "HTTP/1.1 200 Connection Established\r\n\r\n";
    auto [wec, wn] = co_await asio::async_write(client, asio::buffer(established), as_tuple_awaitable);
    if (wec) co_return;
    auto& up = upstream.socket();
    if (buffer.size() > 0) {  // bytes the client sent right behind its CONNECT
        auto [ec, n] = co_await asio::async_write(up, buffer.data(), as_tuple_awaitable);
        if (ec) co_return;
        buffer.consume(n);
    }
    using namespace asio::experimental::awaitable_operators;
    co_await (egress_pump(client, up) && egress_pump(up, client));
}

// Hop-by-hop fields (RFC 9110 §7.6.1): Connection, the names it lists, Keep-Alive, TE, Upgrade and every Proxy-*.
void egress_strip_hop_by_hop(bhttp::fields& f) {
    std::vector<std::string> names{"connection", "keep-alive", "te", "upgrade"};
    for (const auto& field : f) {
        const auto name = core::ascii_lower(std::string_view(field.name_string()));
        if (name.rfind("proxy-", 0) == 0) names.push_back(name);
        if (name != "connection") continue;
        std::string_view v = field.value();
        while (!v.empty()) {
            const auto comma = v.find(',');
            auto token = v.substr(0, comma);
            v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
            while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
            while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
            if (!token.empty()) names.push_back(core::ascii_lower(token));
        }
    }
    for (const auto& n : names) f.erase(n);
    f.set(bhttp::field::connection, "close");
}

// Streams the message whose head `p` has read from `in` to `out`, body and all (Beast's relay pattern: the
// serializer re-frames a chunked body).
template <bool isRequest, class Out, class In>
awaitable<beast::error_code> egress_relay(Out& out, In& in, beast::flat_buffer& buffer,
                                          bhttp::parser<isRequest, bhttp::buffer_body>& p) {
    std::array<char, 16 * 1024> buf;
    bhttp::serializer<isRequest, bhttp::buffer_body> sr{p.get()};
    do {
        if (!p.is_done()) {
            p.get().body().data = buf.data();
            p.get().body().size = buf.size();
            auto [ec, n] = co_await bhttp::async_read(in, buffer, p, as_tuple_awaitable);
            if (ec && ec != bhttp::error::need_buffer) co_return ec;
            p.get().body().size = buf.size() - p.get().body().size;
            p.get().body().data = buf.data();
            p.get().body().more = !p.is_done();
        } else {
            p.get().body().data = nullptr;
            p.get().body().size = 0;
            p.get().body().more = false;
        }
        auto [wec, wn] = co_await bhttp::async_write(out, sr, as_tuple_awaitable);
        if (wec && wec != bhttp::error::need_buffer) co_return wec;
    } while (!p.is_done() && !sr.is_done());
    co_return beast::error_code{};
}

awaitable<void> egress_forward(std::shared_ptr<EgressState> s, EgressClient& client, beast::flat_buffer& buffer,
                               bhttp::request_parser<bhttp::buffer_body>& parser) {
    auto& req = parser.get();
    std::string error;
    auto url = http::parse_url(std::string_view(req.target()), error);
    if (!url || url->tls) {
        co_await egress_answer(client, 400, "Bad Request",
                               "a proxied request needs an absolute http:// URL (https goes through CONNECT)");
        co_return;
    }
    const auto host = egress_host(url->host);
    if (host.empty()) {
        co_await egress_answer(client, 400, "Bad Request", "the URL's host is not valid");
        co_return;
    }
    beast::tcp_stream upstream(s->ex);
    const bool connected = co_await egress_connect(s, client, host, url->port, upstream);
    if (!connected) co_return;
    spdlog::debug("egress proxy of server \"{}\": {} to {}", s->server, std::string_view(req.method_string()),
                  egress_target(host, url->port));
    req.target(url->target);
    egress_strip_hop_by_hop(req);
    req.set(bhttp::field::host, url->host_header());
    req.erase(bhttp::field::expect);  // the body is read from the client before the answer anyway
    if (auto ec = co_await egress_relay(upstream, client, buffer, parser); ec) co_return;

    beast::flat_buffer upstream_buffer;
    std::optional<bhttp::response_parser<bhttp::buffer_body>> rp;
    for (;;) {  // interim (1xx) answers are dropped: the client asked for no upgrade and no 100-continue here
        rp.emplace();
        rp->body_limit(boost::none);
        if (req.method() == bhttp::verb::head) rp->skip(true);
        auto [ec, n] = co_await bhttp::async_read_header(upstream, upstream_buffer, *rp, as_tuple_awaitable);
        if (ec) {
            const auto text = fmt::format("no valid answer from {}: {}", egress_target(host, url->port), ec.message());
            co_await egress_answer(client, 502, "Bad Gateway", text);
            co_return;
        }
        if (rp->get().result_int() / 100 != 1) break;
    }
    egress_strip_hop_by_hop(rp->get());
    co_await egress_relay(client, upstream, upstream_buffer, *rp);
}

awaitable<void> egress_serve(std::shared_ptr<EgressState> s, std::shared_ptr<EgressClient> client) {
    ++s->open;
    core::ScopeExit count_down([s] { --s->open; });
    beast::flat_buffer buffer;
    bhttp::request_parser<bhttp::buffer_body> parser;
    parser.header_limit(egress_header_limit);
    parser.body_limit(boost::none);  // streamed, never held whole
    asio::steady_timer deadline(s->ex, egress_header_timeout);
    deadline.async_wait([client](boost::system::error_code ec) {
        boost::system::error_code ignored;
        if (!ec) client->close(ignored);  // a slow head: the connection ends, unanswered
    });
    auto [ec, n] = co_await bhttp::async_read_header(*client, buffer, parser, as_tuple_awaitable);
    deadline.cancel();
    if (ec == bhttp::error::header_limit) {
        co_await egress_answer(*client, 400, "Bad Request", "the request head is over 16 KiB");
    } else if (ec && ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category() &&
               ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
        const auto text = fmt::format("not an HTTP request ({})", ec.message());
        co_await egress_answer(*client, 400, "Bad Request", text);
    } else if (!ec && parser.get().method() == bhttp::verb::connect) {
        co_await egress_tunnel(s, *client, buffer, std::string_view(parser.get().target()));
    } else if (!ec) {
        co_await egress_forward(s, *client, buffer, parser);
    }
    // Our side is done; bytes the client sent that were never read (a refused request's body) would turn a plain
    // close into a reset that can lose the answer, so they are drained for up to a second first.
    boost::system::error_code ignored;
    client->shutdown(asio::socket_base::shutdown_send, ignored);
    asio::steady_timer linger(s->ex, std::chrono::seconds(1));
    linger.async_wait([client](boost::system::error_code ec) {
        boost::system::error_code ignored;
        if (!ec) client->close(ignored);
    });
    std::array<char, 4096> sink;
    for (;;) {
        auto [rec, rn] = co_await client->async_read_some(asio::buffer(sink), as_tuple_awaitable);
        if (rec) break;
    }
    linger.cancel();
    client->close(ignored);
}

template <class Acceptor>
awaitable<void> egress_accept(std::shared_ptr<EgressState> s, Acceptor& acceptor) {
    while (!s->closed) {
        auto client = std::make_shared<EgressClient>(s->ex);
        auto [ec] = co_await acceptor.async_accept(*client, as_tuple_awaitable);
        if (s->closed) break;
        if (ec) {
            if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor) break;
            spdlog::warn("egress proxy of server \"{}\": accept failed: {}", s->server, ec.message());
            asio::steady_timer pause(s->ex, std::chrono::milliseconds(100));
            co_await pause.async_wait(as_tuple_awaitable);
            continue;
        }
        if (s->open >= egress_max_connections) {
            spdlog::warn("egress proxy of server \"{}\": over {} connections; refusing one", s->server,
                         egress_max_connections);
            continue;
        }
        std::erase_if(s->clients, [](const auto& w) { return w.expired(); });
        s->clients.push_back(client);
        s->tasks.spawn(egress_serve(s, std::move(client)), "egress proxy connection");
    }
}

}  // namespace

bool egress_domain_matches(std::string_view pattern, std::string_view host) {
    auto p = core::ascii_lower(pattern);
    if (!p.empty() && p.back() == '.') p.pop_back();
    if (p == "*") return true;
    if (egress_is_ip(host)) {  // an IP literal only as itself, never through "*.something"
        boost::system::error_code ec;
        const auto a = asio::ip::make_address(p, ec);
        return !ec && a == asio::ip::make_address(host);
    }
    if (p.rfind("*.", 0) == 0) {
        const std::string_view suffix = std::string_view(p).substr(1);  // ".example.com"
        return host.size() > suffix.size() && host.substr(host.size() - suffix.size()) == suffix;
    }
    return p == host;
}

std::string egress_name_refusal(const EgressPolicy& policy, std::string_view server, std::string_view host) {
    for (const auto& d : policy.denied_domains)
        if (egress_domain_matches(d, host))
            return fmt::format("\"{}\" is in server \"{}\"'s deniedDomains", host, server);
    for (const auto& a : policy.allowed_domains)
        if (egress_domain_matches(a, host)) return {};
    return fmt::format("\"{}\" is not in server \"{}\"'s allowedDomains", host, server);
}

jsonrpc::Outcome<std::shared_ptr<EgressProxy>> EgressProxy::open(asio::any_io_executor ex, std::string server_name,
                                                                 EgressPolicy policy, std::string unix_path,
                                                                 bool tcp_loopback) {
    auto s = std::make_shared<State>(ex);
    s->server = std::move(server_name);
    s->policy = std::move(policy);
    s->unix_path = std::move(unix_path);
    auto proxy = std::shared_ptr<EgressProxy>(new EgressProxy(s));  // its destructor undoes a half-done open
    const auto fail = [&](std::string why) {
        return jsonrpc::Error::make_local(jsonrpc::code::transport_error,
                                          fmt::format("egress proxy of server \"{}\": {}", s->server, why));
    };
    if (s->unix_path.empty() && !tcp_loopback) return fail("nothing to listen on");
    if (!s->unix_path.empty()) {
        std::error_code fec;
        const auto st = std::filesystem::symlink_status(s->unix_path, fec);
        if (std::filesystem::is_socket(st))
            std::filesystem::remove(s->unix_path, fec);  // a stale socket of an earlier run
        else if (std::filesystem::exists(st))
            return fail(fmt::format("{} exists and is not a socket", s->unix_path));
        boost::system::error_code ec;
        try {
            const asio::local::stream_protocol::endpoint ep(s->unix_path);
            if (!s->unix_acceptor.open(ep.protocol(), ec) && !s->unix_acceptor.bind(ep, ec)) {
                s->owns_file = true;
                ::chmod(s->unix_path.c_str(), 0600);  // the server's user only
                s->unix_acceptor.listen(asio::socket_base::max_listen_connections, ec);
            }
        } catch (const boost::system::system_error& e) {  // a path too long for a socket address
            ec = e.code();
        }
        if (ec) return fail(fmt::format("cannot listen on {}: {}", s->unix_path, ec.message()));
    }
    if (tcp_loopback) {
        if (auto ec = http::open_listener(s->tcp_acceptor, "127.0.0.1", 0))
            return fail(fmt::format("cannot listen on 127.0.0.1: {}", ec.message()));
        s->port = http::listening_port(s->tcp_acceptor);
    }
    if (s->unix_acceptor.is_open()) s->tasks.spawn(egress_accept(s, s->unix_acceptor), "egress proxy accept (unix)");
    if (s->tcp_acceptor.is_open()) s->tasks.spawn(egress_accept(s, s->tcp_acceptor), "egress proxy accept (tcp)");
    return proxy;
}

EgressProxy::~EgressProxy() { close(); }

unsigned short EgressProxy::tcp_port() const { return state_->port; }
const std::string& EgressProxy::unix_path() const { return state_->unix_path; }
const std::string& EgressProxy::server_name() const { return state_->server; }

std::vector<EgressRefusal> EgressProxy::refusals() const { return {state_->refusals.begin(), state_->refusals.end()}; }

void EgressProxy::set_on_refused(std::function<void(const EgressRefusal&)> f) { state_->on_refused = std::move(f); }

void EgressProxy::close() {
    auto& s = *state_;
    if (s.closed) return;
    s.closed = true;
    s.on_refused = nullptr;
    boost::system::error_code ignored;
    s.tcp_acceptor.close(ignored);
    s.unix_acceptor.close(ignored);
    for (auto& w : s.clients)
        if (auto c = w.lock()) c->close(ignored);
    s.clients.clear();
    s.tasks.cancel();
    if (s.owns_file) {
        std::error_code fec;
        std::filesystem::remove(s.unix_path, fec);
        s.owns_file = false;
    }
}

}  // namespace switchboard::host
