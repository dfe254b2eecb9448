// Listening sockets for the HTTP and WebSocket servers.
//
// Thread-safety: free functions; the acceptor belongs to the caller.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace switchboard::http {

/// Opens, binds (reuse_address) and listens on `address`:`port` (port 0 picks a free one).
boost::system::error_code open_listener(boost::asio::ip::tcp::acceptor& a, const std::string& address,
                                        std::uint16_t port);

/// The port the acceptor listens on; 0 when it does not.
std::uint16_t listening_port(const boost::asio::ip::tcp::acceptor& a);

/// `address` as the host part of a URL (IPv6 in brackets).
std::string url_host(const std::string& address);

/// Accepts connections on `a` until it is closed or `stopped` turns true, and hands each socket (TCP_NODELAY set) to
/// `on_accept`; a connection beyond `max_connections` (as `open_count` reports) is closed at once. A failed accept
/// (out of file descriptors) pauses 100 ms. `name` prefixes log lines.
boost::asio::awaitable<void> accept_loop(boost::asio::ip::tcp::acceptor& a, std::string name, const bool& stopped,
                                         std::function<std::size_t()> open_count, std::size_t max_connections,
                                         std::function<void(boost::asio::ip::tcp::socket)> on_accept);

}  // namespace switchboard::http
