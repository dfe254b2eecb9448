// jsonrpc::Connection: timeouts (each request's own deadline, progress, the total cap) and cancellation (by the caller,
// by the awaiting coroutine, of an incoming request). The rest of its tests are in connection_test.cpp.
#include "connection_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <string>
#include <vector>

TEST_F(ConnectionTest, TimeoutGivesLocalErrorAndSendsCancelled) {
    auto client = make_client();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        rpc::Message request, cancelled;
        auto peer = spawn(ex, [&]() -> awaitable<void> {
            request = read_message(co_await server_channel->read());
            cancelled = read_message(co_await server_channel->read());
        });
        rpc::RequestOptions ro;
        ro.timeout = 150ms;
        const auto start = clock_type::now();
        json::value params = json::object{{"x", 1}};
        auto r = co_await client->request("slow", std::move(params), ro);
        const auto elapsed = clock_type::now() - start;
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::timeout);
        EXPECT_TRUE(r.error().local);
        EXPECT_NE(r.error().message.find("slow"), std::string::npos) << r.error().message;
        EXPECT_GE(elapsed, 150ms);
        EXPECT_LT(elapsed, 2s);
        EXPECT_EQ(client->pending_requests(), 0u);

        co_await join(peer);
        EXPECT_EQ(request.kind, rpc::Message::Kind::request);
        EXPECT_EQ(request.method, "slow");
        EXPECT_EQ(cancelled.kind, rpc::Message::Kind::notification);
        EXPECT_EQ(cancelled.method, "notifications/cancelled");
        CO_ASSERT_TRUE(cancelled.params.is_object());
        EXPECT_EQ(cancelled.params.as_object().at("requestId"), request.id);

        // A late reply to the abandoned request is ignored and does not break the connection.
        const auto late_reply = rpc::serialize_result(request.id, json::object{});
        co_await server_channel->write(late_reply);
        EXPECT_TRUE(client->is_open());
        co_await client->close();
    });
}

// One deadline timer serves every waiting request: a request sent later with an earlier deadline must re-arm it,
// and one whose deadline is later must not be failed when the timer fires for an earlier one.
TEST_F(ConnectionTest, EachWaitingRequestTimesOutAtItsOwnDeadline) {
    auto client = make_client();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        std::vector<std::string> order;  // which requests ended, in order
        auto call = [&](std::string name, std::chrono::milliseconds timeout) {
            return spawn(ex, [&, name, timeout]() -> awaitable<void> {
                rpc::RequestOptions ro;
                ro.timeout = timeout;
                json::value params = json::object{};
                auto r = co_await client->request(name, std::move(params), ro);
                EXPECT_FALSE(r.has_value());
                const auto expected = name == "long" ? rpc::code::connection_closed : rpc::code::timeout;
                if (!r) {
                    EXPECT_EQ(r.error().code, expected) << name << ": " << r.error().message;
                }
                order.push_back(name);
            });
        };
        auto long_one = call("long", 60s);
        auto late = call("late", 400ms);
        auto early = call("early", 100ms);  // sent last, due first
        co_await join(early);
        EXPECT_EQ(order, (std::vector<std::string>{"early"}));
        EXPECT_EQ(client->pending_requests(), 2u);
        co_await join(late);
        EXPECT_EQ(order, (std::vector<std::string>{"early", "late"}));
        EXPECT_EQ(client->pending_requests(), 1u);  // the 60 s request still waits
        co_await client->close();
        co_await join(long_one);
        EXPECT_EQ(client->pending_requests(), 0u);
    });
}

namespace {

// "progressive": sends progress every 50 ms for 400 ms, then answers.
awaitable<rpc::Outcome<json::value>> progressive_handler(std::string, json::value, rpc::IncomingRequest req) {
    for (int i = 1; i <= 8; ++i) {
        co_await sleep_for(50ms);
        req.progress(i, 8, "step");
    }
    co_return json::value(json::object{{"done", true}});
}

}  // namespace

TEST_F(ConnectionTest, ProgressResetsTimeout) {
    auto client = make_client();
    auto server = make_server();
    server->on_request(progressive_handler);
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        std::vector<rpc::Progress> seen;
        rpc::RequestOptions ro;
        ro.timeout = 150ms;
        ro.on_progress = [&](const rpc::Progress& p) { seen.push_back(p); };
        json::value params = json::object{};
        auto r = co_await client->request("progressive", std::move(params), ro);
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        EXPECT_EQ(r->as_object().at("done"), json::value(true));
        CO_ASSERT_EQ(seen.size(), 8u);
        EXPECT_EQ(seen.back().progress, 8);
        CO_ASSERT_TRUE(seen.back().total.has_value());
        EXPECT_EQ(*seen.back().total, 8);
        EXPECT_EQ(seen.back().message, "step");
        co_await client->close();
    });
}

TEST_F(ConnectionTest, ProgressWithoutResetStillTimesOut) {
    auto client = make_client();
    auto server = make_server();
    server->on_request(progressive_handler);
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        int seen = 0;
        rpc::RequestOptions ro;
        ro.timeout = 150ms;
        ro.reset_timeout_on_progress = false;
        ro.on_progress = [&](const rpc::Progress&) { ++seen; };
        json::value params = json::object{};
        auto r = co_await client->request("progressive", std::move(params), ro);
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::timeout);
        EXPECT_GE(seen, 1);
        co_await client->close();
    });
}

