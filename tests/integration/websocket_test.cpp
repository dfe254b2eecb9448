// WebSocket transport both ways: the C++ client channel against the demo server's --ws mode, the CLI with a `ws`
// server in its config, size limits, a server that dies mid-call, and TLS certificate failures.
#include "harness.hpp"
#include "net_harness.hpp"

#include <switchboard/transport/websocket.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

awaitable<jsonrpc::Outcome<std::shared_ptr<mcp::ClientSession>>> ws_session(std::string url, std::string name,
                                                                            std::size_t max_message_size) {
    auto ex = co_await asio::this_coro::executor;
    transport::WebSocketClientOptions wo;
    wo.server_name = name;
    wo.max_message_size = max_message_size;
    auto channel = co_await transport::connect_websocket_channel(ex, url, wo);
    if (!channel) co_return channel.error();
    mcp::ClientOptions co;
    co.server_name = name;
    co_return co_await mcp::ClientSession::connect(ex, *channel, co);
}

std::string text_of(const mcp::CallToolResult& r) { return r.content.at(0).text(); }

// A few megabytes each way: the message crosses the stream in many reads and writes (and TLS records), and comes
// back unchanged.
awaitable<void> echo_a_big_message(std::shared_ptr<mcp::ClientSession> session, std::size_t size) {
    std::string big(size, 'a');
    for (std::size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('b' + i % 23);
    json::object args;
    args["message"] = big;
    auto echo = co_await session->call_tool("echo", args);
    CO_ASSERT_TRUE(echo.has_value());
    const std::string back = text_of(*echo);
    EXPECT_EQ(back.size(), big.size());
    EXPECT_TRUE(back == big) << "the echo differs from what was sent";
}

TEST(WebSocket, ClientListsAndCallsToolsWithProgress) {
    auto server = start_listening(demo_server(), {"--ws", "0", "--page-size", "0"});
    ASSERT_TRUE(server);
    EXPECT_EQ(server->url.rfind("ws://127.0.0.1:", 0), 0u);
    run([&]() -> awaitable<void> {
        auto s = co_await ws_session(server->url, "demo-ws", jsonrpc::default_max_message_size);
        CO_ASSERT_TRUE(s.has_value());
        auto session = *s;
        EXPECT_EQ(session->protocol_version(), "2026-07-28");
        auto tools = co_await session->list_tools();
        CO_ASSERT_TRUE(tools.has_value());
        EXPECT_EQ(tools->size(), 9u);
        json::object args;
        args["message"] = "hello over ws";
        auto echo = co_await session->call_tool("echo", args);
        CO_ASSERT_TRUE(echo.has_value());
        EXPECT_EQ(text_of(*echo), "hello over ws");

        int progress = 0;
        mcp::CallOptions opts;
        opts.on_progress = [&progress](const jsonrpc::Progress&) { ++progress; };
        json::object slow_args;
        slow_args["seconds"] = 0.3;
        slow_args["steps"] = 3;
        auto slow = co_await session->call_tool("slow", slow_args, opts);
        CO_ASSERT_TRUE(slow.has_value());
        EXPECT_EQ(text_of(*slow), "done after 3 steps");
        EXPECT_EQ(progress, 3);
        co_await session->close();
    });
}

TEST(WebSocket, AFewMegabytesEachWay) {
    auto server = start_listening(demo_server(), {"--ws", "0"});
    ASSERT_TRUE(server);
    run([&]() -> awaitable<void> {
        auto s = co_await ws_session(server->url, "demo-ws", jsonrpc::default_max_message_size);
        CO_ASSERT_TRUE(s.has_value());
        co_await echo_a_big_message(*s, 3 * 1024 * 1024 + 7);
        co_await (*s)->close();
    });
}

TEST(WebSocket, OversizeMessageIsAClearError) {
    auto server = start_listening(demo_server(), {"--ws", "0", "--page-size", "0"});
    ASSERT_TRUE(server);
    run([&]() -> awaitable<void> {
        auto s = co_await ws_session(server->url, "tiny", 2048);
        CO_ASSERT_TRUE(s.has_value());
        auto r = co_await (*s)->list_tools();  // a small request; the nine tool definitions come back over 2 KiB
        CO_ASSERT_FALSE(r.has_value());
        const auto& msg = r.error().message;
        EXPECT_NE(msg.find("server \"tiny\""), std::string::npos) << msg;
        EXPECT_NE(msg.find("over the 2.0 KiB message size limit"), std::string::npos) << msg;
    });
}

TEST(WebSocket, ServerRefusesOversizeFrame) {
    auto server = start_listening(demo_server(), {"--ws", "0", "--max-message-size", "4096"});
    ASSERT_TRUE(server);
    run([&]() -> awaitable<void> {
        auto s = co_await ws_session(server->url, "limited", jsonrpc::default_max_message_size);
        CO_ASSERT_TRUE(s.has_value());
        json::object args;
        args["message"] = std::string(10000, 'x');
        auto r = co_await (*s)->call_tool("echo", args);
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_NE(r.error().message.find("code 1009, message too big"), std::string::npos) << r.error().message;
    });
}

TEST(WebSocket, ServerKilledMidCallNamesTheServer) {
    auto server = start_listening(demo_server(), {"--ws", "0"});
    ASSERT_TRUE(server);
    auto* raw = server.get();
    run([&]() -> awaitable<void> {
        auto s = co_await ws_session(server->url, "doomed", jsonrpc::default_max_message_size);
        CO_ASSERT_TRUE(s.has_value());
        asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(300));
        t.async_wait([raw](boost::system::error_code) { raw->kill_now(); });
        json::object args;
        args["seconds"] = 30;
        auto r = co_await (*s)->call_tool("slow", args);
        CO_ASSERT_FALSE(r.has_value());
        const auto& msg = r.error().message;
        EXPECT_NE(msg.find("server \"doomed\""), std::string::npos) << msg;
        EXPECT_NE(msg.find("WebSocket connection lost"), std::string::npos) << msg;
        EXPECT_NE(msg.find("tools/call"), std::string::npos) << msg;
    });
}

