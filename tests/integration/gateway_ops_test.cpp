// `switchboard serve` operations, the real binary over raw HTTP: /healthz, /readyz, /metrics, the access log, and
// live config (file watch and SIGHUP).
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace asio = boost::asio;
using boost::asio::awaitable;

std::string modern_call_body(const std::string& tool, const std::string& message) {
    return R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":")" + tool +
           R"(","arguments":{"message":")" + message +
           R"("},)"
           R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
           R"("io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},)"
           R"("io.modelcontextprotocol/clientCapabilities":{}}}})";
}

std::string modern_list_body() {
    return R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{)"
           R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
           R"("io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},)"
           R"("io.modelcontextprotocol/clientCapabilities":{}}}})";
}

Headers modern_list_headers() {
    Headers h;
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("Accept", "application/json, text/event-stream");
    h.emplace_back("MCP-Protocol-Version", "2026-07-28");
    h.emplace_back("Mcp-Method", "tools/list");
    return h;
}

class GatewayOps : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-gwops-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        config_ = (dir_ / "config.json").string();
    }
    void TearDown() override {
        gateway_.reset();
        fs::remove_all(dir_);
    }
    void write_config(const std::string& servers) {
        // Through a rename, so that the watcher never reads a half-written file.
        const auto tmp = dir_ / "config.json.tmp";
        std::ofstream(tmp) << R"({"mcpServers": {)" << servers << "}}";
        fs::rename(tmp, config_);
    }
    static std::string demo_entry(const std::string& name, const std::string& extra_args) {
        return "\"" + name + R"(": {"command": ")" + demo_server() + R"(", "args": [)" + extra_args + "]}";
    }
    void start(std::vector<std::string> extra) {
        std::vector<std::string> args{"--config", config_, "serve", "--port", "0"};
        args.insert(args.end(), extra.begin(), extra.end());
        gateway_ = start_listening(SWITCHBOARD_CLI, args);
        ASSERT_TRUE(gateway_);
    }
    // The exposed tool names of a tools/list through the gateway (raw stateless request).
    std::vector<std::string> tool_names() {
        std::vector<std::string> names;
        const auto port = gateway_->port;
        run([port, &names]() -> awaitable<void> {
            auto r = co_await http_exchange(port, "POST", "/mcp", modern_list_headers(), modern_list_body());
            EXPECT_EQ(r.status, 200) << r.body;
            json::error_code ec;
            auto v = json::parse(r.body, ec);
            if (ec || !v.is_object() || !v.as_object().contains("result")) co_return;
            for (const auto& t : v.at("result").at("tools").as_array()) names.emplace_back(t.at("name").as_string());
        });
        return names;
    }
    bool wait_for_tool(const std::string& name, std::chrono::seconds limit) {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < until) {
            auto names = tool_names();
            if (std::find(names.begin(), names.end(), name) != names.end()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        return false;
    }

    // The access line of a request is written once its response is out: a moment after the client has it.
    bool log_has(const std::string& needle) {
        for (int i = 0; i < 50; ++i) {
            if (gateway_->log().find(needle) != std::string::npos) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }

    fs::path dir_;
    std::string config_;
    std::unique_ptr<ListeningServer> gateway_;
};

TEST_F(GatewayOps, HealthReadyAndMetrics) {
    // "slow" takes 3 s to start: the listener answers at once, /readyz says who is still starting.
    write_config(demo_entry("a", "") + R"(, "slow": {"command": "sh", "args": ["-c", "sleep 3; exec )" + demo_server() +
                 R"("]})");
    start({"--token", "ops-t0ken"});
    const auto port = gateway_->port;
    run([port]() -> awaitable<void> {
        // No token needed for the probes.
        Headers none;
        auto h = co_await http_exchange(port, "GET", "/healthz", none, "");
        EXPECT_EQ(h.status, 200);
        EXPECT_EQ(h.body, "ok\n");
        auto r1 = co_await http_exchange(port, "GET", "/readyz", none, "");
        EXPECT_EQ(r1.status, 503) << r1.body;
        EXPECT_NE(r1.body.find("\"slow\""), std::string::npos) << r1.body;
        // "a" drops out of the list once connected; "slow" is still starting.
        std::string body = r1.body;
        asio::steady_timer pause(co_await asio::this_coro::executor);
        for (int i = 0; i < 40 && body != R"({"ready":false,"starting":["slow"]})"; ++i) {
            pause.expires_after(std::chrono::milliseconds(50));
            co_await pause.async_wait(asio::use_awaitable);
            auto again = co_await http_exchange(port, "GET", "/readyz", none, "");
            body = again.body;
        }
        EXPECT_EQ(body, R"({"ready":false,"starting":["slow"]})");
        // The same Origin check as /mcp.
        Headers evil;
        evil.emplace_back("Origin", "http://evil.example");
        auto e = co_await http_exchange(port, "GET", "/healthz", evil, "");
        EXPECT_EQ(e.status, 403) << e.body;
        // /metrics needs the token.
        auto m0 = co_await http_exchange(port, "GET", "/metrics", none, "");
        EXPECT_EQ(m0.status, 401) << m0.body;
        // Unknown method on an open path: 405.
        auto p = co_await http_exchange(port, "POST", "/healthz", none, "");
        EXPECT_EQ(p.status, 405) << p.body;
    });
    bool ready = false;
    for (int i = 0; i < 100 && !ready; ++i) {
        run([port, &ready]() -> awaitable<void> {
            Headers none;
            auto r = co_await http_exchange(port, "GET", "/readyz", none, "");
            ready = r.status == 200;
            if (ready) {
                EXPECT_EQ(r.body, R"({"ready":true})");
            }
        });
        if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(ready) << gateway_->log();

    run([port]() -> awaitable<void> {
        auto h = modern_call_headers("a__echo");
        h.emplace_back("Authorization", "Bearer ops-t0ken");
        auto c = co_await http_exchange(port, "POST", "/mcp", h, modern_call_body("a__echo", "counted"));
        EXPECT_EQ(c.status, 200) << c.body;
        EXPECT_NE(c.body.find("counted"), std::string::npos) << c.body;

        Headers auth;
        auth.emplace_back("Authorization", "Bearer ops-t0ken");
        auto m = co_await http_exchange(port, "GET", "/metrics", auth, "");
        EXPECT_EQ(m.status, 200) << m.body;
        EXPECT_NE(m.headers["content-type"].find("text/plain; version=0.0.4"), std::string::npos);
        EXPECT_NE(m.body.find("switchboard_tool_calls_total{server=\"a\",tool=\"echo\"} 1\n"), std::string::npos)
            << m.body;
        EXPECT_NE(m.body.find("switchboard_tool_errors_total{server=\"a\",tool=\"echo\"} 0\n"), std::string::npos)
            << m.body;
        EXPECT_NE(
            m.body.find("switchboard_tool_call_duration_seconds_bucket{server=\"a\",tool=\"echo\",le=\"+Inf\"} 1"),
            std::string::npos)
            << m.body;
        EXPECT_NE(m.body.find("switchboard_tool_call_duration_seconds_count{server=\"a\",tool=\"echo\"} 1"),
                  std::string::npos)
            << m.body;
        EXPECT_NE(m.body.find("switchboard_server_up{server=\"slow\"} 1"), std::string::npos) << m.body;
        EXPECT_NE(m.body.find("switchboard_server_phase{server=\"a\",phase=\"connected\"} 1"), std::string::npos)
            << m.body;
        EXPECT_NE(m.body.find("switchboard_server_phase{server=\"a\",phase=\"error\"} 0"), std::string::npos) << m.body;
        EXPECT_NE(m.body.find("switchboard_gateway_sessions "), std::string::npos) << m.body;
        EXPECT_NE(m.body.find("switchboard_http_requests_total{code=\"200\"}"), std::string::npos) << m.body;
        EXPECT_NE(m.body.find("switchboard_http_response_bytes_total "), std::string::npos) << m.body;
        // An error result is counted as an error.
        auto h2 = modern_call_headers("a__fail");
        h2.emplace_back("Authorization", "Bearer ops-t0ken");
        std::string body = modern_call_body("a__fail", "x");
        co_await http_exchange(port, "POST", "/mcp", h2, body);
        auto m2 = co_await http_exchange(port, "GET", "/metrics", auth, "");
        EXPECT_NE(m2.body.find("switchboard_tool_errors_total{server=\"a\",tool=\"fail\"} 1\n"), std::string::npos)
            << m2.body;
    });

    // The access log: one line per request, no token in it.
    EXPECT_TRUE(log_has("access method=GET path=/metrics status=200"));
    const auto log = gateway_->log();
    EXPECT_NE(log.find("access method=GET path=/healthz status=200 duration_ms="), std::string::npos) << log;
    EXPECT_NE(log.find("access method=GET path=/readyz status=503"), std::string::npos) << log;
    EXPECT_NE(log.find("access method=GET path=/metrics status=401"), std::string::npos) << log;
    EXPECT_NE(log.find("access method=POST path=/mcp status=200"), std::string::npos) << log;
    EXPECT_EQ(log.find("ops-t0ken"), std::string::npos) << log;
}

