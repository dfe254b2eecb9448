// The gateway as an OAuth resource server (`switchboard serve --auth oauth --issuer URL --audience URL`):
//
// - every request's bearer token must be a JWT signed by the issuer (RS256 or ES256, a key of its JWKS: the keys are
//   cached and fetched again when a token names an unknown `kid`, at most every 2 s), unexpired (`exp`, `nbf`, 60 s
//   leeway), from the issuer (`iss`) and for this gateway (`aud` contains the audience: its resource URL, RFC 8707);
// - a DPoP-bound token (`cnf.jkt`, RFC 9449) must come as `Authorization: DPoP` with a valid proof of its key for
//   this very request (method, URL, `ath`, `iat` within 5 minutes, a `jti` not seen before); the resource metadata
//   says DPoP is taken (`dpop_signing_alg_values_supported`);
// - refusals are 401 with `WWW-Authenticate: Bearer resource_metadata="...", error="invalid_token"` so that MCP
//   clients find the authorization server through the Protected Resource Metadata (RFC 9728), which
//   resource_metadata() describes;
// - scopes map to tools (`"gateway": {"scopes": {"tools:read": ["search_*"], "tools:all": ["*"]}}`): a tools/call of
//   a tool no scope of the token allows is a 403 insufficient_scope naming the scopes that would. Without a map any
//   valid token may call every tool.
//
// Tokens are never passed on to upstream servers (the gateway's own clients authorize upstream themselves) and
// never appear in logs or error messages.
//
// Thread-safety: single owner, on the server's executor.
#pragma once

#include <switchboard/auth/dpop.hpp>
#include <switchboard/auth/jwt.hpp>
#include <switchboard/http/client.hpp>
#include <switchboard/http/token_verifier.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace switchboard::auth {

struct ResourceServerSettings {
    std::string issuer;    ///< the authorization server (tokens' `iss`)
    std::string audience;  ///< this gateway's resource URL (tokens' `aud`), e.g. http://127.0.0.1:3333/mcp
    std::string jwks_url;  ///< empty: the issuer's metadata's jwks_uri
    /// scope -> tool name globs it allows. Empty: any valid token allows every tool.
    std::map<std::string, std::vector<std::string>> scopes;
    std::chrono::seconds leeway{60};  ///< clock skew allowed on exp and nbf
    std::string ca_file;
};

/// Parses the config's `gateway.scopes` object. Empty string on success, else the problem.
std::string parse_scope_map(const boost::json::object& gateway, std::map<std::string, std::vector<std::string>>& out);

class JwtVerifier final : public http::TokenVerifier {
public:
    JwtVerifier(boost::asio::any_io_executor ex, ResourceServerSettings settings);
    ~JwtVerifier() override;

    boost::asio::awaitable<http::TokenVerdict> verify(
        const boost::beast::http::request<boost::beast::http::string_body>& req) override;

    /// The Protected Resource Metadata document (RFC 9728) for this gateway.
    boost::json::object resource_metadata() const;
    /// Where it is served: /.well-known/oauth-protected-resource plus the audience's path (and at the root too).
    std::string metadata_url() const;
    std::string metadata_path() const;

private:
    struct TokenFacts {
        std::vector<std::string> scopes;
        std::string jkt;  ///< cnf.jkt: the DPoP key the token is bound to
        std::string subject;  ///< "<iss> <sub>"
    };
    /// Checks a token alone (no scope, no proof): empty when valid, else why not.
    boost::asio::awaitable<std::string> check_token(std::string token, TokenFacts& facts);
    boost::asio::awaitable<std::string> fetch_keys();
    http::TokenVerdict refuse(std::string error, std::string description) const;

    boost::asio::any_io_executor ex_;
    ResourceServerSettings settings_;
    std::shared_ptr<http::Client> http_;
    std::map<std::string, Key> keys_;  // by kid ("" for a key without one)
    std::chrono::steady_clock::time_point fetched_{};
    bool fetched_once_ = false;
    JtiCache proofs_seen_;
};

}  // namespace switchboard::auth
