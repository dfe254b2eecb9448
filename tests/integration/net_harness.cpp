#include "net_harness.hpp"

#include <gtest/gtest.h>

#include <switchboard/core/as_tuple.hpp>

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
using switchboard::core::as_tuple_awaitable;

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
    static const std::regex listening(R"(listening on ((?:http|wss?)://127\.0\.0\.1:(\d+)\S*))");
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

std::uint16_t free_port() {
    asio::io_context ctx;
    tcp::acceptor a(ctx, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

}  // namespace switchboard::test
