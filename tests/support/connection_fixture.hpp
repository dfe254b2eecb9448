// The fixture of the jsonrpc::Connection tests (connection_test.cpp, connection_timeout_test.cpp): a client and a
// server connection over an in-memory channel pair, and coroutines spawned, joined and put to sleep.
#pragma once

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/jsonrpc/connection.hpp>
#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/transport/fd_channel.hpp>

#include <gtest/gtest.h>

#include "coro_test.hpp"
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

namespace asio = boost::asio;
namespace json = boost::json;
namespace rpc = switchboard::jsonrpc;
using asio::awaitable;
using switchboard::transport::FdChannel;
using switchboard::transport::make_channel_pair;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

using switchboard::test::run;

namespace {

/// A spawned coroutine that another can join.
struct Task {
    switchboard::core::OneShotEvent done;
    std::exception_ptr error;
};

template <class F>
std::shared_ptr<Task> spawn(asio::any_io_executor ex, F f) {
    auto t = std::make_shared<Task>();
    asio::co_spawn(ex, std::move(f), [t](std::exception_ptr e) {
        t->error = e;
        t->done.set();
    });
    return t;
}

awaitable<void> join(std::shared_ptr<Task> t, clock_type::duration limit = 5s) {
    const bool finished = co_await t->done.wait_for(limit);
    if (!finished) throw std::runtime_error("spawned task did not finish");
    if (t->error) std::rethrow_exception(t->error);
}

awaitable<void> sleep_for(clock_type::duration d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

rpc::Message read_message(const rpc::Received& r) {
    EXPECT_EQ(r.kind, rpc::Received::Kind::message) << r.reason;
    auto m = rpc::parse_message(r.text);
    EXPECT_TRUE(m.has_value()) << r.text;
    return m ? std::move(*m) : rpc::Message{};
}

struct Fixture : ::testing::Test {
    asio::io_context ctx;
    std::shared_ptr<FdChannel> client_channel, server_channel;

    Fixture() { std::tie(client_channel, server_channel) = make_channel_pair(ctx.get_executor()); }

    std::shared_ptr<rpc::Connection> make_client(std::chrono::milliseconds default_timeout = 5000ms) {
        rpc::Connection::Options o;
        o.peer_name = "server \"test\"";
        o.default_timeout = default_timeout;
        return rpc::Connection::create(ctx.get_executor(), client_channel, o);
    }
    std::shared_ptr<rpc::Connection> make_server() {
        rpc::Connection::Options o;
        o.peer_name = "client";
        o.reply_to_invalid = true;
        return rpc::Connection::create(ctx.get_executor(), server_channel, o);
    }
};

using ConnectionTest = Fixture;

}  // namespace