TEST_F(GatewayOps, QuietHasNoAccessLog) {
    write_config(demo_entry("a", ""));
    start({"--quiet"});
    const auto port = gateway_->port;
    run([port]() -> awaitable<void> {
        Headers none;
        auto h = co_await http_exchange(port, "GET", "/healthz", none, "");
        EXPECT_EQ(h.status, 200);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(gateway_->log().find("access "), std::string::npos) << gateway_->log();
}

TEST_F(GatewayOps, AccessLogNamesTheSession) {
    write_config(demo_entry("a", ""));
    start({});
    const auto port = gateway_->port;
    std::string session;
    run([port, &session]() -> awaitable<void> {
        Headers h;
        h.emplace_back("Content-Type", "application/json");
        h.emplace_back("Accept", "application/json, text/event-stream");
        auto r = co_await http_exchange(
            port, "POST", "/mcp", h,
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
            R"("capabilities":{},"clientInfo":{"name":"raw","version":"1"}}})");
        EXPECT_EQ(r.status, 200) << r.body;
        session = r.headers["mcp-session-id"];
    });
    ASSERT_FALSE(session.empty());
    EXPECT_TRUE(log_has("session=" + session)) << gateway_->log();
    EXPECT_NE(gateway_->log().find("path=/mcp status=200"), std::string::npos) << gateway_->log();
}

TEST_F(GatewayOps, ConfigFileChangeAddsAServerAndABadFileKeepsTheOldConfig) {
    write_config(demo_entry("a", ""));
    start({});
    auto before = tool_names();
    EXPECT_NE(std::find(before.begin(), before.end(), "echo"), before.end()) << gateway_->log();

    write_config(demo_entry("a", "") + ", " + demo_entry("b", R"("--legacy-only")"));
    EXPECT_TRUE(wait_for_tool("b__echo", std::chrono::seconds(20))) << gateway_->log();
    EXPECT_TRUE(wait_for_tool("a__echo", std::chrono::seconds(1))) << gateway_->log();
    EXPECT_NE(gateway_->log().find("config reloaded: added [b], removed [], changed []"), std::string::npos)
        << gateway_->log();

    // A broken file is reported; the running config stays.
    {
        const auto tmp = dir_ / "broken.tmp";
        std::ofstream(tmp) << "{ this is not json";
        fs::rename(tmp, config_);
    }
    bool reported = false;
    for (int i = 0; i < 60 && !reported; ++i) {
        reported = gateway_->log().find("config not reloaded") != std::string::npos;
        if (!reported) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(reported) << gateway_->log();
    auto after = tool_names();
    EXPECT_NE(std::find(after.begin(), after.end(), "b__echo"), after.end()) << gateway_->log();
}

TEST_F(GatewayOps, SighupReloads) {
    // The file is rewritten in place with the same size and its old mtime: only SIGHUP can tell.
    const std::string off = R"("enabled": false)";
    const std::string on = R"("enabled": true )";
    auto config = [&](const std::string& flag) {
        return demo_entry("a", "") + R"(, "b": {"command": ")" + demo_server() + R"(", )" + flag + "}";
    };
    write_config(config(off));
    start({});
    auto before = tool_names();
    EXPECT_NE(std::find(before.begin(), before.end(), "echo"), before.end()) << gateway_->log();
    const auto mtime = fs::last_write_time(config_);
    {
        std::fstream f(config_, std::ios::in | std::ios::out);
        f << R"({"mcpServers": {)" << config(on) << "}}";
    }
    fs::last_write_time(config_, mtime);
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    auto unchanged = tool_names();
    EXPECT_EQ(std::find(unchanged.begin(), unchanged.end(), "b__echo"), unchanged.end()) << gateway_->log();

    ASSERT_EQ(::kill(gateway_->pid, SIGHUP), 0);
    EXPECT_TRUE(wait_for_tool("b__echo", std::chrono::seconds(20))) << gateway_->log();
    EXPECT_NE(gateway_->log().find("SIGHUP: reloading"), std::string::npos) << gateway_->log();
    EXPECT_NE(gateway_->log().find("changed [b]"), std::string::npos) << gateway_->log();
}

}  // namespace
}  // namespace switchboard::test
