// Scale-out behind a real load balancer: two `switchboard serve` instances (same config, one demo server) with
// Debian's nginx in front, run as the current user from a generated config in a temp directory. nginx's access log
// (with $upstream_addr) is the witness of which instance answered each request.
// - 2026-07-28 clients are stateless: round robin over both instances, every request succeeds.
// - legacy sessions: each instance prefixes its session ids (`serve --instance-id a` → "a.<hex>"), and nginx routes
//   on that prefix with a `map`, so every request of a session reaches the instance that created it.
// - tasks of the Tasks extension: their ids carry the same prefix, and the map routes on the Mcp-Name header too, so
//   every tasks/get, tasks/update and tasks/cancel reaches the instance whose stdio upstream runs the task;
//   instances that share SWITCHBOARD_TASK_KEY accept each other's ids (a shared upstream needs no routing).
// Skipped when nginx is not installed (scripts/setup installs it).
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <fcntl.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
using boost::asio::awaitable;

std::string nginx_binary() {
    for (const char* p : {"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"})
        if (::access(p, X_OK) == 0) return p;
    return {};
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool port_open(std::uint16_t port) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket s(io);
    boost::system::error_code ec;
    s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
    return !ec;
}

Headers json_headers() {
    Headers h;
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("Accept", "application/json, text/event-stream");
    return h;
}

// A 2026-07-28 request: no session; version, client info and capabilities in _meta; Mcp-Method/Mcp-Name headers.
std::string modern_body(int id, const std::string& method, const std::string& params) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":{)" + params +
           (params.empty() ? "" : ",") +
           R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
           R"("io.modelcontextprotocol/clientInfo":{"name":"scale-test","version":"1"},)"
           R"("io.modelcontextprotocol/clientCapabilities":{}}}})";
}

