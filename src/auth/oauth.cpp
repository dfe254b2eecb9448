#include <switchboard/auth/oauth.hpp>

#include <switchboard/auth/challenge.hpp>
#include <switchboard/auth/crypto.hpp>
#include <switchboard/auth/dpop.hpp>
#include <switchboard/auth/jwt.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/http/address_policy.hpp>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "json_fields.hpp"
#include "unix_time.hpp"

namespace switchboard::auth {

using detail::num;
using detail::str;

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

constexpr std::int64_t refresh_margin_s = 60;  // refresh this long before expiry
constexpr std::size_t metadata_limit = 256 * 1024;

using detail::now_s;

std::vector<std::string> split_scopes(std::string_view text) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        const auto b = i;
        while (i < text.size() && text[i] != ' ') ++i;
        if (i > b) {
            std::string s(text.substr(b, i - b));
            if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
        }
    }
    return out;
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) {
        if (!out.empty()) out += ' ';
        out += s;
    }
    return out;
}

void add_unique(std::vector<std::string>& v, const std::vector<std::string>& more) {
    for (const auto& s : more)
        if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

/// The authorization server's error in a token or registration response: "invalid_grant: the code expired".
std::string oauth_error(unsigned status, std::string_view body) {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (!ec && v.is_object()) {
        auto e = str(v.get_object(), "error"), d = str(v.get_object(), "error_description");
        if (!e.empty()) return d.empty() ? e : fmt::format("{}: {}", e, core::shorten(d, 200));
    }
    return http::status_text(status, "");
}

/// The query parameters of a redirect URL, decoded.
std::map<std::string, std::string> redirect_params(std::string_view url) {
    std::map<std::string, std::string> out;
    auto u = boost::urls::parse_uri_reference(url);
    if (!u) return out;
    for (auto p : u->params()) out.emplace(std::string(p.key), p.has_value ? std::string(p.value) : std::string());
    return out;
}

/// The value of header `name` in `fields` (empty when absent).
std::string_view field(const http::Fields& fields, std::string_view name) {
    for (const auto& [k, v] : fields)
        if (core::iequals(k, name)) return v;
    return {};
}

/// The metadata of the authorization server `issuer` (RFC 8414 and OpenID discovery, path-insertion variants): the
/// first of its well-known URLs that answers. nullopt with `problem` set when none does or what one serves is not
/// usable (another issuer, no token endpoint).
awaitable<std::optional<ServerMetadata>> fetch_server_metadata(std::shared_ptr<http::Client> http, std::string issuer,
                                                               std::string* problem) {
    std::string error;
    auto issuer_url = http::parse_url(issuer, error);
    if (!issuer_url) {
        *problem = fmt::format("the authorization server \"{}\" is not an http(s) URL", issuer);
        co_return std::nullopt;
    }
    std::vector<std::string> misses;
    for (const auto& url : server_metadata_urls(*issuer_url)) {
        http::Request req;
        req.url = url;
        req.headers.emplace_back("Accept", "application/json");
        auto r = co_await http->request(std::move(req));
        if (!r || r->status != 200) {
            misses.push_back(r ? fmt::format("{}: {}", url, http::status_text(r->status, r->reason))
                               : fmt::format("{}: {}", url, r.error().message));
            continue;
        }
        auto m = parse_server_metadata(url, r->body, issuer, error);
        if (!m) *problem = error;
        co_return m;
    }
    *problem = fmt::format("no metadata for its authorization server {} ({})", issuer, fmt::join(misses, "; "));
    co_return std::nullopt;
}

const char* status_name(OAuthAuthorizer::Status s) {
    switch (s) {
    case OAuthAuthorizer::Status::unknown: return "unknown";
    case OAuthAuthorizer::Status::authorized: return "authorized";
    case OAuthAuthorizer::Status::needs_login: return "needs login";
    case OAuthAuthorizer::Status::failed: return "failed";
    }
    return "?";
}

}  // namespace

std::optional<OAuthSettings::Grant> parse_grant(std::string_view text) {
    if (text == "authorization_code") return OAuthSettings::Grant::authorization_code;
    if (text == "client_credentials") return OAuthSettings::Grant::client_credentials;
    if (text == "jwt_bearer") return OAuthSettings::Grant::jwt_bearer;
    if (text == "enterprise") return OAuthSettings::Grant::enterprise;
    return std::nullopt;
}