TEST_F(ConnectionTest, MaxTotalTimeoutFiresDespiteProgress) {
    auto client = make_client();
    auto server = make_server();
    server->on_request(progressive_handler);
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        int seen = 0;
        rpc::RequestOptions ro;
        ro.timeout = 150ms;
        ro.max_total_timeout = 250ms;
        ro.on_progress = [&](const rpc::Progress&) { ++seen; };
        const auto start = clock_type::now();
        json::value params = json::object{};
        auto r = co_await client->request("progressive", std::move(params), ro);
        const auto elapsed = clock_type::now() - start;
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::timeout);
        EXPECT_TRUE(r.error().local);
        EXPECT_NE(r.error().message.find("250 ms"), std::string::npos) << r.error().message;
        EXPECT_GE(elapsed, 250ms);
        EXPECT_LT(elapsed, 2s);
        EXPECT_GE(seen, 1);  // progress did arrive (and, since 250 ms > 150 ms, reset the timeout)
        co_await client->close();
    });
}

TEST_F(ConnectionTest, CancellingTheAwaitingCoroutineGivesLocalCancelled) {
    auto client = make_client();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        rpc::Message request, cancelled;
        auto peer = spawn(ex, [&]() -> awaitable<void> {
            request = read_message(co_await server_channel->read());
            cancelled = read_message(co_await server_channel->read());
        });
        asio::cancellation_signal signal;
        std::optional<rpc::Outcome<json::value>> result;
        auto caller = std::make_shared<Task>();
        json::value params = json::object{};
        asio::co_spawn(
            ex, client->request("hang", std::move(params)),
            asio::bind_cancellation_slot(signal.slot(), [&, caller](std::exception_ptr e, rpc::Outcome<json::value> r) {
                caller->error = e;
                result = std::move(r);
                caller->done.set();
            }));
        co_await sleep_for(100ms);
        EXPECT_FALSE(result.has_value());
        EXPECT_EQ(client->pending_requests(), 1u);
        const auto start = clock_type::now();
        signal.emit(asio::cancellation_type::terminal);
        co_await join(caller);
        EXPECT_LT(clock_type::now() - start, 1s);
        CO_ASSERT_TRUE(result.has_value());
        CO_ASSERT_FALSE(result->has_value());
        EXPECT_EQ(result->error().code, rpc::code::cancelled);
        EXPECT_TRUE(result->error().local);
        EXPECT_EQ(client->pending_requests(), 0u);

        co_await join(peer);
        EXPECT_EQ(request.method, "hang");
        EXPECT_EQ(cancelled.method, "notifications/cancelled");
        CO_ASSERT_TRUE(cancelled.params.is_object());
        EXPECT_EQ(cancelled.params.as_object().at("requestId"), request.id);
        co_await client->close();
    });
}

TEST_F(ConnectionTest, CancellationWithAwaitableOperatorCancelsServerHandler) {
    using namespace asio::experimental::awaitable_operators;
    auto client = make_client();
    auto server = make_server();
    bool handler_started = false, handler_cancelled = false, handler_finished = false;
    switchboard::core::OneShotEvent handler_ended;
    server->on_request([&](std::string, json::value, rpc::IncomingRequest) -> awaitable<rpc::Outcome<json::value>> {
        handler_started = true;
        try {
            co_await sleep_for(3s);
            handler_finished = true;
        } catch (const boost::system::system_error& e) {
            handler_cancelled = e.code() == asio::error::operation_aborted;
            handler_ended.set();
            throw;
        }
        handler_ended.set();
        co_return json::value(json::object{});
    });
    server->start();
    client->start();
    run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        asio::steady_timer timer(ex, 100ms);
        json::value params = json::object{};
        auto winner = co_await (client->request("hang", std::move(params)) || timer.async_wait(asio::use_awaitable));
        EXPECT_EQ(winner.index(), 1u);
        EXPECT_EQ(client->pending_requests(), 0u);
        const bool handler_ended_in_time = co_await handler_ended.wait_for(1s);
        EXPECT_TRUE(handler_ended_in_time);
        EXPECT_TRUE(handler_started);
        EXPECT_TRUE(handler_cancelled);
        EXPECT_FALSE(handler_finished);
        // The connection is still usable.
        EXPECT_TRUE(client->is_open());
        co_await client->close();
    });
}

TEST_F(ConnectionTest, CancelledIncomingRequestGetsNoResponse) {
    auto server = make_server();
    bool cancelled = false;
    server->on_request(
        [&](std::string method, json::value, rpc::IncomingRequest) -> awaitable<rpc::Outcome<json::value>> {
            try {
                // If the cancellation were ignored, the reply to "a" (200 ms) would arrive before the reply to "b".
                co_await sleep_for(method == "a" ? 200ms : 400ms);
            } catch (const boost::system::system_error&) {
                cancelled = true;
                throw;
            }
            co_return json::value(json::object{{"method", method}});
        });
    server->start();
    run(ctx, [&]() -> awaitable<void> {
        const auto request_a = rpc::serialize_request(1, "a", json::object{});
        const auto cancel_a = rpc::serialize_notification("notifications/cancelled", json::object{{"requestId", 1}});
        const auto request_b = rpc::serialize_request(2, "b", json::object{});
        co_await client_channel->write(request_a);
        co_await sleep_for(50ms);
        co_await client_channel->write(cancel_a);
        co_await client_channel->write(request_b);
        auto m = read_message(co_await client_channel->read());
        EXPECT_EQ(m.kind, rpc::Message::Kind::response);
        EXPECT_EQ(m.id, json::value(2));
        EXPECT_TRUE(cancelled);
        co_await client_channel->close();
    });
}
