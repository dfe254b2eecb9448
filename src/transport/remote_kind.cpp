// Small pure helpers of the HTTP transports: transport inference from a URL and header redaction.
#include <switchboard/transport/http_client.hpp>

#include <algorithm>
#include <cctype>

namespace switchboard::transport {

namespace {
std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}
}  // namespace

RemoteKind infer_remote_kind(std::string_view url) {
    const auto scheme = lower(url.substr(0, 6));
    if (scheme.starts_with("ws://") || scheme.starts_with("wss://")) return RemoteKind::websocket;
    auto path = url.substr(0, url.find_first_of("?#"));
    while (path.ends_with("/") && path.size() > 1 && !path.ends_with("//")) path.remove_suffix(1);
    return lower(path).ends_with("/sse") ? RemoteKind::sse : RemoteKind::streamable_http;
}

bool is_secret_header(std::string_view name) {
    const auto n = lower(name);
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

}  // namespace switchboard::transport