std::string_view to_string(OAuthSettings::Grant grant) {
    switch (grant) {
    case OAuthSettings::Grant::authorization_code: return "authorization_code";
    case OAuthSettings::Grant::client_credentials: return "client_credentials";
    case OAuthSettings::Grant::jwt_bearer: return "jwt_bearer";
    case OAuthSettings::Grant::enterprise: return "enterprise";
    }
    return "?";
}

struct OAuthAuthorizer::Flow {
    std::string scope;
    std::string redirect_uri;
};

OAuthAuthorizer::OAuthAuthorizer(asio::any_io_executor ex, std::string server_name, std::string server_url,
                                 OAuthSettings settings, std::shared_ptr<TokenStore> store,
                                 http::ClientOptions http_options)
    : ex_(ex),
      server_name_(std::move(server_name)),
      server_url_(std::move(server_url)),
      settings_(std::move(settings)),
      store_(std::move(store)) {
    std::string error;
    std::string text = server_url_;
    if (text.rfind("ws", 0) == 0) text.replace(0, 2, "http");  // a WebSocket server's resource is its http(s) URL
    url_ = http::parse_url(text, error);
    http_options.server_name = fmt::format("{} (authorization)", server_name_);
    http_options.headers.clear();  // the MCP server's configured headers are not for its authorization server
    http_options.authorizer = nullptr;
    http_options.max_body_size = metadata_limit;
    // Metadata names URLs the server chose: never let it aim us at link-local or cloud metadata addresses.
    http_options.address_filter = [](const asio::ip::address& a) -> std::string {
        auto why = http::special_purpose(a);
        if (why == "link-local" || why == "cloud metadata")
            return fmt::format("{} is a {} address", http::unmapped(a).to_string(), why);
        return {};
    };
    http_ = std::make_shared<http::Client>(ex_, std::move(http_options));
    load_stored();
}

OAuthAuthorizer::~OAuthAuthorizer() { http_->close(); }

void OAuthAuthorizer::load_stored() {
    if (!store_) return;
    store_stamp_ = store_->stamp();
    std::string error;
    auto c = store_->load(server_name_, &error);
    if (!error.empty()) spdlog::warn("server \"{}\": {}", server_name_, error);
    if (!c || c->resource != server_url_) return;  // none, or for another URL of this name
    const bool changed = c->tokens.access_token != creds_.tokens.access_token;
    creds_ = std::move(*c);
    if (changed && !creds_.tokens.access_token.empty()) {
        failed_refresh_for_.clear();
        set_status(Status::authorized);
    }
}

bool OAuthAuthorizer::reload_from_store() {
    if (!store_ || flow_running_ || store_->stamp() == store_stamp_) return false;
    const auto before = creds_.tokens.access_token;
    load_stored();
    return !creds_.tokens.access_token.empty() && creds_.tokens.access_token != before;
}

void OAuthAuthorizer::save() {
    if (!store_) return;
    creds_.resource = server_url_;
    if (auto error = store_->save(server_name_, creds_); !error.empty())
        spdlog::warn("server \"{}\": the token could not be stored: {}", server_name_, error);
    store_stamp_ = store_->stamp();
}

void OAuthAuthorizer::forget_tokens() {
    creds_.tokens = Tokens{};
    status_ = Status::unknown;
    problem_.clear();
}

void OAuthAuthorizer::set_status(Status s) {
    if (s == Status::authorized) problem_.clear();
    const bool changed = s != status_;
    status_ = s;
    if (changed) spdlog::debug("server \"{}\": authorization {}", server_name_, status_name(s));
    if (on_status_) on_status_();
}

bool OAuthAuthorizer::fail(Status status, std::string problem) {
    problem_ = scrub(std::move(problem));
    if (status == Status::failed && user_involved_) failed_at_ = std::chrono::steady_clock::now();
    spdlog::debug("server \"{}\": {}", server_name_, problem_);
    set_status(status);
    return false;
}

std::string OAuthAuthorizer::scrub(std::string text) const {
    for (const auto* secret : {&creds_.tokens.access_token, &creds_.tokens.refresh_token, &creds_.client.client_secret,
                               &settings_.client_secret, &settings_.assertion, &settings_.id_token,
                               &creds_.tokens.dpop_key}) {
        if (secret->size() < 4) continue;
        for (auto pos = text.find(*secret); pos != std::string::npos; pos = text.find(*secret, pos))
            text.replace(pos, secret->size(), "[redacted]");
    }
    return text;
}

