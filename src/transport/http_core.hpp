// HTTP/1.1 client plumbing shared by the Streamable HTTP and HTTP+SSE channels (private to the transport layer):
// URLs, a keep-alive connection pool over plain TCP or TLS, one request/response exchange with a streamed body,
// redirects, timeouts, secret-free logging.
//
// Thread-safety: single owner; everything runs on the client's executor.
#pragma once

#include <switchboard/transport/http_client.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/system/result.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::transport::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

struct Url {
    bool tls = false;
    std::string host;    ///< without brackets
    std::string port;    ///< always set
    std::string target;  ///< path and query, "/" at least
    std::string origin() const;
    std::string text() const;
};

/// Parses an absolute http:// or https:// URL; nullopt with `error` set otherwise.
std::optional<Url> parse_url(std::string_view text, std::string& error);
/// Resolves a reference (a redirect's Location, an `endpoint` event) against `base`.
std::optional<Url> resolve_reference(const Url& base, std::string_view ref, std::string& error);
/// The URL with secret-looking query parameters redacted, for logs and errors.
std::string redact_url(const Url& url);

struct Failure {
    enum class Kind { url, connect, tls, io, aborted, redirect, oversize } kind = Kind::io;
    std::string message;
};
[[noreturn]] void throw_exception_from_error(const Failure& f, const boost::source_location& loc);
template <class T>
using Result = boost::system::result<T, Failure>;

using Fields = std::vector<std::pair<std::string, std::string>>;

/// One connection, plain or TLS.
struct Conn {
    std::string origin;
    std::optional<beast::tcp_stream> plain;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
    beast::flat_buffer buffer;
    bool reused = false;

    beast::tcp_stream& tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
    bool is_open() { return (tls || plain) && tcp().socket().is_open(); }
    void close() {
        if (tls || plain) tcp().close();
    }
};

class Client;

/// Cancels one request at any stage (connecting, waiting for the header, reading the body): fire() closes the
/// connection it is using, so the pending operation ends at once with Kind::aborted.
struct Abort {
    bool requested = false;
    Conn* conn = nullptr;  // the connection in use, while there is one
    void fire() {
        requested = true;
        if (conn) conn->close();
    }
};

/// A response whose header is in; the body is read on demand. Destroying it returns the connection to the pool
/// when the body was read to the end and the server allows keep-alive, and closes it otherwise.
class Exchange {
public:
    ~Exchange();
    unsigned status() const { return parser_->get().result_int(); }
    std::string_view reason() const;
    std::string_view header(std::string_view name) const;
    /// The media type, lower-case, without parameters ("text/event-stream").
    std::string media_type() const;
    const Url& url() const { return url_; }
    bool done() const { return parser_->is_done(); }

    /// The next piece of the body; an empty view at its end. Views stay valid until the next call.
    boost::asio::awaitable<Result<std::string_view>> read_some();
    /// The whole body, failing with Kind::oversize (and closing the connection) beyond `limit` bytes.
    boost::asio::awaitable<Result<std::string>> read_all(std::size_t limit);
    /// Closes the connection: a pending read ends with Kind::aborted.
    void abort();

private:
    friend class Client;
    Exchange() = default;
    Failure read_failure(const boost::system::error_code& ec) const;

    std::shared_ptr<Client> client_;
    std::unique_ptr<Conn> conn_;
    std::unique_ptr<bhttp::response_parser<bhttp::buffer_body>> parser_;
    std::unique_ptr<char[]> chunk_;
    Url url_;
    std::shared_ptr<Abort> abort_token_;
    bool aborted_ = false;
};

class Client : public std::enable_shared_from_this<Client> {
public:
    Client(asio::any_io_executor ex, HttpClientOptions options);
    ~Client();

    /// Sends a request (configured headers + `extra`), follows redirects, returns once the response header is in.
    boost::asio::awaitable<Result<std::unique_ptr<Exchange>>> send(Url url, bhttp::verb method, std::string body,
                                                                   Fields extra, std::shared_ptr<Abort> abort);
    boost::asio::awaitable<Result<std::unique_ptr<Exchange>>> send(Url url, bhttp::verb method, std::string body,
                                                                   Fields extra) {
        return send(std::move(url), method, std::move(body), std::move(extra), nullptr);
    }
    /// Ends every exchange in progress and drops idle connections; later sends fail.
    void close();
    bool closed() const { return closed_; }

    /// `text` with every configured secret header value replaced by "[redacted]".
    std::string scrub(std::string text) const;
    const HttpClientOptions& options() const { return options_; }
    const asio::any_io_executor& executor() const { return ex_; }

private:
    friend class Exchange;
    boost::asio::awaitable<Result<std::unique_ptr<Exchange>>> send_once(const Url& url, bhttp::verb method,
                                                                        const std::string& body, const Fields& extra,
                                                                        bool with_secrets,
                                                                        std::shared_ptr<Abort> abort);
    boost::asio::awaitable<Result<std::unique_ptr<Conn>>> connect(const Url& url);
    std::unique_ptr<Conn> take_idle(const std::string& origin);
    void give_back(std::unique_ptr<Conn> conn);
    asio::ssl::context* tls_context(std::string& error);

    asio::any_io_executor ex_;
    HttpClientOptions options_;
    std::unique_ptr<asio::ssl::context> tls_;
    std::string tls_error_;
    std::map<std::string, std::vector<std::unique_ptr<Conn>>> idle_;
    std::set<Conn*> active_;
    std::vector<std::string> secrets_;
    bool closed_ = false;
};

/// "HTTP 404 Not Found".
std::string status_text(unsigned status, std::string_view reason);

}  // namespace switchboard::transport::http
