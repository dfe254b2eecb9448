// switchboard-test-auth-server [--token-ttl SECONDS] [--iss ok|wrong|missing] [--dpop on|NONCE]: an OAuth 2.1
// authorization server
// that approves every authorization request at once (a 302 to the redirect URI), for the OAuth integration tests.
// Prints "listening on http://127.0.0.1:PORT" on stderr.
//
// `switchboard-test-auth-server --browse URL` is the tests' browser (BROWSER=...): it GETs URL, follows the
// redirects (the authorization server's 302 to a login's loopback listener) and exits 0 on a 2xx.
//
// It is strict where a real one is: PKCE S256 is required and checked, codes are single-use and bound to their
// client, redirect URI and resource; refresh tokens rotate and can be revoked. Access tokens are RS256 JWTs
// (iss, aud = the `resource` parameter, sub, scope, exp, iat, jti) verifiable with its JWKS.
//
// With --dpop it advertises DPoP (ES256): a token request with a valid proof gets a DPoP-bound token (`cnf.jkt`,
// token_type DPoP) and a refresh token bound to the same key; a bad proof is a 400 invalid_dpop_proof. With
// --dpop NONCE (anything but "on") a proof must also carry that nonce: the first gets 400 use_dpop_nonce.
//
//   /.well-known/oauth-authorization-server   metadata (S256, iss parameter, registration, jwks_uri)
//   /register  /authorize  /token  /jwks  /revoke (RFC 7009: forgets a refresh token)
//   POST /admin/revoke          revokes every refresh token
//   POST /admin/rotate          signs with a new key (new kid) from now on
//   POST /admin/mint            {"aud","expiresIn","scope","sub","badSignature","issuer"}: a token for the tests
//   GET  /admin/stats           {"authorize":N,"token":{"authorization_code":N,"refresh_token":N},"register":N,
//                                "dpop":N (token requests with a valid proof),"dpopNonce":N (use_dpop_nonce sent),
//                                "revoke":N,"refreshTokens":N (usable now)}
#include <switchboard/auth/crypto.hpp>
#include <switchboard/auth/dpop.hpp>
#include <switchboard/auth/jwt.hpp>
#include <switchboard/http/client.hpp>
#include <switchboard/http/server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace http = switchboard::http;
namespace auth = switchboard::auth;
namespace bhttp = boost::beast::http;
using asio::awaitable;

struct Code {
    std::string client_id, redirect_uri, challenge, scope, resource;
};
struct Refresh {
    std::string client_id, scope, resource, jkt;
};

struct State {
    std::string issuer;
    int token_ttl = 3600;
    std::string iss_mode = "ok";
    std::string dpop;  // "", "on" or the nonce proofs must carry
    std::vector<auth::Key> keys;  // the last one signs; all are published
    std::map<std::string, Code> codes;
    std::map<std::string, Refresh> refresh_tokens;
    int clients = 0;
    json::object stats{{"authorize", 0},  {"register", 0},  {"token", json::object{}},
                       {"dpop", 0},       {"dpopNonce", 0}, {"revoke", 0}};
};

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::map<std::string, std::string> form(std::string_view text) {
    std::map<std::string, std::string> out;
    const std::string query = "?" + std::string(text);  // the view below points into it
    auto u = boost::urls::parse_uri_reference(query);
    if (!u) return out;
    for (auto p : u->params()) out.emplace(std::string(p.key), std::string(p.value));
    return out;
}

void bump(json::object& o, std::string_view key) {
    auto& v = o[key];
    v = (v.is_int64() ? v.get_int64() : 0) + 1;
}

awaitable<void> send_json(http::Responder& res, json::object body, bhttp::status status) {
    http::Reply r;
    r.status = status;
    r.body = json::serialize(body);
    r.headers.emplace_back("Cache-Control", "no-store");
    co_await res.send(std::move(r));
}

awaitable<void> send_json(http::Responder& res, json::object body) {
    co_await send_json(res, std::move(body), bhttp::status::ok);
}

