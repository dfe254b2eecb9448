// The client against the official @modelcontextprotocol/server-everything (stdio mode): a legacy-era server.
#include "harness.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

// A plain function, not a coroutine: GCC 12 miscompiles defaulted coroutine parameters.
awaitable<Connected> connect_everything() {
    auto cmd = everything_command();
    mcp::ClientOptions o;
    o.server_name = "everything";
    return connect(cmd[0], std::vector<std::string>(cmd.begin() + 1, cmd.end()), std::move(o));
}

TEST(Everything, FallsBackToLegacyAndListsEverything) {
    run([&]() -> awaitable<void> {
        auto c = co_await connect_everything();
        CO_ASSERT_TRUE(c.session);
        auto& s = *c.session;
        EXPECT_EQ(s.era(), mcp::Era::legacy);  // it answers server/discover with -32601
        EXPECT_EQ(s.protocol_version(), "2025-11-25");
        auto tools = co_await s.list_tools();
        CO_ASSERT_TRUE(tools);
        EXPECT_GE(tools->size(), 10u);
        auto has = [&](std::string_view n) {
            return std::any_of(tools->begin(), tools->end(), [&](const mcp::Tool& t) { return t.name == n; });
        };
        EXPECT_TRUE(has("echo"));
        EXPECT_TRUE(has("get-sum"));
        auto resources = co_await s.list_resources();
        CO_ASSERT_TRUE(resources);
        EXPECT_GE(resources->size(), 1u);
        auto templates = co_await s.list_resource_templates();
        CO_ASSERT_TRUE(templates);
        auto prompts = co_await s.list_prompts();
        CO_ASSERT_TRUE(prompts);
        EXPECT_GE(prompts->size(), 3u);

        auto read = co_await s.read_resource(resources->front().uri);
        CO_ASSERT_TRUE(read);
        EXPECT_FALSE(read->contents.empty());

        std::map<std::string, std::string> prompt_args{{"city", "Lisbon"}};
        auto prompt = co_await s.get_prompt("args-prompt", prompt_args);
        CO_ASSERT_TRUE(prompt);
        EXPECT_FALSE(prompt->messages.empty());
        co_await s.close();
    });
}

TEST(Everything, EchoAndSum) {
    run([&]() -> awaitable<void> {
        auto c = co_await connect_everything();
        CO_ASSERT_TRUE(c.session);
        json::object echo;
        echo["message"] = "hi from switchboard";
        auto r = co_await c.session->call_tool("echo", echo);
        CO_ASSERT_TRUE(r);
        EXPECT_NE(r->content.at(0).text().find("hi from switchboard"), std::string::npos);
        json::object sum;
        sum["a"] = 19;
        sum["b"] = 23;
        auto s = co_await c.session->call_tool("get-sum", sum);
        CO_ASSERT_TRUE(s);
        EXPECT_NE(s->content.at(0).text().find("42"), std::string::npos);
        co_await c.session->close();
    });
}

TEST(Everything, ProgressAndCancellation) {
    run([&]() -> awaitable<void> {
        auto c = co_await connect_everything();
        CO_ASSERT_TRUE(c.session);
        int progress = 0;
        mcp::CallOptions opts;
        opts.on_progress = [&](const jsonrpc::Progress&) { ++progress; };
        json::object args;
        args["duration"] = 1;
        args["steps"] = 3;
        auto r = co_await c.session->call_tool("trigger-long-running-operation", args, opts);
        CO_ASSERT_TRUE(r);
        EXPECT_EQ(progress, 3);

        // Cancel a long one; the session stays usable.
        using namespace asio::experimental::awaitable_operators;
        asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(300));
        args["duration"] = 30;
        auto cancelled = co_await (c.session->call_tool("trigger-long-running-operation", args, opts) ||
                                   timer.async_wait(asio::use_awaitable));
        EXPECT_EQ(cancelled.index(), 1u);
        json::object echo;
        echo["message"] = "after cancel";
        auto after = co_await c.session->call_tool("echo", echo);
        EXPECT_TRUE(after);
        co_await c.session->close();
    });
}

}  // namespace
}  // namespace switchboard::test
