// The Tasks extension through the gateway: `switchboard serve --instance-id a` in front of a server that answers
// `report` with tasks and checks every task message against the extension's official schemas
// (tests/peers/scripts/ext_tasks_server.mjs, which logs what it receives), and two clients made with the extension's
// official requester (@modelcontextprotocol/ext-tasks/client over the TS SDK v2 client;
// tests/peers/scripts/ext_tasks_gateway_client.mjs).
#include "harness.hpp"
#include "host_harness.hpp"
#include "net_harness.hpp"

#include <switchboard/gateway/tasks.hpp>
#include <switchboard/mcp/tasks.hpp>

#include "../../src/mcp/request_state.hpp"  // a RequestContext as a session builds one

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

class GatewayTasks : public ::testing::Test {
protected:
    // Members, not free functions: the unity build puts other tests' helpers of the same names beside these.
    static std::string q(const std::string& s) { return json::serialize(json::value(s)); }

    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-gateway-tasks-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        write_config("");
    }
    // `extra`: more fields of the upstream's entry.
    void write_config(const std::string& extra) {
        const std::string peer = PEERS_DIR + std::string("/scripts/ext_tasks_server.mjs");
        std::ofstream(dir_ / "config.json") << R"({"mcpServers": {"peer": {"command": )" << q(peers_node())
                                            << R"(, "args": [)" << q(peer) << ", " << q("--log") << ", "
                                            << q((dir_ / "peer.log").string())
                                            << R"(], "startupTimeoutMs": 60000)" << extra << "}}}";
    }
    void TearDown() override {
        gateway_.reset();
        fs::remove_all(dir_);
    }

    std::string peer_log() const {
        std::ifstream in(dir_ / "peer.log");
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    fs::path dir_;
    std::unique_ptr<ListeningServer> gateway_;
};

TEST_F(GatewayTasks, ExtTasksClientsFollowCancelAndAnswerTasksAndCannotSeeEachOthers) {
    gateway_ = start_listening(SWITCHBOARD_CLI,
                               {"--config", (dir_ / "config.json").string(), "serve", "--port", "0", "--instance-id", "a"});
    ASSERT_TRUE(gateway_);
    std::string out;
    const auto cmd = peers_node() + " " + PEERS_DIR + "/scripts/ext_tasks_gateway_client.mjs " + gateway_->url;
    ASSERT_EQ(run_command(cmd + " 2>&1", out), 0) << out << gateway_->log();
    json::error_code ec;
    auto v = json::parse(out, ec);
    ASSERT_FALSE(ec) << out << gateway_->log();
    const auto& o = v.as_object();
    const auto log = peer_log();

    // A 5 s task: handed out as a task with the gateway's id (this instance's prefix), polled to its end.
    EXPECT_EQ(o.at("firstKind"), "task") << v;
    const std::string first_id(o.at("firstId").as_string());
    EXPECT_TRUE(first_id.starts_with("a.")) << first_id;
    EXPECT_EQ(log.find(first_id), std::string::npos) << "the upstream never sees the gateway's ids";
    EXPECT_EQ(o.at("firstStatus"), "completed") << v;
    EXPECT_EQ(o.at("firstText"), "report ready after 5 s") << v;
    EXPECT_GE(o.at("firstSeconds").to_number<double>(), 4.5) << v;
    EXPECT_EQ(o.at("ownerAgain"), "completed") << v;

    // Cancelled after a second: the upstream got tasks/cancel (with its own id) and the task ended cancelled.
    EXPECT_EQ(o.at("secondStatus"), "cancelled") << v;
    EXPECT_LT(o.at("secondSeconds").to_number<double>(), 10.0) << v;
    EXPECT_NE(log.find("tasks/cancel task-"), std::string::npos) << log;

    // input_required: asked through the client's input handler, answered with tasks/update, and the answer used.
    EXPECT_EQ(o.at("thirdStatus"), "completed") << v;
    EXPECT_EQ(o.at("thirdText"), "report ready after 2 s (appendix: true)") << v;
    EXPECT_EQ(json::serialize(o.at("asked")), R"(["elicitation"])") << v;
    EXPECT_NE(log.find("tasks/update task-"), std::string::npos) << log;

    // Another client with the first client's id: not found (-32602), like an id that never existed.
    const auto& other = o.at("otherClient").as_object();
    EXPECT_FALSE(other.at("found").as_bool()) << v;
    EXPECT_NE(std::string(other.at("error").as_string()).find("Unknown taskId"), std::string::npos) << v;

    EXPECT_EQ(log.find("INVALID"), std::string::npos) << log;
}

// A handed-out task holds a lease on its upstream: a lazy server without keep-warm stays up while the task may still
// be asked about, and goes when its ttlMs has passed (swept at the next tasks request).
TEST_F(GatewayTasks, AHandedOutTaskHoldsItsLazyServerUntilItsTtlPasses) {
    auto cfg = config_of({{"lazy", sh_entry("exec " + demo_server(), R"(, "lazy": true)")}});
    run([&]() -> boost::asio::awaitable<void> {
        auto pool = host::ServerPool::create(co_await boost::asio::this_coro::executor, cfg, fast_options());
        pool->start();
        gateway::GatewayTasks tasks(pool, "a", "");
        auto state = std::make_shared<mcp::RequestContext::State>();
        state->era = mcp::Era::modern;
        state->client_info = std::make_shared<const json::object>(json::object{{"name", "c"}});
        state->client_capabilities = std::make_shared<const json::object>(
            json::object{{"extensions", json::object{{std::string(mcp::tasks_extension), json::object()}}}});
        mcp::RequestContext ctx(state);
        CO_ASSERT_TRUE(gateway::GatewayTasks::wanted(ctx));
        auto lease = co_await tasks.lease("lazy");
        CO_ASSERT_TRUE(lease.has_value());
        json::object handle{{"taskId", "t1"}, {"status", "working"}, {"ttlMs", 300}};
        auto out = tasks.hand_out("lazy", std::move(handle), ctx, std::move(*lease));
        EXPECT_EQ(tasks.held(), 1u);
        EXPECT_EQ(pool->status("lazy")->leases, 1u);
        co_await sleep_for(std::chrono::milliseconds(400));
        EXPECT_EQ(pool->status("lazy")->lifecycle(), "active");  // held past the call, nothing swept it yet
        json::object params{{"taskId", out.at("taskId")}};
        co_await tasks.forward("tasks/get", std::move(params), ctx);
        EXPECT_EQ(tasks.held(), 0u);  // its ttl passed
        EXPECT_EQ(pool->status("lazy")->leases, 0u);
        co_await pool->shutdown();
    });
}

}  // namespace
}  // namespace switchboard::test