class GatewayScale : public ::testing::Test {
protected:
    void SetUp() override {
        nginx_ = nginx_binary();
        if (nginx_.empty()) GTEST_SKIP() << "nginx is not installed (scripts/setup installs Debian's nginx)";
        dir_ = fs::temp_directory_path() / ("switchboard-scale-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        config_ = (dir_ / "config.json").string();
        std::ofstream(config_) << R"({"mcpServers": {"demo": {"command": ")" << DEMO_SERVER
                               << R"(", "args": ["--tasks"]}}})";
        for (const char* id : {"a", "b"}) {
            auto g = start_listening(SWITCHBOARD_CLI,
                                     {"--config", config_, "serve", "--port", "0", "--instance-id", id});
            ASSERT_TRUE(g);
            instances_.push_back(std::move(g));
        }
        start_nginx();
    }

    void TearDown() override {
        if (nginx_pid_ > 0) {
            ::kill(nginx_pid_, SIGTERM);  // fast shutdown
            int status = 0;
            ::waitpid(nginx_pid_, &status, 0);
        }
        instances_.clear();
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    // docs/gateway.md (Scaling out) documents: round robin for everything, except a request whose
    // Mcp-Session-Id starts with an instance's prefix, or that has no session and an Mcp-Name that does (a task id
    // of the Tasks extension), which goes to that instance.
    void start_nginx() {
        port_ = free_port();
        const auto d = dir_.string();
        const auto a = std::to_string(instances_[0]->port), b = std::to_string(instances_[1]->port);
        std::ofstream conf(dir_ / "nginx.conf");
        if (::geteuid() == 0) conf << "user root;\n";  // workers keep the user that owns the temp directory
        conf << "worker_processes 1;\n"
             << "events { worker_connections 256; }\n"
             << "http {\n"
             << "  client_body_temp_path " << d << "/body;\n  proxy_temp_path " << d << "/proxy;\n"
             << "  fastcgi_temp_path " << d << "/fastcgi;\n  uwsgi_temp_path " << d << "/uwsgi;\n"
             << "  scgi_temp_path " << d << "/scgi;\n"
             << "  log_format mcp '$upstream_addr $status $request_method $http_mcp_session_id $http_mcp_name';\n"
             << "  access_log " << d << "/access.log mcp;\n"
             << "  upstream switchboard { server 127.0.0.1:" << a << "; server 127.0.0.1:" << b << "; }\n"
             << "  upstream switchboard_a { server 127.0.0.1:" << a << "; }\n"
             << "  upstream switchboard_b { server 127.0.0.1:" << b << "; }\n"
             << "  map $http_mcp_session_id$http_mcp_name $switchboard_backend {\n"
             << "    default switchboard;\n"
             << "    ~^a\\. switchboard_a;\n"
             << "    ~^b\\. switchboard_b;\n"
             << "  }\n"
             << "  server {\n"
             << "    listen 127.0.0.1:" << port_ << ";\n"
             << "    location /mcp {\n"
             << "      proxy_pass http://$switchboard_backend;\n"
             << "      proxy_http_version 1.1;\n"
             << "      proxy_set_header Host $host;\n"
             << "      proxy_set_header Connection \"\";\n"
             << "      proxy_buffering off;\n"
             << "      proxy_read_timeout 1h;\n"
             << "    }\n"
             << "  }\n"
             << "}\n";
        conf.close();
        const std::string globals = "daemon off; pid " + d + "/nginx.pid; error_log stderr;";
        const std::string log = d + "/nginx.log";
        std::vector<std::string> args{nginx_, "-e", "stderr", "-p", d, "-c", d + "/nginx.conf", "-g", globals};
        std::vector<char*> argv;
        for (auto& s : args) argv.push_back(s.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        ASSERT_EQ(::posix_spawn(&nginx_pid_, nginx_.c_str(), &fa, nullptr, argv.data(), environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        for (int i = 0; i < 100 && !port_open(port_); ++i) {
            int status = 0;
            if (::waitpid(nginx_pid_, &status, WNOHANG) == nginx_pid_) {
                nginx_pid_ = -1;
                FAIL() << "nginx exited: " << slurp(log);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_TRUE(port_open(port_)) << slurp(log);
    }

    // Access log lines: upstream address, status, method, session id ("-" when none). nginx writes a line once
    // the request is done, maybe just after the client got its response: waits up to 5 s for `at_least` lines.
    struct Line {
        std::string upstream, status, method, session, name;
    };
    std::vector<Line> access_log(std::size_t at_least) {
        auto lines = read_access_log();
        for (int i = 0; i < 100 && lines.size() < at_least; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            lines = read_access_log();
        }
        return lines;
    }
    std::vector<Line> read_access_log() {
        std::vector<Line> out;
        std::istringstream in(slurp(dir_ / "access.log"));
        for (std::string l; std::getline(in, l);) {
            std::istringstream f(l);
            Line x;
            f >> x.upstream >> x.status >> x.method >> x.session >> x.name;
            out.push_back(x);
        }
        return out;
    }
    std::string address(std::size_t i) const { return "127.0.0.1:" + std::to_string(instances_[i]->port); }

    std::string nginx_;
    fs::path dir_;
    std::string config_;
    std::vector<std::unique_ptr<ListeningServer>> instances_;
    pid_t nginx_pid_ = -1;
    std::uint16_t port_ = 0;
};

TEST_F(GatewayScale, StatelessRequestsSpreadOverBothInstances) {
    const auto port = port_;
    run([port]() -> awaitable<void> {
        for (int i = 0; i < 10; ++i) {
            auto h = json_headers();
            h.emplace_back("MCP-Protocol-Version", "2026-07-28");
            std::string body;
            if (i % 2 == 0) {
                h.emplace_back("Mcp-Method", "tools/list");
                body = modern_body(i + 1, "tools/list", "");
            } else {
                h.emplace_back("Mcp-Method", "tools/call");
                h.emplace_back("Mcp-Name", "echo");
                body = modern_body(i + 1, "tools/call",
                                   R"("name":"echo","arguments":{"message":"hello )" + std::to_string(i) + "\"}");
            }
            auto r = co_await http_exchange(port, "POST", "/mcp", h, body);
            EXPECT_EQ(r.status, 200) << i << ": " << r.body;
            if (i % 2 == 0)
                EXPECT_NE(r.body.find(R"("name":"echo")"), std::string::npos) << r.body;
            else
                EXPECT_NE(r.body.find("\"text\":\"hello " + std::to_string(i) + "\""), std::string::npos) << r.body;
        }
    });
    std::map<std::string, int> per_instance;
    for (const auto& l : access_log(10)) {
        EXPECT_EQ(l.status, "200") << l.upstream;
        ++per_instance[l.upstream];
    }
    EXPECT_EQ(per_instance[address(0)] + per_instance[address(1)], 10);
    EXPECT_GE(per_instance[address(0)], 1) << "instance a got nothing";
    EXPECT_GE(per_instance[address(1)], 1) << "instance b got nothing";
}

TEST_F(GatewayScale, LegacySessionsStickToTheInstanceThatCreatedThem) {
    const auto port = port_;
    std::vector<std::string> sessions;
    run([port, &sessions]() -> awaitable<void> {
        // Two initializes in a row: round robin gives one to each instance.
        for (int s = 0; s < 2; ++s) {
            auto h = json_headers();
            const std::string init =
                R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                R"("capabilities":{},"clientInfo":{"name":"scale-test","version":"1"}}})";
            auto r = co_await http_exchange(port, "POST", "/mcp", h, init);
            EXPECT_EQ(r.status, 200) << r.body;
            sessions.push_back(r.headers["mcp-session-id"]);
        }
        for (const auto& id : sessions) {
            auto h = json_headers();
            h.emplace_back("Mcp-Session-Id", id);
            h.emplace_back("MCP-Protocol-Version", "2025-11-25");
            auto n = co_await http_exchange(port, "POST", "/mcp", h,
                                            R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
            EXPECT_EQ(n.status, 202) << n.body;
            for (int i = 0; i < 5; ++i) {
                const std::string body =
                    R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 2) +
                    (i % 2 ? R"(,"method":"tools/list","params":{}})"
                           : R"(,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m"}}})");
                auto r = co_await http_exchange(port, "POST", "/mcp", h, body);
                EXPECT_EQ(r.status, 200) << id << " request " << i << ": " << r.body;  // 404: wrong instance
                EXPECT_EQ(r.body.find("\"error\""), std::string::npos) << r.body;
            }
        }
    });
    ASSERT_EQ(sessions.size(), 2u);
    std::map<std::string, std::string> expected;  // session id -> the address of the instance that created it
    for (const auto& id : sessions) {
        ASSERT_GE(id.size(), 3u) << id;
        ASSERT_TRUE(id.starts_with("a.") || id.starts_with("b.")) << id;
        expected[id] = address(id[0] == 'a' ? 0 : 1);
    }
    EXPECT_NE(sessions[0].substr(0, 2), sessions[1].substr(0, 2)) << "both initializes reached one instance";
    int followed = 0;
    for (const auto& l : access_log(14)) {  // 2 initializes, then 6 requests per session
        auto it = expected.find(l.session);
        if (it == expected.end()) continue;
        ++followed;
        EXPECT_EQ(l.upstream, it->second) << l.session << " " << l.method << " " << l.status;
        EXPECT_TRUE(l.status == "200" || l.status == "202") << l.status;
    }
    EXPECT_EQ(followed, 12);  // per session: notifications/initialized and 5 requests
}

// A 2026-07-28 request of the Tasks extension through nginx: `method` with `name` in Mcp-Name (a tool, or the
// task id), the client declaring tasks (and elicitation when `elicit`).
awaitable<HttpResult> task_request(std::uint16_t port, int id, const std::string& method, const std::string& name,
                                   const std::string& params, bool elicit) {
    auto h = json_headers();
    h.emplace_back("MCP-Protocol-Version", "2026-07-28");
    h.emplace_back("Mcp-Method", method);
    h.emplace_back("Mcp-Name", name);
    const std::string body =
        R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":{)" + params +
        R"(,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
        R"("io.modelcontextprotocol/clientInfo":{"name":"scale-test","version":"1"},)"
        R"("io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}})" +
        std::string(elicit ? R"(,"elicitation":{})" : "") + "}}}}";
    co_return co_await http_exchange(port, "POST", "/mcp", h, body);
}

