#include "client_watch.hpp"

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

namespace switchboard::webapi {

namespace asio = boost::asio;

asio::awaitable<void> until_client_leaves(std::shared_ptr<http::ServerConnection> c) {
    while (c->buffer.size() < 1024 * 1024) {
        auto [ec, n] = co_await c->socket.async_read_some(c->buffer.prepare(16 * 1024), core::as_tuple_awaitable);
        if (!ec) c->buffer.commit(n);
        const auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none) co_return;
        if (ec) co_return;
    }
    // A client that keeps sending while its stream runs: no longer read, and no longer watched.
    asio::steady_timer forever(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    co_await forever.async_wait(core::as_tuple_awaitable);
}

}  // namespace switchboard::webapi
