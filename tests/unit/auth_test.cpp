// The OAuth building blocks without a network: encodings and PKCE (RFC 7636's own example), WWW-Authenticate
// parsing, the discovery URL orders the spec prescribes, resource matching, JWT signing and checking, the token file
// and the `oauth` config entry.
#include <switchboard/auth/challenge.hpp>
#include <switchboard/auth/crypto.hpp>
#include <switchboard/auth/dpop.hpp>
#include <switchboard/auth/jwt.hpp>
#include <switchboard/auth/metadata.hpp>
#include <switchboard/auth/token_store.hpp>
#include <switchboard/host/config.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

using namespace switchboard;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {
http::Url url(const std::string& text) {
    std::string error;
    return *http::parse_url(text, error);
}
}  // namespace

TEST(AuthCrypto, Base64UrlAndPkceMatchRfc7636) {
    EXPECT_EQ(auth::base64url_encode("\xfb\xff"), "-_8");
    EXPECT_EQ(auth::base64_encode("a:b"), "YTpi");
    EXPECT_EQ(*auth::base64url_decode("-_8"), "\xfb\xff");
    EXPECT_EQ(*auth::base64url_decode("YTpi"), "a:b");
    EXPECT_FALSE(auth::base64url_decode("a b"));
    // RFC 7636 appendix B.
    EXPECT_EQ(auth::base64url_encode(auth::sha256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")),
              "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    auto p = auth::make_pkce();
    EXPECT_EQ(p.verifier.size(), 43u);
    EXPECT_EQ(p.challenge, auth::base64url_encode(auth::sha256(p.verifier)));
    EXPECT_NE(auth::make_pkce().verifier, p.verifier);
    EXPECT_EQ(auth::form_body({{"a b", "c&d=é"}}), "a%20b=c%26d%3D%C3%A9");
}

TEST(AuthChallenge, ParsesBearerAndDpopChallenges) {
    auto b = auth::read_bearer_challenge(
        {R"(Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", error_description="say \"hi\"")"});
    EXPECT_TRUE(b.present);
    EXPECT_EQ(b.scheme, "bearer");
    EXPECT_EQ(b.error, "insufficient_scope");
    EXPECT_EQ(b.scope, "a b");
    EXPECT_EQ(b.resource_metadata, "https://h/.well-known/oauth-protected-resource/mcp");
    EXPECT_EQ(b.error_description, "say \"hi\"");
    auto d = auth::read_bearer_challenge({R"(DPoP resource_metadata="https://h/m")"});
    EXPECT_EQ(d.scheme, "dpop");
    EXPECT_EQ(d.resource_metadata, "https://h/m");
    EXPECT_FALSE(auth::read_bearer_challenge({"Basic realm=\"x\""}).present);
    EXPECT_TRUE(auth::read_bearer_challenge({"Bearer"}).present);
    // Garbage never throws.
    EXPECT_NO_THROW(auth::parse_challenges(",,, =\"unterminated"));
}

TEST(AuthMetadata, DiscoveryUrlsInTheSpecsOrder) {
    EXPECT_EQ(auth::resource_metadata_urls(url("https://h:8443/a/mcp"), ""),
              (std::vector<std::string>{"https://h:8443/.well-known/oauth-protected-resource/a/mcp",
                                        "https://h:8443/.well-known/oauth-protected-resource"}));
    EXPECT_EQ(auth::resource_metadata_urls(url("https://h/"), "https://h/custom.json"),
              (std::vector<std::string>{"https://h/custom.json", "https://h/.well-known/oauth-protected-resource"}));
    EXPECT_EQ(auth::server_metadata_urls(url("https://as/tenant1")),
              (std::vector<std::string>{"https://as/.well-known/oauth-authorization-server/tenant1",
                                        "https://as/.well-known/openid-configuration/tenant1",
                                        "https://as/tenant1/.well-known/openid-configuration"}));
    EXPECT_EQ(auth::server_metadata_urls(url("https://as")),
              (std::vector<std::string>{"https://as/.well-known/oauth-authorization-server",
                                        "https://as/.well-known/openid-configuration"}));
}

TEST(AuthMetadata, ResourceMustCoverTheServerAndIssuerMustMatch) {
    const auto server = url("https://h/api/mcp");
    EXPECT_TRUE(auth::resource_covers("https://h/api/mcp", server));
    EXPECT_TRUE(auth::resource_covers("https://h", server));
    EXPECT_TRUE(auth::resource_covers("https://h/api", server));
    EXPECT_FALSE(auth::resource_covers("https://h/ap", server));  // not at a segment boundary
    EXPECT_FALSE(auth::resource_covers("https://evil.example/api/mcp", server));
    EXPECT_FALSE(auth::resource_covers("http://h/api/mcp", server));
    EXPECT_EQ(auth::canonical_resource(url("https://H/api/mcp/?x=1")), "https://h/api/mcp");

    std::string error;
    EXPECT_TRUE(auth::parse_server_metadata("u", R"({"issuer":"https://as","token_endpoint":"https://as/t"})",
                                            "https://as", error));
    EXPECT_FALSE(auth::parse_server_metadata("u", R"({"issuer":"https://attacker","token_endpoint":"https://as/t"})",
                                             "https://as", error));
    EXPECT_NE(error.find("https://attacker"), std::string::npos);
    EXPECT_FALSE(auth::parse_resource_metadata("u", R"({"resource":"https://h"})", error));  // no server named
}

TEST(AuthJwt, SignsAndVerifiesRs256AndEs256) {
    for (const char* alg : {"RS256", "ES256"}) {
        auto key = auth::Key::generate(alg, "k1");
        json::object claims;
        claims["sub"] = "s";
        claims["exp"] = 2000000000;
        const auto token = auth::sign_jwt(key, claims);
        std::string error;
        auto jwt = auth::decode_jwt(token, error);
        ASSERT_TRUE(jwt) << error;
        EXPECT_EQ(jwt->header.at("alg").as_string(), alg);
        EXPECT_EQ(jwt->header.at("kid").as_string(), "k1");
        // The public half, through a JWK as a JWKS carries it, verifies; another key does not.
        auto pub = auth::Key::from_jwk(key.public_jwk(), error);
        ASSERT_TRUE(pub) << error;
        EXPECT_TRUE(auth::verify_signature(*jwt, *pub));
        EXPECT_FALSE(auth::verify_signature(*jwt, auth::Key::generate(alg, "k1")));
        // One changed claim breaks the signature.
        auto tampered = *jwt;
        tampered.signing_input[tampered.signing_input.size() - 2] ^= 1;
        EXPECT_FALSE(auth::verify_signature(tampered, *pub));
    }
    // "none" and an algorithm that is not the key's are refused.
    auto rsa = auth::Key::generate("RS256", "");
    std::string error;
    auto jwt = *auth::decode_jwt(auth::sign_jwt(rsa, json::object()), error);
    jwt.header["alg"] = "none";
    EXPECT_FALSE(auth::verify_signature(jwt, rsa));
    jwt.header["alg"] = "HS256";
    EXPECT_FALSE(auth::verify_signature(jwt, rsa));
    EXPECT_FALSE(auth::decode_jwt("a.b", error));
}

TEST(AuthTokenStore, WritesOnlyForTheUserAndRoundTrips) {
    const auto dir = fs::temp_directory_path() / ("switchboard-token-store-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auth::TokenStore store(dir / "state" / "tokens.json");
    EXPECT_FALSE(store.load("x"));
    auth::ServerCredentials c;
    c.resource = "https://h/mcp";
    c.issuer = "https://as";
    c.client.client_id = "id";
    c.tokens.access_token = "at-secret";
    c.tokens.refresh_token = "rt-secret";
    c.tokens.expires_at = 123;
    c.tokens.token_type = "DPoP";
    c.tokens.dpop_key = auth::Key::generate("ES256", "").private_pem();
    ASSERT_EQ(store.save("x", c), "");
    struct stat st {};
    ASSERT_EQ(::stat(store.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat(store.path().parent_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    auto back = store.load("x");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->tokens.access_token, "at-secret");
    EXPECT_EQ(back->tokens.refresh_token, "rt-secret");
    EXPECT_EQ(back->tokens.expires_at, 123);
    EXPECT_EQ(back->tokens.token_type, "DPoP");
    EXPECT_EQ(back->tokens.dpop_key, c.tokens.dpop_key);
    std::string error;
    EXPECT_TRUE(auth::Key::from_pem(back->tokens.dpop_key, error)) << error;
    EXPECT_EQ(back->client.client_id, "id");
    const auto before = store.stamp();
    ASSERT_EQ(store.remove("x"), "");
    EXPECT_FALSE(store.load("x"));
    EXPECT_NE(store.stamp(), before);
    fs::remove_all(dir);
}

TEST(AuthConfig, OAuthEntriesAreCheckedWhenLoaded) {
    auto config = host::parse_config(
        R"({"mcpServers": {
          "a": {"url": "https://h/mcp", "oauth": {"clientId": "id", "clientSecret": "s", "scopes": "x y", "redirectPort": 8765}},
          "b": {"url": "https://h/mcp", "oauth": false},
          "c": {"url": "https://h/mcp", "oauth": {"redirectPort": 70000}},
          "d": {"url": "https://h/mcp", "oauth": {"grant": "password"}},
          "e": {"url": "https://h/mcp", "oauth": {"grant": "client_credentials"}},
          "f": {"url": "https://h/mcp", "oauth": {"clientSecrett": "typo"}},
          "g": {"url": "https://h/mcp", "oauth": {"grant": "enterprise", "clientId": "id"}},
          "h": {"url": "https://h/mcp", "oauth": {"dpop": true}},
          "i": {"url": "https://h/mcp", "oauth": {"dpop": "sometimes"}}
        }})",
        "test.json");
    const auto* a = config.find("a");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->invalid, "");
    EXPECT_EQ(a->oauth.client_id, "id");
    EXPECT_EQ(a->oauth.scopes, (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(a->oauth.redirect_port, 8765);
    EXPECT_FALSE(config.find("b")->oauth_enabled);
    EXPECT_NE(config.find("c")->invalid.find("redirectPort"), std::string::npos);
    EXPECT_NE(config.find("d")->invalid.find("password"), std::string::npos);
    EXPECT_NE(config.find("e")->invalid.find("clientId"), std::string::npos);
    EXPECT_NE(config.find("g")->invalid.find("idpTokenEndpoint"), std::string::npos);
    EXPECT_EQ(a->oauth.dpop, auth::OAuthSettings::Dpop::automatic);
    EXPECT_EQ(config.find("h")->oauth.dpop, auth::OAuthSettings::Dpop::always);
    EXPECT_NE(config.find("i")->invalid.find("oauth.dpop"), std::string::npos);
    bool warned = false;
    for (const auto& w : config.warnings) warned = warned || w.find("oauth.clientSecrett") != std::string::npos;
    EXPECT_TRUE(warned);
}

TEST(AuthDpop, ThumbprintMatchesRfc7638) {
    // RFC 7638 §3.1's example key and thumbprint.
    json::object jwk;
    jwk["kty"] = "RSA";
    jwk["e"] = "AQAB";
    jwk["alg"] = "RS256";
    jwk["kid"] = "2011-04-29";
    jwk["n"] =
        "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjh"
        "Mstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvR"
        "L5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDK"
        "gw";
    EXPECT_EQ(auth::jwk_thumbprint(jwk), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    json::object oct;
    oct["kty"] = "oct";
    EXPECT_EQ(auth::jwk_thumbprint(oct), "");
}

TEST(AuthDpop, ProofsAreMadeAndCheckedAsRfc9449Says) {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    std::string error;
    auto u = http::parse_url("https://mcp.example:8443/v1/mcp?x=1", error);
    ASSERT_TRUE(u);
    EXPECT_EQ(auth::dpop_htu(*u), "https://mcp.example:8443/v1/mcp");
    for (const char* alg : {"ES256", "RS256"}) {
        SCOPED_TRACE(alg);
        const auto key = auth::Key::generate(alg, "kid-not-in-proofs");
        const std::string htu = "https://mcp.example:8443/v1/mcp";
        const auto proof = auth::make_dpop_proof(key, "POST", htu, "the-token", "n-1");
        auto jwt = auth::decode_jwt(proof, error);
        ASSERT_TRUE(jwt);
        EXPECT_EQ(jwt->header.at("typ").as_string(), "dpop+jwt");
        EXPECT_FALSE(jwt->header.contains("kid"));
        EXPECT_FALSE(jwt->header.at("jwk").as_object().contains("d"));
        auto ok = auth::check_dpop_proof(proof, "POST", htu, "the-token", now, 300, error);
        ASSERT_TRUE(ok) << error;
        EXPECT_EQ(ok->jkt, auth::jwk_thumbprint(key.public_jwk()));
        EXPECT_EQ(ok->nonce, "n-1");
        EXPECT_FALSE(ok->jti.empty());
        // Every proof is new.
        auto again = auth::check_dpop_proof(auth::make_dpop_proof(key, "POST", htu, "the-token", ""), "POST", htu,
                                            "the-token", now, 300, error);
        ASSERT_TRUE(again);
        EXPECT_NE(again->jti, ok->jti);
        // One trailing slash is the same URL; another method, URL, token, time are not.
        EXPECT_TRUE(auth::check_dpop_proof(proof, "POST", htu + "/", "the-token", now, 300, error));
        EXPECT_FALSE(auth::check_dpop_proof(proof, "GET", htu, "the-token", now, 300, error));
        EXPECT_NE(error.find("method"), std::string::npos);
        EXPECT_FALSE(auth::check_dpop_proof(proof, "POST", "https://mcp.example:8443/other", "the-token", now, 300,
                                            error));
        EXPECT_FALSE(auth::check_dpop_proof(proof, "POST", htu, "another-token", now, 300, error));
        EXPECT_NE(error.find("ath"), std::string::npos);
        EXPECT_FALSE(auth::check_dpop_proof(proof, "POST", htu, "the-token", now + 600, 300, error));
        EXPECT_FALSE(auth::check_dpop_proof(proof + "," + proof, "POST", htu, "the-token", now, 300, error));
        // A tampered claim breaks the signature.
        auto parts = proof;
        const auto d1 = parts.find('.'), d2 = parts.rfind('.');
        json::object claims = jwt->claims;
        claims["htm"] = "GET";
        parts = parts.substr(0, d1 + 1) + auth::base64url_encode(json::serialize(claims)) + parts.substr(d2);
        EXPECT_FALSE(auth::check_dpop_proof(parts, "GET", htu, "the-token", now, 300, error));
        EXPECT_NE(error.find("signature"), std::string::npos) << error;
    }
    // A proof whose jwk carries the private key is refused (the key is then no secret).
    auto key = auth::Key::generate("ES256", "");
    json::object header;
    header["typ"] = "dpop+jwt";
    json::object jwk = key.public_jwk();
    jwk["d"] = "AAAA";
    header["jwk"] = jwk;
    json::object claims;
    claims["jti"] = "j";
    claims["htm"] = "POST";
    claims["htu"] = "https://as/token";
    claims["iat"] = now;
    key.set_kid("");
    EXPECT_FALSE(auth::check_dpop_proof(auth::sign_jwt(key, claims, header), "POST", "https://as/token", "", now, 300,
                                        error));
    EXPECT_NE(error.find("private"), std::string::npos) << error;

    // Scheme and host case and a default port do not make another htu.
    const auto p = auth::make_dpop_proof(key, "GET", "HTTPS://MCP.Example:443/mcp", "", "");
    EXPECT_TRUE(auth::check_dpop_proof(p, "GET", "https://mcp.example/mcp", "", now, 300, error)) << error;
    EXPECT_FALSE(auth::check_dpop_proof(p, "GET", "https://mcp.example/MCP", "", now, 300, error));

    // A proof id is held until its proof expires: a flood cannot push a live one out; a full cache refuses.
    using V = auth::JtiCache::Verdict;
    auth::JtiCache seen(2);
    EXPECT_EQ(seen.insert("a", 100, 0), V::fresh);
    EXPECT_EQ(seen.insert("a", 100, 1), V::replay);
    EXPECT_EQ(seen.insert("b", 50, 2), V::fresh);
    EXPECT_EQ(seen.insert("c", 100, 3), V::full);
    EXPECT_EQ(seen.insert("a", 100, 4), V::replay);  // still live
    EXPECT_EQ(seen.insert("c", 100, 60), V::fresh);  // "b" expired at 50
    EXPECT_EQ(seen.insert("a", 200, 101), V::fresh);  // "a" expired at 100
    EXPECT_EQ(seen.size(), 1u);
}
