// A signal that fires again and again ("the outbox drained", "a round changed"): each wait takes the current one-shot
// event, and fire() sets it and leaves a fresh one for the next waiters (the pattern one_shot_event.hpp describes).
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <switchboard/core/one_shot_event.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <utility>

namespace switchboard::jsonrpc {

class Signal {
public:
    /// Wakes every coroutine waiting now; later waits wait for the next fire().
    void fire() {
        if (event_) std::exchange(event_, nullptr)->set();
    }
    /// Returns at the next fire(), or when the waiting coroutine is cancelled.
    boost::asio::awaitable<void> wait() {
        auto event = current();  // held: fire() drops ours
        co_await event->wait();
    }
    /// True at the next fire(), false when `timeout` passed first (or the waiting coroutine was cancelled).
    boost::asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout) {
        auto event = current();
        co_return co_await event->wait_for(timeout);
    }

private:
    std::shared_ptr<core::OneShotEvent> current() {
        if (!event_) event_ = std::make_shared<core::OneShotEvent>();
        return event_;
    }
    std::shared_ptr<core::OneShotEvent> event_;
};

}  // namespace switchboard::jsonrpc
