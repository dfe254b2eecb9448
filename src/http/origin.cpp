#include <switchboard/http/origin.hpp>

#include <boost/url/parse.hpp>

namespace switchboard::http {

bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed) {
    for (const auto& a : allowed)
        if (a == "*" || a == origin) return true;
    auto u = boost::urls::parse_uri(origin);
    if (!u || (u->scheme() != "http" && u->scheme() != "https")) return false;
    std::string host = u->host();
    return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

Fields cors_preflight_headers(std::string_view origin, std::string_view methods, std::string_view headers) {
    Fields out;
    out.emplace_back("Access-Control-Allow-Origin", std::string(origin));
    out.emplace_back("Vary", "Origin");
    out.emplace_back("Access-Control-Allow-Methods", std::string(methods));
    if (!headers.empty()) out.emplace_back("Access-Control-Allow-Headers", std::string(headers));
    out.emplace_back("Access-Control-Max-Age", "600");
    return out;
}

}  // namespace switchboard::http
