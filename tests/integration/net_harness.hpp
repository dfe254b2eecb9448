// Helpers for tests over real sockets: a server process that listens on a port it picked itself, and a small
// HTTP/1.1 client (Beast) that shows raw statuses, headers and SSE bodies.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace switchboard::test {

/// A child process started with stderr in a file; it printed "listening on URL".
class ListeningServer {
public:
    ~ListeningServer();
    pid_t pid = -1;
    std::uint16_t port = 0;
    std::string url;
    std::string log_path;
    /// SIGKILL now and reap.
    void kill_now();
    /// Everything the process wrote to stderr so far.
    std::string log() const;
};

/// Starts `program args` and waits up to 10 s for its "listening on URL" line (nullptr and a test failure if not).
std::unique_ptr<ListeningServer> start_listening(const std::string& program, const std::vector<std::string>& args);

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResult {
    int status = 0;
    std::map<std::string, std::string> headers;  ///< names lower-cased
    std::string body;
    std::string error;  ///< transport failure
};

/// One request on a fresh connection, the whole response read (10 s limit).
boost::asio::awaitable<HttpResult> http_exchange(std::uint16_t port, std::string method, std::string target,
                                                 Headers headers, std::string body);

/// A response read incrementally (an SSE stream).
struct HttpStream {
    explicit HttpStream(boost::asio::any_io_executor ex) : stream(ex) {}
    boost::beast::tcp_stream stream;
    boost::beast::flat_buffer buffer;
    boost::beast::http::response_parser<boost::beast::http::string_body> parser;
    int status = 0;
    std::string error;
};

/// Sends the request and reads the response header.
boost::asio::awaitable<std::shared_ptr<HttpStream>> http_open(std::uint16_t port, std::string method,
                                                              std::string target, Headers headers, std::string body);
/// Reads until the body contains `needle` (true), the response ends or `limit` passes (false).
boost::asio::awaitable<bool> http_read_until(std::shared_ptr<HttpStream> s, std::string needle,
                                             std::chrono::milliseconds limit);

/// A port that was free a moment ago (bind to 0, read it, close).
std::uint16_t free_port();

}  // namespace switchboard::test
