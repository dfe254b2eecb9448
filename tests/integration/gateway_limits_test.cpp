// The gateway's limits on slow and idle clients (http::ServerOptions: header_timeout, idle_timeout, connections per
// client address), its access log's body count, and /metrics beside `serve --stdio` (--metrics-port): the real
// binary, real sockets, and slow clients made of plain sockets that send half a request head and stop.
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
using boost::asio::awaitable;
using Clock = std::chrono::steady_clock;

class GatewayLimits : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-gateway-limits-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        config_ = (dir_ / "config.json").string();
        std::ofstream(config_) << R"({"mcpServers": {"demo": {"command": ")" << demo_server() << R"("}}})";
    }
    void TearDown() override {
        for (int fd : fds_) ::close(fd);
        gateway_.reset();
        fs::remove_all(dir_);
    }

    // A TCP connection to the gateway from `from` (any 127/8 address: each is a client address of its own); -1 if
    // the connect failed.
    int connect_from(const char* from) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in local{};
        local.sin_family = AF_INET;
        ::inet_pton(AF_INET, from, &local.sin_addr);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(gateway_->port);
        ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
        if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
            ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
            ::close(fd);
            return -1;
        }
        fds_.push_back(fd);
        return fd;
    }
    // Whether the server closed `fd` (EOF or reset) within `wait`.
    static bool closed_within(int fd, std::chrono::milliseconds wait) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
        char c;
        return ::recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
    }
    static void send_text(int fd, const std::string& text) {
        ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
    }

    fs::path dir_;
    std::string config_;
    std::vector<int> fds_;
    std::unique_ptr<ListeningServer> gateway_;
};

