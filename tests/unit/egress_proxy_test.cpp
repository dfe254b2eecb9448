// host::EgressProxy over real sockets: CONNECT tunnels (Unix socket) and plain-HTTP forwarding (TCP) to listeners on
// 127.0.0.1, names refused before any lookup (not allowed, denied over "*", "*.x" not the apex), loopback refused by
// the address policy, bad requests, and close() ending an open tunnel. Nothing leaves the loopback interface: every
// name that would need DNS is refused before resolving, and "localhost" comes from /etc/hosts.
#include <switchboard/host/egress_proxy.hpp>

#include "coro_test.hpp"

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using asio::awaitable;
using asio::ip::tcp;
using core::as_tuple_awaitable;
using unix_socket = asio::local::stream_protocol::socket;

// Echoes every byte back; counts the connections it accepted.
struct EgressEcho {
    explicit EgressEcho(asio::io_context& io) : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
        asio::co_spawn(io, run(), asio::detached);
    }
    awaitable<void> run() {
        for (;;) {
            tcp::socket s(acceptor.get_executor());
            auto [ec] = co_await acceptor.async_accept(s, as_tuple_awaitable);
            if (ec) co_return;
            ++accepted;
            asio::co_spawn(acceptor.get_executor(), echo(std::move(s)), asio::detached);
        }
    }
    static awaitable<void> echo(tcp::socket s) {
        char buf[4096];
        for (;;) {
            auto [ec, n] = co_await s.async_read_some(asio::buffer(buf), as_tuple_awaitable);
            if (ec) co_return;
            auto [wec, wn] = co_await asio::async_write(s, asio::buffer(buf, n), as_tuple_awaitable);
            if (wec) co_return;
        }
    }
    unsigned short port() const { return acceptor.local_endpoint().port(); }
    tcp::acceptor acceptor;
    int accepted = 0;
};

// Answers one request per connection with its own head and body, and keeps the connection open (keep-alive).
struct EgressOrigin {
    explicit EgressOrigin(asio::io_context& io) : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
        asio::co_spawn(io, run(), asio::detached);
    }
    awaitable<void> run() {
        for (;;) {
            tcp::socket s(acceptor.get_executor());
            auto [ec] = co_await acceptor.async_accept(s, as_tuple_awaitable);
            if (ec) co_return;
            asio::co_spawn(acceptor.get_executor(), serve(std::move(s)), asio::detached);
        }
    }
    static awaitable<void> serve(tcp::socket s) {
        boost::beast::flat_buffer buffer;
        bhttp::request<bhttp::string_body> req;
        auto [ec, n] = co_await bhttp::async_read(s, buffer, req, as_tuple_awaitable);
        if (ec) co_return;
        std::ostringstream head;
        head << req.base();
        bhttp::response<bhttp::string_body> res{bhttp::status::ok, 11};
        res.body() = head.str() + "BODY:" + req.body();
        res.prepare_payload();
        co_await bhttp::async_write(s, res, as_tuple_awaitable);
        char buf[64];
        co_await s.async_read_some(asio::buffer(buf), as_tuple_awaitable);  // until the proxy hangs up
    }
    unsigned short port() const { return acceptor.local_endpoint().port(); }
    tcp::acceptor acceptor;
};

// Reads until `needle` has arrived (true) or the stream ends (false).
template <class Socket>
awaitable<bool> egress_read_until(Socket& s, std::string& got, std::string_view needle) {
    char buf[4096];
    while (got.find(needle) == std::string::npos) {
        auto [ec, n] = co_await s.async_read_some(asio::buffer(buf), as_tuple_awaitable);
        got.append(buf, n);
        if (ec) break;
    }
    co_return got.find(needle) != std::string::npos;
}

// Everything until the other side closes.
template <class Socket>
awaitable<std::string> egress_read_all(Socket& s) {
    std::string got;
    co_await egress_read_until(s, got, std::string_view("\x01never\x02"));
    co_return got;
}