// The task id of a CreateTaskResult (empty when the answer is not one).
std::string task_id_of(const std::string& body) {
    static const std::regex id(R"re("taskId":"([^"]+)")re");
    std::smatch m;
    return std::regex_search(body, m, id) ? m[1].str() : std::string();
}

std::string status_of(const std::string& body) {
    static const std::regex status(R"re("status":"([a-z_]+)")re");
    std::smatch m;
    return std::regex_search(body, m, status) ? m[1].str() : std::string();
}

// tasks/update with the report's format.
awaitable<void> answer_format(std::uint16_t port, int id, const std::string& task, const std::string& format) {
    auto u = co_await task_request(port, id, "tasks/update", task,
                                   R"("taskId":")" + task +
                                       R"(","inputResponses":{"format":{"action":"accept",)"
                                       R"("content":{"format":")" +
                                       format + R"("}}})",
                                   false);
    EXPECT_EQ(u.status, 200) << u.body;
    EXPECT_EQ(u.body.find("\"error\""), std::string::npos) << u.body;
}

// tasks/get until the status is not `working` (20 s at most): the last answer.
awaitable<std::string> poll_until_settled(std::uint16_t port, const std::string& task) {
    std::string body;
    for (int i = 0; i < 200; ++i) {
        auto r = co_await task_request(port, 100 + i, "tasks/get", task, R"("taskId":")" + task + "\"", false);
        body = r.body;
        if (r.status != 200 || status_of(body) != "working") co_return body;
        boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(100));
        co_await t.async_wait(boost::asio::use_awaitable);
    }
    co_return body;
}

