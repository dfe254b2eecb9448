#include <switchboard/http/secrets.hpp>
#include <switchboard/http/url.hpp>

#include <switchboard/core/text.hpp>

#include <boost/beast/http/status.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <fmt/format.h>

#include <charconv>

namespace switchboard::http {

std::string Url::host_header() const {
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if (port != (tls ? "443" : "80")) h += ":" + port;
    return h;
}

std::string Url::origin() const { return fmt::format("{}://{}", tls ? "https" : "http", host_header()); }
std::string Url::text() const { return origin() + target; }

std::optional<Url> parse_url(std::string_view text, std::string& error) {
    auto parsed = boost::urls::parse_uri(text);
    if (!parsed) {
        error = fmt::format("\"{}\" is not a valid URL ({})", text, parsed.error().message());
        return std::nullopt;
    }
    const auto& u = *parsed;
    Url out;
    const auto scheme = core::ascii_lower(u.scheme());
    if (scheme == "https")
        out.tls = true;
    else if (scheme != "http") {
        error = fmt::format("\"{}\" is not an http:// or https:// URL", text);
        return std::nullopt;
    }
    out.host = u.host_address();
    if (out.host.empty()) {
        error = fmt::format("\"{}\" has no host", text);
        return std::nullopt;
    }
    out.port = u.has_port() && !u.port().empty() ? std::string(u.port()) : (out.tls ? "443" : "80");
    // A port is 1 to 65535: a bigger number would wrap to another port when connecting (99999 -> 34463).
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(out.port.data(), out.port.data() + out.port.size(), port);
    if (ec != std::errc() || end != out.port.data() + out.port.size() || port == 0 || port > 65535) {
        error = fmt::format("\"{}\" has an invalid port (1 to 65535)", text);
        return std::nullopt;
    }
    out.target = std::string(u.encoded_path());
    if (out.target.empty()) out.target = "/";
    if (out.target.front() != '/') {  // after an authority a path is empty or absolute (RFC 3986 §3.3)
        error = fmt::format("\"{}\" is not a valid URL (its path does not start with /)", text);
        return std::nullopt;
    }
    if (u.has_query()) out.target += "?" + std::string(u.encoded_query());
    return out;
}

std::optional<Url> resolve_reference(const Url& base, std::string_view ref, std::string& error) {
    const std::string base_text = base.text();  // the views below point into it
    auto base_view = boost::urls::parse_uri(base_text);
    auto ref_view = boost::urls::parse_uri_reference(ref);
    if (!base_view || !ref_view) {
        error = fmt::format("\"{}\" is not a valid URL reference", ref);
        return std::nullopt;
    }
    boost::urls::url dest;
    if (auto r = boost::urls::resolve(*base_view, *ref_view, dest); !r) {
        error = fmt::format("cannot resolve \"{}\" against {}", ref, base.text());
        return std::nullopt;
    }
    dest.remove_fragment();
    return parse_url(dest.buffer(), error);
}

std::string redact_url(const Url& url) {
    auto q = url.target.find('?');
    if (q == std::string::npos) return url.text();
    std::string out = url.origin() + url.target.substr(0, q + 1);
    std::string_view query = std::string_view(url.target).substr(q + 1);
    bool first = true;
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        auto eq = pair.find('=');
        if (!first) out += '&';
        first = false;
        if (eq != std::string_view::npos && is_secret_header(pair.substr(0, eq)))
            out += std::string(pair.substr(0, eq)) + "=[redacted]";
        else
            out += pair;
    }
    return out;
}

std::string status_text(unsigned status, std::string_view reason) {
    namespace bhttp = boost::beast::http;
    if (reason.empty()) reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
    return fmt::format("HTTP {} {}", status, reason);
}

}  // namespace switchboard::http