// --- the http::Authorizer side ----------------------------------------------------------------------------------

awaitable<http::Fields> OAuthAuthorizer::authorization(boost::beast::http::verb method, const http::Url& url) {
    // A login or refresh made by another process (`switchboard auth login` while serve runs) shows up in the file;
    // looked at once a second at most (a stat per request would cost every call a system call).
    const auto now = std::chrono::steady_clock::now();
    if (store_ && !flow_running_ && now - stamp_checked_ >= std::chrono::seconds(1)) {
        stamp_checked_ = now;
        if (store_->stamp() != store_stamp_) load_stored();
    }
    while (flow_running_) {
        auto done = flow_done_;
        co_await done->wait();
    }
    auto& t = creds_.tokens;
    if (!t.access_token.empty() && !t.refresh_token.empty() && t.expires_at > 0 &&
        t.expires_at - refresh_margin_ <= now_s() && failed_refresh_for_ != t.access_token) {
        flow_running_ = true;
        flow_done_ = std::make_shared<core::OneShotEvent>();
        core::ScopeExit end([this, done = flow_done_] {
            flow_running_ = false;
            done->set();
        });
        const bool ok = co_await refresh();
        if (!ok) spdlog::debug("server \"{}\": refreshing the expiring token failed", server_name_);
    }
    http::Fields out;
    if (t.access_token.empty()) co_return out;
    if (core::iequals(t.token_type, "DPoP")) {
        // A bound token goes nowhere without a proof: with its key lost, the request goes without, and the 401
        // that follows starts a new authorization.
        const Key* key = dpop_key();
        if (!key) {
            // Unusable without its key: forgotten, so that the 401 that follows starts a new authorization.
            t.access_token.clear();
            co_return out;
        }
        out.emplace_back("Authorization", "DPoP " + t.access_token);
        out.emplace_back("DPoP", make_dpop_proof(*key, boost::beast::http::to_string(method), dpop_htu(url),
                                                 t.access_token, rs_nonce_));
        co_return out;
    }
    out.emplace_back("Authorization", fmt::format("{} {}", t.token_type.empty() ? "Bearer" : t.token_type,
                                                  t.access_token));
    co_return out;
}

const Key* OAuthAuthorizer::dpop_key() {
    const auto& pem = creds_.tokens.dpop_key;
    if (pem.empty()) return nullptr;
    if (!dpop_key_ || dpop_key_pem_ != pem) {
        std::string error;
        dpop_key_ = Key::from_pem(pem, error);
        dpop_key_pem_ = pem;
        if (!dpop_key_) spdlog::warn("server \"{}\": the stored DPoP key is unusable: {}", server_name_, error);
    }
    return dpop_key_ ? &*dpop_key_ : nullptr;
}

awaitable<bool> OAuthAuthorizer::challenged(const http::Url&, unsigned status, const http::Fields& headers,
                                            const http::Fields& sent) {
    // RFC 9449 §9: a DPoP server that wants a nonce in the proof says so with a 401 and the nonce. Not a refusal of
    // the token: the same request goes again with a new proof that carries it (unless it carried it already).
    if (status == 401 && !field(sent, "DPoP").empty()) {
        const auto nonce = std::string(field(headers, "DPoP-Nonce"));
        bool wants_nonce = false;
        for (const auto& [k, v] : headers)
            if (core::iequals(k, "WWW-Authenticate"))
                for (const auto& c : parse_challenges(v))
                    wants_nonce = wants_nonce || (c.scheme == "dpop" && c.param("error") == "use_dpop_nonce");
        if (wants_nonce) {
            std::string error;
            auto proof = decode_jwt(field(sent, "DPoP"), error);
            const auto sent_nonce = proof ? str(proof->claims, "nonce") : std::string();
            if (nonce.empty() || nonce == sent_nonce) co_return false;
            rs_nonce_ = nonce;
            co_return true;
        }
    }
    const auto seen = flows_;
    while (flow_running_) {
        auto done = flow_done_;
        co_await done->wait();
    }
    // A flow ended while this request waited and got no token: one failed login is reported once, not retried
    // by every request that was refused meanwhile.
    if (flows_ != seen && status_ != Status::authorized) co_return false;
    // Nor is a login the user took part in, that just failed, started again by the next request (an era probe's
    // fallback, a retry): the user would be asked twice.
    if (status_ == Status::failed && std::chrono::steady_clock::now() - failed_at_ < std::chrono::seconds(10))
        co_return false;
    // Another request's flow got a token meanwhile: try that one first.
    const auto& t = creds_.tokens;
    if (!t.access_token.empty() && field(sent, "Authorization").find(t.access_token) == std::string_view::npos)
        co_return true;
    std::vector<std::string> challenges;
    for (const auto& [k, v] : headers)
        if (core::iequals(k, "WWW-Authenticate")) challenges.push_back(v);
    flow_running_ = true;
    flow_done_ = std::make_shared<core::OneShotEvent>();
    core::ScopeExit end([this, done = flow_done_] {
        flow_running_ = false;
        done->set();
    });
    const bool ok = co_await run_challenge(status, std::move(challenges));
    ++flows_;
    co_return ok;
}

