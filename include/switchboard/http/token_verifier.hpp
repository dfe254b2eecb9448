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
    /// Who the token names, when allowed ("<issuer> <subject>"; empty when it names nobody): the server passes it to
    /// the handler as the request's principal_header (what a gateway binds a client's tasks to).
    std::string principal;
};

/// The request header a server sets to the verified principal (and removes from every request it gets, so that no
/// client can claim one).
inline constexpr std::string_view principal_header = "X-Switchboard-Principal";

class TokenVerifier {
public:
    virtual ~TokenVerifier() = default;
    /// Checks the request's Authorization header (and, for scopes, what it asks for).
    virtual boost::asio::awaitable<TokenVerdict> verify(
        const boost::beast::http::request<boost::beast::http::string_body>& req) = 0;
};

}  // namespace switchboard::http
