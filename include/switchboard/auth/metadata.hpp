// Finding a protected MCP server's authorization server, as the MCP authorization spec (2025-11-25, 2026-07-28)
// orders it:
//
//   1. Protected Resource Metadata (RFC 9728): the URL a 401's `resource_metadata` names, else
//      /.well-known/oauth-protected-resource/<server path>, else /.well-known/oauth-protected-resource at the root.
//      Its `resource` must be the server's URL (same origin, a path prefix of it): metadata for another resource is
//      refused.
//   2. Authorization server metadata, for the first of `authorization_servers`: RFC 8414 and OpenID Connect
//      discovery, with the path-insertion variants for an issuer with a path:
//        /.well-known/oauth-authorization-server/<path>, /.well-known/openid-configuration/<path>,
//        <path>/.well-known/openid-configuration        (without a path: the first two at the root).
//      Its `issuer` must be the issuer asked for (RFC 8414 §3.3): a mismatch is refused.
//   3. A 2025-03-26 server without resource metadata: its origin is the authorization server, and when that has no
//      metadata either, the default endpoints /authorize, /token and /register at the origin.
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <switchboard/http/url.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace switchboard::auth {

struct ResourceMetadata {
    std::string url;  ///< where it was read
    std::string resource;
    std::vector<std::string> authorization_servers;
    std::vector<std::string> scopes_supported;
    std::vector<std::string> dpop_signing_alg_values_supported;  ///< the server takes DPoP-bound tokens (RFC 9728)
    bool dpop_bound_access_tokens_required = false;              ///< ... and only those
    boost::json::object raw;
};

struct ServerMetadata {
    std::string url;  ///< where it was read (empty: the 2025-03-26 default endpoints)
    std::string issuer;
    std::string authorization_endpoint;
    std::string token_endpoint;
    std::string registration_endpoint;
    std::vector<std::string> scopes_supported;
    std::vector<std::string> response_types_supported;
    std::vector<std::string> grant_types_supported;
    std::vector<std::string> code_challenge_methods_supported;
    std::vector<std::string> token_endpoint_auth_methods_supported;
    bool client_id_metadata_document_supported = false;
    bool authorization_response_iss_parameter_supported = false;
    std::vector<std::string> dpop_signing_alg_values_supported;  ///< it binds tokens to DPoP keys (RFC 9449 §5.1)
    boost::json::object raw;

    bool supports_scope(std::string_view scope) const;
};

/// The Protected Resource Metadata URLs to try for `server`, in order (`from_challenge` first when set).
std::vector<std::string> resource_metadata_urls(const http::Url& server, const std::string& from_challenge);
/// The authorization server metadata URLs to try for `issuer`, in order.
std::vector<std::string> server_metadata_urls(const http::Url& issuer);

/// Parses Protected Resource Metadata read from `url`; nullopt with `error` set when it is not usable.
std::optional<ResourceMetadata> parse_resource_metadata(const std::string& url, std::string_view body,
                                                        std::string& error);
/// Parses authorization server metadata read from `url` for `expected_issuer`; nullopt with `error` set when it is
/// not usable (no token endpoint, another issuer, ...).
std::optional<ServerMetadata> parse_server_metadata(const std::string& url, std::string_view body,
                                                    const std::string& expected_issuer, std::string& error);

/// The 2025-03-26 fallback: /authorize, /token and /register at the origin of `server`.
ServerMetadata default_endpoints(const http::Url& server);

/// Whether metadata for `resource` may be used for the MCP server at `server`: same scheme, host and port, and
/// `resource`'s path is a prefix of the server's (at a segment boundary).
bool resource_covers(std::string_view resource, const http::Url& server);

/// The canonical resource identifier (RFC 8707) of an MCP server URL: no fragment, no query, lower-case scheme and
/// host, no trailing slash unless the path is "/".
std::string canonical_resource(const http::Url& server);

/// Two issuer identifiers compared as RFC 9207 asks (simple string comparison), after removing one trailing "/"
/// from each (the only normalisation some servers need).
bool same_issuer(std::string_view a, std::string_view b);

}  // namespace switchboard::auth