awaitable<void> oauth_error(http::Responder& res, std::string error, std::string description) {
    json::object o;
    o["error"] = error;
    o["error_description"] = description;
    co_await send_json(res, std::move(o), bhttp::status::bad_request);
}

std::string access_token(State& s, const std::string& sub, const std::string& scope, const std::string& aud,
                         std::int64_t expires_in, const std::string& issuer, const std::string& jkt = "") {
    json::object claims;
    const auto now = now_s();
    claims["iss"] = issuer;
    claims["sub"] = sub;
    claims["aud"] = aud;
    claims["iat"] = now;
    claims["exp"] = now + expires_in;
    claims["jti"] = auth::random_token(12);
    if (!scope.empty()) claims["scope"] = scope;
    if (!jkt.empty()) claims["cnf"] = json::object{{"jkt", jkt}};
    return auth::sign_jwt(s.keys.back(), claims, json::object{{"typ", "at+jwt"}});
}

awaitable<void> token(State& s, http::ServerRequest& req, http::Responder& res) {
    auto f = form(req.body());
    const auto grant = f["grant_type"];
    bump(s.stats["token"].as_object(), grant);
    // DPoP: a proof, when there is one, must be valid (and carry the nonce when one is demanded).
    std::string jkt;
    if (auto proof = req.find("DPoP"); proof != req.end() && !s.dpop.empty()) {
        std::string error;
        auto p = auth::check_dpop_proof(std::string_view(proof->value().data(), proof->value().size()), "POST",
                                        s.issuer + "/token", "", now_s(), 300, error);
        if (!p) {
            co_await oauth_error(res, "invalid_dpop_proof", error);
            co_return;
        }
        if (s.dpop != "on" && p->nonce != s.dpop) {
            bump(s.stats, "dpopNonce");
            json::object o;
            o["error"] = "use_dpop_nonce";
            o["error_description"] = "a DPoP nonce is required";
            http::Reply r;
            r.status = bhttp::status::bad_request;
            r.body = json::serialize(o);
            r.headers.emplace_back("DPoP-Nonce", s.dpop);
            r.headers.emplace_back("Cache-Control", "no-store");
            co_await res.send(std::move(r));
            co_return;
        }
        jkt = p->jkt;
        bump(s.stats, "dpop");
    }
    std::string client_id, scope, resource;
    if (grant == "authorization_code") {
        auto it = s.codes.find(f["code"]);
        if (it == s.codes.end()) {
            co_await oauth_error(res, "invalid_grant", "unknown or used code");
            co_return;
        }
        Code c = it->second;
        s.codes.erase(it);  // single use
        if (f["client_id"] != c.client_id) {
            co_await oauth_error(res, "invalid_grant", "another client");
            co_return;
        }
        if (f["redirect_uri"] != c.redirect_uri) {
            co_await oauth_error(res, "invalid_grant", "redirect_uri");
            co_return;
        }
        if (f["resource"] != c.resource) {
            co_await oauth_error(res, "invalid_grant", "resource differs");
            co_return;
        }
        if (auth::base64url_encode(auth::sha256(f["code_verifier"])) != c.challenge) {
            co_await oauth_error(res, "invalid_grant", "PKCE verification failed");
            co_return;
        }
        client_id = c.client_id;
        scope = c.scope;
        resource = c.resource;
    } else if (grant == "refresh_token") {
        auto it = s.refresh_tokens.find(f["refresh_token"]);
        if (it == s.refresh_tokens.end()) {
            co_await oauth_error(res, "invalid_grant", "the refresh token is invalid or revoked");
            co_return;
        }
        Refresh r = it->second;
        if (r.jkt != jkt) {  // a bound refresh token needs a proof of the same key (RFC 9449 §5)
            co_await oauth_error(res, r.jkt.empty() ? "invalid_grant" : "invalid_dpop_proof",
                                 "the refresh token is bound to another key");
            co_return;
        }
        s.refresh_tokens.erase(it);  // rotation
        client_id = r.client_id;
        scope = r.scope;
        resource = f.count("resource") ? f["resource"] : r.resource;
    } else {
        {
            co_await oauth_error(res, "unsupported_grant_type", grant);
            co_return;
        }
    }
    const auto refresh = auth::random_token(24);
    s.refresh_tokens[refresh] = Refresh{client_id, scope, resource, jkt};
    json::object o;
    o["access_token"] = access_token(s, "user-1", scope, resource, s.token_ttl, s.issuer, jkt);
    o["token_type"] = jkt.empty() ? "Bearer" : "DPoP";
    o["expires_in"] = s.token_ttl;
    o["refresh_token"] = refresh;
    if (!scope.empty()) o["scope"] = scope;
    co_await send_json(res, std::move(o));
}

}  // namespace

