// What the two HTTP client channels share (Streamable HTTP and the legacy HTTP+SSE): the Channel over a shared state,
// an oversize SSE event reported to the reader, an error response made up for a request the transport failed.
// Internal to the transport layer.
//
// Thread-safety: single owner; all calls on one executor.
#pragma once

#include "message_queue.hpp"

#include <switchboard/http/sse_parser.hpp>
#include <switchboard/jsonrpc/channel.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/system/error_code.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace switchboard::transport::detail {

/// A Channel whose work is done by a `State` that its background coroutines share: each call holds the state while it
/// runs, so that destroying the channel mid-call does not pull the state out from under the call. The state has
/// `inbox` (a MessageQueue), `opts.max_message_size`, `write(std::string)`, `close()` (the graceful close) and
/// `abandon()` (what the channel's destructor does: end everything at once, without waiting).
template <class State>
class StateChannel final : public jsonrpc::Channel {
public:
    explicit StateChannel(std::shared_ptr<State> s) : s_(std::move(s)) {}
    ~StateChannel() override { s_->abandon(); }

    boost::asio::awaitable<jsonrpc::Received> read() override {
        auto s = s_;
        co_return co_await s->inbox.read();
    }
    boost::asio::awaitable<boost::system::error_code> write(std::string message) override {
        auto s = s_;
        co_return co_await s->write(std::move(message));
    }
    boost::asio::awaitable<void> close() override {
        auto s = s_;
        co_await s->close();
    }
    std::size_t max_message_size() const override { return s_->opts.max_message_size; }

private:
    std::shared_ptr<State> s_;
};

/// An SSE event over the size limit (`ev.kind == oversize`): logged, and queued for the reader as `oversize`.
inline void push_oversize(MessageQueue& inbox, std::string_view server_name, const http::SseEvent& ev,
                          std::size_t limit) {
    spdlog::warn("[{}] dropped an SSE event of {} bytes, over the {} byte limit", server_name, ev.length, limit);
    jsonrpc::Received r;
    r.kind = jsonrpc::Received::Kind::oversize;
    r.length = ev.length;
    r.head = ev.head;
    r.tail = ev.tail;
    inbox.push(std::move(r));
}

/// The JSON-RPC error response to the request whose serialized id is `id_json`.
inline std::string error_response(std::string_view id_json, int code, std::string message) {
    boost::json::object err;
    err["code"] = code;
    err["message"] = std::move(message);
    return fmt::format(R"({{"jsonrpc":"2.0","id":{},"error":{}}})", id_json, boost::json::serialize(err));
}

}  // namespace switchboard::transport::detail
