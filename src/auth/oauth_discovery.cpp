// Discovery: the MCP server's resource metadata (RFC 9728) and its authorization server's (RFC 8414), where every
// authorization starts; logout's revocation asks the latter too.
#include <switchboard/auth/oauth.hpp>

#include <switchboard/auth/metadata.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "oauth_internal.hpp"

namespace switchboard::auth {

using boost::asio::awaitable;

namespace detail {

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

}  // namespace detail

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

}  // namespace switchboard::auth