int browse(const std::string& url) {
    asio::io_context ctx;
    int rc = 1;
    auto client = std::make_shared<http::Client>(ctx.get_executor(), http::ClientOptions{});
    asio::co_spawn(
        ctx,
        [&]() -> awaitable<void> {
            http::Request req;
            req.url = url;
            auto r = co_await client->request(std::move(req));
            if (r && r->status / 100 == 2) rc = 0;
            if (!r) std::fprintf(stderr, "browse: %s\n", r.error().message.c_str());
            client->close();
        },
        asio::detached);
    ctx.run();
    return rc;
}

int main(int argc, char** argv) {
    if (argc == 3 && std::string_view(argv[1]) == "--browse") return browse(argv[2]);
    State s;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string_view a = argv[i];
        if (a == "--token-ttl") s.token_ttl = std::stoi(argv[i + 1]);
        if (a == "--iss") s.iss_mode = argv[i + 1];
        if (a == "--dpop") s.dpop = argv[i + 1];
    }
    s.keys.push_back(auth::Key::generate("RS256", "k1"));

    http::Router routes;
    routes.add(bhttp::verb::get, "/.well-known/oauth-authorization-server",
               [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
                   json::object m;
                   m["issuer"] = s.issuer;
                   m["authorization_endpoint"] = s.issuer + "/authorize";
                   m["token_endpoint"] = s.issuer + "/token";
                   m["registration_endpoint"] = s.issuer + "/register";
                   m["jwks_uri"] = s.issuer + "/jwks";
                   m["revocation_endpoint"] = s.issuer + "/revoke";
                   m["response_types_supported"] = json::array{"code"};
                   m["grant_types_supported"] = json::array{"authorization_code", "refresh_token"};
                   m["code_challenge_methods_supported"] = json::array{"S256"};
                   m["token_endpoint_auth_methods_supported"] = json::array{"none"};
                   m["scopes_supported"] = json::array{"mcp:tools", "offline_access"};
                   m["authorization_response_iss_parameter_supported"] = true;
                   if (!s.dpop.empty()) m["dpop_signing_alg_values_supported"] = json::array{"ES256"};
                   co_await send_json(res, std::move(m));
               });
    routes.add(bhttp::verb::get, "/jwks", [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        json::array keys;
        for (const auto& k : s.keys) keys.push_back(k.public_jwk());
        json::object body;
        body["keys"] = std::move(keys);
        co_await send_json(res, std::move(body));
    });
    routes.add(bhttp::verb::post, "/register", [&s](http::ServerRequest& req, http::Responder& res) -> awaitable<void> {
        bump(s.stats, "register");
        auto body = json::parse(req.body());
        json::object o = body.as_object();
        o["client_id"] = "client-" + std::to_string(++s.clients);
        o["token_endpoint_auth_method"] = "none";
        co_await send_json(res, std::move(o), bhttp::status::created);
    });
    routes.add(bhttp::verb::get, "/authorize", [&s](http::ServerRequest& req, http::Responder& res) -> awaitable<void> {
        bump(s.stats, "authorize");
        const auto target = std::string_view(req.target().data(), req.target().size());
        auto q = form(target.substr(target.find('?') == target.npos ? target.size() : target.find('?') + 1));
        if (q["code_challenge_method"] != "S256" || q["code_challenge"].empty()) {
            co_await oauth_error(res, "invalid_request", "PKCE S256 is required");
            co_return;
        }
        if (q["redirect_uri"].empty() || q["resource"].empty()) {
            co_await oauth_error(res, "invalid_request", "redirect_uri and resource are required");
            co_return;
        }
        const auto code = auth::random_token(16);
        s.codes[code] = Code{q["client_id"], q["redirect_uri"], q["code_challenge"], q["scope"], q["resource"]};
        auto u = boost::urls::parse_uri(q["redirect_uri"]);
        boost::urls::url back(*u);
        back.params().append({"code", code});
        back.params().append({"state", q["state"]});
        if (s.iss_mode == "ok") back.params().append({"iss", s.issuer});
        if (s.iss_mode == "wrong") back.params().append({"iss", "https://attacker.example"});
        http::Reply r;
        r.status = bhttp::status::found;
        r.headers.emplace_back("Location", std::string(back.buffer()));
        co_await res.send(std::move(r));
    });
    routes.add(bhttp::verb::post, "/token",
               [&s](http::ServerRequest& req, http::Responder& res) { return token(s, req, res); });
    routes.add(bhttp::verb::post, "/revoke", [&s](http::ServerRequest& req, http::Responder& res) -> awaitable<void> {
        bump(s.stats, "revoke");
        s.refresh_tokens.erase(form(req.body())["token"]);  // an access token (a JWT) just runs out
        json::object empty;
        co_await send_json(res, std::move(empty));
    });
    routes.add(bhttp::verb::post, "/admin/revoke", [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        s.refresh_tokens.clear();
        json::object body;
        body["revoked"] = true;
        co_await send_json(res, std::move(body));
    });
    routes.add(bhttp::verb::post, "/admin/rotate", [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        s.keys.push_back(auth::Key::generate("RS256", "k" + std::to_string(s.keys.size() + 1)));
        json::object body;
        body["kid"] = s.keys.back().kid();
        co_await send_json(res, std::move(body));
    });
    routes.add(bhttp::verb::post, "/admin/mint",
               [&s](http::ServerRequest& req, http::Responder& res) -> awaitable<void> {
                   auto o = json::parse(req.body()).as_object();
                   auto str = [&](const char* k, std::string d) {
                       const auto* v = o.if_contains(k);
                       return v && v->is_string() ? std::string(v->get_string()) : d;
                   };
                   const auto* e = o.if_contains("expiresIn");
                   std::string t = access_token(s, str("sub", "test"), str("scope", ""), str("aud", ""),
                                                e ? e->to_number<std::int64_t>() : 300, str("issuer", s.issuer));
                   if (o.contains("badSignature")) {  // the same claims signed by a key nobody published
                       auto stranger = auth::Key::generate("RS256", s.keys.back().kid());
                       std::string error;
                       auto jwt = *auth::decode_jwt(t, error);
                       json::object header;
                       header["typ"] = "at+jwt";
                       t = auth::sign_jwt(stranger, jwt.claims, header);
                   }
                   json::object body;
                   body["token"] = t;
                   co_await send_json(res, std::move(body));
               });
    routes.add(bhttp::verb::get, "/admin/stats", [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        json::object body = s.stats;
        body["refreshTokens"] = s.refresh_tokens.size();
        co_await send_json(res, std::move(body));
    });

    http::ServerOptions options;
    options.name = "test-auth-server";
    asio::io_context ctx;
    http::Server server(ctx.get_executor(), std::move(routes), options);
    if (auto e = server.listen()) {
        std::fprintf(stderr, "switchboard-test-auth-server: listen: %s\n", e.message().c_str());
        return 1;
    }
    s.issuer = "http://127.0.0.1:" + std::to_string(server.port());
    std::fprintf(stderr, "listening on %s\n", s.issuer.c_str());
    asio::co_spawn(ctx, server.run(), asio::detached);
    ctx.run();
}