// Tasks of stdio upstreams live in the instance that started them: nginx routes tasks/* on the Mcp-Name header's
// instance prefix (docs/gateway.md's map of $http_mcp_session_id$http_mcp_name), with no sticky session. A task
// started on either instance is polled to its end, asked for input and answered with tasks/update, or cancelled,
// every tasks/* request reaching the instance that made the id.
TEST_F(GatewayScale, TasksArePolledUpdatedAndCancelledThroughTheInstanceThatMadeThem) {
    const auto port = port_;
    std::vector<std::string> ids;
    run([port, &ids]() -> awaitable<void> {
        // Four tasks in a row: round robin starts two on each instance.
        for (int i = 0; i < 4; ++i) {
            auto r = co_await task_request(
                port, 1 + i, "tools/call", "report",
                R"("name":"report","arguments":{"seconds":)" + std::string(i == 3 ? "30" : "2") + "}", false);
            EXPECT_EQ(r.status, 200) << r.body;
            ids.push_back(task_id_of(r.body));
            EXPECT_FALSE(ids.back().empty()) << "not a task: " << r.body;
        }
        if (std::any_of(ids.begin(), ids.end(), [](auto& id) { return id.empty(); })) co_return;
        // Each report asks once which format it should have (the gateway answers the upstream's ask as a task's
        // input request): answered with tasks/update, and the answer used.
        const char* formats[] = {"pdf", "html", "md"};
        for (int i : {0, 1, 2}) {
            const auto asked = co_await poll_until_settled(port, ids[i]);
            EXPECT_EQ(status_of(asked), "input_required") << asked;
            EXPECT_NE(asked.find("Which format should the report have?"), std::string::npos) << asked;
            co_await answer_format(port, 300 + i, ids[i], formats[i]);
            const auto done = co_await poll_until_settled(port, ids[i]);
            EXPECT_NE(done.find(std::string("Report on the weather (") + formats[i] + ", 2 s): all quiet."),
                      std::string::npos)
                << done;
        }
        // Cancelled.
        auto c = co_await task_request(port, 400, "tasks/cancel", ids[3], R"("taskId":")" + ids[3] + "\"", false);
        EXPECT_EQ(c.status, 200) << c.body;
        EXPECT_EQ(status_of(co_await poll_until_settled(port, ids[3])), "cancelled");
    });
    ASSERT_EQ(ids.size(), 4u);
    std::map<std::string, std::string> expected;  // task id -> the instance that made it
    for (const auto& id : ids) {
        ASSERT_TRUE(id.starts_with("a.") || id.starts_with("b.")) << id;
        expected[id] = address(id[0] == 'a' ? 0 : 1);
    }
    EXPECT_TRUE(std::any_of(ids.begin(), ids.end(), [](auto& id) { return id[0] == 'a'; })) << "none started on a";
    EXPECT_TRUE(std::any_of(ids.begin(), ids.end(), [](auto& id) { return id[0] == 'b'; })) << "none started on b";
    int routed = 0;
    for (const auto& l : access_log(12)) {
        auto it = expected.find(l.name);
        if (it == expected.end()) continue;  // the tools/call that started a task: round robin
        ++routed;
        EXPECT_EQ(l.upstream, it->second) << l.name << " " << l.status;
        EXPECT_EQ(l.status, "200") << l.name;
    }
    EXPECT_GE(routed, 12);  // per report: tasks/get until asked, tasks/update, tasks/get to the end; a tasks/cancel
}

