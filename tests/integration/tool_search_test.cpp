// Tool search over dormant servers (agent/tool_search.hpp, host/tool_catalog.hpp) with real processes: `catalog
// refresh` through the real CLI starts the lazy server once and records its tools; in a conversation search_tools
// finds them from the catalog without starting the server, call_tool starts it for the one call and it stops after;
// the main requests never carry the lazy server's tools; call_tool is approved as the tool it calls; `run` offers
// the two tools when the config says so, or when the tool definitions take more than 10% of the context window.
#include "agent_harness.hpp"
#include "coro_test.hpp"

#include <switchboard/agent/tool_search.hpp>
#include <switchboard/host/context.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>

#include <fstream>
#include <thread>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using asio::awaitable;
using namespace std::chrono_literals;

class ToolSearch : public ::testing::Test {
protected:
    TempDir dir;
    fs::path pids() const { return dir.path / "lazy.pids"; }
    fs::path cache() const { return dir.path / "cache"; }
    fs::path catalog_dir() const { return cache() / "switchboard" / "catalog"; }

    /// An eager demo server "main" and a lazy one "lazyserver" (echo_1..echo_3) that records its pid; `top` adds
    /// top-level keys (`, "toolSearch": true`).
    std::string config_text(const std::string& top) const {
        return R"({"mcpServers": {"main": )" + demo_entry() + R"(, "lazyserver": )" +
               sh_entry("echo $$ >> " + pids().string() + "; exec " + demo_server() +
                            " --extra-tools 3 --name lazyserver",
                        R"(, "lazy": true)") +
               "}" + top + "}";
    }
    std::string write_config(const std::string& top) const {
        const auto file = dir.path / "config.json";
        std::ofstream(file) << config_text(top);
        return file.string();
    }
    int cli(const std::string& args, std::string& out) {
        return run_command("XDG_CACHE_HOME=" + cache().string() + " " + SWITCHBOARD_CLI + " " + args + " 2>&1", out);
    }
    /// Waits (up to 3 s) until no process of the pid file's line `index` runs.
    static bool gone(const std::vector<std::string>& lines, std::size_t index) {
        if (index >= lines.size()) return false;
        for (int i = 0; i < 60; ++i) {
            if (!process_alive(std::stoi(lines[index]))) return true;
            std::this_thread::sleep_for(50ms);
        }
        return false;
    }
    void refresh_catalog() {
        std::string out;
        ASSERT_EQ(cli("--config " + write_config("") + " catalog refresh", out), 0) << out;
        EXPECT_NE(out.find("lazyserver: "), std::string::npos) << out;
        EXPECT_NE(out.find(" tools recorded in "), std::string::npos) << out;
        const auto lines = read_lines(pids());
        ASSERT_EQ(lines.size(), 1u);
        EXPECT_TRUE(gone(lines, 0));
        ASSERT_TRUE(fs::exists(catalog_dir() / "lazyserver.json"));
    }

    struct Rig {
        std::shared_ptr<host::ServerPool> pool;
        std::shared_ptr<host::Context> main;
        std::unique_ptr<agent::Conversation> conversation;
        agent::Observer observer;
    };
    awaitable<Rig> start(const FakeLlm& fake) {
        auto ex = co_await asio::this_coro::executor;
        Rig r;
        auto config = host::parse_config(config_text(R"(, "toolSearch": true)"), "<test>");
        r.pool = host::ServerPool::create(ex, std::move(config), fast_options());
        r.main = host::Context::create(r.pool, host::ContextOptions{});
        auto llm = std::make_shared<llm::Client>(ex, fake.settings());
        r.conversation = std::make_unique<agent::Conversation>(r.main, llm, agent::LoopOptions{});
        agent::ToolSearchEnvironment env{r.pool, r.main, host::ToolCatalog(catalog_dir())};
        for (auto& t : agent::tool_search_tools(std::move(env))) r.conversation->add_local_tool(std::move(t));
        r.pool->start();
        co_await r.pool->wait_until_settled(20s);
        co_return r;
    }
};

