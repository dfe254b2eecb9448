#include <switchboard/auth/resource_server.hpp>

#include <switchboard/auth/challenge.hpp>
#include <switchboard/auth/metadata.hpp>
#include <switchboard/core/json_number.hpp>
#include <switchboard/core/text.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "unix_time.hpp"

namespace switchboard::auth {

namespace asio = boost::asio;
namespace json = boost::json;
namespace bhttp = boost::beast::http;
using asio::awaitable;

namespace {

constexpr std::int64_t proof_window_s = 300;  // a DPoP proof's iat may be this far from now (RFC 9449 §11.1)
constexpr std::chrono::seconds refetch_interval{2};  // an unknown kid fetches the JWKS again, this often at most

using detail::now_s;

std::optional<std::int64_t> number_claim(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return std::nullopt;
    return core::json_integer(*v);
}

std::string quoted_param(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

/// The token's scopes: `scope` (space-separated, RFC 9068) or `scp` (an array or a string, as some servers send).
std::vector<std::string> token_scopes(const json::object& claims) {
    std::vector<std::string> out;
    auto words = [&](std::string_view s) {
        std::size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && s[i] == ' ') ++i;
            auto b = i;
            while (i < s.size() && s[i] != ' ') ++i;
            if (i > b) out.emplace_back(s.substr(b, i - b));
        }
    };
    for (auto key : {"scope", "scp"}) {
        const auto* v = claims.if_contains(key);
        if (!v) continue;
        if (v->is_string()) words(v->get_string());
        if (v->is_array())
            for (const auto& e : v->get_array())
                if (e.is_string()) out.emplace_back(e.get_string());
    }
    return out;
}

}  // namespace

std::string parse_scope_map(const json::object& gateway, std::map<std::string, std::vector<std::string>>& out) {
    const auto* scopes = gateway.if_contains("scopes");
    if (!scopes) return {};
    if (!scopes->is_object()) return "\"gateway.scopes\" must be an object of scope -> array of tool name globs";
    for (const auto& [scope, globs] : scopes->get_object()) {
        if (!globs.is_array()) return fmt::format("\"gateway.scopes.{}\" must be an array of tool name globs", scope);
        auto& list = out[std::string(scope)];
        for (const auto& g : globs.get_array()) {
            if (!g.is_string()) return fmt::format("\"gateway.scopes.{}\" must hold strings", scope);
            list.emplace_back(g.get_string());
        }
    }
    return {};
}

JwtVerifier::JwtVerifier(asio::any_io_executor ex, ResourceServerSettings settings)
    : ex_(ex), settings_(std::move(settings)) {
    http::ClientOptions o;
    o.server_name = "authorization server";
    o.ca_file = settings_.ca_file;
    o.max_body_size = 1024 * 1024;
    o.connect_timeout = std::chrono::seconds(5);
    o.read_timeout = std::chrono::seconds(10);
    http_ = std::make_shared<http::Client>(ex_, std::move(o));
}

JwtVerifier::~JwtVerifier() { http_->close(); }

std::string JwtVerifier::metadata_path() const {
    std::string error;
    auto u = http::parse_url(settings_.audience, error);
    std::string path = u ? u->target.substr(0, u->target.find('?')) : std::string();
    while (!path.empty() && path.back() == '/') path.pop_back();
    return "/.well-known/oauth-protected-resource" + path;
}

std::string JwtVerifier::metadata_url() const {
    std::string error;
    auto u = http::parse_url(settings_.audience, error);
    return (u ? u->origin() : std::string()) + metadata_path();
}

json::object JwtVerifier::resource_metadata() const {
    json::object o;
    o["resource"] = settings_.audience;
    o["authorization_servers"] = json::array{json::value(settings_.issuer)};
    json::array scopes;
    for (const auto& [s, _] : settings_.scopes) scopes.emplace_back(s);
    if (!scopes.empty()) o["scopes_supported"] = std::move(scopes);
    o["bearer_methods_supported"] = json::array{"header"};
    o["dpop_signing_alg_values_supported"] = json::array{"ES256", "RS256"};
    o["resource_name"] = "Switchboard gateway";
    return o;
}

http::TokenVerdict JwtVerifier::refuse(std::string error, std::string description) const {
    http::TokenVerdict v;
    v.allowed = false;
    v.status = bhttp::status::unauthorized;
    v.message = fmt::format("Unauthorized: {}", description);
    v.challenge = fmt::format("Bearer resource_metadata={}", quoted_param(metadata_url()));
    if (!error.empty())
        v.challenge += fmt::format(", error={}, error_description={}", quoted_param(error), quoted_param(description));
    return v;
}

