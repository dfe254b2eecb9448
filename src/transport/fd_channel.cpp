#include <switchboard/core/as_tuple.hpp>
#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/transport/fd_channel.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/version.hpp>

#include <cerrno>
#include <memory>
#include <string_view>

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace switchboard::transport {

namespace asio = boost::asio;
using asio::awaitable;
using jsonrpc::Received;

namespace {
using core::as_tuple_awaitable;
}

// The reading side. Asio's descriptor read, once a read has returned data, always tries the next read at once
// ("speculatively") and so pays one read() that fails with EAGAIN per message in a request/response exchange: the
// event loop cannot tell a drained pipe from a full one. This read op tells it: a read of a pipe that returned less
// than was asked for, performed for a readiness event that was not a hang-up, has emptied the pipe while a writer
// was still there, so it reports "done and exhausted" and the next read waits for the reactor's next event
// (edge-triggered epoll: a later write, or the writer's close, raises one) without a system call. A speculative read,
// an event with EPOLLHUP/EPOLLERR (the end of the stream may already be there, and its edge is spent), and every other
// kind of descriptor (a terminal returns one line at a time; a socket's half-close is not among Asio's events) keep
// Asio's behaviour. The op goes through Asio's own reactor (registration, cancellation by slot, close aborting a
// pending read); reading the event mask relies on Asio 1.81's epoll reactor, hence the version check.
#if BOOST_VERSION == 108100 && defined(BOOST_ASIO_HAS_EPOLL) && !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#define SWITCHBOARD_FD_EXHAUSTION 1
#else
#define SWITCHBOARD_FD_EXHAUSTION 0
#endif

namespace {
#if SWITCHBOARD_FD_EXHAUSTION
// The epoll events the reactor is dispatching to a descriptor: its descriptor_state (whose only, non-virtual base is
// the scheduler_operation, privately) holds them in task_result_ (set_ready_events) while perform_io runs the queued
// operations.
struct EventsOf : asio::detail::scheduler_operation {
    static unsigned int get(asio::detail::reactor::per_descriptor_data d) {
        const auto* op = reinterpret_cast<const asio::detail::scheduler_operation*>(d);
        return op->*(&EventsOf::task_result_);
    }
};
#endif
}  // namespace

class FdChannel::Reader {
public:
    Reader(const asio::any_io_executor& ex, int fd)
        : reactor_(asio::use_service<asio::detail::reactor>(asio::query(ex, asio::execution::context))), fd_(fd) {
        struct stat st {};
        exhaustible_ = SWITCHBOARD_FD_EXHAUSTION && ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
        const int flags = ::fcntl(fd, F_GETFL);
        if (flags >= 0 && (flags & O_NONBLOCK) == 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        if (const int err = reactor_.register_descriptor(fd, data_)) {
            ::close(fd);
            fd_ = -1;
            throw boost::system::system_error(err, boost::system::system_category(), "register descriptor");
        }
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    ~Reader() { close(); }

    /// Closes the descriptor; a pending read completes with operation_aborted.
    void close() {
        if (fd_ < 0) return;
        reactor_.deregister_descriptor(fd_, data_, false);  // false: the descriptor may be a dup (socket pairs)
        ::close(fd_);
        fd_ = -1;
        reactor_.cleanup_descriptor_data(data_);
    }

    /// Reads what is there (up to 64 KiB) into `framer`; completes with the number of bytes.
    template <class Token>
    auto async_read_some(jsonrpc::LineFramer& framer, Token&& token) {
        return asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
            [this, &framer](auto handler) { start(std::move(handler), framer); }, token);
    }

private:
    using reactor_op = asio::detail::reactor_op;

    // One read buffer per thread, not per channel: a read is handed to the framer (which copies the lines out) inside
    // the reactor's perform step, before any other read on this thread can run. 20 servers kept 20 x 64 KiB resident.
    static constexpr std::size_t scratch_size = 64 * 1024;
    static char* scratch() {
        thread_local const std::unique_ptr<char[]> buffer = std::make_unique_for_overwrite<char[]>(scratch_size);
        return buffer.get();
    }

    template <class Handler>
    struct Op : reactor_op {
        Op(Handler h, int f, jsonrpc::LineFramer& fr, Reader* r)
            : reactor_op(boost::system::error_code(), &Op::do_perform, &Op::do_complete),
              handler(std::move(h)),
              fd(f),
              framer(fr),
              reader(r) {}
        Handler handler;
        int fd;
        jsonrpc::LineFramer& framer;  // fed as the bytes arrive (the channel outlives a registered read)
        Reader* reader;               // valid while the op can be performed (close deregisters first)

        static status do_perform(reactor_op* base) {
            auto* o = static_cast<Op*>(base);
            char* const buffer = scratch();
            for (;;) {
                const ssize_t n = ::read(o->fd, buffer, scratch_size);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return not_done;
                if (n < 0) {
                    o->ec_ = boost::system::error_code(errno, boost::system::system_category());
                    return done;
                }
                if (n == 0) {
                    o->ec_ = asio::error::eof;
                    return done;
                }
                o->bytes_transferred_ = static_cast<std::size_t>(n);
                o->framer.feed(std::string_view(buffer, o->bytes_transferred_));
                return o->bytes_transferred_ < scratch_size && o->reader->drained_by_event() ? done_and_exhausted
                                                                                             : done;
            }
        }

        static void do_complete(void* owner, asio::detail::operation* base, const boost::system::error_code&,
                                std::size_t) {
            std::unique_ptr<Op> o(static_cast<Op*>(base));
            if (!owner) return;  // the io_context is being destroyed: the handler goes without being called
            Handler h(std::move(o->handler));
            const auto ec = o->ec_;
            const auto n = o->bytes_transferred_;
            o.reset();
            std::move(h)(ec, n);
        }
    };

    // Cancellation by slot (per-operation cancellation, as Asio's own descriptor reads support).
    struct Canceller {
        asio::detail::reactor* reactor;
        asio::detail::reactor::per_descriptor_data* data;
        int fd;
        void operator()(asio::cancellation_type_t type) {
            if (!!(type & (asio::cancellation_type::terminal | asio::cancellation_type::partial |
                           asio::cancellation_type::total)))
                reactor->cancel_ops_by_key(fd, *data, asio::detail::reactor::read_op, this);
        }
    };

    template <class Handler>
    void start(Handler handler, jsonrpc::LineFramer& framer) {
        auto slot = asio::get_associated_cancellation_slot(handler);
        auto* op = new Op<Handler>(std::move(handler), fd_, framer, this);
        if (slot.is_connected() && fd_ >= 0)
            op->cancellation_key_ = &slot.template emplace<Canceller>(&reactor_, &data_, fd_);
        speculating_ = true;  // a perform inside start_op is the speculative read
        reactor_.start_op(asio::detail::reactor::read_op, fd_, data_, op, false, true);
        speculating_ = false;
    }

    // A short read emptied the pipe and the end of the stream is not already pending: true only for a read the
    // reactor performed for an event without EPOLLHUP/EPOLLERR.
    bool drained_by_event() const {
#if SWITCHBOARD_FD_EXHAUSTION
        return exhaustible_ && !speculating_ && data_ && (EventsOf::get(data_) & (EPOLLHUP | EPOLLERR)) == 0;
#else
        return false;
#endif
    }

    asio::detail::reactor& reactor_;
    asio::detail::reactor::per_descriptor_data data_{};
    int fd_;
    bool exhaustible_ = false;  // a pipe
    bool speculating_ = false;
};

FdChannel::FdChannel(asio::any_io_executor ex, int read_fd, int write_fd, std::size_t max_message_size)
    : reader_(std::make_unique<Reader>(ex, read_fd)), writer_(ex, write_fd), framer_(max_message_size) {}

FdChannel::~FdChannel() = default;

awaitable<Received> FdChannel::read() {
    for (;;) {
        if (auto frame = framer_.next()) {
            if (frame->kind == jsonrpc::LineFramer::Frame::Kind::message) {
                read_message_ = true;
                co_return Received{
                    Received::Kind::message, std::move(frame->text), 0, {}, {}, {}, std::move(frame->streamed)};
            }
            co_return Received{Received::Kind::oversize, {}, frame->length, std::move(frame->head),
                               std::move(frame->tail),   {}, nullptr};
        }
        if (read_done_) {
            Received closed{Received::Kind::closed, {}, 0, {}, {}, read_end_reason_, nullptr};
            if (on_closed_) co_await on_closed_(closed);
            co_return closed;
        }
        auto [ec, n] = co_await reader_->async_read_some(framer_, as_tuple_awaitable);  // n bytes went to framer_
        if (ec) {
            read_done_ = true;
            if (ec == asio::error::eof)
                read_end_reason_ = "end of stream";
            else if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor)
                read_end_reason_ = "closed";
            else
                read_end_reason_ = "read failed: " + ec.message();
            if (framer_.buffered() > 0) read_end_reason_ += " (a last message was cut off)";
            reader_->close();
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

// Serialized a piece at a time straight into the pipe, newline included: a 64 MiB result is never held as text.
awaitable<boost::system::error_code> FdChannel::write_stream(std::shared_ptr<jsonrpc::ResultStream> s) {
    if (!writer_.is_open()) co_return asio::error::make_error_code(asio::error::not_connected);
    if (write_error_) co_return write_error_;
    constexpr std::size_t piece = 256 * 1024;
    const auto buffer = std::make_unique_for_overwrite<char[]>(piece + 1);
    for (;;) {
        std::size_t n = s->read(buffer.get(), piece);
        if (s->done()) buffer[n++] = '\n';
        auto [ec, written] = co_await asio::async_write(writer_, asio::buffer(buffer.get(), n), as_tuple_awaitable);
        if (ec || s->done()) co_return ec;
    }
}

bool FdChannel::try_write(std::string& message) {
    if (!writer_.is_open()) return false;
    boost::system::error_code ec;
    if (!writer_.native_non_blocking()) writer_.native_non_blocking(true, ec);
    if (ec) return false;
    // The newline goes into the message's own buffer (the serializers leave room for it): one plain write costs less
    // than a gathered one of two pieces (about 0.1 µs a message on a pipe).
    message.push_back('\n');
    ssize_t n = 0;
    do
        // On a socket (socket pairs in tests, in-process peers) a closed peer must not raise SIGPIPE.
        n = write_is_socket_ ? ::send(writer_.native_handle(), message.data(), message.size(), MSG_NOSIGNAL)
                             : ::write(writer_.native_handle(), message.data(), message.size());
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == ENOTSOCK && write_is_socket_) {
        write_is_socket_ = false;
        message.pop_back();
        return try_write(message);
    }
    const auto written = static_cast<std::size_t>(std::max<ssize_t>(n, 0));
    // The message as it was; what is left goes without its newline (the asynchronous write adds it).
    message.pop_back();
    if (written == message.size() + 1) return true;
    if (n < 0) {
        // Would block: the asynchronous write takes over. A real error (EPIPE) is kept for it to report, so that it
        // does not write again (on a socket that would raise SIGPIPE).
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            write_error_ = boost::system::error_code(errno, boost::system::system_category());
        return false;
    }
    message.erase(0, std::min(written, message.size()));  // all but the newline written: message is now ""
    return false;
}

void FdChannel::close_write() {
    boost::system::error_code ignored;
    writer_.close(ignored);
}

void FdChannel::close_read() {
    reader_->close();  // a pending read completes with operation_aborted
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
