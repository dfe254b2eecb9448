// Agents as tools of the gateway (`switchboard serve` with a model configured): a client sees agent__<name> beside
// the servers' tools; calling it runs the agent's fork with its lazy server, which exists only while the fork runs,
// and the answer comes back as the tool result. Without a model there are no agent tools.
#include "agent_harness.hpp"
#include "net_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>
#include <thread>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using boost::asio::awaitable;

// The JSON-RPC message of a response body (plain JSON, or the last `data:` line of an SSE stream).
json::value message_of(const std::string& body) {
    auto pos = body.rfind("data: ");
    std::string text = pos == std::string::npos ? body : body.substr(pos + 6, body.find('\n', pos) - pos - 6);
    json::error_code ec;
    auto v = json::parse(text, ec);
    return ec ? json::value() : v;
}

class GatewayAgents : public ::testing::Test {
protected:
    TempDir dir;
    fs::path pids() const { return dir.path / "notes.pids"; }

    void start(const std::string& llm_section) {
        fs::create_directories(dir.path / ".switchboard/agents");
        std::ofstream(dir.path / ".switchboard/agents/researcher.md")
            << "---\nname: researcher\ndescription: Looks things up in the notes.\nmcp: [notes]\ntools: []\n---\n"
               "You research.\n";
        const auto config = dir.path / "config.json";
        std::ofstream(config) << R"({"mcpServers": {"main": )" << demo_entry() << R"(, "notes": )"
                              << sh_entry("echo $$ >> " + pids().string() + "; exec " + demo_server(),
                                          R"(, "lazy": true)")
                              << "}" << llm_section << "}";
        gateway_ = start_listening("/bin/sh", {"-c", "cd " + dir.path.string() + " && XDG_RUNTIME_DIR=" +
                                                         (dir.path / "run").string() + " XDG_CACHE_HOME=" +
                                                         (dir.path / "cache").string() + " exec " + SWITCHBOARD_CLI +
                                                         " --config " + config.string() + " serve --port 0"});
        ASSERT_TRUE(gateway_);
    }

    std::unique_ptr<ListeningServer> gateway_;
};

awaitable<json::value> rpc(std::uint16_t port, Headers h, std::string body) {
    auto r = co_await http_exchange(port, "POST", "/mcp", std::move(h), std::move(body));
    co_return message_of(r.body);
}

TEST_F(GatewayAgents, AnAgentToolRunsItsForkWithItsLazyServer) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message": "the note"})") +
                               R"(]}, {"content": "Found: the note."}])");
    ASSERT_TRUE(fake.running());
    start(R"(, "llm": {"baseUrl": )" + q(fake.url()) + R"(, "model": "test-model"})");
    const auto port = gateway_->port;
    json::value list, call;
    run([&]() -> awaitable<void> {
        auto h = post_headers();
        auto init = co_await http_exchange(port, "POST", "/mcp", h, init_body);
        h.emplace_back("Mcp-Session-Id", init.headers["mcp-session-id"]);
        h.emplace_back("MCP-Protocol-Version", "2025-11-25");
        co_await http_exchange(port, "POST", "/mcp", h, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
        list = co_await rpc(port, h, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
        call = co_await rpc(port, h,
                            R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent__researcher",)"
                            R"("arguments":{"task":"Find the note."}}})");
    });
    std::vector<std::string> names;
    for (const auto& t : list.at("result").at("tools").as_array()) names.emplace_back(t.at("name").as_string());
    EXPECT_TRUE(has(names, "agent__researcher")) << list;
    EXPECT_TRUE(has(names, "echo")) << list;  // main's own tools, the lazy server's are not listed
    const auto& result = call.at("result").as_object();
    const auto text = std::string(result.at("content").as_array().at(0).at("text").as_string());
    EXPECT_NE(text.find("Found: the note."), std::string::npos) << call;
    EXPECT_NE(text.find("1 tool call: echo"), std::string::npos) << call;
    EXPECT_FALSE(result.contains("isError")) << call;
    // The fork's model request: the agent's prompt and the task.
    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_EQ(message_text(bodies[0].at("messages").as_array()[0]), "You research.");
    // The lazy server ran for the fork (once) and is gone after it (keepWarmSeconds 0).
    const auto lines = read_lines(pids());
    ASSERT_EQ(lines.size(), 1u);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = !process_alive(std::stoi(lines[0]));
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(gone);
}

TEST_F(GatewayAgents, WithoutAModelThereAreNoAgentTools) {
    start("");
    const auto port = gateway_->port;
    json::value list;
    run([&]() -> awaitable<void> {
        auto h = post_headers();
        auto init = co_await http_exchange(port, "POST", "/mcp", h, init_body);
        h.emplace_back("Mcp-Session-Id", init.headers["mcp-session-id"]);
        h.emplace_back("MCP-Protocol-Version", "2025-11-25");
        list = co_await rpc(port, h, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
    });
    EXPECT_EQ(json::serialize(list).find("agent__"), std::string::npos) << list;
    EXPECT_NE(json::serialize(list).find("\"echo\""), std::string::npos) << list;
    EXPECT_FALSE(fs::exists(pids()));
}

}  // namespace
}  // namespace switchboard::test
