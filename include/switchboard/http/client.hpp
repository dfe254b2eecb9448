// An HTTP/1.1 client for the transports (and later the LLM client): a keep-alive connection pool over plain TCP or
// TLS (the system trust store plus an optional CA file, SNI, host-name verification), one request/response exchange
// with a streamed body, redirects (never from https to http, configured secret headers only to the first origin),
// connect and read timeouts, bounded bodies, and logs and errors without secrets.
//
// Two levels: send() returns an Exchange once the response header is in, and the body is read on demand (for an SSE
// stream, feed read_some() into an SseParser); request() sends a whole Request and reads the whole Response.
//
// Thread-safety: single owner; everything runs on the client's executor.
#pragma once

#include <switchboard/http/authorizer.hpp>
#include <switchboard/http/fields.hpp>
#include <switchboard/http/url.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace switchboard::http {

namespace bhttp = boost::beast::http;

struct ClientOptions {
    std::string server_name;                     ///< for error messages and logs
    std::map<std::string, std::string> headers;  ///< sent on every request
    /// Every configured header's value is a secret, whatever its name (an OTLP exporter's `x-honeycomb-team`): kept
    /// out of logs and errors as Authorization's is, and not sent on a redirect to another origin.
    bool headers_secret = false;
    std::size_t max_body_size = 64u * 1024 * 1024;
    std::chrono::milliseconds connect_timeout{10'000};  ///< resolve + connect + TLS handshake
    std::chrono::milliseconds read_timeout{0};          ///< idle time between received bytes; 0: none
    std::string ca_file;                                ///< extra trusted CA (PEM); the system store is always used
    int max_redirects = 5;
    bool follow_redirects = true;  ///< false: a redirect is returned as it is (an OAuth user agent reads Location)
    /// Which resolved addresses may be connected to: empty when allowed, else why not (AddressPolicy::check). When
    /// set, the client connects only to the allowed addresses of a name (the address checked is the address
    /// connected to: no DNS rebinding between check and connect), on every hop of a redirect; with none left the
    /// request fails with Kind::refused, naming the refused addresses.
    std::function<std::string(const boost::asio::ip::address&)> address_filter;
    /// Authorizes every request to the first origin of a request (OAuth): its header is added, and a 401 (or a 403
    /// `insufficient_scope` challenge) is shown to it; when it has a new authorization the request is sent again
    /// (at most 3 times in all).
    std::shared_ptr<Authorizer> authorizer;
};

struct Failure {
    enum class Kind { url, connect, tls, io, aborted, redirect, oversize, refused } kind = Kind::io;
    std::string message;
};
[[noreturn]] void throw_exception_from_error(const Failure& f, const boost::source_location& loc);
template <class T>
using Result = boost::system::result<T, Failure>;

/// A whole request, for Client::request().
struct Request {
    bhttp::verb method = bhttp::verb::get;
    std::string url;
    Fields headers;  ///< besides the configured ones
    std::string body;
};

/// A whole response, from Client::request().
struct Response {
    unsigned status = 0;
    std::string reason;
    Fields headers;
    std::string body;
    std::string_view header(std::string_view name) const;
};

struct Connection;  // one pooled connection, plain or TLS (private)
class Client;

/// Cancels one request at any stage (connecting, waiting for the header, reading the body): fire() closes the
/// connection it is using, so the pending operation ends at once with Kind::aborted.
struct Abort {
    bool requested = false;
    Connection* conn = nullptr;  // the connection in use, while there is one
    void fire();
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
    Fields headers() const;

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
    std::unique_ptr<Connection> conn_;
    std::unique_ptr<bhttp::response_parser<bhttp::buffer_body>> parser_;
    std::unique_ptr<char[]> chunk_;
    Url url_;
    std::shared_ptr<Abort> abort_token_;
    bool aborted_ = false;
};

class Client : public std::enable_shared_from_this<Client> {
public:
    Client(boost::asio::any_io_executor ex, ClientOptions options);
    ~Client();

    /// Sends a request (configured headers + `extra`), follows redirects, returns once the response header is in.
    boost::asio::awaitable<Result<std::unique_ptr<Exchange>>> send(Url url, bhttp::verb method, std::string body,
                                                                   Fields extra, std::shared_ptr<Abort> abort);
    boost::asio::awaitable<Result<std::unique_ptr<Exchange>>> send(Url url, bhttp::verb method, std::string body,
                                                                   Fields extra);
    /// Sends `req` and reads the whole response body (at most options().max_body_size bytes).
    boost::asio::awaitable<Result<Response>> request(Request req);
    /// Ends every exchange in progress and drops idle connections; later sends fail.
    void close();
    bool closed() const { return closed_; }

    /// `text` with every configured secret header value replaced by "[redacted]".
    std::string scrub(std::string text) const;
    const ClientOptions& options() const { return options_; }
    const boost::asio::any_io_executor& executor() const { return ex_; }

private:
    friend class Exchange;
    /// Follows redirects. With `credential` (a client with an authorizer), every hop to the first origin asks the
    /// authorizer anew (a DPoP proof names its URL) and `credential` holds what the last hop carried.
    boost::asio::awaitable<Result<std::unique_ptr<Exchange>>> send_following(Url url, bhttp::verb method,
                                                                             const std::string& body,
                                                                             const Fields& extra,
                                                                             std::shared_ptr<Abort> abort,
                                                                             Fields* credential);
    boost::asio::awaitable<Result<std::unique_ptr<Exchange>>> send_once(const Url& url, bhttp::verb method,
                                                                        const std::string& body, const Fields& extra,
                                                                        bool with_secrets, std::shared_ptr<Abort> abort,
                                                                        std::optional<boost::asio::ip::address> from);
    // connection_pool.cpp
    // `redirected_from`: the address of the redirect chain's first server (redirect_refusal applies).
    boost::asio::awaitable<Result<std::unique_ptr<Connection>>> connect(
        const Url& url, std::optional<boost::asio::ip::address> redirected_from);
    std::unique_ptr<Connection> take_idle(const std::string& origin);
    void give_back(std::unique_ptr<Connection> conn);
    boost::asio::ssl::context* tls_context(std::string& error);

    boost::asio::any_io_executor ex_;
    ClientOptions options_;
    std::unique_ptr<boost::asio::ssl::context> tls_;
    std::string tls_error_;
    std::map<std::string, std::vector<std::unique_ptr<Connection>>> idle_;
    std::set<Connection*> active_;
    std::vector<std::string> secrets_;
    bool closed_ = false;
};

/// "2 s" or "1500 ms", for timeout messages.
std::string duration_text(std::chrono::milliseconds ms);

}  // namespace switchboard::http
