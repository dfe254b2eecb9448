// A Channel fed from outside: the HTTP server pushes each POSTed message in, and every message the session writes
// goes to a callback that routes it to the right HTTP response. Internal to the transport layer.
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <switchboard/jsonrpc/channel.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>
#include <functional>
#include <string>

namespace switchboard::transport::detail {

class PushChannel : public jsonrpc::Channel {
public:
    using Sink = std::function<void(std::string message)>;

    PushChannel(boost::asio::any_io_executor ex, std::size_t max_message_size, Sink sink)
        : signal_(ex), max_(max_message_size), sink_(std::move(sink)) {}

    /// Delivers one incoming message to the session.
    void push(std::string text) {
        if (ended_) return;
        inbox_.push_back(std::move(text));
        signal_.cancel();
    }
    /// Ends the incoming side: the session's read returns `closed` with `reason` once the inbox is drained.
    void end(std::string reason) {
        if (ended_) return;
        ended_ = true;
        reason_ = std::move(reason);
        signal_.cancel();
    }
    bool ended() const { return ended_; }

    boost::asio::awaitable<jsonrpc::Received> read() override {
        while (inbox_.empty() && !ended_) {
            signal_.expires_at(boost::asio::steady_timer::time_point::max());
            co_await signal_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
        jsonrpc::Received r;
        if (!inbox_.empty()) {
            r.kind = jsonrpc::Received::Kind::message;
            r.text = std::move(inbox_.front());
            inbox_.pop_front();
        } else {
            r.kind = jsonrpc::Received::Kind::closed;
            r.reason = reason_;
        }
        co_return r;
    }

    boost::asio::awaitable<boost::system::error_code> write(std::string message) override {
        if (!sink_) co_return boost::asio::error::broken_pipe;
        sink_(std::move(message));
        co_return boost::system::error_code{};
    }

    boost::asio::awaitable<void> close() override {
        end("closed");
        sink_ = nullptr;
        co_return;
    }

    std::size_t max_message_size() const override { return max_; }

private:
    boost::asio::steady_timer signal_;
    std::size_t max_;
    Sink sink_;
    std::deque<std::string> inbox_;
    bool ended_ = false;
    std::string reason_;
};

}  // namespace switchboard::transport::detail
