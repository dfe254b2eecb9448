// A Channel over a pair of POSIX file descriptors carrying newline-delimited JSON-RPC (the stdio framing).
// Used for a server's own stdin/stdout, for the pipes of a child process, and for socket pairs in tests.
//
// Thread-safety: single owner; see jsonrpc::Channel for the concurrency contract.
#pragma once

#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/framing.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <functional>
#include <memory>

namespace switchboard::transport {

class FdChannel : public jsonrpc::Channel {
public:
    /// Takes ownership of both descriptors (they may refer to the same socket if dup'ed).
    FdChannel(boost::asio::any_io_executor ex, int read_fd, int write_fd,
              std::size_t max_message_size = jsonrpc::default_max_message_size);
    ~FdChannel() override;

    boost::asio::awaitable<jsonrpc::Received> read() override;
    boost::asio::awaitable<boost::system::error_code> write(std::string message) override;
    boost::asio::awaitable<boost::system::error_code> write_batch(std::vector<std::string> messages) override;
    bool try_write(std::string& message) override;
    boost::asio::awaitable<boost::system::error_code> write_stream(std::shared_ptr<jsonrpc::ResultStream> s) override;
    boost::asio::awaitable<void> close() override;
    std::size_t max_message_size() const override { return framer_.max_message_size(); }
    void set_blob_policy(jsonrpc::BlobPolicy policy) override { framer_.set_blob_policy(std::move(policy)); }
    bool resumes_callers_inline() const override { return true; }

    /// Closes only the writing side (the peer reads end-of-file).
    void close_write();
    /// Makes a pending read return `closed` and closes the reading side.
    void close_read();
    bool read_closed() const { return read_done_; }
    /// Whether a message has been read (a server that sent one got as far as starting).
    bool has_read_message() const { return read_message_; }
    /// Awaited by read() before it reports the end of the stream, to add to `closed.reason` (a child process's exit
    /// status and stderr): an owner that would otherwise wrap read() in a coroutine of its own, a frame and a move of
    /// every message, for the last one only.
    void on_closed(std::function<boost::asio::awaitable<void>(jsonrpc::Received& closed)> hook) {
        on_closed_ = std::move(hook);
    }

private:
    class Reader;  // the reading side: a pipe or socket read that knows when it drained the descriptor
    std::unique_ptr<Reader> reader_;
    boost::asio::posix::stream_descriptor writer_;
    jsonrpc::LineFramer framer_;
    bool read_done_ = false;
    bool read_message_ = false;
    std::function<boost::asio::awaitable<void>(jsonrpc::Received&)> on_closed_;
    boost::system::error_code write_error_;  // a failed try_write, reported by the next write
    bool write_is_socket_ = true;  // try_write: send(MSG_NOSIGNAL) until the descriptor turns out not a socket
    std::string read_end_reason_;
};

/// A connected pair of FdChannels over a socketpair, for tests and in-process peers.
std::pair<std::shared_ptr<FdChannel>, std::shared_ptr<FdChannel>> make_channel_pair(
    boost::asio::any_io_executor ex, std::size_t max_message_size = jsonrpc::default_max_message_size);

/// The process's own stdin (reading) and stdout (writing), for a stdio MCP server.
std::shared_ptr<FdChannel> make_stdio_server_channel(boost::asio::any_io_executor ex,
                                                     std::size_t max_message_size = jsonrpc::default_max_message_size);

}  // namespace switchboard::transport
