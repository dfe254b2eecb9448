// Noticing that the client of a streamed response went away. A stream that is waiting (a tool call, a watched
// resource, a run waiting for an approval) writes nothing, and a write would notice only at the next event or
// keep-alive: reading the connection notices at once. What the client sends meanwhile stays in the connection's
// buffer for its next request.
#pragma once

#include <switchboard/http/server.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace switchboard::webapi {

/// Returns when the client of `c` goes away (its connection reads EOF or fails). Past 1 MiB of what it sent
/// meanwhile, the connection is no longer read and this waits until cancelled. Cancel it (as the losing branch of
/// `||`) before the server reads the connection's next request.
boost::asio::awaitable<void> until_client_leaves(std::shared_ptr<http::ServerConnection> c);

}  // namespace switchboard::webapi
