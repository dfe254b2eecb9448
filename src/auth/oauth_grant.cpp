// The grants (authorization code with PKCE, JWT bearer, client credentials, enterprise) and the token request each
// ends in: client authentication, DPoP proofs, the tokens kept.
#include <switchboard/auth/oauth.hpp>

#include <switchboard/auth/crypto.hpp>
#include <switchboard/auth/dpop.hpp>
#include <switchboard/auth/jwt.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/text.hpp>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "json_fields.hpp"
#include "oauth_internal.hpp"
#include "unix_time.hpp"

namespace switchboard::auth {

namespace json = boost::json;
using boost::asio::awaitable;

namespace {

constexpr std::int64_t refresh_margin_s = 60;  // refresh this long before expiry

/// The query parameters of a redirect URL, decoded.
std::map<std::string, std::string> redirect_params(std::string_view url) {
    std::map<std::string, std::string> out;
    auto u = boost::urls::parse_uri_reference(url);
    if (!u) return out;
    for (auto p : u->params()) out.emplace(std::string(p.key), p.has_value ? std::string(p.value) : std::string());
    return out;
}

}  // namespace

namespace detail {

std::string oauth_error(unsigned status, std::string_view body) {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (!ec && v.is_object()) {
        auto e = str(v.get_object(), "error"), d = str(v.get_object(), "error_description");
        if (!e.empty()) return d.empty() ? e : fmt::format("{}: {}", e, core::shorten(d, 200));
    }
    return http::status_text(status, "");
}

}  // namespace detail

awaitable<bool> OAuthAuthorizer::code_grant(Flow& flow) {
    if (!user_agent_)
        co_return fail(Status::needs_login, fmt::format("server \"{}\" needs a login: run `switchboard auth login {}`",
                                                        server_name_, server_name_));
    if (!contains(server_->code_challenge_methods_supported, "S256"))
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": its authorization server {} does not advertise PKCE with S256 "
                                   "(code_challenge_methods_supported); refused",
                                   server_name_, server_->issuer));
    if (server_->authorization_endpoint.empty())
        co_return fail(Status::failed, fmt::format("server \"{}\": its authorization server {} has no "
                                                   "authorization_endpoint",
                                                   server_name_, server_->issuer));
    auto agent = user_agent_;  // kept alive through the flow
    const auto prepared = co_await agent->prepare();
    if (!prepared.empty()) co_return fail(Status::failed, fmt::format("server \"{}\": {}", server_name_, prepared));
    flow.redirect_uri = agent->redirect_uri();
    const bool have_client = co_await obtain_client(flow);
    if (!have_client) co_return false;

    const auto pkce = make_pkce();
    const auto state = random_token(16);
    auto parsed = boost::urls::parse_uri(server_->authorization_endpoint);
    if (!parsed)
        co_return fail(Status::failed, fmt::format("server \"{}\": bad authorization_endpoint \"{}\"", server_name_,
                                                   server_->authorization_endpoint));
    boost::urls::url auth_url(*parsed);
    auto params = auth_url.params();
    params.append({"response_type", "code"});
    params.append({"client_id", creds_.client.client_id});
    params.append({"redirect_uri", flow.redirect_uri});
    params.append({"code_challenge", pkce.challenge});
    params.append({"code_challenge_method", "S256"});
    params.append({"state", state});
    params.append({"resource", resource_id_});
    if (!flow.scope.empty()) params.append({"scope", flow.scope});

    user_involved_ = true;
    core::ScopeExit user_done([this] { user_involved_ = false; });
    auto redirect = co_await agent->authorize(std::string(auth_url.buffer()));
    if (!redirect)
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": the login did not complete: {}", server_name_, redirect.error()));
    auto q = redirect_params(*redirect);
    if (auto e = q.find("error"); e != q.end()) {
        auto d = q.find("error_description");
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": the authorization server refused: {}{}{}", server_name_, e->second,
                                   d != q.end() ? ": " : "", d != q.end() ? core::shorten(d->second, 200) : ""));
    }
    if (q["state"] != state)
        co_return fail(Status::failed, fmt::format("server \"{}\": the redirect's state does not match the request "
                                                   "(refused)",
                                                   server_name_));
    // RFC 9207: the issuer in the redirect must be the one we asked, compared as strings. Required when the server
    // advertises it, compared whenever present (a mix-up attack otherwise goes unnoticed).
    if (auto iss = q.find("iss"); iss != q.end()) {
        if (iss->second != server_->issuer)
            co_return fail(Status::failed,
                           fmt::format("server \"{}\": the authorization response came from issuer \"{}\", not \"{}\" "
                                       "(refused: RFC 9207 mix-up protection)",
                                       server_name_, iss->second, server_->issuer));
    } else if (server_->authorization_response_iss_parameter_supported) {
        co_return fail(Status::failed, fmt::format("server \"{}\": the authorization response has no iss parameter "
                                                   "although {} advertises it (refused: RFC 9207)",
                                                   server_name_, server_->issuer));
    }
    const auto code = q["code"];
    if (code.empty())
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": the redirect carries no authorization code", server_name_));
    creds_.tokens.scope = flow.scope;  // until the token response says otherwise
    std::string form = form_body({{"grant_type", "authorization_code"},
                                  {"code", code},
                                  {"redirect_uri", flow.redirect_uri},
                                  {"code_verifier", pkce.verifier},
                                  {"resource", resource_id_}});
    const bool ok = co_await token_request(std::move(form), "the authorization code");
    co_return ok;
}

