// Starting background coroutines. Prefer a TaskGroup (task_group.hpp), which can cancel and join what it started;
// spawn_logged is for work that must run to its end whoever owns it (closing a session after its owner is gone).
//
// Thread-safety: free functions.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <concepts>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::core {

/// Runs `f()` (a callable returning awaitable<void>) inside a coroutine that owns `f`: a lambda's captures live as
/// long as the coroutine it returns. Calling a capturing lambda coroutine directly (`[x]() -> awaitable<void> {..}()`)
/// and keeping only the awaitable leaves the captures dangling once the lambda temporary is gone.
template <class F>
boost::asio::awaitable<void> keep_alive(F f) {
    co_await f();
}

/// Logs an exception that escaped a background coroutine ("internal error in <what>: ..."); nothing when `e` is null.
void log_exception(std::exception_ptr e, std::string_view what);

/// co_spawn with a completion handler that logs an escaped exception.
void spawn_logged(const boost::asio::any_io_executor& ex, boost::asio::awaitable<void> task, std::string what);
/// Same, for a callable returning awaitable<void>; the callable (and its captures) lives until the task ends.
template <class F>
requires std::invocable<F&>
void spawn_logged(const boost::asio::any_io_executor& ex, F f, std::string what) {
    spawn_logged(ex, keep_alive(std::move(f)), std::move(what));
}

/// Runs `tasks` concurrently on the current executor and returns when all of them have finished; an exception in one
/// is logged and does not stop the others.
boost::asio::awaitable<void> run_all(std::vector<boost::asio::awaitable<void>> tasks);

}  // namespace switchboard::core
