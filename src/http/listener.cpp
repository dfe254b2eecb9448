#include <switchboard/http/listener.hpp>

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

namespace switchboard::http {

using boost::asio::ip::tcp;

boost::system::error_code open_listener(tcp::acceptor& a, const std::string& address, std::uint16_t port) {
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

std::uint16_t listening_port(const tcp::acceptor& a) {
    boost::system::error_code ec;
    auto ep = a.local_endpoint(ec);
    return ec ? 0 : ep.port();
}

std::string url_host(const std::string& address) {
    return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

boost::asio::awaitable<void> accept_loop(tcp::acceptor& a, std::string name, const bool& stopped,
                                         std::function<std::size_t()> open_count, std::size_t max_connections,
                                         std::function<void(tcp::socket)> on_accept) {
    while (!stopped) {
        auto [ec, sock] = co_await a.async_accept(core::as_tuple_awaitable);
        if (stopped) break;
        if (ec) {
            if (ec == boost::asio::error::operation_aborted || ec == boost::asio::error::bad_descriptor) break;
            spdlog::warn("{}: accept failed: {}", name, ec.message());
            boost::asio::steady_timer pause(a.get_executor(), std::chrono::milliseconds(100));
            co_await pause.async_wait(core::as_tuple_awaitable);
            continue;
        }
        if (open_count() >= max_connections) {
            spdlog::warn("{}: over {} connections; refusing one", name, max_connections);
            continue;  // the socket closes here
        }
        boost::system::error_code ignored;
        sock.set_option(tcp::no_delay(true), ignored);
        on_accept(std::move(sock));
    }
}

}  // namespace switchboard::http