awaitable<std::string> egress_exchange_tcp(unsigned short port, std::string request) {
    tcp::socket s(co_await asio::this_coro::executor);
    co_await s.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), as_tuple_awaitable);
    co_await asio::async_write(s, asio::buffer(request), as_tuple_awaitable);
    co_return co_await egress_read_all(s);
}

awaitable<std::string> egress_exchange_unix(std::string path, std::string request) {
    unix_socket s(co_await asio::this_coro::executor);
    co_await s.async_connect(asio::local::stream_protocol::endpoint(path), as_tuple_awaitable);
    co_await asio::async_write(s, asio::buffer(request), as_tuple_awaitable);
    co_return co_await egress_read_all(s);
}

class EgressProxyTest : public ::testing::Test {
protected:
    void SetUp() override {
        char dir_template[] = "/tmp/switchboard-egress-XXXXXX";
        ASSERT_NE(::mkdtemp(dir_template), nullptr);
        dir_ = dir_template;
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    std::shared_ptr<host::EgressProxy> open(host::EgressPolicy policy, bool unix, bool tcp_loopback) {
        auto p = host::EgressProxy::open(io_.get_executor(), "fs", std::move(policy), unix ? dir_ + "/proxy.sock" : "",
                                         tcp_loopback);
        EXPECT_TRUE(p) << (p ? "" : p.error().message);
        return p ? *p : nullptr;
    }
    static host::EgressPolicy localhost_policy(bool allow_loopback) {
        host::EgressPolicy policy;
        policy.allowed_domains = {"localhost"};
        std::string error;
        if (allow_loopback) policy.addresses.allow.push_back(*http::parse_cidr("127.0.0.0/8", error));
        return policy;
    }

    asio::io_context io_;
    std::string dir_;
};

TEST_F(EgressProxyTest, ConnectOverUnixSocketReachesLocalhost) {
    EgressEcho echo(io_);
    auto proxy = open(localhost_policy(true), true, false);
    ASSERT_TRUE(proxy);
    EXPECT_EQ(proxy->tcp_port(), 0);
    EXPECT_TRUE(std::filesystem::is_socket(proxy->unix_path()));
    run(io_, [&]() -> awaitable<void> {
        unix_socket s(io_);
        co_await s.async_connect(asio::local::stream_protocol::endpoint(proxy->unix_path()), as_tuple_awaitable);
        const auto connect = fmt::format("CONNECT localhost:{0} HTTP/1.1\r\nHost: localhost:{0}\r\n\r\n", echo.port());
        co_await asio::async_write(s, asio::buffer(connect), as_tuple_awaitable);
        std::string got;
        CO_ASSERT_TRUE(co_await egress_read_until(s, got, "\r\n\r\n"));
        EXPECT_EQ(got, "HTTP/1.1 200 Connection Established\r\n\r\n");
        got.clear();
        co_await asio::async_write(s, asio::buffer(std::string_view("ping")), as_tuple_awaitable);
        CO_ASSERT_TRUE(co_await egress_read_until(s, got, "ping"));
        // A half-close passes through: the answer to what came before it still arrives, then the echo server
        // sees the end and closes, and so does the tunnel.
        co_await asio::async_write(s, asio::buffer(std::string_view("pong")), as_tuple_awaitable);
        s.shutdown(asio::socket_base::shutdown_send);
        EXPECT_EQ(co_await egress_read_all(s), "pong");
        proxy->close();
    });
    EXPECT_EQ(echo.accepted, 1);
    EXPECT_TRUE(proxy->refusals().empty());
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/proxy.sock"));  // close() removes the socket file
}

TEST_F(EgressProxyTest, PlainHttpOverTcpIsForwardedInOriginForm) {
    EgressOrigin origin(io_);
    auto proxy = open(localhost_policy(true), false, true);
    ASSERT_TRUE(proxy);
    ASSERT_NE(proxy->tcp_port(), 0);
    run(io_, [&]() -> awaitable<void> {
        const auto request = fmt::format(
            "POST http://localhost:{}/path?q=1 HTTP/1.1\r\nHost: elsewhere\r\nProxy-Authorization: Basic c2VjcmV0\r\n"
            "Proxy-Connection: keep-alive\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-Kept: yes\r\n"
            "Content-Length: 5\r\n\r\nhello",
            origin.port());
        const auto got = co_await egress_exchange_tcp(proxy->tcp_port(), request);
        EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
        EXPECT_NE(got.find("Connection: close\r\n"), std::string::npos) << got;
        const auto body = got.substr(got.find("\r\n\r\n") + 4);
        EXPECT_EQ(body.rfind("POST /path?q=1 HTTP/1.1\r\n", 0), 0u) << body;
        EXPECT_NE(body.find(fmt::format("Host: localhost:{}\r\n", origin.port())), std::string::npos) << body;
        EXPECT_NE(body.find("X-Kept: yes\r\n"), std::string::npos) << body;
        EXPECT_NE(body.find("Connection: close\r\n"), std::string::npos) << body;
        EXPECT_EQ(body.find("Proxy-"), std::string::npos) << body;
        EXPECT_EQ(body.find("X-Hop"), std::string::npos) << body;
        EXPECT_NE(body.find("BODY:hello"), std::string::npos) << body;
        proxy->close();
    });
}

TEST_F(EgressProxyTest, NameNotAllowedIsRefusedAndRecorded) {
    auto proxy = open(localhost_policy(true), true, true);
    ASSERT_TRUE(proxy);
    std::vector<std::string> seen;
    proxy->set_on_refused([&](const host::EgressRefusal& r) { seen.push_back(r.target); });
    run(io_, [&]() -> awaitable<void> {
        auto got = co_await egress_exchange_unix(proxy->unix_path(), "CONNECT evil.test:443 HTTP/1.1\r\n\r\n");
        EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got;
        EXPECT_NE(got.find("switchboard: \"evil.test\" is not in server \"fs\"'s allowedDomains\n"), std::string::npos)
            << got;
        got = co_await egress_exchange_tcp(proxy->tcp_port(), "GET http://Evil.Test./x?token=s3cret HTTP/1.1\r\n\r\n");
        EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got;
        // A refused request's unread body does not turn the answer into a reset.
        got = co_await egress_exchange_tcp(
            proxy->tcp_port(),
            "POST http://evil.test/upload HTTP/1.1\r\nContent-Length: 204800\r\n\r\n" + std::string(200 * 1024, 'b'));
        EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got.substr(0, 200);
        // The refusal log keeps the last 20, newest last.
        for (int i = 0; i < 21; ++i)
            co_await egress_exchange_tcp(proxy->tcp_port(), fmt::format("CONNECT n{}.test:443 HTTP/1.1\r\n\r\n", i));
        proxy->close();
    });
    ASSERT_EQ(seen.size(), 24u);
    EXPECT_EQ(seen[2], "evil.test:80");
    EXPECT_EQ(seen[0], "evil.test:443");
    EXPECT_EQ(seen[1], "evil.test:80");  // host:port only: never the path or the query
    const auto refusals = proxy->refusals();
    ASSERT_EQ(refusals.size(), 20u);
    EXPECT_EQ(refusals.front().target, "n1.test:443");
    EXPECT_EQ(refusals.back().target, "n20.test:443");
    EXPECT_EQ(refusals.back().reason, "\"n20.test\" is not in server \"fs\"'s allowedDomains");
}

TEST_F(EgressProxyTest, DeniedNameWinsOverEverything) {
    host::EgressPolicy policy;
    policy.allowed_domains = {"*"};
    policy.denied_domains = {"evil.test", "*.evil.test"};
    auto proxy = open(policy, false, true);
    ASSERT_TRUE(proxy);
    run(io_, [&]() -> awaitable<void> {
        const std::array<std::string, 2> names{"evil.test", "a.evil.test"};
        for (const auto& name : names) {
            const auto got =
                co_await egress_exchange_tcp(proxy->tcp_port(), fmt::format("CONNECT {}:443 HTTP/1.1\r\n\r\n", name));
            EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got;
            EXPECT_NE(got.find(fmt::format("\"{}\" is in server \"fs\"'s deniedDomains", name)), std::string::npos)
                << got;
        }
        proxy->close();
    });
    EXPECT_EQ(proxy->refusals().size(), 2u);
}

TEST_F(EgressProxyTest, WildcardCoversSubdomainsNotTheApex) {
    host::EgressPolicy policy;
    policy.allowed_domains = {"*.example.test"};
    EXPECT_EQ(host::egress_name_refusal(policy, "fs", "a.example.test"), "");
    EXPECT_EQ(host::egress_name_refusal(policy, "fs", "b.a.example.test"), "");
    EXPECT_NE(host::egress_name_refusal(policy, "fs", "example.test"), "");
    EXPECT_NE(host::egress_name_refusal(policy, "fs", "badexample.test"), "");
    EXPECT_TRUE(host::egress_domain_matches("Example.Test.", "example.test"));
    EXPECT_TRUE(host::egress_domain_matches("*", "anything.test"));
    // An IP literal is judged literally: no wildcard covers it.
    EXPECT_FALSE(host::egress_domain_matches("*.0.0.1", "127.0.0.1"));
    EXPECT_TRUE(host::egress_domain_matches("::1", "::1"));
    EXPECT_TRUE(host::egress_domain_matches("*", "::1"));

    auto proxy = open(policy, true, false);
    ASSERT_TRUE(proxy);
    run(io_, [&]() -> awaitable<void> {
        const auto got = co_await egress_exchange_unix(proxy->unix_path(), "CONNECT example.test:443 HTTP/1.1\r\n\r\n");
        EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got;
        EXPECT_NE(got.find("\"example.test\" is not in server \"fs\"'s allowedDomains"), std::string::npos) << got;
        proxy->close();
    });
}

TEST_F(EgressProxyTest, LoopbackIsRefusedUnlessAllowListed) {
    EgressEcho echo(io_);
    auto policy = localhost_policy(false);
    policy.allowed_domains.push_back("127.0.0.1");
    auto proxy = open(policy, true, true);
    ASSERT_TRUE(proxy);
    run(io_, [&]() -> awaitable<void> {
        auto got = co_await egress_exchange_unix(proxy->unix_path(),
                                                 fmt::format("CONNECT localhost:{} HTTP/1.1\r\n\r\n", echo.port()));
        EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got;
        EXPECT_NE(got.find("loopback"), std::string::npos) << got;
        // An IP literal allowed by name still meets the address policy.
        got = co_await egress_exchange_tcp(proxy->tcp_port(),
                                           fmt::format("GET http://127.0.0.1:{}/ HTTP/1.1\r\n\r\n", echo.port()));
        EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got;
        EXPECT_NE(got.find("127.0.0.1 is a loopback address"), std::string::npos) << got;
        // And one not allowed by name is refused before that.
        got = co_await egress_exchange_tcp(proxy->tcp_port(),
                                           fmt::format("CONNECT 127.0.0.2:{} HTTP/1.1\r\n\r\n", echo.port()));
        EXPECT_NE(got.find("\"127.0.0.2\" is not in server \"fs\"'s allowedDomains"), std::string::npos) << got;
        proxy->close();
    });
    EXPECT_EQ(echo.accepted, 0);  // a refused address is never connected to
    ASSERT_EQ(proxy->refusals().size(), 3u);
    EXPECT_EQ(proxy->refusals()[0].target, fmt::format("localhost:{}", echo.port()));
}

TEST_F(EgressProxyTest, BadRequestsAre400) {
    auto proxy = open(localhost_policy(true), false, true);
    ASSERT_TRUE(proxy);
    run(io_, [&]() -> awaitable<void> {
        const std::vector<std::string> bad{
            "hello there\r\n\r\n",
            "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n",
            "GET /origin-form HTTP/1.1\r\nHost: localhost\r\n\r\n",  // no absolute URL: no host to go to
            "GET https://localhost/ HTTP/1.1\r\n\r\n",
            "CONNECT localhost HTTP/1.1\r\n\r\n",
            "CONNECT :443 HTTP/1.1\r\n\r\n",
            "CONNECT local\"host:443 HTTP/1.1\r\n\r\n",
            "CONNECT localhost:99999 HTTP/1.1\r\n\r\n",
            "GET http://localhost/ HTTP/1.1\r\nX-Big: " + std::string(20 * 1024, 'a') + "\r\n\r\n",
        };
        for (const auto& request : bad) {
            const auto got = co_await egress_exchange_tcp(proxy->tcp_port(), request);
            EXPECT_EQ(got.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << request.substr(0, 40) << " -> " << got;
        }
        // The proxy is still there.
        const auto got = co_await egress_exchange_tcp(proxy->tcp_port(), "CONNECT evil.test:443 HTTP/1.1\r\n\r\n");
        EXPECT_EQ(got.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << got;
        proxy->close();
    });
    EXPECT_EQ(proxy->refusals().size(), 1u);  // bad requests are not refusals
}

TEST_F(EgressProxyTest, CloseEndsAnOpenTunnel) {
    EgressEcho echo(io_);
    auto proxy = open(localhost_policy(true), true, true);
    ASSERT_TRUE(proxy);
    const auto path = proxy->unix_path();
    const auto port = proxy->tcp_port();
    run(io_, [&]() -> awaitable<void> {
        tcp::socket s(io_);
        co_await s.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), as_tuple_awaitable);
        const auto connect = fmt::format("CONNECT localhost:{} HTTP/1.1\r\n\r\n", echo.port());
        co_await asio::async_write(s, asio::buffer(connect), as_tuple_awaitable);
        std::string got;
        CO_ASSERT_TRUE(co_await egress_read_until(s, got, "\r\n\r\n"));
        CO_ASSERT_EQ(got.rfind("HTTP/1.1 200", 0), 0u);
        got.clear();
        co_await asio::async_write(s, asio::buffer(std::string_view("one")), as_tuple_awaitable);
        CO_ASSERT_TRUE(co_await egress_read_until(s, got, "one"));
        proxy->close();
        proxy->close();  // idempotent
        got.clear();
        EXPECT_FALSE(co_await egress_read_until(s, got, "never"));  // the tunnel ends, not the test's time limit
        // Nothing listens any more.
        tcp::socket again(io_);
        auto [cec] =
            co_await again.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), as_tuple_awaitable);
        EXPECT_TRUE(cec);
    });
    EXPECT_FALSE(std::filesystem::exists(path));
    proxy.reset();  // destruction after close
    io_.run_for(std::chrono::milliseconds(50));
}

TEST_F(EgressProxyTest, OpenFailsClearly) {
    auto none = host::EgressProxy::open(io_.get_executor(), "fs", {}, "", false);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("nothing to listen on"), std::string::npos);
    const auto file = dir_ + "/plain-file";
    { std::ofstream(file) << "x"; }
    auto taken = host::EgressProxy::open(io_.get_executor(), "fs", {}, file, false);
    ASSERT_FALSE(taken);
    EXPECT_NE(taken.error().message.find("is not a socket"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(file));  // never removed
    // A stale socket of an earlier run is replaced.
    { asio::local::stream_protocol::acceptor stale(io_, asio::local::stream_protocol::endpoint(dir_ + "/proxy.sock")); }
    ASSERT_TRUE(std::filesystem::is_socket(dir_ + "/proxy.sock"));
    auto proxy = open({}, true, false);
    ASSERT_TRUE(proxy);
    proxy->close();
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/proxy.sock"));
}

}  // namespace
}  // namespace switchboard::test
