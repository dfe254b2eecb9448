// Origin checks (DNS-rebinding protection) and CORS preflight answers for the HTTP and WebSocket servers.
//
// Thread-safety: pure functions.
#pragma once

#include <switchboard/http/fields.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace switchboard::http {

/// Loopback origins (http[s]://localhost|127.0.0.1|[::1][:port]) and the listed ones ("*": any) are allowed.
bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed);

/// The headers that answer a CORS preflight (OPTIONS with Access-Control-Request-Method) from an allowed `origin`:
/// Access-Control-Allow-Origin / -Methods / -Headers / -Max-Age. `methods` and `headers` are comma-separated lists.
Fields cors_preflight_headers(std::string_view origin, std::string_view methods, std::string_view headers);

}  // namespace switchboard::http