awaitable<bool> OAuthAuthorizer::direct_grant(Flow& flow) {
    if (settings_.grant == OAuthSettings::Grant::jwt_bearer) {
        if (settings_.assertion.empty())
            co_return fail(Status::failed, fmt::format("server \"{}\": oauth.grant is jwt_bearer but no assertion is "
                                                       "configured",
                                                       server_name_));
        if (status_ == Status::failed && !problem_.empty()) co_return false;  // a refused assertion is not resent
        std::string form = form_body(
            {{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, {"assertion", settings_.assertion}});
        if (!flow.scope.empty()) form += "&scope=" + form_encode(flow.scope);
        form += "&resource=" + form_encode(resource_id_);
        if (!settings_.client_id.empty()) form += "&client_id=" + form_encode(settings_.client_id);
        creds_.client = ClientIdentity{};
        creds_.client.issuer = server_->issuer;
        creds_.client.auth_method = "none";
        creds_.tokens.scope = flow.scope;
        const bool ok = co_await token_request(std::move(form), "the workload assertion");
        co_return ok;
    }
    if (settings_.grant == OAuthSettings::Grant::enterprise) {
        const bool ok = co_await enterprise_grant(flow);
        co_return ok;
    }
    // client_credentials: a confidential client, pre-registered.
    if (settings_.client_id.empty())
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": oauth.grant client_credentials needs oauth.clientId", server_name_));
    const bool have_client = co_await obtain_client(flow);
    if (!have_client) co_return false;
    std::string form = form_body({{"grant_type", "client_credentials"}});
    if (!flow.scope.empty()) form += "&scope=" + form_encode(flow.scope);
    form += "&resource=" + form_encode(resource_id_);
    creds_.tokens.scope = flow.scope;
    const bool ok = co_await token_request(std::move(form), "the client credentials");
    co_return ok;
}

