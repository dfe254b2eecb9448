// OAuthAuthorizer: its stored tokens and status, the http::Authorizer side (headers, challenges) and what starts an
// authorization. The steps of one are apart, one concern a file: oauth_discovery, _registration, _grant, _refresh.
#include <switchboard/auth/oauth.hpp>

#include <switchboard/auth/challenge.hpp>
#include <switchboard/auth/dpop.hpp>
#include <switchboard/auth/jwt.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/http/address_policy.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "json_fields.hpp"
#include "oauth_internal.hpp"
#include "unix_time.hpp"

namespace switchboard::auth {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

constexpr std::size_t metadata_limit = 256 * 1024;

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

void add_unique(std::vector<std::string>& v, const std::vector<std::string>& more) {
    for (const auto& s : more)
        if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

/// The value of header `name` in `fields` (empty when absent).
std::string_view field(const http::Fields& fields, std::string_view name) {
    for (const auto& [k, v] : fields)
        if (core::iequals(k, name)) return v;
    return {};
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

// --- an authorization: discovery, a client, a grant (oauth_discovery.cpp, _registration.cpp, _grant.cpp) --------

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

}  // namespace switchboard::auth
