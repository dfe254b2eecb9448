// JSON Web Tokens as OAuth uses them here: verifying an access token's signature against a JWKS (the gateway as a
// resource server) and signing a client assertion or a test authorization server's tokens. RS256 and ES256 only
// (what authorization servers issue by default); "none" and HMAC are never accepted.
//
// Thread-safety: Key is immutable once made; the functions are pure.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

typedef struct evp_pkey_st EVP_PKEY;

namespace switchboard::auth {

/// A public or private key (RSA or EC P-256) with its JWK key id.
class Key {
public:
    /// From a JWK (RFC 7517): kty RSA (n, e[, d...]) or EC P-256 (x, y[, d]). nullopt with `error` otherwise.
    static std::optional<Key> from_jwk(const boost::json::object& jwk, std::string& error);
    /// From PEM text (a private key, or a public key / SubjectPublicKeyInfo).
    static std::optional<Key> from_pem(std::string_view pem, std::string& error);
    /// A new key pair: "RS256" (RSA 2048) or "ES256" (P-256).
    static Key generate(std::string_view alg, std::string kid);

    /// The public half as a JWK (with kid, alg, use "sig").
    boost::json::object public_jwk() const;
    /// The private key as PKCS#8 PEM, for keeping it in the token file (empty for a public key).
    std::string private_pem() const;
    /// "RS256" or "ES256".
    const std::string& alg() const { return alg_; }
    const std::string& kid() const { return kid_; }
    void set_kid(std::string kid) { kid_ = std::move(kid); }
    EVP_PKEY* native() const { return key_.get(); }

private:
    std::shared_ptr<EVP_PKEY> key_;
    std::string alg_, kid_;
};

/// A JWS compact serialization split and decoded (nothing checked yet).
struct DecodedJwt {
    boost::json::object header;
    boost::json::object claims;
    std::string signing_input;  ///< "header.payload" as received
    std::string signature;      ///< raw bytes
};
std::optional<DecodedJwt> decode_jwt(std::string_view token, std::string& error);

/// Signs `claims` (header: alg from the key, typ, kid when the key has one; `extra_header` merged in).
std::string sign_jwt(const Key& key, const boost::json::object& claims,
                     const boost::json::object& extra_header = boost::json::object());

/// Whether `jwt`'s signature was made by `key` with the header's algorithm (which must be the key's).
bool verify_signature(const DecodedJwt& jwt, const Key& key);

}  // namespace switchboard::auth
