// The receiving side of a channel whose messages come from several producers (HTTP replies and SSE streams, the
// POSTs of a served session): pushed in any order, read one at a time. After end(), read() drains what is queued
// and then returns `closed` with the reason. Internal to the transport layer.
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <switchboard/core/wakeup.hpp>
#include <switchboard/jsonrpc/channel.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>
#include <string>

namespace switchboard::transport::detail {

class MessageQueue {
public:
    /// `wake_inline`: push() resumes a waiting reader inside the call (core::Wakeup::wake_now), before the pusher
    /// goes on: a served session's next request is handled without a scheduler pass. Otherwise the reader's
    /// resumption is queued.
    explicit MessageQueue(const boost::asio::any_io_executor& ex, bool wake_inline = false)
        : wakeup_(ex), wake_inline_(wake_inline) {}
    /// Queues one received item; ignored once ended.
    void push(jsonrpc::Received r) {
        if (ended_) return;
        queue_.push_back(std::move(r));
        if (wake_inline_)
            wakeup_.wake_now();
        else
            wakeup_.wake();
    }
    void push_message(std::string text) {
        jsonrpc::Received r;
        r.kind = jsonrpc::Received::Kind::message;
        r.text = std::move(text);
        push(std::move(r));
    }
    /// Ends the incoming side (the first reason wins). The reader's resumption is queued.
    void end(std::string reason) {
        if (ended_) return;
        ended_ = true;
        reason_ = std::move(reason);
        wakeup_.wake();
    }
    bool ended() const { return ended_; }
    boost::asio::awaitable<jsonrpc::Received> read() {
        while (queue_.empty() && !ended_)
            co_await wakeup_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        jsonrpc::Received r;
        if (!queue_.empty()) {
            r = std::move(queue_.front());
            queue_.pop_front();
        } else {
            r.kind = jsonrpc::Received::Kind::closed;
            r.reason = reason_;
        }
        co_return r;
    }

private:
    core::Wakeup wakeup_;
    bool wake_inline_;
    std::deque<jsonrpc::Received> queue_;
    bool ended_ = false;
    std::string reason_;
};

}  // namespace switchboard::transport::detail
