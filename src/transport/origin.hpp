// Origin checks shared by the HTTP and WebSocket servers (DNS-rebinding protection).
#pragma once

#include <boost/url/parse.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace switchboard::transport::detail {

/// Loopback origins (http[s]://localhost|127.0.0.1|[::1][:port]) and the listed ones ("*": any) are allowed.
inline bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed) {
    for (const auto& a : allowed)
        if (a == "*" || a == origin) return true;
    auto u = boost::urls::parse_uri(origin);
    if (!u || (u->scheme() != "http" && u->scheme() != "https")) return false;
    std::string host = u->host();
    return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

}  // namespace switchboard::transport::detail
