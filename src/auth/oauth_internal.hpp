// What the files of OAuthAuthorizer (oauth.cpp and its flows, oauth_*.cpp) share: the state one authorization
// carries from step to step, scope lists, requests to and errors from the authorization server. Private to auth.
#pragma once

#include "json_fields.hpp"
#include "unix_time.hpp"

#include <switchboard/auth/metadata.hpp>
#include <switchboard/auth/oauth.hpp>
#include <switchboard/http/client.hpp>

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::auth {

struct OAuthAuthorizer::Flow {
    std::string scope;
    std::string redirect_uri;
};

namespace detail {

/// Scopes as a `scope` parameter carries them: separated by spaces.
inline std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) {
        if (!out.empty()) out += ' ';
        out += s;
    }
    return out;
}

inline bool contains(const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

/// A POST of `body` (a `content_type` document) to `url` that asks for JSON back: a token, token exchange or
/// registration request.
inline http::Request json_post(std::string url, std::string_view content_type, std::string body) {
    http::Request req;
    req.method = boost::beast::http::verb::post;
    req.url = std::move(url);
    req.headers.emplace_back("Content-Type", content_type);
    req.headers.emplace_back("Accept", "application/json");
    req.body = std::move(body);
    return req;
}

/// The authorization server's error in a token or registration response: "invalid_grant: the code expired".
/// (oauth_grant.cpp)
std::string oauth_error(unsigned status, std::string_view body);

/// The metadata of the authorization server `issuer` (RFC 8414 and OpenID discovery, path-insertion variants): the
/// first of its well-known URLs that answers. nullopt with `problem` set when none does or what one serves is not
/// usable (another issuer, no token endpoint). (oauth_discovery.cpp)
boost::asio::awaitable<std::optional<ServerMetadata>> fetch_server_metadata(std::shared_ptr<http::Client> http,
                                                                            std::string issuer, std::string* problem);

}  // namespace detail

// The oauth*.cpp files call these by their short names.
using detail::contains;
using detail::fetch_server_metadata;
using detail::join;
using detail::json_post;
using detail::now_s;
using detail::num;
using detail::oauth_error;
using detail::str;

}  // namespace switchboard::auth
