// Running a coroutine to completion from plain code: the bench drives one io_context by hand, and background
// coroutines (process watchers, read loops) keep it busy, so run_one() until the awaited one is done.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <stdexcept>

namespace switchboard::bench {

template <class T>
T run_sync(boost::asio::io_context& ctx, boost::asio::awaitable<T> a) {
    std::optional<T> result;
    std::exception_ptr error;
    bool done = false;
    boost::asio::co_spawn(ctx, std::move(a), [&](std::exception_ptr e, T v) {
        error = e;
        if (!e) result.emplace(std::move(v));
        done = true;
    });
    while (!done) ctx.run_one();
    if (error) std::rethrow_exception(error);
    return std::move(*result);
}

inline void run_sync(boost::asio::io_context& ctx, boost::asio::awaitable<void> a) {
    std::exception_ptr error;
    bool done = false;
    boost::asio::co_spawn(ctx, std::move(a), [&](std::exception_ptr e) {
        error = e;
        done = true;
    });
    while (!done) ctx.run_one();
    if (error) std::rethrow_exception(error);
}

}  // namespace switchboard::bench
