#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/one_shot_event.hpp>

#include <boost/asio/this_coro.hpp>

namespace switchboard::core {

namespace asio = boost::asio;

void OneShotEvent::set() {
    if (set_) return;
    set_ = true;
    for (auto* t : waiters_) t->cancel();
}

asio::awaitable<void> OneShotEvent::wait() {
    if (set_) co_return;
    asio::steady_timer timer(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    waiters_.insert(&timer);
    co_await timer.async_wait(as_tuple_awaitable);
    waiters_.erase(&timer);
}

asio::awaitable<bool> OneShotEvent::wait_for(std::chrono::steady_clock::duration timeout) {
    if (set_) co_return true;
    asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
    waiters_.insert(&timer);
    co_await timer.async_wait(as_tuple_awaitable);
    waiters_.erase(&timer);
    co_return set_;
}

}  // namespace switchboard::core
