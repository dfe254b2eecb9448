// How a server checks the bearer token of a request when it is an OAuth resource server (the gateway with
// `serve --auth oauth`): the seam between http::Server, which only routes, and auth::JwtVerifier, which knows JWTs,
// JWKS and scopes.
//
// Thread-safety: called on the server's executor only.
#pragma once

#include <switchboard/http/fields.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

namespace switchboard::http {

/// The verdict on one request: allowed, or refused with a status (401, 403) and its WWW-Authenticate challenge.
struct TokenVerdict {
    bool allowed = false;
    boost::beast::http::status status = boost::beast::http::status::unauthorized;
    std::string message;    ///< for the error body; never contains the token
    std::string challenge;  ///< the WWW-Authenticate value
};

class TokenVerifier {
public:
    virtual ~TokenVerifier() = default;
    /// Checks the request's Authorization header (and, for scopes, what it asks for).
    virtual boost::asio::awaitable<TokenVerdict> verify(
        const boost::beast::http::request<boost::beast::http::string_body>& req) = 0;
};

}  // namespace switchboard::http
