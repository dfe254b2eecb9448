// Refresh and revocation: what becomes of the tokens held (RFC 6749 §6, RFC 7009), apart from the grants that
// obtain them.
#include <switchboard/auth/oauth.hpp>

#include <switchboard/auth/crypto.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "json_fields.hpp"
#include "oauth_internal.hpp"

namespace switchboard::auth {

using boost::asio::awaitable;

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

}  // namespace switchboard::auth
