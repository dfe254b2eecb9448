// WWW-Authenticate (RFC 9110 §11.6.1): the challenges a 401 or 403 carries, and what MCP clients read from the Bearer
// one (RFC 6750 §3, RFC 9728 §5.1): `resource_metadata`, `scope`, `error`.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::auth {

struct Challenge {
    std::string scheme;                         ///< lower-case ("bearer", "dpop", "basic")
    std::map<std::string, std::string> params;  ///< names lower-case, values unquoted
    std::string param(std::string_view name) const;
};

/// Every challenge in one or more WWW-Authenticate values (several may share a header, separated by commas).
/// Malformed parts are skipped, never thrown on.
std::vector<Challenge> parse_challenges(std::string_view header);

/// What a Bearer (or DPoP) challenge tells an MCP client.
struct BearerChallenge {
    bool present = false;           ///< a bearer or DPoP challenge was there at all
    std::string scheme;             ///< "bearer" or "dpop"
    std::string resource_metadata;  ///< the Protected Resource Metadata URL
    std::string scope;              ///< space-separated
    std::string error;              ///< "invalid_token", "insufficient_scope", ...
    std::string error_description;
};
/// Reads the first Bearer or DPoP challenge of the WWW-Authenticate values.
BearerChallenge read_bearer_challenge(const std::vector<std::string>& www_authenticate);

}  // namespace switchboard::auth