awaitable<bool> OAuthAuthorizer::run_challenge(unsigned status, std::vector<std::string> challenges) {
    const auto ch = read_bearer_challenge(challenges);
    if (status == 401) {
        rs_offers_dpop_ = rs_offers_bearer_ = false;
        for (const auto& value : challenges)
            for (const auto& c : parse_challenges(value)) {
                rs_offers_dpop_ = rs_offers_dpop_ || c.scheme == "dpop";
                rs_offers_bearer_ = rs_offers_bearer_ || c.scheme == "bearer";
            }
    }
    if (status == 403) {
        if (ch.error != "insufficient_scope") co_return false;
        // Re-authorizing only helps when the server asks for scopes we do not hold; when it keeps asking for
        // what we have, try twice at most (the server may have granted less than it said), then give up.
        const auto held = split_scopes(creds_.tokens.scope);
        bool news = false;
        for (const auto& s : split_scopes(ch.scope)) news = news || !contains(held, s);
        if (news) {
            step_ups_ = 0;
        } else if (++step_ups_ > 2) {
            co_return fail(Status::failed,
                           fmt::format("server \"{}\" keeps refusing the token for insufficient scope (it asks for "
                                       "\"{}\", which was granted)",
                                       server_name_, ch.scope));
        }
        const bool ok = co_await authorize(ch.scope, ch.resource_metadata, true);
        co_return ok;
    }
    // 401: a refresh first, when there is something to refresh.
    if (!creds_.tokens.refresh_token.empty() && failed_refresh_for_ != creds_.tokens.access_token) {
        const bool refreshed = co_await refresh();
        if (refreshed) co_return true;
    }
    // The server refused the token we sent (or we sent none): it is not sent again.
    creds_.tokens.access_token.clear();
    step_ups_ = 0;
    const bool ok = co_await authorize(ch.scope, ch.resource_metadata, false);
    co_return ok;
}

// --- discovery --------------------------------------------------------------------------------------------------

awaitable<bool> OAuthAuthorizer::discover(const std::string& metadata_url) {
    if (!url_) co_return fail(Status::failed, fmt::format("server \"{}\": not an http(s) URL", server_name_));
    resource_.reset();
    std::vector<std::string> tried;
    for (const auto& url : resource_metadata_urls(*url_, metadata_url)) {
        http::Request req;
        req.url = url;
        req.headers.emplace_back("Accept", "application/json");
        auto r = co_await http_->request(std::move(req));
        if (!r) {
            tried.push_back(fmt::format("{}: {}", url, r.error().message));
            continue;
        }
        if (r->status != 200) {
            tried.push_back(fmt::format("{}: {}", url, http::status_text(r->status, r->reason)));
            continue;
        }
        std::string error;
        auto m = parse_resource_metadata(url, r->body, error);
        if (!m) co_return fail(Status::failed, fmt::format("server \"{}\": {}", server_name_, error));
        resource_ = std::move(*m);
        break;
    }

    std::optional<ServerMetadata> found;
    if (resource_) {
        if (resource_->resource.empty()) {
            resource_->resource = canonical_resource(*url_);
        } else if (!resource_covers(resource_->resource, *url_)) {
            co_return fail(Status::failed,
                           fmt::format("server \"{}\": its resource metadata ({}) is for \"{}\", not for {} "
                                       "(refused: a token for another resource must not be requested)",
                                       server_name_, resource_->url, resource_->resource, server_url_));
        }
        resource_id_ = resource_->resource;
        std::string problem;
        found = co_await fetch_server_metadata(http_, resource_->authorization_servers.front(), &problem);
        if (!found) co_return fail(Status::failed, fmt::format("server \"{}\": {}", server_name_, problem));
    } else {
        // A 2025-03-26 server: no resource metadata; its origin is the authorization server.
        resource_id_ = canonical_resource(*url_);
        const auto url = url_->origin() + "/.well-known/oauth-authorization-server";
        http::Request req;
        req.url = url;
        req.headers.emplace_back("Accept", "application/json");
        auto r = co_await http_->request(std::move(req));
        if (r && r->status == 200) {
            std::string error;
            // Servers of that era put their issuer anywhere under the origin: it is not compared here.
            auto m = parse_server_metadata(url, r->body, "", error);
            if (!m) co_return fail(Status::failed, fmt::format("server \"{}\": {}", server_name_, error));
            found = std::move(*m);
        } else {
            found = default_endpoints(*url_);
        }
        spdlog::debug("server \"{}\": no resource metadata ({}); authorization server {}", server_name_,
                      fmt::join(tried, "; "), found->issuer);
    }
    server_ = std::move(found);
    co_return true;
}

