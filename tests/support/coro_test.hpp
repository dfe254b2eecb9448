// Running coroutine tests under GoogleTest: one way for every test binary.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <exception>

// ASSERT_* return from the function, which a coroutine cannot do: these co_return instead.
#define CO_FATAL_FAILURE_(message) co_return GTEST_MESSAGE_(message, ::testing::TestPartResult::kFatalFailure)
#define CO_ASSERT_TRUE(c) GTEST_TEST_BOOLEAN_(c, #c, false, true, CO_FATAL_FAILURE_)
#define CO_ASSERT_FALSE(c) GTEST_TEST_BOOLEAN_(!(c), #c, true, false, CO_FATAL_FAILURE_)
#define CO_ASSERT_EQ(a, b) GTEST_PRED_FORMAT2_(::testing::internal::EqHelper::Compare, a, b, CO_FATAL_FAILURE_)

namespace switchboard::test {

/// Runs `f` (a callable returning awaitable<void>) on `ctx` until it completes; fails the test if it throws or does
/// not complete within `limit`. Afterwards runs `ctx` for up to `settle` more, so that what the test started
/// (closing, cancellations, reaping child processes) can finish.
template <class F>
void run(boost::asio::io_context& ctx, F f, std::chrono::steady_clock::duration limit = std::chrono::seconds(10),
         std::chrono::steady_clock::duration settle = std::chrono::milliseconds(100)) {
    bool done = false;
    std::exception_ptr error;
    boost::asio::co_spawn(ctx, std::move(f), [&](std::exception_ptr e) {
        done = true;
        error = e;
    });
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done && std::chrono::steady_clock::now() < deadline && !ctx.stopped())
        ctx.run_one_for(std::chrono::milliseconds(50));
    if (done) ctx.run_for(settle);
    ASSERT_TRUE(done) << "test coroutine did not complete in time";
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            FAIL() << "test coroutine threw: " << e.what();
        }
    }
}

}  // namespace switchboard::test
