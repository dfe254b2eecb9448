// `switchboard auth login | status | logout`: OAuth logins for remote servers, outside any running host. A running
// `serve` notices a login made here (the token file changes) and connects the server.
#include "cli.hpp"

#include <switchboard/auth/oauth.hpp>
#include <switchboard/auth/token_store.hpp>
#include <switchboard/auth/user_agent.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/host/login.hpp>
#include <switchboard/host/transport_factory.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <chrono>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string expiry_text(std::int64_t expires_at) {
    if (expires_at == 0) return "no expiry given";
    const auto left = expires_at - now_s();
    if (left <= 0) return "expired";
    if (left < 120) return fmt::format("expires in {} s", left);
    if (left < 7200) return fmt::format("expires in {} min", left / 60);
    return fmt::format("expires in {} h", left / 3600);
}

/// The remote server named `name`, or nullptr (reported).
const host::ServerConfig* remote_server(const host::Config& config, const std::string& name) {
    const auto* sc = config.find(name);
    if (!sc) {
        fmt::print(stderr, "switchboard auth: no server \"{}\" in {}\n", name, config.source);
        return nullptr;
    }
    if (sc->type == host::TransportKind::stdio) {
        fmt::print(stderr,
                   "switchboard auth: server \"{}\" is a stdio server; logins are for remote (http, sse, ws) "
                   "servers\n",
                   name);
        return nullptr;
    }
    return sc;
}

}  // namespace

awaitable<int> auth_login(const host::Config& config, const GlobalOptions& g, std::string server,
                          AuthLoginOptions options) {
    const auto* sc = remote_server(config, server);
    if (!sc) co_return 2;
    if (!sc->oauth_enabled) {
        fmt::print(stderr, "switchboard auth: server \"{}\" has \"oauth\": false in {}\n", server, config.source);
        co_return 2;
    }
    auto ex = co_await asio::this_coro::executor;
    auto store = std::make_shared<auth::TokenStore>(auth::TokenStore::default_path());
    auto authorizer = host::make_authorizer(ex, *sc, store);
    if (!authorizer) {
        fmt::print(stderr,
                   "switchboard auth: server \"{}\" has an Authorization header configured; it is not logged "
                   "in with OAuth\n",
                   server);
        co_return 2;
    }
    auth::BrowserUserAgent::Options bo;
    bo.port = options.port ? options.port : sc->oauth.redirect_port;
    bo.open_browser = !options.no_browser;
    bo.timeout = std::chrono::seconds(options.timeout_s);
    bo.show = [&](const std::string& url) {
        fmt::print(stderr, "{} the authorization page of \"{}\". If no browser opens, visit:\n\n  {}\n\n",
                   options.no_browser ? "Open" : "Opening", server, url);
    };
    authorizer->set_user_agent(std::make_shared<auth::BrowserUserAgent>(ex, bo));
    auto result = co_await host::run_login(ex, std::make_shared<const host::ServerConfig>(*sc), authorizer,
                                           std::chrono::seconds(options.timeout_s + 30));
    if (!result.logged_in) {
        fmt::print(stderr, "switchboard auth: {}\n", result.problem);
        co_return result.asked ? 1 : 0;
    }
    const auto tools = result.tools;
    if (g.json) {
        json::object o;
        o["server"] = server;
        o["issuer"] = authorizer->issuer();
        o["scope"] = authorizer->scope();
        o["expiresAt"] = authorizer->expires_at();
        o["tools"] = tools;
        fmt::print("{}\n", json::serialize(o));
    } else {
        fmt::print(
            "Logged in to \"{}\" (authorization server {}{}; token {}).{}\nTokens are kept in {} (readable by "
            "you only).\n",
            server, authorizer->issuer(),
            authorizer->scope().empty() ? "" : fmt::format(", scope \"{}\"", authorizer->scope()),
            expiry_text(authorizer->expires_at()),
            fmt::format(" It offers {} tool{}.", tools, tools == 1 ? "" : "s"), store->path().string());
    }
    co_return 0;
}

