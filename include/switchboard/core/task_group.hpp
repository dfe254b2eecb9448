// A task group: the owner of background coroutines. Every coroutine an object starts and does not await belongs to
// one, so that the object can stop them (cancel) and wait for them (join) before it goes away: no detached spawn
// outlives its owner's shutdown.
//
// cancel() delivers terminal cancellation to every task: the operation it is suspended in completes with
// operation_aborted, and its next co_await of an Asio operation throws (Asio's throw_if_cancelled), which ends it.
// An exception that ends a task (other than that cancellation) is logged with the task's name.
//
// Thread-safety: single owner; all calls on the executor given to the constructor. The group may be destroyed with
// tasks still running: they are cancelled and finish on their own.
#pragma once

#include <switchboard/core/spawn.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace switchboard::core {

class TaskGroup {
public:
    explicit TaskGroup(boost::asio::any_io_executor ex);
    ~TaskGroup();
    TaskGroup(const TaskGroup&) = delete;
    TaskGroup& operator=(const TaskGroup&) = delete;

    /// Starts `task` (posted: it begins running after the caller's current step). After cancel() the group accepts
    /// no new tasks: `task` is dropped unstarted and false is returned.
    bool spawn(boost::asio::awaitable<void> task, std::string name);
    /// Same, for a callable returning awaitable<void>; the callable (and its captures) lives until the task ends.
    template <class F>
    requires std::invocable<F&>
    bool spawn(F f, std::string name) {
        if (closed()) return false;
        return spawn(keep_alive(std::move(f)), std::move(name));
    }
    /// Starts `task` at once, on the calling thread (core::start_inline): a task that ends without suspending costs no
    /// scheduler pass, and one that suspends has done its first steps before the caller's next line. The result
    /// cancels this one task (emit terminal on it; a signal of an ended task is inert); it expires shortly after the
    /// task ends (its entry is erased by a post), and is empty at once when the group refused the task (after
    /// cancel()).
    std::weak_ptr<boost::asio::cancellation_signal> start(boost::asio::awaitable<void> task, std::string name);
    /// Cancels every running task and refuses new ones.
    void cancel();
    /// Returns when no task is running (at once when none is).
    boost::asio::awaitable<void> join();
    /// cancel(), then join().
    boost::asio::awaitable<void> shutdown();

    std::size_t size() const;
    bool closed() const;

    struct State;  // task_group.cpp

private:
    std::shared_ptr<State> state_;
};

}  // namespace switchboard::core