awaitable<std::string> JwtVerifier::fetch_keys() {
    std::string url = settings_.jwks_url;
    if (url.empty()) {
        std::string error;
        auto issuer = http::parse_url(settings_.issuer, error);
        if (!issuer) co_return fmt::format("the issuer {} is not an http(s) URL", settings_.issuer);
        for (const auto& candidate : server_metadata_urls(*issuer)) {
            http::Request req;
            req.url = candidate;
            auto r = co_await http_->request(std::move(req));
            if (!r || r->status != 200) continue;
            auto m = parse_server_metadata(candidate, r->body, settings_.issuer, error);
            if (!m) continue;
            const auto* j = m->raw.if_contains("jwks_uri");
            if (j && j->is_string()) url = std::string(j->get_string());
            break;
        }
        if (url.empty()) co_return fmt::format("no jwks_uri in the metadata of {}", settings_.issuer);
        settings_.jwks_url = url;
    }
    http::Request req;
    req.url = url;
    auto r = co_await http_->request(std::move(req));
    if (!r) co_return fmt::format("fetching the keys at {} failed: {}", url, r.error().message);
    if (r->status != 200)
        co_return fmt::format("fetching the keys at {}: {}", url, http::status_text(r->status, r->reason));
    boost::system::error_code ec;
    auto doc = json::parse(r->body, ec);
    const json::value* keys = !ec && doc.is_object() ? doc.get_object().if_contains("keys") : nullptr;
    if (!keys || !keys->is_array()) co_return fmt::format("{} is not a JWKS", url);
    std::map<std::string, Key> fresh;
    for (const auto& k : keys->get_array()) {
        if (!k.is_object()) continue;
        std::string error;
        if (auto key = Key::from_jwk(k.get_object(), error))
            fresh.emplace(key->kid(), std::move(*key));
        else
            spdlog::debug("gateway auth: a key of {} is skipped: {}", url, error);
    }
    keys_ = std::move(fresh);
    fetched_ = std::chrono::steady_clock::now();
    fetched_once_ = true;
    co_return std::string();
}

awaitable<std::string> JwtVerifier::check_token(std::string token, TokenFacts& facts) {
    std::string error;
    auto jwt = decode_jwt(token, error);
    if (!jwt) co_return error;
    const auto* kidv = jwt->header.if_contains("kid");
    const std::string kid = kidv && kidv->is_string() ? std::string(kidv->get_string()) : std::string();
    auto find_key = [&]() -> const Key* {
        if (auto it = keys_.find(kid); it != keys_.end()) return &it->second;
        if (kid.empty() && keys_.size() == 1) return &keys_.begin()->second;
        return nullptr;
    };
    const Key* key = find_key();
    if (!key && (!fetched_once_ || std::chrono::steady_clock::now() - fetched_ >= refetch_interval)) {
        auto problem = co_await fetch_keys();  // a new key of the issuer (rotation), or the first use
        if (!problem.empty()) {
            spdlog::warn("gateway auth: {}", problem);
            co_return "the issuer's keys are not available";
        }
        key = find_key();
    }
    if (!key) co_return fmt::format("the token is signed with an unknown key{}", kid.empty() ? "" : " \"" + kid + "\"");
    if (!verify_signature(*jwt, *key)) co_return "the token's signature is not valid";
    const auto& c = jwt->claims;
    const auto now = now_s();
    const auto leeway = settings_.leeway.count();
    const auto exp = number_claim(c, "exp");
    if (!exp) co_return "the token has no expiry (exp)";
    // Compared without arithmetic on the token's numbers, which may be anywhere in int64's range.
    if (*exp < now - leeway) co_return "the token has expired";
    if (auto nbf = number_claim(c, "nbf"); nbf && *nbf > now + leeway) co_return "the token is not valid yet";
    const auto* iss = c.if_contains("iss");
    if (!iss || !iss->is_string() || iss->get_string() != settings_.issuer)
        co_return "the token is from another issuer";
    bool audience_ok = false;
    if (const auto* aud = c.if_contains("aud")) {
        if (aud->is_string()) audience_ok = same_issuer(aud->get_string(), settings_.audience);
        if (aud->is_array())
            for (const auto& a : aud->get_array())
                audience_ok = audience_ok || (a.is_string() && same_issuer(a.get_string(), settings_.audience));
    }
    if (!audience_ok) co_return "the token is for another audience";
    facts.scopes = token_scopes(c);
    if (const auto* sub = c.if_contains("sub"); sub && sub->is_string())
        facts.subject = std::string(iss->get_string()) + " " + std::string(sub->get_string());
    if (const auto* cnf = c.if_contains("cnf"); cnf && cnf->is_object())
        if (const auto* jkt = cnf->get_object().if_contains("jkt"); jkt && jkt->is_string())
            facts.jkt = std::string(jkt->get_string());
    co_return std::string();
}

