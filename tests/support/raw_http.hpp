// A small HTTP/1.1 client for tests (Beast, coroutines): raw statuses, headers and incrementally read SSE bodies.
#pragma once

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::test {

namespace http_client_detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using tcp = asio::ip::tcp;
using switchboard::core::as_tuple_awaitable;
}  // namespace http_client_detail

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResult {
    int status = 0;
    std::map<std::string, std::string> headers;  ///< names lower-cased
    std::string body;
    std::string error;  ///< transport failure
};

/// A response read incrementally (an SSE stream).
struct HttpStream {
    explicit HttpStream(boost::asio::any_io_executor ex) : stream(ex) {}
    boost::beast::tcp_stream stream;
    boost::beast::flat_buffer buffer;
    boost::beast::http::response_parser<boost::beast::http::string_body> parser;
    int status = 0;
    std::string error;
};

// http_exchange: one request on a fresh connection, the whole response read (10 s limit).
// http_open: sends the request and reads the response header.
// http_read_until: reads until the body contains `needle` (true), the response ends or `limit` passes (false).
namespace http_client_detail {

inline http::request<http::string_body> make_request(const std::string& method, const std::string& target,
                                                     const Headers& headers, std::string body) {
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = std::move(body);
    if (req.find(http::field::content_length) == req.end()) req.prepare_payload();
    return req;
}

inline awaitable<HttpResult> http_exchange(std::uint16_t port, std::string method, std::string target, Headers headers,
                                           std::string body) {
    HttpResult out;
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    stream.expires_after(std::chrono::seconds(10));
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
    auto [cec] = co_await stream.async_connect(ep, as_tuple_awaitable);
    if (cec) {
        out.error = "connect: " + cec.message();
        co_return out;
    }
    auto req = make_request(method, target, headers, std::move(body));
    auto [wec, wn] = co_await http::async_write(stream, req, as_tuple_awaitable);
    if (wec) {
        out.error = "write: " + wec.message();
        co_return out;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(256 * 1024 * 1024);
    auto [rec, rn] = co_await http::async_read(stream, buffer, parser, as_tuple_awaitable);
    if (rec) {
        out.error = "read: " + rec.message();
        co_return out;
    }
    auto res = parser.release();
    out.status = res.result_int();
    for (const auto& f : res) {
        std::string name(f.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.headers[name] = std::string(f.value());
    }
    out.body = std::move(res.body());
    co_return out;
}

inline awaitable<std::shared_ptr<HttpStream>> http_open(std::uint16_t port, std::string method, std::string target,
                                                        Headers headers, std::string body) {
    auto s = std::make_shared<HttpStream>(co_await asio::this_coro::executor);
    s->stream.expires_after(std::chrono::seconds(10));
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
    auto [cec] = co_await s->stream.async_connect(ep, as_tuple_awaitable);
    if (cec) {
        s->error = "connect: " + cec.message();
        co_return s;
    }
    auto req = make_request(method, target, headers, std::move(body));
    auto [wec, wn] = co_await http::async_write(s->stream, req, as_tuple_awaitable);
    if (wec) {
        s->error = "write: " + wec.message();
        co_return s;
    }
    auto [rec, rn] = co_await http::async_read_header(s->stream, s->buffer, s->parser, as_tuple_awaitable);
    if (rec) {
        s->error = "read header: " + rec.message();
        co_return s;
    }
    s->status = s->parser.get().result_int();
    s->stream.expires_never();
    co_return s;
}

inline awaitable<bool> http_read_until(std::shared_ptr<HttpStream> s, std::string needle,
                                       std::chrono::milliseconds limit) {
    s->stream.expires_after(limit);
    while (s->parser.get().body().find(needle) == std::string::npos) {
        if (s->parser.is_done()) break;
        auto [ec, n] = co_await http::async_read_some(s->stream, s->buffer, s->parser, as_tuple_awaitable);
        if (ec) {
            s->error = ec.message();
            break;
        }
    }
    s->stream.expires_never();
    co_return s->parser.get().body().find(needle) != std::string::npos;
}

}  // namespace http_client_detail

using http_client_detail::http_exchange;
using http_client_detail::http_open;
using http_client_detail::http_read_until;

}  // namespace switchboard::test