// --- the flows --------------------------------------------------------------------------------------------------

std::string OAuthAuthorizer::choose_scope(const std::string& challenge_scope, bool step_up) const {
    std::vector<std::string> scopes;
    if (step_up) {
        scopes = split_scopes(creds_.tokens.scope);  // what we hold, plus what the server asks for
        add_unique(scopes, split_scopes(challenge_scope));
    } else if (!challenge_scope.empty()) {
        scopes = split_scopes(challenge_scope);
    } else if (resource_ && !resource_->scopes_supported.empty()) {
        scopes = resource_->scopes_supported;
    } else {
        scopes = settings_.scopes;
    }
    // A refresh token, when the authorization server offers one through this scope (SEP-2207); never otherwise.
    if (settings_.grant == OAuthSettings::Grant::authorization_code && server_ &&
        server_->supports_scope("offline_access"))
        add_unique(scopes, {"offline_access"});
    return join(scopes);
}

bool OAuthAuthorizer::choose_dpop(std::string& problem) {
    using Dpop = OAuthSettings::Dpop;
    flow_dpop_key_.clear();
    const auto& as_algs = server_->dpop_signing_alg_values_supported;
    const bool rs_takes = rs_offers_dpop_ || (resource_ && (!resource_->dpop_signing_alg_values_supported.empty() ||
                                                            resource_->dpop_bound_access_tokens_required));
    const bool rs_requires = (resource_ && resource_->dpop_bound_access_tokens_required) ||
                             (rs_offers_dpop_ && !rs_offers_bearer_);
    // ES256 unless the authorization server names only algorithms without it.
    const std::string alg = as_algs.empty() || contains(as_algs, "ES256") ? "ES256"
                            : contains(as_algs, "RS256")                  ? "RS256"
                                                                          : "";
    const bool required = settings_.dpop == Dpop::always || (settings_.dpop == Dpop::automatic && rs_requires);
    const bool wanted = required || (settings_.dpop == Dpop::automatic && !as_algs.empty() && rs_takes);
    if (!wanted) return true;
    if (alg.empty()) {
        const auto why = fmt::format("its authorization server {} signs DPoP proofs with {} only (Switchboard: "
                                     "ES256, RS256)",
                                     server_->issuer, fmt::join(as_algs, ", "));
        if (!required) {
            spdlog::debug("server \"{}\": no DPoP: {}", server_name_, why);  // Bearer, then
            return true;
        }
        problem = fmt::format("server \"{}\": DPoP is {}, but {}", server_name_,
                              settings_.dpop == Dpop::always ? "configured (oauth.dpop)" : "required", why);
        return false;
    }
    // One key per login; a step-up keeps the key the current tokens are bound to.
    const Key* key = dpop_key();
    if (key && key->alg() == alg && !creds_.tokens.access_token.empty()) {
        flow_dpop_key_ = creds_.tokens.dpop_key;
    } else {
        flow_dpop_key_ = Key::generate(alg, "").private_pem();
        spdlog::debug("server \"{}\": DPoP with a new {} key", server_name_, alg);
    }
    return true;
}

