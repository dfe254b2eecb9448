// `switchboard-bench --child floor_proxy PATH`: the cheapest process that can stand between an HTTP client and a
// stdio MCP server (the executable PATH, no arguments), measured by the gateway section as the floor of any gateway on
// this machine. It parses nothing it can avoid: it finds the end of an HTTP/1.1 request head and its Content-Length,
// writes the POST body as one line to the server's stdin, and, for a request (a body with "method" and "id"), answers
// with the next line from its stdout that has a "result" or an "error" (the demo server sends nothing else for the
// bench's calls; a line is not parsed, so a late answer or such a word in a notification would be taken for it);
// anything else posted (a notification, a response) is answered 202. No ids rewritten, no session, no validation: a
// real gateway cannot do less. One thread, ppoll(2) over the listening socket and its connections; one request at a
// time is forwarded, blocking on the pipes until it is answered.
#include "harness.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace switchboard::bench {

namespace json = boost::json;

namespace {

[[noreturn]] void fail(std::string_view what) {
    throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

bool write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

struct Upstream {
    int in = -1, out = -1;
    pid_t pid = -1;
    std::string buffered;

    explicit Upstream(const std::string& command) {
        int to[2], from[2];
        if (::pipe(to) != 0 || ::pipe(from) != 0) fail("pipe");
        pid = ::fork();
        if (pid < 0) fail("fork");
        if (pid == 0) {
            ::dup2(to[0], 0);
            ::dup2(from[1], 1);
            ::close(to[0]), ::close(to[1]), ::close(from[0]), ::close(from[1]);
            ::execl(command.c_str(), command.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(to[0]), ::close(from[1]);
        in = to[1];
        out = from[0];
    }
    ~Upstream() {
        ::close(in);
        ::close(out);
        ::waitpid(pid, nullptr, 0);
    }

    std::string next_line() {
        for (;;) {
            if (const auto nl = buffered.find('\n'); nl != std::string::npos) {
                std::string line = buffered.substr(0, nl);
                buffered.erase(0, nl + 1);
                return line;
            }
            char chunk[65536];
            const auto n = ::read(out, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw std::runtime_error("the upstream closed its stdout");
            buffered.append(chunk, static_cast<std::size_t>(n));
        }
    }

    std::string reply() {
        for (;;) {
            auto line = next_line();
            if (line.find("\"result\"") != std::string::npos || line.find("\"error\"") != std::string::npos)
                return line;
        }
    }
};

std::string response(std::string_view status, std::string_view body) {
    return fmt::format("HTTP/1.1 {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}", status,
                       body.size(), body);
}

// The value of a header (case-insensitive name) in a request head, or empty.
std::string_view header(std::string_view head, std::string_view name) {
    for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;) {
        const auto start = at + 2;
        const auto end = head.find("\r\n", start);
        const auto line = head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (line.size() > name.size() && line[name.size()] == ':' &&
            ::strncasecmp(line.data(), name.data(), name.size()) == 0) {
            auto v = line.substr(name.size() + 1);
            while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
            return v;
        }
        at = end;
    }
    return {};
}

// Answers every complete request in `buf`; false when the connection must close.
bool serve_buffered(int fd, std::string& buf, Upstream& up) {
    for (;;) {
        const auto head_end = buf.find("\r\n\r\n");
        if (head_end == std::string::npos) return true;
        const std::string_view head(buf.data(), head_end);
        const auto length_text = header(head, "Content-Length");
        const std::size_t length = length_text.empty() ? 0 : std::stoul(std::string(length_text));
        if (buf.size() < head_end + 4 + length) return true;
        const std::string body = buf.substr(head_end + 4, length);
        const bool post = head.starts_with("POST ");
        buf.erase(0, head_end + 4 + length);
        if (!post) {
            if (!write_all(fd, "HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n"))
                return false;
            continue;
        }
        std::string line = body;
        line += '\n';
        if (!write_all(up.in, line)) fail("write to the upstream");
        const bool request = body.find("\"method\"") != std::string::npos && body.find("\"id\"") != std::string::npos;
        const bool ok = request ? write_all(fd, response("200 OK", up.reply()))
                                : write_all(fd, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
        if (!ok) return false;
    }
}

volatile std::sig_atomic_t stopping = 0;

json::object floor_proxy_child(const std::vector<std::string>& args) {
    Upstream up(args.at(1));  // args.at(0) is the bin dir
    // SIGTERM and SIGINT only arrive inside ppoll (blocked elsewhere): one sent just before it still ends the loop.
    std::signal(SIGTERM, [](int) { stopping = 1; });
    std::signal(SIGINT, [](int) { stopping = 1; });
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t stops, during_poll;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    ::sigprocmask(SIG_BLOCK, &stops, &during_poll);
    sigdelset(&during_poll, SIGTERM);
    sigdelset(&during_poll, SIGINT);

    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) fail("socket");
    const int one = 1;
    ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 128) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        fail("listen");
    fmt::print(stderr, "floor proxy listening on http://127.0.0.1:{}/mcp\n", ntohs(addr.sin_port));

    std::map<int, std::string> conns;  // fd -> bytes read and not yet answered
    std::vector<pollfd> fds;
    while (!stopping) {
        fds.assign(1, pollfd{listener, POLLIN, 0});
        for (const auto& [fd, _] : conns) fds.push_back(pollfd{fd, POLLIN, 0});
        if (::ppoll(fds.data(), fds.size(), nullptr, &during_poll) < 0) {
            if (errno == EINTR) continue;
            fail("poll");
        }
        if (fds[0].revents & POLLIN) {
            const int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (c >= 0) {
                ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                conns.emplace(c, std::string());
            }
        }
        for (std::size_t i = 1; i < fds.size(); ++i) {
            if (!fds[i].revents) continue;
            auto& buf = conns[fds[i].fd];
            char chunk[65536];
            const auto n = ::read(fds[i].fd, chunk, sizeof chunk);
            bool keep = n > 0;
            if (keep) {
                buf.append(chunk, static_cast<std::size_t>(n));
                keep = serve_buffered(fds[i].fd, buf, up);
            }
            if (!keep) {
                ::close(fds[i].fd);
                conns.erase(fds[i].fd);
            }
        }
    }
    for (const auto& [fd, _] : conns) ::close(fd);
    ::close(listener);
    return {};
}

}  // namespace

static ChildRegistrar floor_proxy_registrar("floor_proxy", floor_proxy_child);

}  // namespace switchboard::bench
