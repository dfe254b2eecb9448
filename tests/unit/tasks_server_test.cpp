// The server side of the Tasks extension: mcp::TaskStore (a task's lifecycle, input_required answered in part, cancel,
// the extension required) and the gateway's sealed task ids (gateway::TaskIds).
#include <switchboard/gateway/task_ids.hpp>
#include <switchboard/mcp/task_store.hpp>

#include "mcp/request_state.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

namespace switchboard {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

mcp::RequestContext task_ctx(bool declares) {
    auto s = std::make_shared<mcp::RequestContext::State>();
    s->era = mcp::Era::modern;
    s->method = "tools/call";
    json::object caps{{"elicitation", json::object()}};
    if (declares) caps["extensions"] = json::object{{mcp::tasks_extension, json::object()}};
    s->client_capabilities = std::make_shared<const json::object>(std::move(caps));
    return mcp::RequestContext(s);
}

awaitable<void> pause_ms(int ms) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(std::chrono::milliseconds(ms));
    co_await t.async_wait(asio::use_awaitable);
}

// Built outside the coroutines: GCC 12 mishandles braced-init temporaries in them (docs/design.md).
json::object with_id(const json::value& id) { return json::object{{"taskId", id}}; }
json::object answering(const json::value& id, const std::string& key) {
    json::object responses;
    responses[key] = json::object{{"action", "accept"}};
    return json::object{{"taskId", id}, {"inputResponses", std::move(responses)}};
}
json::object asking(const std::string& message) { return json::object{{"message", message}}; }
json::object text_of_both() {
    return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", "both"}}}}};
}

// Runs `body` on a fresh io_context to its end.
template <class F>
void run_test(F body) {
    asio::io_context io;
    bool done = false;
    asio::co_spawn(io, [&]() -> awaitable<void> {
        co_await body(io.get_executor());
        done = true;
    }, [](std::exception_ptr e) { if (e) std::rethrow_exception(e); });
    io.run();
    EXPECT_TRUE(done);
}

TEST(TaskStore, AskParksTheTaskUntilEveryAnswerArrivesAndTheResultIsInlined) {
    run_test([](asio::any_io_executor ex) -> awaitable<void> {
        auto store = mcp::TaskStore::create(ex, mcp::TaskStoreOptions{});
        auto work = [](mcp::RequestContext ctx) -> awaitable<jsonrpc::Outcome<json::object>> {
            auto first = asking("first?");
            auto a = co_await ctx.ask_as("one", "elicitation/create", std::move(first));
            if (!a) co_return a.error();
            auto second = asking("second?");
            auto b = co_await ctx.ask_as("two", "elicitation/create", std::move(second));
            if (!b) co_return b.error();
            co_return text_of_both();
        };
        auto created = store->start(work, task_ctx(true));
        EXPECT_EQ(created.at("resultType"), "task");
        EXPECT_EQ(created.at("status"), "working");
        const json::value id = created.at("taskId");
        co_await pause_ms(10);
        auto got = co_await store->handle("tasks/get", with_id(id), task_ctx(true));
        EXPECT_EQ(got->at("status"), "input_required");
        EXPECT_TRUE(got->at("inputRequests").as_object().contains("one"));
        // An answer to a key not asked is ignored; the task stays parked.
        auto ack = co_await store->handle("tasks/update", answering(id, "zzz"), task_ctx(true));
        EXPECT_TRUE(ack && ack->empty());
        co_await store->handle("tasks/update", answering(id, "one"), task_ctx(true));
        co_await pause_ms(10);
        got = co_await store->handle("tasks/get", with_id(id), task_ctx(true));
        EXPECT_EQ(got->at("status"), "input_required");
        EXPECT_FALSE(got->at("inputRequests").as_object().contains("one"));
        EXPECT_TRUE(got->at("inputRequests").as_object().contains("two"));
        co_await store->handle("tasks/update", answering(id, "two"), task_ctx(true));
        co_await pause_ms(10);
        got = co_await store->handle("tasks/get", with_id(id), task_ctx(true));
        EXPECT_EQ(got->at("status"), "completed");
        EXPECT_EQ(got->at("result").at("content").at(0).at("text"), "both");
        EXPECT_FALSE(got->contains("inputRequests"));
        co_await store->shutdown();
    });
}

TEST(TaskStore, CancelEndsTheWorkAndUnknownOrUndeclaredRequestsAreRefused) {
    run_test([](asio::any_io_executor ex) -> awaitable<void> {
        auto store = mcp::TaskStore::create(ex, mcp::TaskStoreOptions{});
        auto ran_out = std::make_shared<bool>(false);
        auto work = [ran_out](mcp::RequestContext) -> awaitable<jsonrpc::Outcome<json::object>> {
            co_await pause_ms(60'000);
            *ran_out = true;
            co_return json::object();
        };
        auto created = store->start(work, task_ctx(true));
        const json::value id = created.at("taskId");
        auto ack = co_await store->handle("tasks/cancel", with_id(id), task_ctx(true));
        EXPECT_TRUE(ack && ack->empty());
        co_await pause_ms(10);
        auto got = co_await store->handle("tasks/get", with_id(id), task_ctx(true));
        EXPECT_EQ(got->at("status"), "cancelled");
        EXPECT_FALSE(*ran_out);
        // Cancelling a terminal task is acknowledged the same way.
        ack = co_await store->handle("tasks/cancel", with_id(id), task_ctx(true));
        EXPECT_TRUE(ack);
        const json::value nope("nope");
        auto unknown = co_await store->handle("tasks/get", with_id(nope), task_ctx(true));
        EXPECT_TRUE(!unknown && unknown.error().code == jsonrpc::code::invalid_params);
        auto undeclared = co_await store->handle("tasks/get", with_id(id), task_ctx(false));
        EXPECT_TRUE(!undeclared && undeclared.error().code == jsonrpc::code::missing_required_client_capability);
        co_await store->shutdown();
    });
}

TEST(GatewayTaskIds, SealedAndBoundToTheirOwner) {
    gateway::TaskIds ids("a", "shared-key");
    const auto id = ids.encode(gateway::TaskRef{"peer", "task-1", "client:alice"});
    EXPECT_TRUE(id.starts_with("a."));
    auto ref = ids.decode(id, "client:alice");
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->server, "peer");
    EXPECT_EQ(ref->upstream_id, "task-1");
    EXPECT_FALSE(ids.decode(id, "client:bob"));  // another client: as if it did not exist
    // Another instance with the same key accepts it; one with another key, or a changed id, does not.
    EXPECT_TRUE(gateway::TaskIds("b", "shared-key").decode(id, "client:alice"));
    EXPECT_FALSE(gateway::TaskIds("a", "other-key").decode(id, "client:alice"));
    auto forged = id;
    forged[forged.size() / 2] = forged[forged.size() / 2] == 'x' ? 'y' : 'x';
    EXPECT_FALSE(ids.decode(forged, "client:alice"));
    EXPECT_FALSE(ids.decode("task-1", "client:alice"));
    // Without a key, a random one: two processes never accept each other's ids.
    EXPECT_FALSE(gateway::TaskIds("a", "").decode(gateway::TaskIds("a", "").encode({"s", "t", "o"}), "o"));
}

}  // namespace
}  // namespace switchboard
