// transport::detail::ByteStream, the one stream type under the WebSocket (plain TCP or TLS), and the type-erased
// handler it hands to the streams below: what a handler carries must survive the erasure, and a long buffer
// sequence must arrive whole when written in pieces.
#include "transport/byte_stream.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchboard::transport::detail {
namespace {

namespace asio = boost::asio;
using Filter = boost::beast::detail::filtering_cancellation_slot<asio::cancellation_slot>;
using IoHandler = ByteStream::IoHandler;

// Beast narrows cancellation to `terminal` while a frame is half read or written; the erased handler keeps that.
TEST(ErasedHandler, KeepsTheCancellationFilterOfTheHandlerItWraps) {
    asio::io_context io;
    asio::cancellation_signal signal;
    bool called = false;
    auto handler = asio::bind_cancellation_slot(Filter(asio::cancellation_type::terminal, signal.slot()),
                                                [&called](boost::system::error_code, std::size_t) { called = true; });
    IoHandler erased(std::move(handler), io.get_executor());
    int cancelled = 0;
    erased.get_cancellation_slot().assign([&cancelled](asio::cancellation_type) { ++cancelled; });
    signal.emit(asio::cancellation_type::partial);
    signal.emit(asio::cancellation_type::total);
    EXPECT_EQ(cancelled, 0);
    signal.emit(asio::cancellation_type::terminal);
    EXPECT_EQ(cancelled, 1);
    erased(boost::system::error_code(), 0);
    EXPECT_TRUE(called);
}

TEST(ErasedHandler, NestedFiltersLetThroughOnlyWhatEachAllows) {
    asio::io_context io;
    asio::cancellation_signal signal;
    using Nested = boost::beast::detail::filtering_cancellation_slot<Filter>;
    const auto outer = asio::cancellation_type::terminal | asio::cancellation_type::partial;
    const auto inner = asio::cancellation_type::partial | asio::cancellation_type::total;
    auto handler = asio::bind_cancellation_slot(Nested(outer, inner, signal.slot()),
                                                [](boost::system::error_code, std::size_t) {});
    IoHandler erased(std::move(handler), io.get_executor());
    std::vector<asio::cancellation_type> seen;
    erased.get_cancellation_slot().assign([&seen](asio::cancellation_type t) { seen.push_back(t); });
    signal.emit(asio::cancellation_type::terminal);
    signal.emit(asio::cancellation_type::total);
    signal.emit(asio::cancellation_type::partial);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0], asio::cancellation_type::partial);
}

TEST(ErasedHandler, APlainSlotPassesEveryCancellation) {
    asio::io_context io;
    asio::cancellation_signal signal;
    auto handler = asio::bind_cancellation_slot(signal.slot(), [](boost::system::error_code, std::size_t) {});
    IoHandler erased(std::move(handler), io.get_executor());
    int cancelled = 0;
    erased.get_cancellation_slot().assign([&cancelled](asio::cancellation_type) { ++cancelled; });
    signal.emit(asio::cancellation_type::partial);
    EXPECT_EQ(cancelled, 1);
}

// 40 buffers (some empty) in one async_write: each write_some takes at most 16 of them, and the loop sends the rest.
TEST(ByteStream, ALongBufferSequenceArrivesWholeOverTcp) {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    asio::ip::tcp::socket peer(io);
    boost::beast::tcp_stream client(io);
    client.socket().connect(acceptor.local_endpoint());
    acceptor.accept(peer);
    ByteStream bytes(std::move(client));

    std::vector<std::string> pieces;
    std::string expected;
    for (int i = 0; i < 40; ++i) {
        pieces.push_back(i % 7 == 3 ? std::string() : std::string(1000 + i * 37, static_cast<char>('a' + i % 26)));
        expected += pieces.back();
    }
    std::vector<asio::const_buffer> buffers;
    for (const auto& p : pieces) buffers.push_back(asio::buffer(p));

    boost::system::error_code write_ec;
    std::size_t written = 0;
    asio::async_write(bytes, buffers, [&](boost::system::error_code ec, std::size_t n) {
        write_ec = ec;
        written = n;
    });
    std::string received(expected.size(), '\0');
    boost::system::error_code read_ec;
    asio::async_read(peer, asio::buffer(received), [&](boost::system::error_code ec, std::size_t) { read_ec = ec; });
    io.run();
    EXPECT_FALSE(write_ec) << write_ec.message();
    EXPECT_FALSE(read_ec) << read_ec.message();
    EXPECT_EQ(written, expected.size());
    EXPECT_TRUE(received == expected);

    // And back: a read into many buffers fills them in order.
    std::string reply(5000, 'z');
    for (std::size_t i = 0; i < reply.size(); i += 97) reply[i] = 'y';
    asio::write(peer, asio::buffer(reply));
    std::vector<std::string> into(25, std::string(200, '\0'));
    std::vector<asio::mutable_buffer> targets;
    for (auto& s : into) targets.push_back(asio::buffer(s));
    asio::async_read(bytes, targets, [&](boost::system::error_code ec, std::size_t) { read_ec = ec; });
    io.restart();
    io.run();
    EXPECT_FALSE(read_ec) << read_ec.message();
    std::string joined;
    for (const auto& s : into) joined += s;
    EXPECT_TRUE(joined == reply);
}

}  // namespace
}  // namespace switchboard::transport::detail
