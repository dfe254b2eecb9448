// A one-shot event that coroutines can wait on with a deadline; any number of waiters.
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace switchboard::jsonrpc {

class AsyncEvent {
public:
    bool is_set() const { return set_; }

    void set() {
        set_ = true;
        for (auto* t : waiters_) t->cancel();
    }

    /// True when the event is set, false when `timeout` passed first (or the waiting coroutine was cancelled).
    boost::asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout) {
        if (set_) co_return true;
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, timeout);
        waiters_.push_back(&timer);
        co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &timer));
        co_return set_;
    }

private:
    bool set_ = false;
    std::vector<boost::asio::steady_timer*> waiters_;
};

}  // namespace switchboard::jsonrpc