TEST_F(GatewayLimits, SlowClientsAreClosedWhileANormalClientIsServed) {
    gateway_ = start_listening(SWITCHBOARD_CLI, {"--config", config_, "serve", "--port", "0", "--header-timeout", "2",
                                                 "--idle-timeout", "3", "--quiet"});
    ASSERT_TRUE(gateway_);
    // 300 connections from one address, each sending half a request head, then nothing.
    std::vector<int> slow;
    for (int i = 0; i < 300; ++i) {
        int fd = connect_from("127.0.0.2");
        if (fd < 0) continue;
        slow.push_back(fd);
        send_text(fd, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl");
    }
    ASSERT_GE(slow.size(), 250u);
    const auto began = Clock::now();
    // One address gets 64 connections at most: the rest are closed at once.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::size_t open = 0;
    for (int fd : slow) open += closed_within(fd, std::chrono::milliseconds(0)) ? 0 : 1;
    EXPECT_LE(open, 64u);
    EXPECT_GE(open, 32u);  // but some were taken: the per-address limit, not a refusal of everything
    // Meanwhile a normal client (another address) is served.
    const auto port = gateway_->port;
    run([port]() -> awaitable<void> {
        auto r = co_await http_exchange(port, "POST", "/mcp", post_headers(), init_body);
        EXPECT_EQ(r.status, 200) << r.body;
    });
    // Within the header timeout (2 s, and some slack for a loaded machine), every slow connection is closed.
    for (int fd : slow) EXPECT_TRUE(closed_within(fd, std::chrono::milliseconds(6000)));
    EXPECT_LT(Clock::now() - began, std::chrono::seconds(8));
}

TEST_F(GatewayLimits, AnIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout) {
    gateway_ = start_listening(SWITCHBOARD_CLI,
                               {"--config", config_, "serve", "--port", "0", "--idle-timeout", "2", "--quiet"});
    ASSERT_TRUE(gateway_);
    int fd = connect_from("127.0.0.1");
    ASSERT_GE(fd, 0);
    send_text(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    // The answer comes, the connection stays for the next request...
    pollfd p{fd, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1);
    char buf[4096];
    ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);
    EXPECT_FALSE(closed_within(fd, std::chrono::milliseconds(1000)));
    // ...and is closed once it has been silent for the idle timeout.
    EXPECT_TRUE(closed_within(fd, std::chrono::milliseconds(4000)));
}

TEST_F(GatewayLimits, TheAccessLogCountsARequestBody) {
    gateway_ = start_listening(SWITCHBOARD_CLI, {"--config", config_, "serve", "--port", "0"});
    ASSERT_TRUE(gateway_);
    const auto port = gateway_->port;
    run([port]() -> awaitable<void> {
        auto r = co_await http_exchange(port, "POST", "/mcp", post_headers(), init_body);
        EXPECT_EQ(r.status, 200) << r.body;
    });
    const std::regex line(R"(access method="?POST"? path="?/mcp"? status=200 .*bytes_in=(\d+))");
    std::smatch m;
    std::string log;
    for (int i = 0; i < 100 && !std::regex_search(log, m, line); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        log = gateway_->log();
    }
    ASSERT_TRUE(std::regex_search(log, m, line)) << log;
    EXPECT_EQ(std::stoul(m[1].str()), std::string(init_body).size()) << log;
}

TEST_F(GatewayLimits, LongListsComeInPagesThatAClientFollowsToTheEnd) {
    gateway_ =
        start_listening(SWITCHBOARD_CLI, {"--config", config_, "serve", "--port", "0", "--page-size", "4", "--quiet"});
    ASSERT_TRUE(gateway_);
    const auto port = gateway_->port;
    // A raw 2026-07-28 tools/list: four tools and a cursor.
    run([port]() -> awaitable<void> {
        auto h = post_headers();
        h.emplace_back("MCP-Protocol-Version", "2026-07-28");
        h.emplace_back("Mcp-Method", "tools/list");
        const std::string body =
            R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{)"
            R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
            R"("io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}})";
        auto r = co_await http_exchange(port, "POST", "/mcp", h, body);
        EXPECT_EQ(r.status, 200) << r.body;
        EXPECT_NE(r.body.find("\"nextCursor\""), std::string::npos) << r.body;
    });
    // Switchboard as the gateway's client follows every cursor: all nine of the demo server's tools.
    const auto client = (dir_ / "client.json").string();
    std::ofstream(client) << R"({"mcpServers": {"gw": {"url": ")" << gateway_->url << R"("}}})";
    std::string out;
    ASSERT_EQ(run_command(std::string(SWITCHBOARD_CLI) + " --config " + client + " tools --json", out), 0) << out;
    for (const char* tool : {"echo", "add", "slow"})
        EXPECT_NE(out.find(std::string("\"") + tool + "\""), std::string::npos) << out;
    std::string status;
    ASSERT_EQ(run_command(std::string(SWITCHBOARD_CLI) + " --config " + client + " status --json", status), 0);
    EXPECT_NE(status.find("\"tools\":9"), std::string::npos) << status;
}

TEST_F(GatewayLimits, StdioServeHasMetricsOnAPortOfItsOwn) {
    // stdin stays open (a pipe from sleep): the stdio client is there, silent.
    gateway_ = start_listening("/bin/sh", {"-c", "sleep 60 | exec " + std::string(SWITCHBOARD_CLI) + " --config '" +
                                                     config_ + "' serve --stdio --metrics-port 0"});
    ASSERT_TRUE(gateway_);
    const auto port = gateway_->port;
    run([port]() -> awaitable<void> {
        HttpResult r;
        for (int i = 0; i < 100; ++i) {  // /readyz says when the demo server is up
            r = co_await http_exchange(port, "GET", "/readyz", {}, "");
            if (r.status == 200) break;
            boost::asio::steady_timer pause(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(50));
            co_await pause.async_wait(boost::asio::use_awaitable);
        }
        EXPECT_EQ(r.status, 200) << r.body;
        auto m = co_await http_exchange(port, "GET", "/metrics", {}, "");
        EXPECT_EQ(m.status, 200);
        EXPECT_NE(m.body.find("switchboard_server_up{server=\"demo\"} 1"), std::string::npos) << m.body;
    });
    // Over HTTP the flag has no use: refused.
    std::string out;
    EXPECT_EQ(run_command(std::string(SWITCHBOARD_CLI) + " --config " + config_ + " serve --metrics-port 0 2>&1", out),
              2)
        << out;
    EXPECT_NE(out.find("--metrics-port goes with --stdio"), std::string::npos) << out;
}

}  // namespace
}  // namespace switchboard::test
