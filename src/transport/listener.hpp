// Listening sockets shared by the HTTP and WebSocket servers (private to the transport layer).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <string>

namespace switchboard::transport {

/// Opens, binds (reuse_address) and listens on `address`:`port` (port 0 picks a free one).
inline boost::system::error_code open_listener(boost::asio::ip::tcp::acceptor& a, const std::string& address,
                                               std::uint16_t port) {
    using boost::asio::ip::tcp;
    boost::system::error_code ec;
    auto ip = boost::asio::ip::make_address(address, ec);
    if (ec) return ec;
    tcp::endpoint ep(ip, port);
    if (a.open(ep.protocol(), ec)) return ec;
    if (a.set_option(tcp::acceptor::reuse_address(true), ec)) return ec;
    if (a.bind(ep, ec)) return ec;
    if (a.listen(boost::asio::socket_base::max_listen_connections, ec)) return ec;
    return {};
}

/// The port the acceptor listens on; 0 when it does not.
inline std::uint16_t listening_port(const boost::asio::ip::tcp::acceptor& a) {
    boost::system::error_code ec;
    auto ep = a.local_endpoint(ec);
    return ec ? 0 : ep.port();
}

/// `address` as the host part of a URL (IPv6 in brackets).
inline std::string url_host(const std::string& address) {
    return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

}  // namespace switchboard::transport
