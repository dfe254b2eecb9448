// DPoP (RFC 9449; the MCP extension io.modelcontextprotocol/auth/dpop, SEP-1932): sender-constrained tokens. The
// client proves with every request that it holds the key the token was bound to: a fresh proof JWT (typ dpop+jwt,
// the public key in its header) over the method, the URL without query or fragment, the time, a unique id and,
// towards a resource server, the hash of the access token. A stolen DPoP token is useless without the key.
//
// Both sides are here: make_proof() for the client (auth::OAuthAuthorizer) and check_proof() for a resource server
// (auth::JwtVerifier, the gateway) and the tests' authorization server.
//
// Thread-safety: pure functions; JtiCache has one owner.
#pragma once

#include <switchboard/auth/jwt.hpp>
#include <switchboard/http/url.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace switchboard::auth {

/// The `htu` of a request to `url`: scheme, host, port (when not the default) and path; no query, no fragment.
std::string dpop_htu(const http::Url& url);

/// RFC 7638: the JWK SHA-256 thumbprint (base64url) of a public key, what a bound token's `cnf.jkt` holds.
/// Empty for a key type other than RSA or EC.
std::string jwk_thumbprint(const boost::json::object& jwk);

/// A proof for one request: `method` ("POST"), `htu` (dpop_htu()), `access_token` (empty towards an authorization
/// server; else its hash goes in `ath`) and the server's `nonce` (empty when it gave none). A new `jti` each time.
std::string make_dpop_proof(const Key& key, std::string_view method, std::string_view htu,
                            std::string_view access_token, std::string_view nonce);

/// What a valid proof showed.
struct DpopProof {
    std::string jkt;  ///< the thumbprint of the key that signed it
    std::string jti;
    std::string nonce;     ///< empty when it carried none
    std::int64_t iat = 0;  ///< when it was made (unix seconds)
};

/// Checks a proof as RFC 9449 §4.3 asks: one JWT, typ dpop+jwt, an asymmetric alg, a public `jwk` (never a private
/// one) that verifies the signature, `htm` and `htu` equal to the request's (URLs compared after normalisation:
/// scheme and host case, default ports, one trailing slash), `iat` within `window_s` of `now`, and `ath` equal to the
/// hash of `access_token` when that is not empty. nullopt with `error` set otherwise.
std::optional<DpopProof> check_dpop_proof(std::string_view proof, std::string_view method, std::string_view htu,
                                          std::string_view access_token, std::int64_t now, std::int64_t window_s,
                                          std::string& error);

/// The ids of the proofs accepted while they could still be accepted, so that each is accepted once (RFC 9449
/// §11.1). An id is forgotten only when its proof has expired (`expires_at`: its iat plus the acceptance window), so
/// a flood of new proofs cannot push a live one out to replay it; when `capacity` live ids are held, new proofs are
/// refused instead.
class JtiCache {
public:
    explicit JtiCache(std::size_t capacity = 100000) : capacity_(capacity) {}
    enum class Verdict { fresh, replay, full };
    /// Remembers `jti` until `expires_at` (unix seconds) unless it is held already (a replay) or the cache is full.
    Verdict insert(const std::string& jti, std::int64_t expires_at, std::int64_t now);
    std::size_t size() const { return seen_.size(); }

private:
    std::size_t capacity_;
    std::multimap<std::int64_t, std::string> by_expiry_;
    std::unordered_set<std::string> seen_;
};

}  // namespace switchboard::auth
