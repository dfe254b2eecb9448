// Starting background coroutines. Prefer a TaskGroup (task_group.hpp), which can cancel and join what it started;
// spawn_logged is for work that must run to its end whoever owns it (closing a session after its owner is gone).
//
// Thread-safety: free functions.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/version.hpp>

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

namespace detail {
// The bottom frame of a task started by start_inline: runs it, then calls `done` right where it ended.
template <class Done>
boost::asio::awaitable<boost::asio::detail::awaitable_thread_entry_point> inline_entry(
    boost::asio::any_io_executor ex, boost::asio::awaitable<void> task, Done done) {
    // Counts as outstanding work while it runs, as co_spawn's tasks do (io_context::run does not return under it).
    const auto work = boost::asio::prefer(ex, boost::asio::execution::outstanding_work.tracked);
    std::exception_ptr e;
    try {
        co_await std::move(task);
    } catch (...) {
        e = std::current_exception();
    }
    std::move(done)(e);
}
}  // namespace detail

/// Starts `task` on the calling thread, which must be running `ex`'s io_context, and calls `done(exception_ptr)` when
/// it ends; `slot` cancels it. Unlike co_spawn, a task that ends without ever suspending (a request answered at once)
/// calls `done` inline: co_spawn posts first, and that handler, queued behind the reactor, cost an epoll_wait per
/// request. Relies on Asio 1.81's awaitable internals (co_spawn's own launch), so other versions get co_spawn.
template <class Done>
void start_inline(const boost::asio::any_io_executor& ex, boost::asio::awaitable<void> task,
                  boost::asio::cancellation_slot slot, Done done) {
#if BOOST_VERSION == 108100
    namespace asio = boost::asio;
    asio::detail::awaitable_handler<asio::any_io_executor, void>(
        detail::inline_entry(ex, std::move(task), std::move(done)), ex, slot, asio::cancellation_state(slot))
        .launch();
#else
    boost::asio::co_spawn(ex, std::move(task), boost::asio::bind_cancellation_slot(slot, std::move(done)));
#endif
}

/// Runs `tasks` concurrently on the current executor and returns when all of them have finished; an exception in one
/// is logged and does not stop the others.
boost::asio::awaitable<void> run_all(std::vector<boost::asio::awaitable<void>> tasks);

}  // namespace switchboard::core
