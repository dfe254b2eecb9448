// The bytes under a WebSocket, plain TCP or TLS over TCP, as one type. Private to transport.
//
// Beast's WebSocket and HTTP operations are templates over the stream they run on. Over two stream types every
// one of them is compiled twice, and that was most of websocket.cpp's compile time. Over this one type they are
// compiled once. The price is a type-erased handler per read and per write: one small allocation each.
//
// Not asio::any_completion_handler: in Asio 1.26 its executor cannot post (no blocking.never), which Beast's TCP
// and TLS operations do. This handler keeps the original's executor (as any_io_executor) and its cancellation slot
// with the slot's filter: Beast lets only terminal cancellation reach a read or write in the middle of a frame.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/detail/filtering_cancellation_slot.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

namespace switchboard::transport::detail {

/// A completion handler of signature Signature behind one type. Move-only; called at most once.
template <class Signature>
class ErasedHandler;

template <class... Args>
class ErasedHandler<void(Args...)> {
public:
    using executor_type = boost::asio::any_io_executor;
    using cancellation_slot_type = boost::beast::detail::filtering_cancellation_slot<boost::asio::cancellation_slot>;

    template <class Handler>
    ErasedHandler(Handler&& handler, const executor_type& fallback)
        : executor_(boost::asio::get_associated_executor(handler, fallback)),
          slot_(filtered(boost::asio::get_associated_cancellation_slot(handler), boost::asio::cancellation_type::all)),
          call_(std::make_unique<Call<std::decay_t<Handler>>>(std::forward<Handler>(handler))) {}

    executor_type get_executor() const noexcept { return executor_; }
    cancellation_slot_type get_cancellation_slot() const noexcept { return slot_; }

    void operator()(Args... args) {
        auto call = std::move(call_);
        call->invoke(std::move(call), args...);
    }

private:
    // Beast's filters may nest (one per composed operation): what passes is what every one of them lets through.
    template <class Slot>
    static cancellation_slot_type filtered(const Slot& slot, boost::asio::cancellation_type allowed) {
        return cancellation_slot_type(allowed, slot);
    }
    template <class Inner>
    static cancellation_slot_type filtered(const boost::beast::detail::filtering_cancellation_slot<Inner>& slot,
                                           boost::asio::cancellation_type allowed) {
        return filtered(static_cast<const Inner&>(slot), allowed & slot.type);
    }

    struct CallBase {
        virtual ~CallBase() = default;
        virtual void invoke(std::unique_ptr<CallBase> self, Args... args) = 0;
    };
    template <class Handler>
    struct Call final : CallBase {
        explicit Call(Handler&& h) : handler(std::move(h)) {}
        explicit Call(const Handler& h) : handler(h) {}
        void invoke(std::unique_ptr<CallBase> self, Args... args) override {
            Handler h(std::move(handler));
            self.reset();  // the memory goes back before the upcall, as Asio asks of handlers
            std::move(h)(args...);
        }
        Handler handler;
    };

    executor_type executor_;
    cancellation_slot_type slot_;
    std::unique_ptr<CallBase> call_;
};

class ByteStream {
public:
    using executor_type = boost::asio::any_io_executor;
    using TlsStream = boost::asio::ssl::stream<boost::beast::tcp_stream>;
    using IoHandler = ErasedHandler<void(boost::system::error_code, std::size_t)>;
    using TeardownHandler = ErasedHandler<void(boost::system::error_code)>;

    explicit ByteStream(boost::beast::tcp_stream plain);
    explicit ByteStream(TlsStream tls);

    executor_type get_executor() noexcept;
    /// The TCP stream at the bottom: its timeouts, its socket.
    boost::beast::tcp_stream& tcp() noexcept;

    template <class MutableBuffers, class Token>
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
            [this](auto handler, Buffers<boost::asio::mutable_buffer> b) {
                read_some(b, IoHandler(std::move(handler), get_executor()));
            },
            token, first_buffers<boost::asio::mutable_buffer>(buffers));
    }

    template <class ConstBuffers, class Token>
    auto async_write_some(const ConstBuffers& buffers, Token&& token) {
        return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
            [this](auto handler, Buffers<boost::asio::const_buffer> b) {
                write_some(b, IoHandler(std::move(handler), get_executor()));
            },
            token, first_buffers<boost::asio::const_buffer>(buffers));
    }

    /// Ends the connection the way its layers do (TLS close_notify, then TCP), for Beast's WebSocket close.
    void async_teardown(boost::beast::role_type role, TeardownHandler handler);
    void teardown(boost::beast::role_type role, boost::system::error_code& ec);

private:
    // A read or write may move fewer bytes than asked, so taking the first buffers of a longer sequence is correct.
    template <class Buffer>
    struct Buffers {
        std::array<Buffer, 16> items{};
        std::size_t count = 0;
        const Buffer* begin() const noexcept { return items.data(); }
        const Buffer* end() const noexcept { return items.data() + count; }
    };

    template <class Buffer, class Sequence>
    static Buffers<Buffer> first_buffers(const Sequence& sequence) {
        Buffers<Buffer> list;
        auto it = boost::asio::buffer_sequence_begin(sequence);
        const auto end = boost::asio::buffer_sequence_end(sequence);
        for (; it != end && list.count < list.items.size(); ++it) {
            Buffer b(*it);
            if (b.size() != 0) list.items[list.count++] = b;
        }
        return list;
    }

    void read_some(const Buffers<boost::asio::mutable_buffer>& buffers, IoHandler handler);
    void write_some(const Buffers<boost::asio::const_buffer>& buffers, IoHandler handler);

    std::optional<boost::beast::tcp_stream> plain_;
    std::optional<TlsStream> tls_;
};

// Beast's WebSocket closes its stream through these, found by argument-dependent lookup.
void beast_close_socket(ByteStream& stream);
void teardown(boost::beast::role_type role, ByteStream& stream, boost::system::error_code& ec);

template <class Handler>
void async_teardown(boost::beast::role_type role, ByteStream& stream, Handler&& handler) {
    stream.async_teardown(role, ByteStream::TeardownHandler(std::forward<Handler>(handler), stream.get_executor()));
}

}  // namespace switchboard::transport::detail
