#include <switchboard/transport/fd_channel.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <cerrno>

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace switchboard::transport {

namespace asio = boost::asio;
using asio::awaitable;
using jsonrpc::Received;

namespace {
constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);
}

FdChannel::FdChannel(asio::any_io_executor ex, int read_fd, int write_fd, std::size_t max_message_size)
    : reader_(ex, read_fd),
      writer_(ex, write_fd),
      framer_(max_message_size),
      buffer_(std::make_unique<std::array<char, 64 * 1024>>()) {}

FdChannel::~FdChannel() = default;

awaitable<Received> FdChannel::read() {
    for (;;) {
        if (auto frame = framer_.next()) {
            if (frame->kind == jsonrpc::LineFramer::Frame::Kind::message)
                co_return Received{Received::Kind::message, std::move(frame->text), 0, {}, {}, {}};
            co_return Received{Received::Kind::oversize, {}, frame->length, std::move(frame->head),
                               std::move(frame->tail),   {}};
        }
        if (read_done_) co_return Received{Received::Kind::closed, {}, 0, {}, {}, read_end_reason_};
        auto [ec, n] = co_await reader_.async_read_some(asio::buffer(*buffer_), as_tuple_awaitable);
        if (n > 0) framer_.feed(std::string_view(buffer_->data(), n));
        if (ec) {
            read_done_ = true;
            if (ec == asio::error::eof)
                read_end_reason_ = "end of stream";
            else if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor)
                read_end_reason_ = "closed";
            else
                read_end_reason_ = "read failed: " + ec.message();
            if (framer_.buffered() > 0) read_end_reason_ += " (a last message was cut off)";
            boost::system::error_code ignored;
            reader_.close(ignored);
        }
    }
}

awaitable<boost::system::error_code> FdChannel::write(std::string message) {
    if (!writer_.is_open()) co_return asio::error::make_error_code(asio::error::not_connected);
    if (write_error_) co_return write_error_;
    message.push_back('\n');
    auto [ec, n] = co_await asio::async_write(writer_, asio::buffer(message), as_tuple_awaitable);
    co_return ec;
}

awaitable<boost::system::error_code> FdChannel::write_batch(std::vector<std::string> messages) {
    if (!writer_.is_open()) co_return asio::error::make_error_code(asio::error::not_connected);
    if (write_error_) co_return write_error_;
    // Small batches are joined (one write); large ones are gathered so that big messages are not copied.
    std::size_t total = 0;
    for (const auto& m : messages) total += m.size() + 1;
    if (total <= 256 * 1024) {
        std::string joined;
        joined.reserve(total);
        for (const auto& m : messages) {
            joined.append(m);
            joined.push_back('\n');
        }
        auto [ec, n] = co_await asio::async_write(writer_, asio::buffer(joined), as_tuple_awaitable);
        co_return ec;
    }
    static constexpr char newline = '\n';
    std::vector<asio::const_buffer> buffers;
    buffers.reserve(messages.size() * 2);
    for (const auto& m : messages) {
        buffers.push_back(asio::buffer(m));
        buffers.push_back(asio::buffer(&newline, 1));
    }
    auto [ec, n] = co_await asio::async_write(writer_, buffers, as_tuple_awaitable);
    co_return ec;
}

bool FdChannel::try_write(std::string& message) {
    if (!writer_.is_open()) return false;
    boost::system::error_code ec;
    if (!writer_.native_non_blocking()) writer_.native_non_blocking(true, ec);
    if (ec) return false;
    char newline = '\n';
    iovec iov[2] = {{message.data(), message.size()}, {&newline, 1}};
    // On a socket (socket pairs in tests, in-process peers) a closed peer must not raise SIGPIPE.
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    ssize_t n = 0;
    do
        n = write_is_socket_ ? ::sendmsg(writer_.native_handle(), &msg, MSG_NOSIGNAL)
                             : ::writev(writer_.native_handle(), iov, 2);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == ENOTSOCK && write_is_socket_) {
        write_is_socket_ = false;
        return try_write(message);
    }
    if (n < 0) {
        // Would block: the asynchronous write takes over. A real error (EPIPE) is kept for it to report, so that it
        // does not write again (on a socket that would raise SIGPIPE).
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            write_error_ = boost::system::error_code(errno, boost::system::system_category());
        return false;
    }
    const auto written = static_cast<std::size_t>(n);
    if (written == message.size() + 1) return true;
    message.erase(0, std::min(written, message.size()));  // all but the newline written: message is now ""
    return false;
}

void FdChannel::close_write() {
    boost::system::error_code ignored;
    writer_.close(ignored);
}

void FdChannel::close_read() {
    boost::system::error_code ignored;
    reader_.close(ignored);  // a pending read completes with operation_aborted
}

awaitable<void> FdChannel::close() {
    close_write();
    close_read();
    co_return;
}

std::pair<std::shared_ptr<FdChannel>, std::shared_ptr<FdChannel>> make_channel_pair(asio::any_io_executor ex,
                                                                                    std::size_t max_message_size) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        throw boost::system::system_error(errno, boost::system::system_category(), "socketpair");
    auto a = std::make_shared<FdChannel>(ex, fds[0], ::dup(fds[0]), max_message_size);
    auto b = std::make_shared<FdChannel>(ex, fds[1], ::dup(fds[1]), max_message_size);
    return {a, b};
}

std::shared_ptr<FdChannel> make_stdio_server_channel(asio::any_io_executor ex, std::size_t max_message_size) {
    return std::make_shared<FdChannel>(ex, ::dup(STDIN_FILENO), ::dup(STDOUT_FILENO), max_message_size);
}

}  // namespace switchboard::transport