TEST(WebSocket, ConnectionRefusedAndNotAWebSocketServer) {
    auto http = start_listening(demo_server(), {"--http", "0"});
    ASSERT_TRUE(http);
    const auto closed_port = free_port();
    run([&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        transport::WebSocketClientOptions wo;
        auto refused = co_await transport::connect_websocket_channel(
            ex, "ws://127.0.0.1:" + std::to_string(closed_port) + "/", wo);
        CO_ASSERT_FALSE(refused.has_value());
        EXPECT_NE(refused.error().message.find("refused"), std::string::npos) << refused.error().message;
        auto wrong = co_await transport::connect_websocket_channel(
            ex, "ws://127.0.0.1:" + std::to_string(http->port) + "/mcp", wo);
        CO_ASSERT_FALSE(wrong.has_value());
        EXPECT_NE(wrong.error().message.find("handshake"), std::string::npos) << wrong.error().message;
    });
}

// A self-signed certificate for DNS:localhost only, made with the openssl command.
class Wss : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("switchboard-tls-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        key_ = (dir_ / "key.pem").string();
        cert_ = (dir_ / "cert.pem").string();
        std::string out;
        ASSERT_EQ(run_command("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                              "-addext subjectAltName=DNS:localhost -keyout " +
                                  key_ + " -out " + cert_ + " 2>&1",
                              out),
                  0)
            << out;
        server_ = start_listening(demo_server(), {"--ws", "0", "--tls-cert", cert_, "--tls-key", key_});
        ASSERT_TRUE(server_);
        ASSERT_EQ(server_->url.rfind("wss://127.0.0.1:", 0), 0u) << server_->url;
    }
    void TearDown() override {
        server_.reset();
        std::filesystem::remove_all(dir_);
    }
    std::string url(const std::string& host) const {
        return "wss://" + host + ":" + std::to_string(server_->port) + "/";
    }
    // A session over wss://localhost, trusting the test certificate.
    awaitable<jsonrpc::Outcome<std::shared_ptr<mcp::ClientSession>>> trusted_session() const {
        auto ex = co_await asio::this_coro::executor;
        transport::WebSocketClientOptions wo;
        wo.ca_file = cert_;
        auto channel = co_await transport::connect_websocket_channel(ex, url("localhost"), wo);
        if (!channel) co_return channel.error();
        mcp::ClientOptions co;
        co.server_name = "secure";
        co_return co_await mcp::ClientSession::connect(ex, *channel, co);
    }
    std::filesystem::path dir_;
    std::string key_, cert_;
    std::unique_ptr<ListeningServer> server_;
};

