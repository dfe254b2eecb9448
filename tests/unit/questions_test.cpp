// webapi::QuestionBox: a page's questions for a server, answered, dropped with their call, or left until the bounded
// wait passes (then a notice says so).
#include <switchboard/webapi/questions.hpp>

#include "coro_test.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <string>
#include <vector>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

struct Seen {
    std::vector<std::pair<std::string, json::object>> events;
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& e : events) out.push_back(e.first);
        return out;
    }
};

webapi::QuestionBox box_for(Seen& seen) {
    return webapi::QuestionBox([&seen](std::string_view event, json::object data) {
        seen.events.emplace_back(std::string(event), std::move(data));
    });
}

asio::awaitable<void> pause(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

TEST(QuestionBox, AnAnsweredQuestionIsThePagesAnswerAndClosesForEveryPage) {
    asio::io_context ctx;
    Seen seen;
    auto box = box_for(seen);
    std::optional<json::object> got;
    run(ctx, [&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        asio::co_spawn(
            ex,
            [&]() -> asio::awaitable<void> {
                json::object question{{"kind", "elicitation"}, {"server", "demo"}, {"callId", "c1"}};
                got = co_await box.ask(std::move(question), 10s);
            },
            asio::detached);
        co_await pause(10ms);
        const auto open = box.open();
        CO_ASSERT_EQ(open.size(), 1u);
        const std::string id(open.at(0).at("requestId").as_string());
        EXPECT_NE(box.find(id), nullptr);
        EXPECT_FALSE(box.answer("r99", json::object{}));
        EXPECT_TRUE(box.answer(id, json::object{{"action", "decline"}}));
        EXPECT_FALSE(box.answer(id, json::object{}));  // once
        co_await pause(10ms);
    });
    ASSERT_TRUE(got);
    EXPECT_EQ((*got)["action"].as_string(), "decline");
    EXPECT_TRUE(box.open().empty());
    EXPECT_EQ(seen.names(), (std::vector<std::string>{"server_request", "server_request_answered"}));
}

TEST(QuestionBox, AQuestionOfACallThatEndedOrLeftTooLongHasNoAnswer) {
    asio::io_context ctx;
    Seen seen;
    auto box = box_for(seen);
    std::optional<json::object> dropped{json::object{}}, late{json::object{}};
    run(ctx, [&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        asio::co_spawn(
            ex,
            [&]() -> asio::awaitable<void> {
                json::object question{{"kind", "sampling"}, {"server", "demo"}, {"callId", "c1"}};
                dropped = co_await box.ask(std::move(question), 10s);
            },
            asio::detached);
        asio::co_spawn(
            ex,
            [&]() -> asio::awaitable<void> {
                json::object question{{"kind", "elicitation"}, {"server", "slowpoke"}, {"callId", "c2"}};
                late = co_await box.ask(std::move(question), 50ms);
            },
            asio::detached);
        co_await pause(10ms);
        EXPECT_EQ(box.open().size(), 2u);
        box.cancel_call("c1");
        co_await pause(100ms);
    });
    EXPECT_FALSE(dropped);
    EXPECT_FALSE(late);
    EXPECT_TRUE(box.open().empty());
    // The one left too long says so.
    ASSERT_EQ(seen.events.back().first, "notice");
    EXPECT_NE(std::string(seen.events.back().second["text"].as_string()).find("server \"slowpoke\" asked (elicitation)"),
              std::string::npos);
}

}  // namespace
}  // namespace switchboard::test
