#include "net_harness.hpp"

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace switchboard::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using tcp = asio::ip::tcp;

namespace {
constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

void reap(pid_t pid) {
    for (int i = 0; i < 500; ++i) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) != 0) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
}
}  // namespace

ListeningServer::~ListeningServer() {
    if (pid > 0) {
        ::kill(pid, SIGTERM);
        reap(pid);
    }
    if (!log_path.empty()) ::unlink(log_path.c_str());
}

void ListeningServer::kill_now() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    reap(pid);
    pid = -1;
}

std::string ListeningServer::log() const {
    std::ifstream in(log_path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::unique_ptr<ListeningServer> start_listening(const std::string& program, const std::vector<std::string>& args) {
    auto s = std::make_unique<ListeningServer>();
    char path[] = "/tmp/switchboard-server-log-XXXXXX";
    int fd = ::mkstemp(path);
    if (fd < 0) {
        ADD_FAILURE() << "mkstemp failed";
        return nullptr;
    }
    s->log_path = path;
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fd, 2);
        int devnull = ::open("/dev/null", O_RDWR);
        ::dup2(devnull, 0);
        ::dup2(devnull, 1);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(program.c_str()));
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(program.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(fd);
    s->pid = pid;
    static const std::regex listening(R"(listening on ((?:http|ws)://127\.0\.0\.1:(\d+)\S*))");
    for (int i = 0; i < 1000; ++i) {
        std::smatch m;
        auto text = s->log();
        if (std::regex_search(text, m, listening)) {
            s->url = m[1].str();
            s->port = static_cast<std::uint16_t>(std::stoi(m[2].str()));
            return s;
        }
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            s->pid = -1;
            ADD_FAILURE() << program << " exited before listening: " << text;
            return nullptr;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << program << " did not print its address: " << s->log();
    return nullptr;
}

namespace {
http::request<http::string_body> make_request(const std::string& method, const std::string& target,
                                              const Headers& headers, std::string body) {
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = std::move(body);
    if (req.find(http::field::content_length) == req.end()) req.prepare_payload();
    return req;
}
}  // namespace

awaitable<HttpResult> http_exchange(std::uint16_t port, std::string method, std::string target, Headers headers,
                                    std::string body) {
    HttpResult out;
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    stream.expires_after(std::chrono::seconds(10));
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
    auto [cec] = co_await stream.async_connect(ep, as_tuple_awaitable);
    if (cec) {
        out.error = "connect: " + cec.message();
        co_return out;
    }
    auto req = make_request(method, target, headers, std::move(body));
    auto [wec, wn] = co_await http::async_write(stream, req, as_tuple_awaitable);
    if (wec) {
        out.error = "write: " + wec.message();
        co_return out;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(256 * 1024 * 1024);
    auto [rec, rn] = co_await http::async_read(stream, buffer, parser, as_tuple_awaitable);
    if (rec) {
        out.error = "read: " + rec.message();
        co_return out;
    }
    auto res = parser.release();
    out.status = res.result_int();
    for (const auto& f : res) {
        std::string name(f.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.headers[name] = std::string(f.value());
    }
    out.body = std::move(res.body());
    co_return out;
}

awaitable<std::shared_ptr<HttpStream>> http_open(std::uint16_t port, std::string method, std::string target,
                                                 Headers headers, std::string body) {
    auto s = std::make_shared<HttpStream>(co_await asio::this_coro::executor);
    s->stream.expires_after(std::chrono::seconds(10));
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
    auto [cec] = co_await s->stream.async_connect(ep, as_tuple_awaitable);
    if (cec) {
        s->error = "connect: " + cec.message();
        co_return s;
    }
    auto req = make_request(method, target, headers, std::move(body));
    auto [wec, wn] = co_await http::async_write(s->stream, req, as_tuple_awaitable);
    if (wec) {
        s->error = "write: " + wec.message();
        co_return s;
    }
    auto [rec, rn] = co_await http::async_read_header(s->stream, s->buffer, s->parser, as_tuple_awaitable);
    if (rec) {
        s->error = "read header: " + rec.message();
        co_return s;
    }
    s->status = s->parser.get().result_int();
    s->stream.expires_never();
    co_return s;
}

awaitable<bool> http_read_until(std::shared_ptr<HttpStream> s, std::string needle, std::chrono::milliseconds limit) {
    s->stream.expires_after(limit);
    while (s->parser.get().body().find(needle) == std::string::npos) {
        if (s->parser.is_done()) break;
        auto [ec, n] = co_await http::async_read_some(s->stream, s->buffer, s->parser, as_tuple_awaitable);
        if (ec) {
            s->error = ec.message();
            break;
        }
    }
    s->stream.expires_never();
    co_return s->parser.get().body().find(needle) != std::string::npos;
}

std::uint16_t free_port() {
    asio::io_context ctx;
    tcp::acceptor a(ctx, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

}  // namespace switchboard::test
