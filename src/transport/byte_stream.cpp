#include "byte_stream.hpp"

#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

namespace switchboard::transport::detail {

ByteStream::ByteStream(boost::beast::tcp_stream plain) : plain_(std::move(plain)) {}

ByteStream::ByteStream(TlsStream tls) : tls_(std::move(tls)) {}

ByteStream::executor_type ByteStream::get_executor() noexcept {
    return tls_ ? tls_->get_executor() : plain_->get_executor();
}

boost::beast::tcp_stream& ByteStream::tcp() noexcept { return tls_ ? tls_->next_layer() : *plain_; }

void ByteStream::read_some(const Buffers<boost::asio::mutable_buffer>& buffers, IoHandler handler) {
    if (tls_)
        tls_->async_read_some(buffers, std::move(handler));
    else
        plain_->async_read_some(buffers, std::move(handler));
}

void ByteStream::write_some(const Buffers<boost::asio::const_buffer>& buffers, IoHandler handler) {
    if (tls_)
        tls_->async_write_some(buffers, std::move(handler));
    else
        plain_->async_write_some(buffers, std::move(handler));
}

void ByteStream::async_teardown(boost::beast::role_type role, TeardownHandler handler) {
    using boost::beast::websocket::async_teardown;
    if (tls_)
        async_teardown(role, *tls_, std::move(handler));
    else
        async_teardown(role, *plain_, std::move(handler));
}

void ByteStream::teardown(boost::beast::role_type role, boost::system::error_code& ec) {
    using boost::beast::websocket::teardown;
    if (tls_)
        teardown(role, *tls_, ec);
    else
        teardown(role, *plain_, ec);
}

void teardown(boost::beast::role_type role, ByteStream& stream, boost::system::error_code& ec) {
    stream.teardown(role, ec);
}

void beast_close_socket(ByteStream& stream) {
    boost::system::error_code ignored;
    stream.tcp().socket().close(ignored);
}

}  // namespace switchboard::transport::detail
