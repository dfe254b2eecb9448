// Running a coroutine to completion from plain code: the bench drives one io_context by hand, and background
// coroutines (process watchers, read loops) keep it busy, so run_one() until the awaited one is done.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <stdexcept>

namespace switchboard::bench {

// run_one() until `done`. An io_context that ran out of work earlier (everything closed) is stopped and must be
// restarted; one that runs out of work before `done` would spin: that is an error.
inline void drive(boost::asio::io_context& ctx, const bool& done) {
    if (ctx.stopped()) ctx.restart();
    while (!done)
        if (ctx.run_one() == 0 && !done) throw std::runtime_error("run_sync: the awaited coroutine can never finish");
}

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
    drive(ctx, done);
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
    drive(ctx, done);
    if (error) std::rethrow_exception(error);
}

}  // namespace switchboard::bench
