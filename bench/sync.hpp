// Running a coroutine to completion from plain code: the bench drives one io_context by hand, and background
// coroutines (process watchers, read loops) keep it busy, so it runs until the awaited one is done and stops it.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <stdexcept>
#include <vector>

namespace switchboard::bench {

// run() until `done`: the awaited coroutine's completion sets it and stops the context. Not run_one() in a loop:
// each run_one() sets up Asio's per-thread state afresh, and that state holds the recycled coroutine frames, so every
// frame would be a malloc and a free again; a host runs its loop with run(), once. A context that runs out of work
// before `done` can never finish it: that is an error.
inline void drive(boost::asio::io_context& ctx, const bool& done) {
    if (ctx.stopped()) ctx.restart();
    if (!done) ctx.run();
    if (!done) throw std::runtime_error("run_sync: the awaited coroutine can never finish");
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
        ctx.stop();
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
        ctx.stop();
    });
    drive(ctx, done);
    if (error) std::rethrow_exception(error);
}

// Runs all of them together to completion; rethrows the first failure once all have ended.
inline void run_all(boost::asio::io_context& ctx, std::vector<boost::asio::awaitable<void>> all) {
    std::size_t left = all.size();
    std::exception_ptr error;
    bool done = left == 0;
    for (auto& a : all)
        boost::asio::co_spawn(ctx, std::move(a), [&](std::exception_ptr e) {
            if (e && !error) error = e;
            if (--left == 0) {
                done = true;
                ctx.stop();
            }
        });
    drive(ctx, done);
    if (error) std::rethrow_exception(error);
}

}  // namespace switchboard::bench