// Instances that share SWITCHBOARD_TASK_KEY accept each other's ids: with a shared upstream (one demo server over
// HTTP behind both), a task started on one is polled on the other, no routing needed; with keys of their own, the
// other instance knows no such task.
TEST_F(GatewayScale, InstancesSharingTheTaskKeyAcceptEachOthersIds) {
    auto upstream = start_listening(DEMO_SERVER, {"--http", "0", "--tasks"});
    ASSERT_TRUE(upstream);
    const auto shared = (dir_ / "shared.json").string();
    std::ofstream(shared) << R"({"mcpServers": {"demo": {"url": ")" << upstream->url << R"("}}})";
    std::vector<std::unique_ptr<ListeningServer>> g;
    for (const char* id : {"c", "d", "e"}) {
        // c and d share a key; e has its own.
        ::setenv("SWITCHBOARD_TASK_KEY", id[0] == 'e' ? "another secret" : "a shared secret", 1);
        g.push_back(
            start_listening(SWITCHBOARD_CLI, {"--config", shared, "serve", "--port", "0", "--instance-id", id}));
        ::unsetenv("SWITCHBOARD_TASK_KEY");
        ASSERT_TRUE(g.back());
    }
    const std::uint16_t c = g[0]->port, d = g[1]->port, e = g[2]->port;
    run([c, d, e]() -> awaitable<void> {
        auto r =
            co_await task_request(c, 1, "tools/call", "report", R"("name":"report","arguments":{"seconds":1})", false);
        const auto id = task_id_of(r.body);
        EXPECT_TRUE(id.starts_with("c.")) << r.body;
        EXPECT_EQ(status_of(co_await poll_until_settled(d, id)), "input_required");
        co_await answer_format(d, 3, id, "pdf");
        const auto body = co_await poll_until_settled(d, id);
        EXPECT_EQ(status_of(body), "completed") << body;
        auto other = co_await task_request(e, 2, "tasks/get", id, R"("taskId":")" + id + "\"", false);
        EXPECT_NE(other.body.find("Unknown taskId"), std::string::npos) << other.body;
    });
}

}  // namespace
}  // namespace switchboard::test
