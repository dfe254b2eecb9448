// http::Server's own reading and writing (it parses with Beast but reads, writes and times out by hand): pipelined
// requests, a response the kernel takes in parts, a client that stops reading, chunked streams, HTTP/1.0, and
// header values that try to split the response. The client is a plain blocking socket on a thread of its own.
#include <switchboard/http/server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using namespace std::chrono_literals;

std::string io_big_body(std::size_t n) {
    std::string s(n, 'x');
    for (std::size_t i = 0; i < n; i += 4096) s[i] = static_cast<char>('a' + (i / 4096) % 26);
    return s;
}

http::Router io_routes() {
    http::Router r;
    r.add(bhttp::verb::post, "/echo", [](http::ServerRequest& req, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.content_type = "text/plain";
        reply.body = req.body();
        co_await res.send(std::move(reply));
    });
    r.add(bhttp::verb::get, "/big", [](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.content_type = "text/plain";
        reply.body = io_big_body(8u << 20);
        co_await res.send(std::move(reply));
    });
    r.add(bhttp::verb::get, "/huge", [](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.body = std::string(64u << 20, 'y');
        co_await res.send(std::move(reply));
    });
    r.add(bhttp::verb::get, "/inject", [](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.headers.emplace_back("X-Test", "a\r\nX-Injected: 1");
        reply.body = "{}";
        co_await res.send(std::move(reply));
    });
    // A reply's own fields, alone and replacing others: see HeadsAreWrittenAsBeastsSetWouldLeaveThem.
    r.add(bhttp::verb::get, "/plain", [](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.headers.emplace_back("Mcp-Session-Id", "s-1");
        reply.body = "{}";
        co_await res.send(std::move(reply));
    });
    r.add(bhttp::verb::get, "/override", [](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.headers.emplace_back("content-type", "text/x");
        reply.headers.emplace_back("X-A", "1");
        reply.headers.emplace_back("x-a", "2");
        reply.body = "{}";
        co_await res.send(std::move(reply));
    });
    r.add(bhttp::verb::get, "/none", [](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.status = bhttp::status::no_content;
        reply.headers.emplace_back("X-B", "3");
        reply.body = "dropped";
        co_await res.send(std::move(reply));
    });
    r.add(bhttp::verb::get, "/stream", [](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Fields none;
        if (!co_await res.begin_stream("text/event-stream", none)) co_return;
        std::string_view empty;
        if (!co_await res.write_chunk("data: ", "hello", "\n\n")) co_return;
        if (!co_await res.write_chunk(empty, empty, empty)) co_return;  // nothing: must not end the stream
        if (!co_await res.write_chunk("data: ", "again", "\n\n")) co_return;
        co_await res.end_stream();
    });
    return r;
}

// A server on a port of its own, run on this thread while `client` runs on another.
class HttpServerIo : public ::testing::Test {
protected:
    void start(http::ServerOptions o = {}) {
        o.name = "io-test";
        server_ = std::make_unique<http::Server>(io_.get_executor(), io_routes(), std::move(o));
        ASSERT_FALSE(server_->listen());
        asio::co_spawn(io_, server_->run(), asio::detached);
    }
    // Runs the server until `client` returns (at most `limit`).
    template <class F>
    void with_client(F client, std::chrono::seconds limit = 20s) {
        std::atomic<bool> done = false;
        std::thread t([&] {
            client();
            done = true;
        });
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (!done && std::chrono::steady_clock::now() < deadline) io_.run_for(20ms);
        t.join();
        ASSERT_TRUE(done);
    }
    int connect_to() {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(server_->port());
        ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
            ::close(fd);
            return -1;
        }
        return fd;
    }
    static void send_all(int fd, std::string_view s) {
        while (!s.empty()) {
            const auto n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
            if (n <= 0) return;
            s.remove_prefix(static_cast<std::size_t>(n));
        }
    }
    // Reads until `text` holds `until` (or the connection ends, or 10 s pass).
    static std::string read_until(int fd, std::string_view until, std::string text = {}) {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        char buf[65536];
        while (text.find(until) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            const auto n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            text.append(buf, static_cast<std::size_t>(n));
        }
        return text;
    }
    // Reads one response with a Content-Length body; what follows it stays in `rest`.
    static std::string read_response(int fd, std::string& rest) {
        auto text = read_until(fd, "\r\n\r\n", std::move(rest));
        const auto head_end = text.find("\r\n\r\n");
        if (head_end == std::string::npos) return text;
        const auto cl = text.find("Content-Length: ");
        const std::size_t length = cl < head_end ? std::stoul(text.substr(cl + 16)) : 0;
        const auto total = head_end + 4 + length;
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        char buf[65536];
        while (text.size() < total && std::chrono::steady_clock::now() < deadline) {
            const auto n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            text.append(buf, static_cast<std::size_t>(n));
        }
        rest = text.size() > total ? text.substr(total) : std::string();
        text.resize(std::min(text.size(), total));
        return text;
    }

    asio::io_context io_;
    std::unique_ptr<http::Server> server_;
};

TEST_F(HttpServerIo, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
    start();
    std::string first, second;
    with_client([&] {
        int fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd,
                 "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nfirst"
                 "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 6\r\n\r\nsecond");
        std::string rest;
        first = read_response(fd, rest);
        second = read_response(fd, rest);
        ::close(fd);
    });
    EXPECT_TRUE(first.starts_with("HTTP/1.1 200 OK\r\n")) << first;
    EXPECT_TRUE(first.ends_with("\r\n\r\nfirst")) << first;
    EXPECT_NE(first.find("Content-Type: text/plain\r\n"), std::string::npos) << first;
    EXPECT_EQ(first.find("Connection: close"), std::string::npos) << first;
    EXPECT_TRUE(second.ends_with("\r\n\r\nsecond")) << second;
}