int auth_status(const host::Config& config, const GlobalOptions& g) {
    auth::TokenStore store(auth::TokenStore::default_path());
    std::string error;
    auto entries = store.load_all(&error);
    if (!error.empty()) fmt::print(stderr, "switchboard auth: {}\n", error);
    json::array rows;
    std::string text = fmt::format("{:<20} {:<14} {}\n", "SERVER", "STATE", "DETAILS");
    for (const auto& sc : config.servers) {
        if (sc.type == host::TransportKind::stdio) continue;
        json::object row;
        row["server"] = sc.name;
        std::string state, details;
        auto it = entries.find(sc.name);
        const bool has_header = std::any_of(sc.headers.begin(), sc.headers.end(),
                                            [](const auto& h) { return core::iequals(h.first, "Authorization"); });
        if (!sc.oauth_enabled || has_header) {
            state = "not-oauth";
            details = has_header ? "an Authorization header is configured" : "\"oauth\": false";
        } else if (it == entries.end() || it->second.resource != sc.url || it->second.tokens.access_token.empty()) {
            state = "logged-out";
            details = it != entries.end() && it->second.resource != sc.url
                          ? "the stored login is for another URL"
                          : fmt::format("run `switchboard auth login {}` if the server asks for one", sc.name);
        } else {
            const auto& c = it->second;
            const bool expired = c.tokens.expires_at != 0 && c.tokens.expires_at <= now_s();
            state = expired && c.tokens.refresh_token.empty() ? "expired" : "logged-in";
            const bool bound = core::iequals(c.tokens.token_type, "DPoP");
            details = fmt::format("{}; {}{}{}{}", c.issuer, expiry_text(c.tokens.expires_at),
                                  c.tokens.refresh_token.empty() ? "" : "; refreshable", bound ? "; DPoP-bound" : "",
                                  c.tokens.scope.empty() ? "" : fmt::format("; scope \"{}\"", c.tokens.scope));
            row["tokenType"] = bound ? "DPoP" : "Bearer";
            row["issuer"] = c.issuer;
            row["scope"] = c.tokens.scope;
            row["expiresAt"] = c.tokens.expires_at;
            row["refreshable"] = !c.tokens.refresh_token.empty();
            row["clientId"] = c.client.client_id;
        }
        row["state"] = state;
        rows.push_back(std::move(row));
        text += fmt::format("{:<20} {:<14} {}\n", sc.name, state, details);
    }
    if (g.json) {
        json::object o;
        o["tokenFile"] = store.path().string();
        o["servers"] = std::move(rows);
        fmt::print("{}\n", json::serialize(o));
    } else {
        fmt::print("{}Token file: {}\n", text, store.path().string());
    }
    return 0;
}

awaitable<int> auth_logout(const host::Config& config, std::string server) {
    const auto* sc = remote_server(config, server);
    if (!sc) co_return 2;
    auto store = std::make_shared<auth::TokenStore>(auth::TokenStore::default_path());
    auto before = store->load(server);
    // The authorization server is asked to revoke the tokens first (RFC 7009): forgetting them here does not stop a
    // copy from working elsewhere. They are forgotten whatever it answers.
    std::string revoked = "not asked";
    if (before && (!before->tokens.access_token.empty() || !before->tokens.refresh_token.empty())) {
        auto ex = co_await asio::this_coro::executor;
        if (auto authorizer = host::make_authorizer(ex, *sc, store)) revoked = co_await authorizer->revoke();
    }
    if (auto error = store->remove(server); !error.empty()) {
        fmt::print(stderr, "switchboard auth: {}\n", error);
        co_return 1;
    }
    if (!before) {
        fmt::print("No login was stored for \"{}\".\n", server);
        co_return 0;
    }
    fmt::print("Logged out of \"{}\" (its tokens and client registration are forgotten{}).\n", server,
               revoked.empty() ? "; the authorization server revoked the tokens" : "");
    if (!revoked.empty() && revoked != "not asked")
        fmt::print(stderr, "switchboard auth: the tokens were not revoked at the authorization server: {}\n", revoked);
    co_return 0;
}

}  // namespace switchboard::cli
