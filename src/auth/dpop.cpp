#include <switchboard/auth/dpop.hpp>

#include <switchboard/auth/crypto.hpp>
#include <switchboard/core/text.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "json_fields.hpp"

namespace switchboard::auth {

using detail::num;
using detail::str;

namespace json = boost::json;

namespace {

/// The public members only (the thumbprint's and the proof header's): never kid, alg, use, nor a private part.
json::object bare_public_jwk(const Key& key) {
    json::object jwk = key.public_jwk();
    json::object out;
    for (const char* k : {"kty", "crv", "x", "y", "n", "e"})
        if (const auto* v = jwk.if_contains(k)) out[k] = *v;
    return out;
}

/// The htu to compare (RFC 9449 §4.3 step 9, RFC 3986 §6.2.2-3): scheme and host in lower case, no default port,
/// no query or fragment, and one trailing "/" on a non-root path does not make another URL.
std::string normal_htu(std::string_view u) {
    std::string error;
    auto url = http::parse_url(u, error);
    if (!url) return std::string(u);
    url->host = core::ascii_lower(url->host);
    std::string out = dpop_htu(*url);
    const auto path = out.find('/', out.find("://") + 3);
    if (path != std::string::npos && out.size() > path + 1 && out.back() == '/') out.pop_back();
    return out;
}

}  // namespace

std::string dpop_htu(const http::Url& url) {
    std::string path = url.target.substr(0, url.target.find_first_of("?#"));
    if (path.empty()) path.push_back('/');  // not `path = "/"`: GCC 12 -O3 warns there (-Wstringop-overflow, wrongly)
    return url.origin() + path;
}

std::string jwk_thumbprint(const json::object& jwk) {
    const auto kty = str(jwk, "kty");
    // RFC 7638 §3: the required members only, in lexicographic order, no whitespace.
    if (kty == "EC")
        return base64url_encode(sha256(fmt::format(R"({{"crv":"{}","kty":"EC","x":"{}","y":"{}"}})", str(jwk, "crv"),
                                                   str(jwk, "x"), str(jwk, "y"))));
    if (kty == "RSA")
        return base64url_encode(
            sha256(fmt::format(R"({{"e":"{}","kty":"RSA","n":"{}"}})", str(jwk, "e"), str(jwk, "n"))));
    return {};
}

std::string make_dpop_proof(const Key& key, std::string_view method, std::string_view htu,
                            std::string_view access_token, std::string_view nonce) {
    json::object header;
    header["typ"] = "dpop+jwt";
    header["jwk"] = bare_public_jwk(key);
    json::object claims;
    claims["jti"] = random_token(16);
    claims["htm"] = method;
    claims["htu"] = htu;
    claims["iat"] =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (!access_token.empty()) claims["ath"] = base64url_encode(sha256(access_token));
    if (!nonce.empty()) claims["nonce"] = nonce;
    Key unnamed = key;  // a proof names its key by the jwk header, never by a kid
    unnamed.set_kid("");
    return sign_jwt(unnamed, claims, header);
}

std::optional<DpopProof> check_dpop_proof(std::string_view proof, std::string_view method, std::string_view htu,
                                          std::string_view access_token, std::int64_t now, std::int64_t window_s,
                                          std::string& error) {
    if (proof.empty()) {
        error = "no DPoP proof";
        return std::nullopt;
    }
    if (proof.find(',') != std::string_view::npos) {
        error = "more than one DPoP proof";
        return std::nullopt;
    }
    auto jwt = decode_jwt(proof, error);
    if (!jwt) {
        error = "the DPoP proof is not a JWT: " + error;
        return std::nullopt;
    }
    if (str(jwt->header, "typ") != "dpop+jwt") {
        error = "the DPoP proof's typ is not dpop+jwt";
        return std::nullopt;
    }
    const auto alg = str(jwt->header, "alg");
    if (alg != "ES256" && alg != "RS256") {
        error = fmt::format("the DPoP proof's alg \"{}\" is not supported (ES256, RS256)", alg);
        return std::nullopt;
    }
    const auto* jwk_value = jwt->header.if_contains("jwk");
    if (!jwk_value || !jwk_value->is_object()) {
        error = "the DPoP proof has no jwk header";
        return std::nullopt;
    }
    const auto& jwk = jwk_value->get_object();
    for (const char* k : {"d", "p", "q", "dp", "dq", "qi"})
        if (jwk.contains(k)) {
            error = "the DPoP proof's jwk holds a private key";
            return std::nullopt;
        }
    std::string key_error;
    auto key = Key::from_jwk(jwk, key_error);
    if (!key) {
        error = "the DPoP proof's jwk: " + key_error;
        return std::nullopt;
    }
    if (!verify_signature(*jwt, *key)) {
        error = "the DPoP proof's signature does not verify with its jwk";
        return std::nullopt;
    }
    const auto& c = jwt->claims;
    DpopProof out;
    out.jti = str(c, "jti");
    out.nonce = str(c, "nonce");
    if (out.jti.empty()) {
        error = "the DPoP proof has no jti";
        return std::nullopt;
    }
    if (str(c, "htm") != method) {
        error = fmt::format("the DPoP proof is for method {}, not {}", str(c, "htm"), method);
        return std::nullopt;
    }
    if (normal_htu(str(c, "htu")) != normal_htu(htu)) {
        error = fmt::format("the DPoP proof is for {}, not {}", str(c, "htu"), htu);
        return std::nullopt;
    }
    const auto iat = num(c, "iat");
    out.iat = iat;
    if (iat == 0 || iat < now - window_s || iat > now + window_s) {  // (no subtraction of the outside number)
        error = "the DPoP proof's iat is missing or outside the accepted window";
        return std::nullopt;
    }
    if (!access_token.empty() && str(c, "ath") != base64url_encode(sha256(access_token))) {
        error = "the DPoP proof's ath is not the hash of the access token";
        return std::nullopt;
    }
    out.jkt = jwk_thumbprint(jwk);
    return out;
}

JtiCache::Verdict JtiCache::insert(const std::string& jti, std::int64_t expires_at, std::int64_t now) {
    while (!by_expiry_.empty() && by_expiry_.begin()->first < now) {
        seen_.erase(by_expiry_.begin()->second);
        by_expiry_.erase(by_expiry_.begin());
    }
    if (seen_.count(jti)) return Verdict::replay;
    if (seen_.size() >= capacity_) return Verdict::full;
    seen_.insert(jti);
    by_expiry_.emplace(expires_at, jti);
    return Verdict::fresh;
}

}  // namespace switchboard::auth
