// What an HTTP client asks before each request to a server that needs authorization, and tells it when the server
// refuses: the seam between the transports (which only send requests) and OAuth (auth::OAuthAuthorizer), so that
// Streamable HTTP, HTTP+SSE and the WebSocket upgrade all authorize the same way without knowing how.
//
// Thread-safety: called on the client's executor only.
#pragma once

#include <switchboard/http/fields.hpp>
#include <switchboard/http/url.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include <string>

namespace switchboard::http {

class Authorizer {
public:
    virtual ~Authorizer() = default;

    /// The headers that authorize one `method` request to `url`: "Authorization: Bearer ...", or with a
    /// sender-constrained token "Authorization: DPoP ..." and a "DPoP" proof made for this very request (so they
    /// are asked for again for every request, retries included). Empty to send none. May refresh a token that is
    /// about to expire first.
    virtual boost::asio::awaitable<Fields> authorization(boost::beast::http::verb method, const Url& url) = 0;

    /// The server answered a request that carried `sent` (what authorization() gave) with `status` (401, or 403
    /// with an `insufficient_scope` challenge) and these headers. True when a new authorization is ready and the
    /// request should be sent again; false to give up (the response then goes to the caller as it is).
    virtual boost::asio::awaitable<bool> challenged(const Url& url, unsigned status, const Fields& headers,
                                                    const Fields& sent) = 0;

    /// `text` with every credential this authorizer holds replaced by "[redacted]".
    virtual std::string scrub(std::string text) const = 0;
};

}  // namespace switchboard::http
