// The transport seam: a channel moves whole JSON-RPC messages. Framing lives inside each channel; the transport
// layer implements it over child processes, pipes, HTTP and WebSocket, and an in-memory pair exists for tests.
//
// Concurrency contract: at most one read() and one write() outstanding at a time, all on the channel's executor;
// close() may be called while a read is pending and makes that read return `closed`.
#pragma once

#include <switchboard/jsonrpc/stream_parser.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::jsonrpc {

class ResultStream;

struct Received {
    enum class Kind {
        message,   ///< `text` is one message
        oversize,  ///< a message over the size limit was dropped: `length`, `head`, `tail` describe it
        closed,    ///< final: the peer is gone; `reason` says how (exit status, stderr tail, ...)
    };
    Kind kind = Kind::closed;
    std::string text;
    std::size_t length = 0;
    std::string head, tail;
    std::string reason;
    /// message: one parsed already, `text` then empty: a big one parsed from pieces as it arrived (see
    /// StreamParser), or one the HTTP server parsed to route it (every POSTed request).
    std::shared_ptr<StreamedMessage> streamed;
};

class Channel {
public:
    virtual ~Channel() = default;

    virtual boost::asio::awaitable<Received> read() = 0;
    /// `message` carries no trailing newline. An error means the channel is unusable.
    virtual boost::asio::awaitable<boost::system::error_code> write(std::string message) = 0;
    /// Writes the message at once if that needs no waiting (the connection calls it only when no write is pending
    /// and nothing is queued), saving a trip through the event loop: true when all of it was written. On a partial
    /// write the written bytes are removed from `message` and false is returned; write() then sends the rest. The
    /// default writes nothing.
    virtual bool try_write(std::string& message) { return false; }
    /// Writes several messages in order. Stream transports override it to send them with one system call; the
    /// default writes them one by one (a message transport such as HTTP sends one request each anyway).
    virtual boost::asio::awaitable<boost::system::error_code> write_batch(std::vector<std::string> messages) {
        for (auto& m : messages) {
            auto ec = co_await write(std::move(m));
            if (ec) co_return ec;
        }
        co_return boost::system::error_code{};
    }
    /// Writes a message whose text is produced as it goes (a big result). Stream transports override it to write it
    /// a piece at a time; the default assembles the text and calls write().
    virtual boost::asio::awaitable<boost::system::error_code> write_stream(std::shared_ptr<ResultStream> stream);
    /// For a transport that parses big messages as they arrive (stdio): which replies' blobs to decode. The default
    /// ignores it.
    virtual void set_blob_policy(BlobPolicy) {}
    /// Graceful close as the transport defines it (stdio: close stdin, wait, SIGTERM, wait, SIGKILL).
    virtual boost::asio::awaitable<void> close() = 0;
    /// Ends the peer at once, without the graceful close (a stdio server's process group is killed): the last resort
    /// of a process that exits without waiting. Most channels have nothing to end.
    virtual void terminate() {}
    /// The message size limit this channel enforces.
    virtual std::size_t max_message_size() const = 0;
    /// Whether stalled() can ever say something: the connection then asks it a few times a second while requests
    /// wait for replies.
    virtual bool can_stall() const { return false; }
    /// Why the peer, still connected, cannot answer now, or nullopt: a stdio server stopped by SIGSTOP says so here.
    /// A stopped process looks like a slow one from the pipe, and its callers would wait out their timeouts.
    virtual std::optional<std::string> stalled() const { return std::nullopt; }
    /// Whether a reply may resume its caller right inside the read loop, before the event loop runs again: true where
    /// nothing of the transport is left to finish once a message is read (a pipe, a socket pair). An HTTP reply still
    /// has its stream to end and its connection to give back, and a caller resumed at once would open another
    /// connection for its next request.
    virtual bool resumes_callers_inline() const { return false; }
};

}  // namespace switchboard::jsonrpc