awaitable<bool> OAuthAuthorizer::enterprise_grant(Flow& flow) {
    if (settings_.client_id.empty() || settings_.idp_token_endpoint.empty() || settings_.id_token.empty())
        co_return fail(Status::failed, fmt::format("server \"{}\": oauth.grant enterprise needs clientId, "
                                                   "idpTokenEndpoint and idToken",
                                                   server_name_));
    // 1. At the identity provider: the ID token for an ID-JAG meant for this authorization server and resource.
    std::string exchange = form_body({{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                                      {"requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"},
                                      {"subject_token", settings_.id_token},
                                      {"subject_token_type", "urn:ietf:params:oauth:token-type:id_token"},
                                      {"audience", server_->issuer},
                                      {"resource", resource_id_}});
    if (!flow.scope.empty()) exchange += "&scope=" + form_encode(flow.scope);
    if (!settings_.idp_client_id.empty()) exchange += "&client_id=" + form_encode(settings_.idp_client_id);
    auto req = json_post(settings_.idp_token_endpoint, "application/x-www-form-urlencoded", std::move(exchange));
    auto r = co_await http_->request(std::move(req));
    if (!r)
        co_return fail(Status::failed, fmt::format("server \"{}\": the token exchange at {} failed: {}", server_name_,
                                                   settings_.idp_token_endpoint, r.error().message));
    boost::system::error_code ec;
    auto doc = json::parse(r->body, ec);
    const auto jag = !ec && doc.is_object() ? str(doc.get_object(), "access_token") : std::string();
    if (r->status != 200 || jag.empty())
        co_return fail(Status::failed, fmt::format("server \"{}\": the identity provider refused the token exchange: "
                                                   "{}",
                                                   server_name_, oauth_error(r->status, r->body)));
    // 2. At the authorization server: the ID-JAG as a JWT bearer grant, from the pre-registered client.
    const bool have_client = co_await obtain_client(flow);
    if (!have_client) co_return false;
    std::string form = form_body({{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, {"assertion", jag}});
    if (!flow.scope.empty()) form += "&scope=" + form_encode(flow.scope);
    creds_.tokens.scope = flow.scope;
    const bool ok = co_await token_request(std::move(form), "the identity assertion grant");
    co_return ok;
}

void OAuthAuthorizer::add_client_auth(std::string& form, http::Fields& headers) const {
    const auto& c = creds_.client;
    if (settings_.grant == OAuthSettings::Grant::jwt_bearer) return;  // the assertion authenticates
    if (!settings_.private_key_pem.empty()) {
        // private_key_jwt (RFC 7523 §2.2): an assertion signed with our key, for the issuer as audience.
        std::string error;
        auto key = Key::from_pem(settings_.private_key_pem, error);
        if (key) {
            json::object claims;
            const auto now = now_s();
            claims["iss"] = c.client_id;
            claims["sub"] = c.client_id;
            claims["aud"] = server_->issuer;
            claims["iat"] = now;
            claims["exp"] = now + 300;
            claims["jti"] = random_token(16);
            form += "&client_id=" + form_encode(c.client_id);
            form += "&client_assertion_type=" + form_encode("urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
            form += "&client_assertion=" + form_encode(sign_jwt(*key, claims));
            return;
        }
        spdlog::warn("server \"{}\": oauth.privateKey: {}", server_name_, error);
    }
    std::string method = c.auth_method;
    if (method.empty()) {
        const auto& methods = server_->token_endpoint_auth_methods_supported;
        if (c.client_secret.empty())
            method = "none";
        else if (methods.empty() || contains(methods, "client_secret_basic"))
            method = "client_secret_basic";  // RFC 8414's default
        else if (contains(methods, "client_secret_post"))
            method = "client_secret_post";
        else
            method = "client_secret_basic";
    }
    if (method == "client_secret_basic" && !c.client_secret.empty()) {
        headers.emplace_back("Authorization",
                             "Basic " + base64_encode(form_encode(c.client_id) + ":" + form_encode(c.client_secret)));
    } else if (method == "client_secret_post" && !c.client_secret.empty()) {
        form += "&client_id=" + form_encode(c.client_id) + "&client_secret=" + form_encode(c.client_secret);
    } else {
        form += "&client_id=" + form_encode(c.client_id);
    }
}

awaitable<bool> OAuthAuthorizer::token_request(std::string form, const std::string& what) {
    std::optional<Key> flow_key;
    if (!flow_dpop_key_.empty()) {
        std::string error;
        flow_key = Key::from_pem(flow_dpop_key_, error);
        if (!flow_key)
            co_return fail(Status::failed, fmt::format("server \"{}\": the DPoP key is unusable: {}", server_name_,
                                                       error));
    }
    const Key* key = flow_key ? &*flow_key : nullptr;
    std::string htu;
    if (key) {
        std::string error;
        auto u = http::parse_url(server_->token_endpoint, error);
        if (u) htu = dpop_htu(*u);
    }
    http::Result<http::Response> r(boost::system::in_place_error, http::Failure{});
    for (int attempt = 1;; ++attempt) {
        auto req = json_post(server_->token_endpoint, "application/x-www-form-urlencoded", form);
        add_client_auth(req.body, req.headers);
        if (key) req.headers.emplace_back("DPoP", make_dpop_proof(*key, "POST", htu, "", as_nonce_));
        r = co_await http_->request(std::move(req));
        if (!r || !key) break;
        if (auto nonce = r->header("DPoP-Nonce"); !nonce.empty()) {
            // RFC 9449 §8: a nonce the authorization server wants in proofs. A 400 use_dpop_nonce is answered by
            // the same request with it, once; a nonce given with any answer is used from then on.
            const bool again = r->status == 400 && nonce != as_nonce_ && attempt == 1 &&
                               oauth_error(r->status, r->body).rfind("use_dpop_nonce", 0) == 0;
            as_nonce_ = std::string(nonce);
            if (again) continue;
        }
        break;
    }
    if (!r)
        co_return fail(Status::failed, fmt::format("server \"{}\": the token request to {} failed: {}", server_name_,
                                                   server_->token_endpoint, r.error().message));
    boost::system::error_code ec;
    auto doc = json::parse(r->body, ec);
    const json::object* o = !ec && doc.is_object() ? &doc.get_object() : nullptr;
    if (r->status != 200 || !o || str(*o, "access_token").empty())
        co_return fail(Status::failed, fmt::format("server \"{}\": the authorization server refused {}: {}",
                                                   server_name_, what, oauth_error(r->status, r->body)));
    auto type = str(*o, "token_type");
    auto& t = creds_.tokens;
    if (core::iequals(type, "bearer") || type.empty()) {
        type = "Bearer";
        // An authorization server that ignored the proof issued a plain token: no key to keep, unless one was
        // demanded.
        if (key && settings_.dpop == OAuthSettings::Dpop::always)
            co_return fail(Status::failed, fmt::format("server \"{}\": the authorization server issued a Bearer token "
                                                       "although oauth.dpop is true (refused)",
                                                       server_name_));
        t.dpop_key.clear();
    } else if (core::iequals(type, "DPoP") && key) {
        type = "DPoP";
        t.dpop_key = flow_dpop_key_;  // the key becomes the tokens' with the tokens
    } else {
        co_return fail(Status::failed, fmt::format("server \"{}\": the authorization server issued a \"{}\" token{}",
                                                   server_name_, type,
                                                   key ? "" : " without being sent a DPoP proof (refused)"));
    }
    t.access_token = str(*o, "access_token");
    t.token_type = type;
    if (auto rt = str(*o, "refresh_token"); !rt.empty()) t.refresh_token = std::move(rt);
    if (auto sc = str(*o, "scope"); !sc.empty()) t.scope = std::move(sc);
    // Bounded (ten years): the server's number must not overflow the sum below.
    const auto expires_in = std::min<std::int64_t>(num(*o, "expires_in"), 10LL * 365 * 24 * 3600);
    t.expires_at = expires_in > 0 ? now_s() + expires_in : 0;
    // Refreshed a minute before expiry, or at the last quarter of a short-lived token's life.
    refresh_margin_ = expires_in > 0 ? std::min<std::int64_t>(refresh_margin_s, expires_in / 4) : refresh_margin_s;
    failed_refresh_for_.clear();
    save();
    spdlog::log(what == "the refresh token" ? spdlog::level::debug : spdlog::level::info,
                "server \"{}\": authorized by {}{}", server_name_, server_->issuer,
                t.scope.empty() ? std::string() : fmt::format(" (scope \"{}\")", t.scope));
    set_status(Status::authorized);
    co_return true;
}

}  // namespace switchboard::auth