awaitable<bool> OAuthAuthorizer::authorize(std::string challenge_scope, std::string metadata_url, bool step_up) {
    const bool found = co_await discover(metadata_url);
    if (!found) co_return false;
    if (!creds_.issuer.empty() && creds_.issuer != server_->issuer) {
        // Another authorization server now: nothing of the old one (client, tokens) may be shown to it.
        spdlog::info("server \"{}\": its authorization server changed from {} to {}; registering again", server_name_,
                     creds_.issuer, server_->issuer);
        creds_.client = ClientIdentity{};
        creds_.tokens = Tokens{};
    }
    creds_.issuer = server_->issuer;
    std::string problem;
    if (!choose_dpop(problem)) co_return fail(Status::failed, std::move(problem));
    Flow flow;
    flow.scope = choose_scope(challenge_scope, step_up);
    if (settings_.grant == OAuthSettings::Grant::authorization_code) {
        const bool ok = co_await code_grant(flow);
        co_return ok;
    }
    const bool ok = co_await direct_grant(flow);
    co_return ok;
}

awaitable<bool> OAuthAuthorizer::obtain_client(Flow& flow) {
    const auto& issuer = server_->issuer;
    if (!settings_.client_id.empty()) {
        creds_.client = ClientIdentity{};
        creds_.client.issuer = issuer;
        creds_.client.client_id = settings_.client_id;
        creds_.client.client_secret = settings_.client_secret;
        creds_.client.auth_method = settings_.auth_method;
        creds_.client.redirect_uri = flow.redirect_uri;
        co_return true;
    }
    if (server_->client_id_metadata_document_supported && !settings_.client_metadata_url.empty()) {
        creds_.client = ClientIdentity{};
        creds_.client.issuer = issuer;
        creds_.client.client_id = settings_.client_metadata_url;
        creds_.client.auth_method = "none";
        creds_.client.redirect_uri = flow.redirect_uri;
        co_return true;
    }
    const auto& c = creds_.client;
    const bool secret_valid = c.client_secret_expires_at == 0 || c.client_secret_expires_at > now_s() + 60;
    if (!c.client_id.empty() && c.dynamic && c.issuer == issuer && c.redirect_uri == flow.redirect_uri && secret_valid)
        co_return true;  // registered last time
    if (server_->registration_endpoint.empty())
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": its authorization server {} offers no client registration; set "
                                   "\"oauth\": {{\"clientId\": ...}} to a client registered there",
                                   server_name_, issuer));

    const auto& methods = server_->token_endpoint_auth_methods_supported;
    std::string method = "none";
    if (!methods.empty() && !contains(methods, "none")) {
        method = contains(methods, "client_secret_basic")  ? "client_secret_basic"
                 : contains(methods, "client_secret_post") ? "client_secret_post"
                                                           : methods.front();
    }
    json::object body;
    body["client_name"] = settings_.client_name;
    body["redirect_uris"] = json::array{json::value(flow.redirect_uri)};
    body["grant_types"] = json::array{"authorization_code", "refresh_token"};
    body["response_types"] = json::array{"code"};
    body["token_endpoint_auth_method"] = method;
    body["application_type"] = "native";
    if (!settings_.scopes.empty()) body["scope"] = join(settings_.scopes);
    http::Request req;
    req.method = boost::beast::http::verb::post;
    req.url = server_->registration_endpoint;
    req.headers.emplace_back("Content-Type", "application/json");
    req.headers.emplace_back("Accept", "application/json");
    req.body = json::serialize(body);
    auto r = co_await http_->request(std::move(req));
    if (!r)
        co_return fail(Status::failed, fmt::format("server \"{}\": client registration at {} failed: {}", server_name_,
                                                   server_->registration_endpoint, r.error().message));
    boost::system::error_code ec;
    auto doc = json::parse(r->body, ec);
    if (r->status / 100 != 2 || ec || !doc.is_object() || str(doc.get_object(), "client_id").empty())
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": client registration at {} was refused: {}", server_name_,
                                   server_->registration_endpoint, oauth_error(r->status, r->body)));
    const auto& o = doc.get_object();
    creds_.client = ClientIdentity{};
    creds_.client.issuer = issuer;
    creds_.client.client_id = str(o, "client_id");
    creds_.client.client_secret = str(o, "client_secret");
    creds_.client.client_secret_expires_at = num(o, "client_secret_expires_at");
    creds_.client.auth_method = str(o, "token_endpoint_auth_method");
    if (creds_.client.auth_method.empty())
        creds_.client.auth_method = creds_.client.client_secret.empty() ? "none" : method == "none" ? "" : method;
    creds_.client.redirect_uri = flow.redirect_uri;
    creds_.client.dynamic = true;
    spdlog::debug("server \"{}\": registered as client {} at {}", server_name_, creds_.client.client_id, issuer);
    co_return true;
}

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
    http::Request req;
    req.method = boost::beast::http::verb::post;
    req.url = settings_.idp_token_endpoint;
    req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    req.headers.emplace_back("Accept", "application/json");
    req.body = std::move(exchange);
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
        http::Request req;
        req.method = boost::beast::http::verb::post;
        req.url = server_->token_endpoint;
        req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
        req.headers.emplace_back("Accept", "application/json");
        std::string body = form;
        add_client_auth(body, req.headers);
        req.body = std::move(body);
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

