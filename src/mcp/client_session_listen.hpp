// ClientSession::Listen, shared by the files that open, answer and end a subscriptions/listen stream
// (client_session_listen.cpp, client_session_server_requests.cpp, client_session_tasks.cpp, client_session.cpp).
#pragma once

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/mcp/client_session.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <cstdint>
#include <optional>

namespace switchboard::mcp {

// One subscriptions/listen stream: the session's own (its whole filter) or a followed task's.
struct ClientSession::Listen {
    std::int64_t id = -1;  // its request id, which the acknowledgment names
    boost::asio::cancellation_signal cancel;
    core::OneShotEvent settled;  // acknowledged, or the request ended
    std::optional<Error> error;
    bool acknowledged = false;
};

}  // namespace switchboard::mcp