TEST_F(Wss, TrustedCertificateConnects) {
    run([this]() -> awaitable<void> {
        auto session = co_await trusted_session();
        CO_ASSERT_TRUE(session.has_value());
        json::object args;
        args["message"] = "over tls";
        auto echo = co_await (*session)->call_tool("echo", args);
        CO_ASSERT_TRUE(echo.has_value());
        EXPECT_EQ(text_of(*echo), "over tls");
        co_await (*session)->close();
    });
}

// Over TLS, then the close handshake and the TLS teardown, twice: the server keeps serving after a close.
TEST_F(Wss, AFewMegabytesEachWayThenACleanCloseTwice) {
    run([this]() -> awaitable<void> {
        for (std::size_t round = 0; round < 2; ++round) {
            auto session = co_await trusted_session();
            CO_ASSERT_TRUE(session.has_value());
            co_await echo_a_big_message(*session, 3 * 1024 * 1024 + round);
            co_await (*session)->close();
        }
    });
}

TEST_F(Wss, UntrustedCertificateIsAClearError) {
    run([this]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        transport::WebSocketClientOptions wo;  // the system store does not know our certificate
        auto r = co_await transport::connect_websocket_channel(ex, url("localhost"), wo);
        CO_ASSERT_FALSE(r.has_value());
        const auto& msg = r.error().message;
        EXPECT_NE(msg.find("TLS handshake"), std::string::npos) << msg;
        EXPECT_NE(msg.find("certificate verify failed"), std::string::npos) << msg;
        EXPECT_NE(msg.find("self-signed"), std::string::npos) << msg;
    });
}

TEST_F(Wss, HostNameMismatchIsAClearError) {
    run([this]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        transport::WebSocketClientOptions wo;
        wo.ca_file = cert_;  // trusted, but issued for localhost, not 127.0.0.1
        auto r = co_await transport::connect_websocket_channel(ex, url("127.0.0.1"), wo);
        CO_ASSERT_FALSE(r.has_value());
        const auto& msg = r.error().message;
        EXPECT_NE(msg.find("certificate verify failed"), std::string::npos) << msg;
        EXPECT_NE(msg.find("mismatch"), std::string::npos) << msg;
    });
}

TEST(WebSocket, CliToolsAndCallThroughAWsServer) {
    namespace fs = std::filesystem;
    auto server = start_listening(demo_server(), {"--ws", "0", "--page-size", "2"});
    ASSERT_TRUE(server);
    auto dir = fs::temp_directory_path() / ("switchboard-ws-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto cfg = (dir / "config.json").string();
    std::ofstream(cfg) << R"({"mcpServers": {"remote": {"type": "ws", "url": ")" << server->url
                       << R"("}, "inferred": {"url": ")" << server->url << R"("}}})";
    std::string out;
    int rc = run_command(std::string(SWITCHBOARD_CLI) + " --config " + cfg + " tools 2>&1", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("remote__echo"), std::string::npos) << out;
    EXPECT_NE(out.find("inferred__echo"), std::string::npos) << out;
    rc = run_command(
        std::string(SWITCHBOARD_CLI) + " --config " + cfg + " call remote__echo '{\"message\": \"via ws\"}' 2>&1", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("via ws"), std::string::npos) << out;
    rc = run_command(std::string(SWITCHBOARD_CLI) + " --config " + cfg + " status --json 2>&1", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("\"ws\""), std::string::npos) << out;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace switchboard::test
