// Config entry → channel: the one place that knows which transport a server uses (stdio spawns the command,
// http is Streamable HTTP, sse is the legacy HTTP+SSE transport).
//
// Thread-safety: free function; runs on `ex`.
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>

namespace switchboard::host {

/// Opens the transport of `config`. Fails with a clear error (naming the server for remote ones) when the process
/// cannot be started, the SSE stream cannot be opened, or the transport is not available.
boost::asio::awaitable<jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>> open_channel(
    boost::asio::any_io_executor ex, const ServerConfig& config, std::size_t max_message_size);

}  // namespace switchboard::host
