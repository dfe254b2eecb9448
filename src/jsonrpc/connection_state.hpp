// What the files of jsonrpc::Connection share: a request waiting for its reply, a request from the peer being
// answered, and how ids are read. The files: connection.cpp (the loops, dispatch, closing), connection_request.cpp
// (sending a request and waiting), connection_reply.cpp (a reply, progress or an oversize message back to its
// waiter), connection_timeouts.cpp (deadlines and stalls), connection_incoming.cpp (answering the peer's requests).
#pragma once

#include <switchboard/core/wakeup.hpp>
#include <switchboard/jsonrpc/connection.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>

namespace switchboard::jsonrpc {

struct Connection::Pending {
    // A reply wakes the waiter at once, inside the read loop, where the channel allows it (no event-loop round trip
    // between a reply and its caller); the deadline timer, a stall or the end of the connection queue the wake-up.
    Pending(const boost::asio::any_io_executor& ex, core::Wakeup::Registry& wakeups) : wakeup(ex, wakeups) {}
    core::Wakeup wakeup;
    std::optional<Outcome<boost::json::value>> outcome;
    std::string method;
    clock::duration timeout{};
    clock::time_point deadline, max_deadline;
    bool reset_on_progress = true;
    bool cancellable = true;
    std::function<void(const Progress&)> on_progress;
    DecodedBlobs blobs;             // taken out of the result as it was read
    bool wants_blobs = false;       // RequestOptions::blobs was given
    bool wants_text = false;        // RequestOptions::result_text was given
    std::string result_text;        // the result's text, for wants_text (the outcome is then null)
    std::string cancelled_because;  // cancel_requests(): why
};

struct detail::IncomingState {
    boost::asio::cancellation_signal signal;
    bool cancelled = false;
    std::shared_ptr<const MetaMembers> result_meta;     // see IncomingRequest::set_result_meta
    std::shared_ptr<const std::string> result_members;  // see IncomingRequest::set_result_members
    std::function<void(std::string)> send;              // a detached request's writer (IncomingRequest::detached)
};

namespace detail {

inline constexpr std::size_t max_batch = 256;  // messages per channel write
inline constexpr std::size_t stream_results_above = 1u << 20;

// The id of one of our requests, as a reply or a progress notification names it.
inline std::optional<std::int64_t> as_our_id(const boost::json::value& id) {
    if (id.is_int64()) return id.get_int64();
    if (id.is_uint64() && id.get_uint64() <= INT64_MAX) return static_cast<std::int64_t>(id.get_uint64());
    if (id.is_string()) {  // tolerate peers that echo numeric ids as strings
        std::int64_t v = 0;
        const auto& s = id.get_string();
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && p == s.data() + s.size()) return v;
    }
    return std::nullopt;
}

// The key of a request id in incoming_: its JSON text (5, "abc"). Integers, the usual ids, without a serializer
// (setting one up cost a few hundred instructions a request).
inline std::string id_key(const boost::json::value& id) {
    if (id.is_int64()) return fmt::format_int(id.get_int64()).str();
    if (id.is_uint64()) return fmt::format_int(id.get_uint64()).str();
    return boost::json::serialize(id);
}

}  // namespace detail
}  // namespace switchboard::jsonrpc
