#include <switchboard/auth/metadata.hpp>

#include <switchboard/core/text.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "json_fields.hpp"

namespace switchboard::auth {

using detail::num;
using detail::str;

namespace json = boost::json;

namespace {

/// The URL's path without its query, and without a trailing slash ("" for the root).
std::string path_of(const http::Url& u) {
    std::string path = u.target.substr(0, u.target.find_first_of("?#"));
    while (!path.empty() && path.back() == '/') path.pop_back();
    return path;
}

std::vector<std::string> strings(const json::object& o, std::string_view key) {
    std::vector<std::string> out;
    const auto* v = o.if_contains(key);
    if (!v || !v->is_array()) return out;
    for (const auto& e : v->get_array())
        if (e.is_string()) out.emplace_back(e.get_string());
    return out;
}

bool flag(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_bool() && v->get_bool();
}

std::optional<json::object> parse_object(std::string_view body, const std::string& url, std::string& error) {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_object()) {
        error = fmt::format("{} is not a JSON object", url);
        return std::nullopt;
    }
    return std::move(v.get_object());
}

}  // namespace

bool ServerMetadata::supports_scope(std::string_view scope) const {
    return std::find(scopes_supported.begin(), scopes_supported.end(), scope) != scopes_supported.end();
}

std::vector<std::string> resource_metadata_urls(const http::Url& server, const std::string& from_challenge) {
    std::vector<std::string> out;
    if (!from_challenge.empty()) out.push_back(from_challenge);
    const auto origin = server.origin();
    if (auto path = path_of(server); !path.empty())
        out.push_back(origin + "/.well-known/oauth-protected-resource" + path);
    out.push_back(origin + "/.well-known/oauth-protected-resource");
    return out;
}

std::vector<std::string> server_metadata_urls(const http::Url& issuer) {
    const auto origin = issuer.origin();
    const auto path = path_of(issuer);
    if (path.empty())
        return {origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"};
    return {origin + "/.well-known/oauth-authorization-server" + path,
            origin + "/.well-known/openid-configuration" + path, origin + path + "/.well-known/openid-configuration"};
}

std::optional<ResourceMetadata> parse_resource_metadata(const std::string& url, std::string_view body,
                                                        std::string& error) {
    auto o = parse_object(body, url, error);
    if (!o) return std::nullopt;
    ResourceMetadata m;
    m.url = url;
    m.resource = str(*o, "resource");
    m.authorization_servers = strings(*o, "authorization_servers");
    m.scopes_supported = strings(*o, "scopes_supported");
    m.dpop_signing_alg_values_supported = strings(*o, "dpop_signing_alg_values_supported");
    m.dpop_bound_access_tokens_required = flag(*o, "dpop_bound_access_tokens_required");
    if (m.authorization_servers.empty()) {
        error = fmt::format("the resource metadata at {} names no authorization server", url);
        return std::nullopt;
    }
    m.raw = std::move(*o);
    return m;
}

std::optional<ServerMetadata> parse_server_metadata(const std::string& url, std::string_view body,
                                                    const std::string& expected_issuer, std::string& error) {
    auto o = parse_object(body, url, error);
    if (!o) return std::nullopt;
    ServerMetadata m;
    m.url = url;
    m.issuer = str(*o, "issuer");
    m.authorization_endpoint = str(*o, "authorization_endpoint");
    m.token_endpoint = str(*o, "token_endpoint");
    m.registration_endpoint = str(*o, "registration_endpoint");
    m.scopes_supported = strings(*o, "scopes_supported");
    m.response_types_supported = strings(*o, "response_types_supported");
    m.grant_types_supported = strings(*o, "grant_types_supported");
    m.code_challenge_methods_supported = strings(*o, "code_challenge_methods_supported");
    m.token_endpoint_auth_methods_supported = strings(*o, "token_endpoint_auth_methods_supported");
    m.client_id_metadata_document_supported = flag(*o, "client_id_metadata_document_supported");
    m.authorization_response_iss_parameter_supported = flag(*o, "authorization_response_iss_parameter_supported");
    m.dpop_signing_alg_values_supported = strings(*o, "dpop_signing_alg_values_supported");
    if (m.token_endpoint.empty()) {
        error = fmt::format("the authorization server metadata at {} has no token_endpoint", url);
        return std::nullopt;
    }
    if (!expected_issuer.empty() && m.issuer != expected_issuer) {
        error = fmt::format(
            "the authorization server metadata at {} is for issuer \"{}\", not \"{}\" (refused: "
            "RFC 8414 §3.3)",
            url, m.issuer, expected_issuer);
        return std::nullopt;
    }
    m.raw = std::move(*o);
    return m;
}

ServerMetadata default_endpoints(const http::Url& server) {
    ServerMetadata m;
    const auto origin = server.origin();
    m.issuer = origin;
    m.authorization_endpoint = origin + "/authorize";
    m.token_endpoint = origin + "/token";
    m.registration_endpoint = origin + "/register";
    m.code_challenge_methods_supported = {"S256"};  // 2025-03-26 made PKCE S256 mandatory for these servers
    return m;
}

bool resource_covers(std::string_view resource, const http::Url& server) {
    std::string error;
    auto r = http::parse_url(resource, error);
    if (!r) return false;
    if (r->tls != server.tls || !core::iequals(r->host, server.host) || r->port != server.port) return false;
    const auto rp = path_of(*r), sp = path_of(server);
    if (rp.empty()) return true;
    return sp == rp || (sp.size() > rp.size() && sp.compare(0, rp.size(), rp) == 0 && sp[rp.size()] == '/');
}

std::string canonical_resource(const http::Url& server) {
    std::string path = server.target.substr(0, server.target.find_first_of("?#"));
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path == "/") path.clear();
    return core::ascii_lower(server.origin()) + path;
}

bool same_issuer(std::string_view a, std::string_view b) {
    if (!a.empty() && a.back() == '/') a.remove_suffix(1);
    if (!b.empty() && b.back() == '/') b.remove_suffix(1);
    return a == b;
}

}  // namespace switchboard::auth
