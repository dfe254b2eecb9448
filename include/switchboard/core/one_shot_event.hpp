// A one-shot event that any number of coroutines can wait on, with or without a deadline. Adding and removing a
// waiter is O(1), so 10,000 concurrent calls can each wait on one event.
//
// For a signal that fires again and again ("something changed"), keep a shared_ptr<OneShotEvent> and swap in a new
// one before setting the old one (see host::ServerPool's `changed`).
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <unordered_set>

namespace switchboard::core {

class OneShotEvent {
public:
    OneShotEvent() = default;
    OneShotEvent(const OneShotEvent&) = delete;
    OneShotEvent& operator=(const OneShotEvent&) = delete;

    bool is_set() const { return set_; }
    /// Sets the event and wakes every waiter. Setting it again does nothing.
    void set();
    /// Returns when the event is set, or when the waiting coroutine is cancelled.
    boost::asio::awaitable<void> wait();
    /// True when the event is set, false when `timeout` passed first (or the waiting coroutine was cancelled).
    boost::asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout);

private:
    bool set_ = false;
    std::unordered_set<boost::asio::steady_timer*> waiters_;
};

}  // namespace switchboard::core
