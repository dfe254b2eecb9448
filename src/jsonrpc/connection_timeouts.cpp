#include "connection_state.hpp"

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/co_spawn.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

// Timeouts: one deadline timer for every waiting request, and the stall watch that fails requests a stopped peer
// cannot answer. A waiter that finds its deadline passed gives up itself (connection_request.cpp).
namespace switchboard::jsonrpc {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using core::as_tuple_awaitable;

// One timer for every waiting request, armed at the earliest deadline. A request with a later deadline than the
// armed one (the usual case: the same timeout, sent later) re-arms nothing, where a timer of its own at its deadline
// became the earliest timer and cost a timerfd_settime system call per request.
void Connection::arm_deadline(clock::time_point at) {
    if (at >= deadline_armed_ || closed_error_) return;
    deadline_armed_ = at;
    deadline_timer_.expires_at(at);  // cancels the wait for a later deadline; its handler sees operation_aborted
    // A plain handler holding a weak reference: a connection dropped while requests wait is not kept alive by it.
    deadline_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        if (ec) return;
        if (auto self = weak.lock()) self->on_deadline();
    });
}

void Connection::on_deadline() {
    deadline_armed_ = clock::time_point::max();
    const auto now = clock::now();
    auto next = clock::time_point::max();
    for (auto& [id, p] : pending_) {
        const auto due = std::min(p->deadline, p->max_deadline);
        if (due <= now)
            p->wakeup.wake();  // the waiter sees its deadline passed and gives up
        else
            next = std::min(next, due);
    }
    if (next != clock::time_point::max()) arm_deadline(next);
}

void Connection::watch_stalls() {
    if (stall_watch_ || closed_error_ || options_.stall_check_interval.count() <= 0 || !channel_->can_stall()) return;
    stall_watch_ = true;
    auto self = shared_from_this();
    asio::co_spawn(executor_, stall_watch(), [self](std::exception_ptr e) {
        if (!e) return;  // the coroutine cleared the flag itself (a later watch may have set it again since)
        core::log_exception(e, self->with_context("stall watch"));
        self->stall_watch_ = false;
    });
}

// A stopped process looks like a slow one from the pipe: without this its callers would wait out their timeouts.
// One timer per connection, armed only while requests wait. A peer that sent anything since the last tick is not
// asked (no /proc reads for a busy server), and requests fail only after two stalled ticks in a row with nothing
// read between them, so that a reply already in the pipe when the peer stopped is read, not thrown away.
awaitable<void> Connection::stall_watch() {
    auto seen = received_;
    int stalled_ticks = 0;
    while (!closed_error_ && !pending_.empty()) {
        stall_timer_.expires_after(options_.stall_check_interval);
        co_await stall_timer_.async_wait(as_tuple_awaitable);
        if (closed_error_ || pending_.empty()) break;
        if (received_ != seen) {
            seen = received_;
            stalled_ticks = 0;
            continue;
        }
        auto why = channel_->stalled();
        stalled_ticks = why ? stalled_ticks + 1 : 0;
        if (stalled_ticks < 2) continue;
        stalled_ticks = 0;
        // The connection stays: the peer answers again once it resumes. The requests it would answer late are
        // cancelled, so that it can skip them.
        auto pending = std::move(pending_);
        pending_.clear();
        for (auto& [id, p] : pending) {
            p->outcome = Error::make_local(
                code::unavailable,
                with_context(fmt::format("{}: no reply to {} can come until it resumes (SIGCONT)", *why, p->method)));
            p->wakeup.wake();
            if (p->cancellable) notify("notifications/cancelled", json::object{{"requestId", id}, {"reason", *why}});
        }
        spdlog::warn("{}", with_context(fmt::format("{}: {} waiting request{} failed", *why, pending.size(),
                                                    pending.size() == 1 ? "" : "s")));
    }
    stall_watch_ = false;
}

}  // namespace switchboard::jsonrpc