awaitable<http::TokenVerdict> JwtVerifier::verify(const bhttp::request<bhttp::string_body>& req) {
    auto it = req.find(bhttp::field::authorization);
    const std::string auth = it == req.end() ? std::string() : std::string(it->value());
    auto has_scheme = [&](std::string_view scheme) {
        return auth.size() > scheme.size() && core::iequals(std::string_view(auth).substr(0, scheme.size()), scheme);
    };
    const bool dpop = has_scheme("DPoP ");
    if (!dpop && !has_scheme("Bearer ")) co_return refuse("", "Authorization: Bearer <token> is required");
    const auto token = auth.substr(dpop ? 5 : 7);
    TokenFacts facts;
    const auto problem = co_await check_token(token, facts);
    if (!problem.empty()) co_return refuse("invalid_token", problem);
    // RFC 9449 §7: a bound token only with a proof of its key, for this request; an unbound one only as Bearer.
    if (!facts.jkt.empty() && !dpop)
        co_return refuse("invalid_token", "the token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof");
    if (dpop && facts.jkt.empty()) co_return refuse("invalid_token", "the token is not DPoP-bound: send it as Bearer");
    if (dpop) {
        const auto proofs = req.count("DPoP");
        const auto proof_it = req.find("DPoP");
        std::string error;
        const auto target = std::string_view(req.target().data(), req.target().size());
        std::string audience_error;
        auto audience = http::parse_url(settings_.audience, audience_error);
        const auto htu = (audience ? audience->origin() : std::string()) +
                         std::string(target.substr(0, target.find_first_of("?#")));
        std::optional<DpopProof> proof;
        if (proofs != 1)
            error = proofs == 0 ? "no DPoP proof" : "more than one DPoP proof";
        else
            proof = check_dpop_proof(std::string_view(proof_it->value().data(), proof_it->value().size()),
                                     std::string_view(req.method_string().data(), req.method_string().size()), htu,
                                     token, now_s(), proof_window_s, error);
        if (proof && proof->jkt != facts.jkt) error = "the DPoP proof is signed by another key than the token's";
        if (proof && error.empty()) {
            // Remembered for as long as the proof could be accepted: each proof is accepted once.
            switch (proofs_seen_.insert(proof->jti, proof->iat + proof_window_s, now_s())) {
            case JtiCache::Verdict::fresh: break;
            case JtiCache::Verdict::replay: error = "the DPoP proof was used before"; break;
            case JtiCache::Verdict::full: error = "too many DPoP proofs at once; try again shortly"; break;
            }
        }
        if (!error.empty()) {
            auto v = refuse("invalid_dpop_proof", error);
            v.challenge = fmt::format(
                "DPoP algs=\"ES256 RS256\", error=\"invalid_dpop_proof\", error_description={}, "
                "resource_metadata={}",
                quoted_param(error), quoted_param(metadata_url()));
            co_return v;
        }
    }
    auto& scopes = facts.scopes;

    if (!settings_.scopes.empty() && req.method() == bhttp::verb::post) {
        // A tool call needs a scope that allows the tool.
        boost::system::error_code ec;
        auto body = json::parse(req.body(), ec);
        const json::object* o = !ec && body.is_object() ? &body.get_object() : nullptr;
        const auto* method = o ? o->if_contains("method") : nullptr;
        if (method && method->is_string() && method->get_string() == "tools/call") {
            const auto* params = o->if_contains("params");
            const auto* name = params && params->is_object() ? params->get_object().if_contains("name") : nullptr;
            const std::string tool = name && name->is_string() ? std::string(name->get_string()) : std::string();
            std::vector<std::string> would;
            bool allowed = false;
            for (const auto& [scope, globs] : settings_.scopes) {
                const bool match = std::any_of(globs.begin(), globs.end(),
                                               [&](const std::string& g) { return core::glob_match(g, tool); });
                if (!match) continue;
                would.push_back(scope);
                allowed = allowed || std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
            }
            if (!allowed) {
                http::TokenVerdict v;
                v.status = bhttp::status::forbidden;
                v.message =
                    fmt::format("Forbidden: the token's scopes do not allow the tool \"{}\"{}", tool,
                                would.empty() ? "" : fmt::format(" (it needs one of: {})", fmt::join(would, ", ")));
                v.challenge =
                    fmt::format("Bearer error=\"insufficient_scope\", scope={}, resource_metadata={}",
                                quoted_param(fmt::format("{}", fmt::join(would, " "))), quoted_param(metadata_url()));
                co_return v;
            }
        }
    }
    http::TokenVerdict ok;
    ok.allowed = true;
    ok.principal = facts.subject;
    co_return ok;
}

}  // namespace switchboard::auth
