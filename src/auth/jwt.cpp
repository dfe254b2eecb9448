#include <switchboard/auth/jwt.hpp>
#include <switchboard/auth/crypto.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <stdexcept>

#include "json_fields.hpp"

namespace switchboard::auth {

using detail::num;
using detail::str;

namespace json = boost::json;

namespace {

struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

/// A big-endian unsigned integer from a base64url JWK member.
BIGNUM* bn_member(const json::object& jwk, std::string_view name) {
    auto raw = base64url_decode(str(jwk, name));
    if (!raw || raw->empty()) return nullptr;
    return BN_bin2bn(reinterpret_cast<const unsigned char*>(raw->data()), static_cast<int>(raw->size()), nullptr);
}

std::string bn_bytes(const BIGNUM* bn, int width = 0) {
    const int n = width > 0 ? width : BN_num_bytes(bn);
    std::string out(static_cast<std::size_t>(n), '\0');
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), n);
    return out;
}

EVP_PKEY* pkey_from_params(const char* type, OSSL_PARAM* params, bool is_private) {
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr);
    EVP_PKEY* key = nullptr;
    if (ctx && EVP_PKEY_fromdata_init(ctx) == 1)
        EVP_PKEY_fromdata(ctx, &key, is_private ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params);
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/// ECDSA signatures: JWS carries r||s (32 bytes each for P-256), OpenSSL speaks DER.
std::string der_to_raw(std::string_view der) {
    const auto* p = reinterpret_cast<const unsigned char*>(der.data());
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
    if (!sig) return {};
    const BIGNUM *r = nullptr, *s = nullptr;
    ECDSA_SIG_get0(sig, &r, &s);
    auto out = bn_bytes(r, 32) + bn_bytes(s, 32);
    ECDSA_SIG_free(sig);
    return out;
}

std::string raw_to_der(std::string_view raw) {
    if (raw.size() != 64) return {};
    ECDSA_SIG* sig = ECDSA_SIG_new();
    BIGNUM* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), 32, nullptr);
    BIGNUM* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()) + 32, 32, nullptr);
    ECDSA_SIG_set0(sig, r, s);
    unsigned char* der = nullptr;
    const int len = i2d_ECDSA_SIG(sig, &der);
    std::string out = len > 0 ? std::string(reinterpret_cast<char*>(der), static_cast<std::size_t>(len)) : "";
    OPENSSL_free(der);
    ECDSA_SIG_free(sig);
    return out;
}

std::string key_alg(EVP_PKEY* k) {
    if (EVP_PKEY_is_a(k, "RSA")) return "RS256";
    if (EVP_PKEY_is_a(k, "EC")) {
        char group[64] = {};
        size_t len = 0;
        if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len) == 1 &&
            (std::string_view(group) == "prime256v1" || std::string_view(group) == "P-256"))
            return "ES256";
    }
    return {};
}

}  // namespace

std::optional<Key> Key::from_jwk(const json::object& jwk, std::string& error) {
    const auto kty = str(jwk, "kty");
    Key k;
    k.kid_ = str(jwk, "kid");
    OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
    EVP_PKEY* pkey = nullptr;
    std::vector<BIGNUM*> bns;
    auto add_bn = [&](const char* param, std::string_view member) {
        BIGNUM* bn = bn_member(jwk, member);
        if (!bn) return false;
        bns.push_back(bn);
        return OSSL_PARAM_BLD_push_BN(bld, param, bn) == 1;
    };
    if (kty == "RSA") {
        if (add_bn(OSSL_PKEY_PARAM_RSA_N, "n") && add_bn(OSSL_PKEY_PARAM_RSA_E, "e")) {
            const bool priv = jwk.contains("d") && add_bn(OSSL_PKEY_PARAM_RSA_D, "d");
            OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
            pkey = pkey_from_params("RSA", params, priv);
            OSSL_PARAM_free(params);
        }
        k.alg_ = "RS256";
    } else if (kty == "EC") {
        const auto crv = str(jwk, "crv");
        auto x = base64url_decode(str(jwk, "x")), y = base64url_decode(str(jwk, "y"));
        if (crv != "P-256") {
            error = fmt::format("unsupported EC curve \"{}\" (P-256 only)", crv);
        } else if (!x || !y || x->size() != 32 || y->size() != 32) {
            error = "an EC key needs 32-byte x and y";
        } else {
            std::string point = "\x04" + *x + *y;
            OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
            OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
            const bool priv = jwk.contains("d") && add_bn(OSSL_PKEY_PARAM_PRIV_KEY, "d");
            OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
            pkey = pkey_from_params("EC", params, priv);
            OSSL_PARAM_free(params);
        }
        k.alg_ = "ES256";
    } else {
        error = fmt::format("unsupported key type \"{}\" (RSA or EC)", kty);
    }
    for (auto* bn : bns) BN_free(bn);
    OSSL_PARAM_BLD_free(bld);
    if (!pkey) {
        if (error.empty()) error = fmt::format("the {} JWK \"{}\" is not a valid key", kty, k.kid_);
        return std::nullopt;
    }
    k.key_.reset(pkey, PkeyFree{});
    return k;
}

