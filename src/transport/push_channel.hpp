// A Channel fed from outside: the HTTP server pushes each POSTed message in, and every message the session writes
// goes to a callback that routes it to the right HTTP response. Internal to the transport layer.
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/stream_parser.hpp>

#include "message_queue.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/error.hpp>

#include <functional>
#include <memory>
#include <string>

namespace switchboard::transport::detail {

class PushChannel : public jsonrpc::Channel {
public:
    using Sink = std::function<void(std::string message)>;

    PushChannel(boost::asio::any_io_executor ex, std::size_t max_message_size, Sink sink)
        : queue_(ex, /*wake_inline=*/true), max_(max_message_size), sink_(std::move(sink)) {}

    /// Delivers one incoming message to the session.
    void push(std::string text) { queue_.push_message(std::move(text)); }
    /// Delivers one incoming message already parsed (the HTTP server read it to route it): the session checks its
    /// envelope but does not parse the text again.
    void push_parsed(jsonrpc::Message message) {
        jsonrpc::Received r;
        r.kind = jsonrpc::Received::Kind::message;
        r.streamed = std::make_shared<jsonrpc::StreamedMessage>();
        r.streamed->message.emplace(std::move(message));
        queue_.push(std::move(r));
    }
    /// Ends the incoming side: the session's read returns `closed` with `reason` once the inbox is drained.
    void end(std::string reason) { queue_.end(std::move(reason)); }
    bool ended() const { return queue_.ended(); }

    boost::asio::awaitable<jsonrpc::Received> read() override { return queue_.read(); }

    boost::asio::awaitable<boost::system::error_code> write(std::string message) override {
        if (!sink_) co_return boost::asio::error::broken_pipe;
        sink_(std::move(message));
        co_return boost::system::error_code{};
    }

    /// The sink takes a message at once (it only queues it for its HTTP stream): the session's write loop need not
    /// run for it.
    bool try_write(std::string& message) override {
        if (!sink_) return false;
        sink_(std::move(message));
        return true;
    }

    boost::asio::awaitable<void> close() override {
        end("closed");
        sink_ = nullptr;
        co_return;
    }

    std::size_t max_message_size() const override { return max_; }

private:
    MessageQueue queue_;
    std::size_t max_;
    Sink sink_;
};

}  // namespace switchboard::transport::detail