TEST_F(HttpServerIo, AHeaderValueCannotSplitTheResponse) {
    start();
    std::string response;
    with_client([&] {
        int fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd, "GET /inject HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        std::string rest;
        response = read_response(fd, rest);
        ::close(fd);
    });
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
    EXPECT_NE(response.find("\r\nX-Test: a  X-Injected: 1\r\n"), std::string::npos) << response;
    EXPECT_EQ(response.find("\r\nX-Injected"), std::string::npos) << response;
}

// The head of a reply, byte for byte: a later field replaces an earlier one of the same name, in its place (as Beast's
// set() leaves them), whether the earlier one is the server's own or the reply's.
TEST_F(HttpServerIo, HeadsAreWrittenAsBeastsSetWouldLeaveThem) {
    start();
    std::string plain, override_, none, closing;
    with_client([&] {
        int fd = connect_to();
        ASSERT_GE(fd, 0);
        std::string rest;
        send_all(fd, "GET /plain HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        plain = read_response(fd, rest);
        send_all(fd, "GET /override HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        override_ = read_response(fd, rest);
        send_all(fd, "GET /none HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        none = read_until(fd, "\r\n\r\n", std::move(rest));
        ::close(fd);
        fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd, "GET /plain HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        closing = read_until(fd, "\r\n\r\n{}");
        ::close(fd);
    });
    EXPECT_EQ(plain,
              "HTTP/1.1 200 OK\r\nServer: switchboard\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\n"
              "Content-Length: 2\r\n\r\n{}");
    EXPECT_EQ(
        override_,
        "HTTP/1.1 200 OK\r\nServer: switchboard\r\nContent-Type: text/x\r\nX-A: 2\r\nContent-Length: 2\r\n\r\n{}");
    EXPECT_EQ(none, "HTTP/1.1 204 No Content\r\nServer: switchboard\r\nX-B: 3\r\n\r\n");
    EXPECT_EQ(closing,
              "HTTP/1.1 200 OK\r\nServer: switchboard\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\n"
              "Connection: close\r\nContent-Length: 2\r\n\r\n{}");
}

TEST_F(HttpServerIo, AResponseTheKernelTakesInPartsArrivesWholeToASlowReader) {
    start();
    std::string response;
    with_client([&] {
        int fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd, "GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        std::this_thread::sleep_for(300ms);  // the socket's buffers fill; the server awaits the rest
        std::string rest;
        response = read_response(fd, rest);
        ::close(fd);
    });
    const auto head_end = response.find("\r\n\r\n");
    ASSERT_NE(head_end, std::string::npos);
    EXPECT_NE(response.find("Content-Length: 8388608\r\n"), std::string::npos);
    EXPECT_EQ(response.substr(head_end + 4), io_big_body(8u << 20));
}

TEST_F(HttpServerIo, AClientThatStopsReadingIsClosedAfterTheWriteTimeout) {
    http::ServerOptions o;
    o.write_timeout = 1s;
    start(std::move(o));
    std::size_t received = 0;
    bool ended = false;
    with_client([&] {
        int fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd, "GET /huge HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        // Not reading: the server's write stalls, and it must give up after the timeout (and its sweep's period).
        std::this_thread::sleep_for(2500ms);
        // What the kernels' buffers held (a few MiB) arrives, then the end: never the whole 64 MiB.
        timeval wait{2, 0};  // a server that kept the connection would leave recv waiting: give up then
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
        char buf[65536];
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (std::chrono::steady_clock::now() < deadline) {
            const auto n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) {
                ended = n == 0 || errno == ECONNRESET;
                break;
            }
            received += static_cast<std::size_t>(n);
        }
        ::close(fd);
    });
    EXPECT_TRUE(ended);
    EXPECT_LT(received, 64u << 20);
}

TEST_F(HttpServerIo, AStreamIsChunkedAndAnEmptyWriteDoesNotEndIt) {
    start();
    std::string response;
    with_client([&] {
        int fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd, "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        response = read_until(fd, "0\r\n\r\n");
        ::close(fd);
    });
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
    EXPECT_NE(response.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << response;
    EXPECT_NE(response.find("Content-Type: text/event-stream\r\n"), std::string::npos) << response;
    EXPECT_TRUE(response.ends_with("\r\n\r\nd\r\ndata: hello\n\n\r\nd\r\ndata: again\n\n\r\n0\r\n\r\n")) << response;
}

TEST_F(HttpServerIo, Http10IsAnsweredIn10AndClosedUnlessKeptAlive) {
    start();
    std::string closed_response, kept_response;
    bool ended = false;
    with_client([&] {
        int fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd, "POST /echo HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi");
        closed_response = read_until(fd, "\r\n\r\nhi");
        // ...and closes.
        pollfd p{fd, POLLRDHUP, 0};
        ended = ::poll(&p, 1, 3000) > 0 && (p.revents & (POLLRDHUP | POLLHUP));
        ::close(fd);
        fd = connect_to();
        ASSERT_GE(fd, 0);
        send_all(fd, "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi");
        std::string rest;
        kept_response = read_response(fd, rest);
        ::close(fd);
    });
    EXPECT_TRUE(closed_response.starts_with("HTTP/1.0 200 OK\r\n")) << closed_response;
    EXPECT_EQ(closed_response.find("Connection: keep-alive"), std::string::npos) << closed_response;
    EXPECT_TRUE(ended);
    EXPECT_TRUE(kept_response.starts_with("HTTP/1.0 200 OK\r\n")) << kept_response;
    EXPECT_NE(kept_response.find("Connection: keep-alive\r\n"), std::string::npos) << kept_response;
}

}  // namespace
}  // namespace switchboard::test