awaitable<std::string> OAuthAuthorizer::revoke() {
    const auto tokens = creds_.tokens;
    if (tokens.access_token.empty() && tokens.refresh_token.empty())
        co_return "no tokens for this server's URL are stored";
    if (creds_.issuer.empty()) co_return "the authorization server is not known";
    if (!server_ || server_->issuer != creds_.issuer) {
        // The issuer that issued them, read from its metadata: the MCP server is not asked.
        std::string problem;
        auto m = co_await fetch_server_metadata(http_, creds_.issuer, &problem);
        if (!m) co_return problem;
        server_ = std::move(*m);
    }
    const auto endpoint = str(server_->raw, "revocation_endpoint");
    if (endpoint.empty()) co_return fmt::format("{} offers no token revocation", creds_.issuer);
    std::vector<std::string> problems;
    std::vector<std::pair<std::string, std::string>> todo;  // (not a braced list: GCC 12 and coroutines)
    todo.emplace_back(tokens.refresh_token, "refresh_token");
    todo.emplace_back(tokens.access_token, "access_token");
    for (const auto& [token, hint] : todo) {
        if (token.empty()) continue;
        http::Request req;
        req.method = boost::beast::http::verb::post;
        req.url = endpoint;
        req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
        std::string form = form_body({{"token", token}, {"token_type_hint", hint}});
        add_client_auth(form, req.headers);
        req.body = std::move(form);
        auto r = co_await http_->request(std::move(req));
        // RFC 7009 §2.2: 200 also for a token that was invalid already.
        if (!r)
            problems.push_back(scrub(r.error().message));
        else if (r->status != 200)
            problems.push_back(fmt::format("the {} was refused: {}", hint, oauth_error(r->status, r->body)));
    }
    if (!problems.empty()) co_return fmt::format("revocation at {}: {}", endpoint, fmt::join(problems, "; "));
    co_return std::string();
}

awaitable<bool> OAuthAuthorizer::refresh() {
    if (creds_.tokens.refresh_token.empty()) co_return false;
    if (!server_) {
        const bool found = co_await discover("");
        if (!found) co_return false;
    }
    if (!creds_.issuer.empty() && creds_.issuer != server_->issuer) co_return false;  // another server now
    std::string form = form_body(
        {{"grant_type", "refresh_token"}, {"refresh_token", creds_.tokens.refresh_token}, {"resource", resource_id_}});
    flow_dpop_key_ = creds_.tokens.dpop_key;  // a refresh token issued with a proof is bound to the same key
    const auto old = creds_.tokens.access_token;
    const bool ok = co_await token_request(std::move(form), "the refresh token");
    if (!ok && store_ && store_->stamp() != store_stamp_) {
        // Another process (another command, a serve) refreshed first and rotated the refresh token: its result
        // is in the store.
        load_stored();
        if (!creds_.tokens.access_token.empty() && creds_.tokens.access_token != old) {
            set_status(Status::authorized);
            co_return true;
        }
    }
    if (!ok) {
        // Revoked or expired: forget it; the next challenge authorizes anew (or asks for a login).
        failed_refresh_for_ = old;
        creds_.tokens.refresh_token.clear();
        save();
    }
    co_return ok;
}

}  // namespace switchboard::auth
