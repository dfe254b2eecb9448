#include <switchboard/http/secrets.hpp>

#include <switchboard/core/text.hpp>

#include <algorithm>
#include <cctype>

namespace switchboard::http {

bool is_secret_header(std::string_view name) {
    const auto n = core::ascii_lower(name);
    if (n == "authorization" || n == "proxy-authorization" || n == "cookie" || n == "set-cookie") return true;
    for (std::string_view word : {"token", "key", "secret", "password", "auth", "session", "credential", "cookie"})
        if (n.find(word) != std::string::npos) return true;
    return false;
}

std::string redact_header_value(std::string_view name, std::string_view value) {
    if (!is_secret_header(name)) return std::string(value);
    // Keep an auth scheme ("Bearer", "Basic") when there is one: it helps debugging and is no secret.
    if (auto sp = value.find(' '); sp != std::string_view::npos && sp > 0 && sp < 16 &&
                                   std::all_of(value.begin(), value.begin() + sp,
                                               [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
        return std::string(value.substr(0, sp)) + " [redacted]";
    return "[redacted]";
}

}  // namespace switchboard::http