TEST_F(ToolSearch, SearchReadsTheCatalogWithoutStartingTheServerAndCallToolStartsItForOneCall) {
    refresh_catalog();
    if (HasFatalFailure()) return;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("search_tools", R"({"query": "echo 2"})") +
                               R"(]}, {"toolCalls": [)" +
                               tool_call("call_tool", R"({"name": "lazyserver__echo_2", "arguments": {"message": "x"}})") +
                               R"(]}, {"content": "It echoed x."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto rig = co_await start(fake);
        rig.conversation->approvals().all = true;
        EXPECT_EQ(rig.pool->status("lazyserver")->lifecycle(), "dormant");
        std::size_t spawned_after_search = 0, spawned_after_call = 0;
        std::string search_text, call_text, call_server;
        rig.observer.on_tool_end = [&](const agent::ToolCallRecord& record, const llm::ToolExecutionResult& result) {
            if (record.name == "search_tools") {
                spawned_after_search = read_lines(pids()).size();
                search_text = result.text();
            } else {
                spawned_after_call = read_lines(pids()).size();
                call_text = result.text();
                call_server = record.server + "/" + record.tool;
            }
        };
        auto result = co_await rig.conversation->send("Echo x with the lazy tool.", rig.observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "It echoed x.");
        EXPECT_EQ(spawned_after_search, 1u);  // only the refresh's process
        EXPECT_NE(search_text.find("lazyserver__echo_2"), std::string::npos) << search_text;
        EXPECT_EQ(spawned_after_call, 2u);
        EXPECT_EQ(call_text, "x");
        EXPECT_EQ(call_server, "lazyserver/echo_2");  // recorded as the tool it called
        // Released after the call: keepWarmSeconds 0 stops it.
        const auto lines = read_lines(pids());
        CO_ASSERT_EQ(lines.size(), 2u);
        bool stopped = false;
        for (int i = 0; i < 60 && !stopped; ++i) {
            stopped = !process_alive(std::stoi(lines[1]));
            if (!stopped) co_await sleep_for(50ms);
        }
        EXPECT_TRUE(stopped);

        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 3u);
        for (const auto& body : bodies) {
            auto tools = offered_tools(body.as_object());
            EXPECT_TRUE(has(tools, "search_tools"));
            EXPECT_TRUE(has(tools, "call_tool"));
            EXPECT_TRUE(has(tools, "echo"));  // the eager server's
            EXPECT_FALSE(has(tools, "echo_2"));
            EXPECT_FALSE(has(tools, "lazyserver__echo_2"));
        }
        // The search result as the model read it: the best match first, with its schema.
        const auto text = message_text(bodies[1].at("messages").as_array().back());
        json::error_code ec;
        auto results = json::parse(text.substr(0, text.find('\n')), ec);
        CO_ASSERT_TRUE(!ec && results.is_array()) << text;
        CO_ASSERT_FALSE(results.as_array().empty());
        const auto& first = results.as_array()[0].as_object();
        EXPECT_EQ(text_of(first.at("name")), "lazyserver__echo_2");
        EXPECT_EQ(text_of(first.at("server")), "lazyserver");
        EXPECT_TRUE(first.at("inputSchema").as_object().contains("properties"));
        EXPECT_LE(results.as_array().size(), 5u);
        EXPECT_EQ(message_text(bodies[2].at("messages").as_array().back()), "x");
        co_await rig.pool->shutdown();
    });
}

TEST_F(ToolSearch, CallToolIsApprovedAsTheToolItCalls) {
    refresh_catalog();
    if (HasFatalFailure()) return;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" +
                               tool_call("call_tool", R"({"name": "lazyserver__echo_1", "arguments": {"message": "y"}})") +
                               R"(]}, {"toolCalls": [)" +
                               tool_call("call_tool", R"({"name": "lazyserver__echo_2", "arguments": {"message": "z"}})") +
                               R"(]}, {"content": "done"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto rig = co_await start(fake);
        rig.conversation->approvals().patterns = {"lazyserver__echo_2"};  // echo_1 is not allowed, nobody to ask
        auto result = co_await rig.conversation->send("Go.", rig.observer);
        CO_ASSERT_EQ(result.tool_calls.size(), 2u);
        EXPECT_TRUE(result.tool_calls[0].denied);
        EXPECT_EQ(result.tool_calls[0].server, "lazyserver");
        EXPECT_FALSE(result.tool_calls[1].denied);
        EXPECT_FALSE(result.tool_calls[1].is_error);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 3u);
        const auto denied = message_text(bodies[1].at("messages").as_array().back());
        EXPECT_NE(denied.find("\"lazyserver__echo_1\" is not allowed"), std::string::npos) << denied;
        EXPECT_EQ(message_text(bodies[2].at("messages").as_array().back()), "z");
        EXPECT_EQ(read_lines(pids()).size(), 2u);  // the refresh, then the allowed call only
        co_await rig.pool->shutdown();
    });
}

TEST_F(ToolSearch, CatalogListsWhatIsCached) {
    std::string out;
    const auto config = write_config("");
    EXPECT_EQ(cli("--config " + config + " catalog", out), 0) << out;
    EXPECT_NE(out.find("lazyserver: not cached"), std::string::npos) << out;
    refresh_catalog();
    EXPECT_EQ(cli("--config " + config + " catalog --json", out), 0) << out;
    auto v = json::parse(out).as_array();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].at("server"), "lazyserver");
    EXPECT_EQ(v[0].at("current"), true);
    EXPECT_GE(v[0].at("tools").as_array().size(), 4u);  // the demo's own tools and echo_1..echo_3
}

TEST_F(ToolSearch, RunOffersTheToolsWhenConfiguredOrWhenDefinitionsExceedATenthOfTheWindow) {
    FakeLlm fake(dir.path, R"([{"content": "one"}, {"content": "two"}, {"content": "three"}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    const auto llm = R"(, "llm": {"baseUrl": )" + q(fake.url()) + R"(, "model": "test-model")";
    EXPECT_EQ(cli("--config " + write_config(llm + R"(}, "toolSearch": true)") + " run 'hi' --no-store", out), 0)
        << out;
    EXPECT_EQ(out.find("warning"), std::string::npos) << out;  // toolSearch is a known key
    // No toolSearch key: the main context's definitions (a few KB) are more than 10% of a 1000-token window...
    EXPECT_EQ(cli("--config " + write_config(llm + R"(, "contextWindow": 1000})") + " run 'hi' --no-store", out), 0)
        << out;
    // ...and not of a million-token one.
    EXPECT_EQ(cli("--config " + write_config(llm + R"(, "contextWindow": 1000000})") + " run 'hi' --no-store", out),
              0)
        << out;
    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    ASSERT_EQ(bodies.size(), 3u);
    auto first = offered_tools(bodies[0].as_object());
    EXPECT_TRUE(has(first, "search_tools"));
    EXPECT_TRUE(has(first, "call_tool"));
    EXPECT_TRUE(has(first, "echo"));
    EXPECT_FALSE(has(first, "echo_1"));
    EXPECT_TRUE(has(offered_tools(bodies[1].as_object()), "search_tools"));
    EXPECT_FALSE(has(offered_tools(bodies[2].as_object()), "search_tools"));
    EXPECT_TRUE(read_lines(pids()).empty());  // nothing started the lazy server
}

}  // namespace
}  // namespace switchboard::test