std::optional<Key> Key::from_pem(std::string_view pem, std::string& error) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    if (!pkey) {
        BIO_free(bio);
        bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
        pkey = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
    }
    BIO_free(bio);
    if (!pkey) {
        error = "not a PEM private or public key";
        return std::nullopt;
    }
    Key k;
    k.key_.reset(pkey, PkeyFree{});
    k.alg_ = key_alg(pkey);
    if (k.alg_.empty()) {
        error = "unsupported key (RSA or EC P-256 only)";
        return std::nullopt;
    }
    return k;
}

Key Key::generate(std::string_view alg, std::string kid) {
    EVP_PKEY* pkey = alg == "ES256" ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                                    : EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048));
    if (!pkey) throw std::runtime_error("key generation failed");
    Key k;
    k.key_.reset(pkey, PkeyFree{});
    k.alg_ = alg == "ES256" ? "ES256" : "RS256";
    k.kid_ = std::move(kid);
    return k;
}

std::string Key::private_pem() const {
    BIO* bio = BIO_new(BIO_s_mem());
    std::string out;
    if (PEM_write_bio_PrivateKey(bio, key_.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1) {
        char* data = nullptr;
        const long n = BIO_get_mem_data(bio, &data);
        if (n > 0) out.assign(data, static_cast<std::size_t>(n));
    }
    BIO_free(bio);
    return out;
}

json::object Key::public_jwk() const {
    json::object jwk;
    EVP_PKEY* k = key_.get();
    if (alg_ == "RS256") {
        BIGNUM *n = nullptr, *e = nullptr;
        EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &n);
        EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &e);
        jwk["kty"] = "RSA";
        jwk["n"] = base64url_encode(bn_bytes(n));
        jwk["e"] = base64url_encode(bn_bytes(e));
        BN_free(n);
        BN_free(e);
    } else {
        unsigned char point[65];
        size_t len = 0;
        EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &len);
        jwk["kty"] = "EC";
        jwk["crv"] = "P-256";
        if (len == 65) {
            jwk["x"] = base64url_encode(std::string_view(reinterpret_cast<char*>(point) + 1, 32));
            jwk["y"] = base64url_encode(std::string_view(reinterpret_cast<char*>(point) + 33, 32));
        }
    }
    if (!kid_.empty()) jwk["kid"] = kid_;
    jwk["alg"] = alg_;
    jwk["use"] = "sig";
    return jwk;
}

std::optional<DecodedJwt> decode_jwt(std::string_view token, std::string& error) {
    const auto d1 = token.find('.');
    const auto d2 = d1 == std::string_view::npos ? d1 : token.find('.', d1 + 1);
    if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos) {
        error = "not a JWT (three dot-separated parts)";
        return std::nullopt;
    }
    auto header = base64url_decode(token.substr(0, d1));
    auto payload = base64url_decode(token.substr(d1 + 1, d2 - d1 - 1));
    auto sig = base64url_decode(token.substr(d2 + 1));
    if (!header || !payload || !sig) {
        error = "a JWT part is not base64url";
        return std::nullopt;
    }
    boost::system::error_code ec1, ec2;
    auto h = json::parse(*header, ec1);
    auto c = json::parse(*payload, ec2);
    if (ec1 || ec2 || !h.is_object() || !c.is_object()) {
        error = "a JWT's header or claims are not a JSON object";
        return std::nullopt;
    }
    DecodedJwt out;
    out.header = std::move(h.get_object());
    out.claims = std::move(c.get_object());
    out.signing_input = std::string(token.substr(0, d2));
    out.signature = std::move(*sig);
    return out;
}

std::string sign_jwt(const Key& key, const json::object& claims, const json::object& extra_header) {
    json::object header;
    header["alg"] = key.alg();
    header["typ"] = "JWT";
    if (!key.kid().empty()) header["kid"] = key.kid();
    for (const auto& [k, v] : extra_header) header[k] = v;
    const auto input = base64url_encode(json::serialize(header)) + "." + base64url_encode(json::serialize(claims));
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    std::string sig;
    size_t len = 0;
    if (EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key.native()) == 1 &&
        EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1) {
        sig.resize(len);
        if (EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                           reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1)
            sig.resize(len);
        else
            sig.clear();
    }
    EVP_MD_CTX_free(ctx);
    if (sig.empty()) throw std::runtime_error("signing a JWT failed");
    if (key.alg() == "ES256") sig = der_to_raw(sig);
    return input + "." + base64url_encode(sig);
}

bool verify_signature(const DecodedJwt& jwt, const Key& key) {
    const auto alg = str(jwt.header, "alg");
    if (alg != key.alg()) return false;  // never "none", never HMAC with a public key as the secret
    std::string sig = jwt.signature;
    if (alg == "ES256") {
        sig = raw_to_der(sig);
        if (sig.empty()) return false;
    }
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    const bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key.native()) == 1 &&
                    EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                                     reinterpret_cast<const unsigned char*>(jwt.signing_input.data()),
                                     jwt.signing_input.size()) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}

}  // namespace switchboard::auth
